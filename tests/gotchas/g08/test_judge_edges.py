"""G8 pinned: the staleness limit of a kept list, unknown slugs, the torn-reading paths, and the
commands of the fix (searches by hand, issues to open, the listing of the playbooks, the TOML block)."""

from __future__ import annotations

import time

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.gotchas import g08_stale_playbooks as g8
from sparktui.gotchas.g08_stale_playbooks import judge
from tests.conftest import readings_of
from tests.gotchas.builders import g8_data as base_data
from tests.gotchas.builders import DAY, NOW, g8_verdict as verdict, values as ev

REPO = "NVIDIA/dgx-spark-playbooks"
SEARCH_VLLM = f"gh issue list -R {REPO} --state open --search 'vllm in:title,body'"
SEARCH_SGLANG = f"gh issue list -R {REPO} --state open --search 'sglang in:title,body'"
LISTING = f"gh api repos/{REPO}/contents/nvidia --jq '.[].name'"


def data(**kw):
    """The reading of tests/gotchas/g08/test_judge.py (NVIDIA/dgx-spark-playbooks, one slug, nothing matched)."""
    return base_data(**{"pull_requests_skipped": 0, **kw})


def match(n: int) -> dict:
    return {"number": n, "title": f"vllm issue {n}", "created_at": "2026-05-16T00:00:00Z", "comments": 0,
            "reasons": ["mentions nvidia/vllm"], "slugs": ["vllm"], "commands": []}


def fix_lines(v):
    return v.fix.splitlines()


# --- a list kept from the cache after a failed refresh: 7 days stand for now, a second more does not --


def test_stale_max_days_is_seven():
    assert g8.STALE_MAX_DAYS == 7


@pytest.mark.parametrize("age_s, status", [
    (6 * DAY, Status.OK),
    (7 * DAY, Status.OK),  # exactly the limit still stands
    (7 * DAY + 1, Status.UNKNOWN),  # one second over does not
    (8 * DAY, Status.UNKNOWN),
])
def test_stale_cache_age_edge(age_s, status):
    v = verdict(data(source="stale-cache", age_s=age_s, error="offline"))
    assert v.status is status
    if status is Status.UNKNOWN:
        assert v.summary.startswith(f"cannot tell: the last list of open issues is {int(age_s // DAY)} d old")
        assert "over 7 d" in v.summary and v.summary.endswith("refresh failed: offline")
        assert SEARCH_VLLM in fix_lines(v)  # the same search by hand
        assert ev(v)["open issues checked"] == "87"
    else:
        assert v.summary.startswith("none of 87 open issues")
        assert v.summary.endswith(f"(as of {int(age_s // DAY)} d ago; refresh failed: offline)")


def test_a_kept_list_under_a_second_old_is_not_from_the_future():
    v = verdict(data(source="stale-cache", age_s=0.5, error="offline"))
    assert v.status is Status.OK


def test_a_fresh_network_list_of_any_age_is_not_judged_stale():
    v = verdict(data(source="network", age_s=30 * DAY))
    assert v.status is Status.OK


def test_stale_cache_of_unknown_age_or_from_the_future():
    v = verdict(data(source="stale-cache", age_s=None, error=None))
    assert v.status is Status.UNKNOWN
    assert "unknown age" in v.summary and v.summary.endswith("refresh failed: no reason given")
    assert v.id == "G8"
    v = verdict(data(source="stale-cache", age_s=-3 * 3600, error="offline"))
    assert (v.id, v.status) == ("G8", Status.UNKNOWN)
    assert "dated 3 h in the future" in v.summary and v.summary.endswith("refresh failed: offline")


# --- a followed slug outside the catalog that has no folder: "no issue names it" proves nothing ------


def test_an_unknown_slug_without_a_folder_is_unknown_naming_the_slug():
    v = verdict(data(slugs=["vlm"], unknown_slugs=["vlm"], folders={"vlm": {"exists": False, "error": None}}))
    assert (v.id, v.status) == ("G8", Status.UNKNOWN)
    assert v.summary.startswith("cannot tell: no playbook 'vlm': ")
    assert "check the slug" in v.summary
    assert f"gh issue list -R {REPO} --state open --search 'vlm in:title,body'" in fix_lines(v)
    assert ev(v)["what is followed"]["not in sparktui's catalog (matched by path/URL only)"] == ["vlm"]


def test_the_folder_error_is_said_and_every_missing_slug_is_listed():
    v = verdict(data(slugs=["../../etc", "vlm"], unknown_slugs=["../../etc", "vlm"],
                     folders={"../../etc": {"exists": False, "error": "not a folder name: '../../etc'"},
                              "vlm": {"exists": False}}))
    assert v.status is Status.UNKNOWN
    assert v.summary.startswith("cannot tell: not a folder name: '../../etc'; no playbook 'vlm': ")


@pytest.mark.parametrize("unknown, folder", [
    ([], {"exists": False}),  # a catalog slug: its folder answer does not make it unknown
    (["vlm"], {"exists": True, "last_commit": "2026-05-01T00:00:00Z"}),  # there after all
    (["vlm"], {"last_commit": "2026-05-01T00:00:00Z"}),  # not said either way
    ("vlm", {"exists": False}),  # an edited snapshot: not a list, so no unknown slug
])
def test_no_news_stands_unless_an_unknown_slug_is_missing(unknown, folder):
    v = verdict(data(slugs=["vlm"], unknown_slugs=unknown, folders={"vlm": folder}))
    assert v.status is Status.OK


def test_a_reading_without_the_unknown_slugs_key_still_judges():
    d = data()
    del d["unknown_slugs"]
    assert verdict(d).status is Status.OK


# --- the torn-reading paths carry id, evidence and a filled fix -----------------------------------------


def test_counted_but_not_listed_is_unknown_with_evidence_and_searches():
    v = verdict(data(matches=[], matches_total=3))
    assert (v.id, v.status) == ("G8", Status.UNKNOWN)
    assert v.summary == "cannot tell: the reading counts 3 matching issues but lists none"
    assert ev(v)["open issues checked"] == "87"
    assert SEARCH_VLLM in fix_lines(v)


def test_only_unreadable_items_is_unknown_with_evidence_and_searches():
    v = verdict(data(issues_checked=0, issues_unreadable=2))
    assert (v.id, v.status) == ("G8", Status.UNKNOWN)
    assert "2 items sparktui could not read" in v.summary
    assert ev(v)["issues left out (unreadable)"].startswith("2 issue objects")
    assert SEARCH_VLLM in fix_lines(v)


def test_a_failed_fetch_fix_has_the_search_for_every_slug():
    v = verdict(data(slugs=["vllm", "sglang"], issues_checked=None, error="offline"))
    assert v.status is Status.UNKNOWN
    assert SEARCH_VLLM in fix_lines(v) and SEARCH_SGLANG in fix_lines(v)


# --- the fix: issues to open, searches by hand ------------------------------------------------------------


def test_issues_to_open_is_five():
    assert g8.ISSUES_TO_OPEN == 5


def test_the_fix_opens_the_first_five_issues_and_searches_each_slug():
    ms = [match(n) for n in (101, 102, 103, 104, 105, 106)]
    v = verdict(data(slugs=["vllm", "sglang"], matches=ms, matches_total=6))
    assert v.status is Status.WARN
    views = [ln for ln in fix_lines(v) if ln.startswith("gh issue view")]
    assert views == [f"gh issue view {n} -R {REPO} --comments" for n in (101, 102, 103, 104, 105)]
    assert SEARCH_VLLM in fix_lines(v) and SEARCH_SGLANG in fix_lines(v)
    assert "Read every listed issue" in v.fix


def test_five_matches_are_all_opened():
    v = verdict(data(matches=[match(n) for n in (1, 2, 3, 4, 5)], matches_total=5))
    assert sum(ln.startswith("gh issue view") for ln in fix_lines(v)) == 5


def test_commands_only_still_opens_the_issues():
    v = verdict(data(slugs=[], commands=["vllm serve x"], matches=[match(109)], matches_total=1))
    assert v.status is Status.WARN
    assert f"gh issue view 109 -R {REPO} --comments" in fix_lines(v)
    assert not any(ln.startswith("gh issue list") for ln in fix_lines(v))
    assert "Read every listed issue" in v.fix


def test_the_fix_names_the_repo_of_the_reading():
    v = verdict(data(repo="me/playbooks-mirror", issues_checked=None, error="offline"))
    assert "gh issue list -R me/playbooks-mirror --state open --search 'vllm in:title,body'" in fix_lines(v)


# --- the fix with nothing configured: the TOML block, the headless flags, the listing ------------------


def test_suggested_slugs_become_the_toml_block_and_the_flags():
    d = {"configured": False, "repo": REPO, "slugs": [], "commands": [],
         "suggestions": [{"slug": "vllm", "why": "vllm serve"}, {"slug": "sglang", "why": "sglang"}]}
    v = verdict(d)
    assert v.status is Status.SKIP
    assert '```toml\n[playbooks]\nslugs = ["vllm", "sglang"]\n```\n' in v.fix
    assert "`~/.config/sparktui/config.toml`:\n\n```toml\n[playbooks]\n" in v.fix
    assert "sparktui check G8 --playbook vllm --playbook sglang" in fix_lines(v)


def test_nothing_suggested_lists_the_playbooks_of_the_repo():
    v = verdict({"configured": False, "repo": "me/mirror", "slugs": [], "commands": []})
    assert v.status is Status.SKIP
    assert "gh api repos/me/mirror/contents/nvidia --jq '.[].name'" in fix_lines(v)
    assert "--playbook" in v.fix and "[playbooks] slugs" in v.fix
    v = verdict({"configured": False, "repo": REPO, "slugs": [], "commands": []})
    assert LISTING in fix_lines(v)


def test_every_fix_ends_with_the_token_line():
    for v in (verdict(data(issues_checked=None, error="x")), verdict({"configured": False, "repo": REPO})):
        assert '\n```bash\nexport GITHUB_TOKEN="$(gh auth token)"' in v.fix
        assert v.fix.endswith("`gh auth login`\n```\n")


# --- times are UTC whatever the machine's zone -------------------------------------------------------------


@pytest.fixture
def tokyo(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


def test_reset_time_is_utc_in_another_zone(tokyo):
    rl = {"limit": 60, "remaining": 0, "reset_at": NOW + 1200, "limited": True}
    v = verdict(data(issues_checked=None, error="rate limited", rate_limit=rl))
    # NOW + 1200 = 2026-05-28 20:46:40 UTC (05:46 the next day in Tokyo)
    assert ev(v)["rate limit"] == "exhausted; resets at 2026-05-28 20:46 UTC; no request before then"


def test_a_reading_error_is_kept_with_a_failed_fetch():
    d = data(issues_checked=None, error=None)
    v = judge(readings_of(playbook_issues=Reading("playbook_issues", d, error="HTTP 500")), Config())
    assert v.status is Status.UNKNOWN and "(HTTP 500)" in v.summary


def test_a_commit_date_without_a_zone_is_utc_in_another_zone(tokyo):
    # 2026-02-27 22:00 UTC is 89.9 d before NOW; read as Tokyo time it would be 90.3 d (and "untouched")
    v = verdict(data(folders={"vllm": {"last_commit": "2026-02-27T22:00:00", "error": None}},
                     matches=[match(109)], matches_total=1))
    assert ev(v)["nvidia/vllm last change"] == "2026-02-27T22:00:00 (89 d before this check)"
    assert "unchanged for" not in v.summary
