"""G8's judge on recorded probe data: warn/ok/unknown/skip, and what the evidence says."""

from __future__ import annotations

import pytest

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g08_stale_playbooks as g8
from sparktui.gotchas.g08_stale_playbooks import GOTCHA, judge
from tests.conftest import readings_of
from tests.gotchas.builders import DAY, NOW, g8_verdict as verdict, rows
from tests.gotchas.builders import g8_data as data


MATCH = {"number": 109, "title": "nvidia/vllm is wrong missing Ray", "url": "https://github.com/NVIDIA/dgx-spark-playbooks/issues/109",
         "created_at": "2026-05-16T00:00:00Z", "updated_at": "2026-05-20T00:00:00Z", "comments": 4, "score": 20,
         "reasons": ["mentions nvidia/vllm", "links tree/main/nvidia/vllm"], "slugs": ["vllm"], "commands": [],
         "body_excerpt": "The tutorial ..."}


def test_matching_open_issues_warn_and_are_listed_with_age_comments_and_reasons():
    v = verdict(data(matches=[MATCH], matches_total=1,
                     folders={"vllm": {"last_commit": "2025-12-01T00:00:00Z", "sha": "abc", "error": None}}))
    assert v.status is Status.WARN
    assert v.summary.startswith("1 open issue in NVIDIA/dgx-spark-playbooks name vllm: #109")
    assert "nvidia/vllm unchanged for 178 d" in v.summary
    assert v.details == ("#109 nvidia/vllm is wrong missing Ray (12 d, 4 comments): mentions nvidia/vllm; links tree/main/nvidia/vllm",)
    ev = {e.what: e.value for e in v.evidence}
    assert ev["open issues checked"] == "87 (4 pull requests left out)"
    assert ev["nvidia/vllm last change"].startswith("2025-12-01T00:00:00Z (178 d before this check)")
    assert "gh issue view 109 -R NVIDIA/dgx-spark-playbooks --comments\n" in v.fix


def test_no_match_is_ok_with_what_was_checked_and_from_where():
    v = verdict(data(commands=["vllm serve x"], source="cache-304", age_s=0.0))
    assert v.status is Status.OK
    assert v.summary == "none of 87 open issues in NVIDIA/dgx-spark-playbooks name vllm or your command"
    where = next(e for e in v.evidence if e.what == "where the list came from")
    assert "confirmed unchanged by the server (304)" in where.value and where.source.startswith("api.github.com")


def test_stale_cache_still_judges_but_says_its_age_and_the_error():
    v = verdict(data(source="stale-cache", age_s=3 * 3600, fetched_at=NOW - 3 * 3600,
                     error="cannot reach api.github.com/repos/... (ConnectError: [Errno 101])"))
    assert v.status is Status.OK
    assert "(as of 3 h ago; refresh failed: cannot reach api.github.com" in v.summary
    v = verdict(data(source="stale-cache", age_s=3 * 3600, error="offline", matches=[MATCH], matches_total=1))
    assert v.status is Status.WARN and v.summary.endswith("(as of 3 h ago; refresh failed: offline)")


def test_nothing_fetched_and_nothing_cached_is_unknown_with_the_error():
    v = verdict(data(issues_checked=None, source=None, fetched_at=None, age_s=None,
                     error="rate limited by api.github.com (HTTP 403) until ...",
                     rate_limit={"limit": 60, "remaining": 0, "reset_at": NOW + 1200, "limited": True}))
    assert v.status is Status.UNKNOWN
    assert "could not be fetched and nothing is cached (rate limited by api.github.com" in v.summary
    rl = next(e for e in v.evidence if e.what == "rate limit")
    assert rl.value.startswith("exhausted; resets at 2026-05-28")


def test_nothing_configured_is_skip_with_instructions():
    v = verdict({"configured": False, "repo": "NVIDIA/dgx-spark-playbooks", "slugs": [], "commands": []})
    assert v.status is Status.SKIP and "--playbook SLUG" in v.summary and "[playbooks] slugs" in v.summary


def test_nothing_configured_offers_the_slugs_running_processes_suggest():
    v = verdict({"configured": False, "repo": "NVIDIA/dgx-spark-playbooks", "slugs": [], "commands": [],
                 "suggestions": [{"slug": "vllm", "why": "'vllm serve' in: vllm serve Qwen/Qwen3-8B"}]})
    assert v.status is Status.SKIP and v.summary.endswith("; running processes suggest: --playbook vllm")
    assert any(e.what == "suggests vllm" and "vllm serve" in e.value for e in v.evidence)


def test_nothing_configured_offers_what_the_launch_scripts_suggest_too():
    r = readings_of(
        playbook_issues={"configured": False, "repo": "NVIDIA/dgx-spark-playbooks", "slugs": [], "commands": [],
                         "suggestions": [{"slug": "vllm", "why": "'vllm serve' in: vllm serve m"}]},
        tpscan={"files": {"jobs/serve.sh": {"serving_markers": ["vllm serve"], "training_markers": []},
                          "ft/run.sh": {"serving_markers": [], "training_markers": ["unsloth"]}}})
    v = judge(r, Config())
    assert v.status is Status.SKIP
    assert v.summary.endswith("; launch scripts and running processes suggest: --playbook vllm --playbook unsloth")
    (unsloth,) = [e for e in v.evidence if e.what == "suggests unsloth"]
    assert unsloth.source == "launch scripts" and unsloth.value == "'unsloth' in ft/run.sh"
    assert [e.source for e in v.evidence if e.what == "suggests vllm"] == ["running processes"]  # not twice


def test_missing_reading_is_unknown():
    v = verdict(None)
    assert v.status is Status.UNKNOWN and "unavailable" in v.summary


def test_many_matches_are_bounded_in_details():
    many = [{**MATCH, "number": n} for n in range(30)]
    v = verdict(data(matches=many, matches_total=42))
    assert v.status is Status.WARN and v.summary.startswith("42 open issues") and "#0, #1, #2, #3, #4 …" in v.summary
    assert len(v.details) == 21 and v.details[-1] == "… and 22 more"


def test_gotcha_card():
    assert GOTCHA.probes == ("playbook_issues", "tpscan") and not GOTCHA.intrusive and GOTCHA.cadence_s == 900
    assert "gh issue list -R NVIDIA/dgx-spark-playbooks" in GOTCHA.fix and "slugs = [\"vllm\"]" in GOTCHA.fix


def test_an_absurd_reset_time_in_a_snapshot_is_words_not_a_judge_error():
    for reset in (1e14, 1e300, float("nan"), "soon"):
        v = verdict(data(issues_checked=None, source=None, fetched_at=None, age_s=None, error="rate limited",
                         rate_limit={"limit": 60, "remaining": 0, "reset_at": reset, "limited": True}))
        assert v.status is Status.UNKNOWN
        rl = next(e for e in v.evidence if e.what == "rate limit")
        assert rl.value.startswith("exhausted; resets at an unreadable time (")
    v = verdict(data(source="stale-cache", age_s=float("inf"), error="offline"))
    assert v.status is Status.UNKNOWN
    assert v.summary == "cannot tell: the cached list of open issues is of unknown age; refresh failed: offline"


def test_a_server_asking_to_wait_is_not_called_a_rate_limit():
    v = verdict(data(source="stale-cache", age_s=600.0, error="... answered HTTP 503 and asked to wait until ...",
                     rate_limit={"limit": None, "remaining": None, "reset_at": NOW + 3600, "limited": True,
                                 "status": 503}))
    assert not any(e.what == "rate limit" for e in v.evidence)
    wait = next(e for e in v.evidence if e.what == "server asked to wait")
    assert wait.value == "HTTP 503 with Retry-After; next request after 2026-05-28 21:26 UTC, none before then"


def test_an_unwritable_cache_is_in_the_evidence_ok_or_unknown():
    why = "cache not writable: /home/u/.cache/sparktui/github (Permission denied)"
    for d in (data(cache_error=why), data(cache_error=why, issues_checked=None, error="offline")):
        ev = {e.what: e.value for e in verdict(d).evidence}
        assert ev["disk cache"].startswith(why)


def test_a_bad_api_url_is_unknown_with_the_reason():
    problem = "not a usable URL 'http://127.0.0.1:99999': the port must be a number from 1 to 65535"
    v = verdict(data(issues_checked=None, source=None, error=problem, url_problem=problem))
    assert v.status is Status.UNKNOWN and v.summary.endswith(f"so no issue was fetched ({problem})")
    assert {e.what: e.value for e in v.evidence}["GitHub API URL"] == f"not usable: {problem}"


def test_dropped_issue_objects_are_counted_in_the_evidence_and_summary():
    v = verdict(data(issues_checked=5, issues_unreadable=2))
    assert v.status is Status.OK and "2 more could not be read" in v.summary
    ev = {e.what: e.value for e in v.evidence}
    assert ev["issues left out (unreadable)"].startswith("2 issue objects without a usable number or title")


def test_only_unreadable_issue_objects_is_unknown_not_none_of_zero():
    v = verdict(data(issues_checked=0, issues_unreadable=3))
    assert v.status is Status.UNKNOWN
    assert "the API answered 3 items sparktui could not read" in v.summary


# --- every threshold just below and just above, every unknown guard ---------------------------------


def _iso(ts: float) -> str:
    from datetime import datetime, timezone
    return datetime.fromtimestamp(ts, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


@pytest.mark.parametrize("age_s,said", [(90 * DAY, True), (90 * DAY - 1, False)])
def test_untouched_days_edge(age_s, said):
    v = verdict(data(matches=[MATCH], matches_total=1,
                     folders={"vllm": {"last_commit": _iso(NOW - age_s), "sha": "abc", "error": None}}))
    assert v.status is Status.WARN
    assert ("nvidia/vllm unchanged for 90 d" in v.summary) is said
    if not said:
        assert "unchanged" not in v.summary


def test_an_untouched_folder_without_matches_is_not_a_warning():
    v = verdict(data(folders={"vllm": {"last_commit": _iso(NOW - 400 * DAY), "sha": "abc", "error": None}}))
    assert v.status is Status.OK and "unchanged" not in v.summary


@pytest.mark.parametrize("total,lines,last", [(20, 20, None), (21, 21, "… and 1 more")])
def test_detail_lines_edge(total, lines, last):
    v = verdict(data(matches=[{**MATCH, "number": n} for n in range(total)], matches_total=total))
    assert len(v.details) == lines
    if last:
        assert v.details[-1] == last
    else:
        assert not v.details[-1].startswith("…")


@pytest.mark.parametrize("total,ellipsis", [(5, False), (6, True)])
def test_numbers_in_the_summary_edge(total, ellipsis):
    v = verdict(data(matches=[{**MATCH, "number": n} for n in range(total)], matches_total=total))
    assert v.summary.startswith(f"{total} open issues in NVIDIA/dgx-spark-playbooks name vllm: #0, #1, #2, #3, #4")
    assert ("#4 …" in v.summary) is ellipsis


def test_total_falls_back_to_the_matches_kept():
    v = verdict(data(matches=[MATCH]))  # matches_total 0 in an older snapshot
    assert v.summary.startswith("1 open issue in ")


def test_a_reading_without_matches_is_unknown_not_none():
    d = data()
    del d["matches"]
    v = verdict(d)
    assert v.status is Status.UNKNOWN and "has no matches field" in v.summary


@pytest.mark.parametrize("checked,unreadable,status", [(0, 1, Status.UNKNOWN), (0, 0, Status.OK), (1, 1, Status.OK),
                                                       (0, "3", Status.OK)])
def test_unreadable_guard(checked, unreadable, status):
    v = verdict(data(issues_checked=checked, issues_unreadable=unreadable))
    assert v.status is status, v.summary
    if status is Status.OK and unreadable == "3":
        assert not any(e.what == "issues left out (unreadable)" for e in v.evidence)  # not an int: not counted


def test_one_unreadable_item_is_singular():
    ev = {e.what: e.value for e in verdict(data(issues_checked=5, issues_unreadable=1)).evidence}
    assert ev["issues left out (unreadable)"].startswith("1 issue object without")


def test_a_truncated_list_says_the_first_n():
    v = verdict(data(truncated=True))
    assert v.summary.startswith("none of the first 87 open issues")
    assert {e.what: e.value for e in v.evidence}["open issues checked"] == \
        "87 (4 pull requests left out) (stopped at the page limit; more exist)"


def test_no_pull_requests_left_out_is_not_mentioned():
    assert {e.what: e.value for e in verdict(data(pull_requests_skipped=0)).evidence}["open issues checked"] == "87"


@pytest.mark.parametrize("seconds,text", [(89, "89 s"), (90, "2 min"), (5399, "90 min"), (5400, "2 h"),
                                          (172799, "48 h"), (172800, "2 d"), (-5, "0 s"), (None, "?"), ("x", "?")])
def test_span_steps(seconds, text):
    assert g8._span(seconds) == text


def test_detail_without_a_creation_time_and_with_one_comment():
    line = g8._detail({**MATCH, "created_at": None, "comments": 1}, NOW)
    assert line.startswith("#109 nvidia/vllm is wrong missing Ray (age unknown, 1 comment):")
    assert "(age unknown" in g8._detail(MATCH, None)


@pytest.mark.parametrize("rl,value", [
    ({"limited": True, "reset_at": NOW + 60, "status": 403}, "exhausted; resets at"),
    ({"limited": True, "reset_at": NOW + 60, "status": 429}, "exhausted; resets at"),
    ({"limited": True, "reset_at": NOW + 60}, "exhausted; resets at"),
    ({"limited": False, "remaining": 0, "limit": 60}, "0 of 60 requests left"),
])
def test_rate_limit_words(rl, value):
    ev = {e.what: e.value for e in verdict(data(rate_limit=rl)).evidence}
    assert ev["rate limit"].startswith(value)


def test_no_rate_limit_seen_adds_no_row():
    assert not any(e.what == "rate limit" for e in verdict(data(rate_limit=None)).evidence)


@pytest.mark.parametrize("source,age,requests,text", [
    ("network", 30.0, 1, "fetched now; 1 request made; anonymous: 60 requests/hour"),
    ("cache-fresh", 120.0, 0, "from the disk cache, inside its TTL (no request made); data 2 min old; 0 requests made; anonymous"),
    ("odd", None, 2, "odd; 2 requests made; anonymous"),
])
def test_source_words(source, age, requests, text):
    ev = {e.what: e.value for e in verdict(data(source=source, age_s=age, requests=requests)).evidence}
    assert ev["where the list came from"].startswith(text)


def test_folder_rows_unreadable_and_odd():
    v = verdict(data(folders={"vllm": {"last_commit": None, "error": "HTTP 404"}, "x": "odd",
                              "sglang": {"last_commit": "2026-05-01T00:00:00Z", "error": "cached"}}))
    ev = {e.what: e.value for e in v.evidence}
    assert ev["nvidia/vllm last change"] == "unavailable: HTTP 404"
    assert ev["nvidia/sglang last change"] == "2026-05-01T00:00:00Z (27 d before this check) (cached; cached)"
    assert "nvidia/x last change" not in ev


def test_at_most_three_suggested_flags():
    sugg = [{"slug": s, "why": "w"} for s in ("vllm", "sglang", "unsloth", "nemo")]
    v = verdict({"configured": False, "repo": "NVIDIA/dgx-spark-playbooks", "slugs": [], "commands": [],
                 "suggestions": sugg + [{"why": "no slug"}, "odd"]})
    assert v.summary.endswith("suggest: --playbook vllm --playbook sglang --playbook unsloth")
    assert len([e for e in v.evidence if e.what.startswith("suggests ")]) == 4


def test_a_process_scan_that_failed_is_in_the_evidence():
    v = verdict({"configured": False, "repo": "NVIDIA/dgx-spark-playbooks", "slugs": [], "commands": [],
                 "suggestions": [], "suggestions_error": "process list unreadable: permission denied"})
    assert v.status is Status.SKIP and not v.summary.endswith("suggest: ")
    ev = {e.what: e.value for e in v.evidence}
    assert ev["running processes"] == "not scanned: process list unreadable: permission denied"


def test_what_is_followed_names_unknown_slugs_and_commands():
    v = verdict(data(slugs=["vllm", "mine"], commands=["a", "b"], unknown_slugs=["mine"]))
    assert v.summary == "none of 87 open issues in NVIDIA/dgx-spark-playbooks name vllm, mine or your 2 commands"
    cfg_ev = next(e for e in v.evidence if e.what == "what is followed")
    assert cfg_ev.value["not in sparktui's catalog (matched by path/URL only)"] == ["mine"]
    assert verdict(data(slugs=[], commands=[])).summary.endswith("name nothing")


# --- whole verdicts ----------------------------------------------------------------------------------

WHERE = "api.github.com /repos/NVIDIA/dgx-spark-playbooks/issues"
CONFIG_SRC = "config [playbooks] / --playbook / --command"


def test_warn_whole_verdict():
    v = verdict(data(matches=[MATCH], matches_total=1, commands=["vllm serve x"],
                     folders={"vllm": {"last_commit": "2025-12-01T00:00:00Z", "sha": "abc", "error": None}}))
    assert v.id == "G8" and v.status is Status.WARN and v.fix == g8.fix_for(data(), "NVIDIA/dgx-spark-playbooks", [MATCH])
    assert v.summary == ("1 open issue in NVIDIA/dgx-spark-playbooks name vllm or your command: #109; "
                         "nvidia/vllm unchanged for 178 d")
    assert rows(v) == [
        ("what is followed", CONFIG_SRC, {"repo": "NVIDIA/dgx-spark-playbooks", "slugs": ["vllm"], "commands": ["vllm serve x"]}),
        ("open issues checked", WHERE, "87 (4 pull requests left out)"),
        ("where the list came from", WHERE, "fetched now; 1 request made; anonymous: 60 requests/hour"),
        ("rate limit", WHERE, "57 of 60 requests left"),
        ("nvidia/vllm last change", "GitHub commits of nvidia/vllm", "2025-12-01T00:00:00Z (178 d before this check)"),
    ]
    assert v.details == ("#109 nvidia/vllm is wrong missing Ray (12 d, 4 comments): mentions nvidia/vllm; "
                         "links tree/main/nvidia/vllm",)


def test_nothing_fetched_whole_verdict():
    v = verdict(data(issues_checked=None, source=None, fetched_at=None, age_s=None, error="offline",
                     cache_error="cache not writable: x"))
    assert v.id == "G8" and v.status is Status.UNKNOWN and v.fix == g8.fix_for(data(), "NVIDIA/dgx-spark-playbooks")
    assert v.summary == ("cannot tell: the open issues of NVIDIA/dgx-spark-playbooks could not be fetched and nothing "
                         "is cached (offline)")
    assert rows(v) == [
        ("what is followed", CONFIG_SRC, {"repo": "NVIDIA/dgx-spark-playbooks", "slugs": ["vllm"], "commands": []}),
        ("open issues", WHERE, "unavailable: offline"),
        ("rate limit", WHERE, "57 of 60 requests left"),
        ("disk cache", "sparktui cache dir", "cache not writable: x; every refresh asks the server in full (no TTL, no 304)"),
    ]


def test_nothing_fetched_falls_back_to_the_reading_error_then_no_data():
    from sparktui.core.readings import Reading

    d = data(issues_checked=None, error=None)
    v = judge(readings_of(playbook_issues=Reading("playbook_issues", d, error="HTTP 500")), Config())
    assert v.summary.endswith("nothing is cached (HTTP 500)")
    v = verdict(data(issues_checked=None, error=None))
    assert v.summary.endswith("nothing is cached (no data)") and rows(v)[1][2] == "unavailable: no data"


def test_repo_falls_back_to_the_config():
    d = data()
    del d["repo"]
    assert verdict(d).summary == "none of 87 open issues in NVIDIA/dgx-spark-playbooks name vllm"


def test_skip_whole_verdict():
    v = verdict({"configured": False, "repo": "NVIDIA/dgx-spark-playbooks", "slugs": [], "commands": [],
                 "suggestions": [{"slug": "vllm", "why": "'vllm serve' in: vllm serve m"}]})
    assert v.id == "G8" and v.status is Status.SKIP and "sparktui check G8 --playbook vllm\n" in v.fix
    assert v.summary == ("nothing to watch: no playbook or command configured (set [playbooks] slugs, or pass "
                         "--playbook SLUG / --command CMD); running processes suggest: --playbook vllm")
    assert rows(v) == [("what is followed", CONFIG_SRC, {"repo": "NVIDIA/dgx-spark-playbooks", "slugs": [], "commands": []}),
                       ("suggests vllm", "running processes", "'vllm serve' in: vllm serve m")]


def test_url_problem_whole_verdict():
    v = verdict(data(url_problem="bad port"))
    assert v.id == "G8" and v.status is Status.UNKNOWN and v.fix == g8.fix_for(data(), "NVIDIA/dgx-spark-playbooks")
    assert rows(v)[1] == ("GitHub API URL", "--api-url / [playbooks] api_url / SPARKTUI_GITHUB_API", "not usable: bad port")


def test_unreadable_only_whole_summary():
    v = verdict(data(issues_checked=0, issues_unreadable=1, source="stale-cache", age_s=7200.0, error="offline"))
    assert v.fix == g8.fix_for(data(), "NVIDIA/dgx-spark-playbooks")
    assert v.summary == ("cannot tell: the API answered 1 items sparktui could not read (no usable issue number or "
                         "title) (as of 2 h ago; refresh failed: offline)")


def test_script_suggestions_from_the_scan():
    scan = {"files": {"b.sh": {"serving_markers": ["sglang.launch_server"]},
                      "a.sh": {"training_markers": ["unsloth"], "serving_markers": None}}}
    assert g8._script_suggestions(scan) == [
        {"slug": "unsloth", "why": "'unsloth' in a.sh", "from": "launch scripts"},
        {"slug": "sglang", "why": "'sglang.launch_server' in b.sh", "from": "launch scripts"}]
    assert g8._script_suggestions(None) == [] and g8._script_suggestions({"files": None}) == []


def test_utc_words():
    assert g8._utc(NOW) == "2026-05-28 20:26 UTC"
    assert g8._utc(None) == "an unreadable time (None)"


def test_parse_stamps():
    assert g8._parse("2026-05-28T20:26:40Z") == NOW
    assert g8._parse("2026-05-28T20:26:40") == NOW  # no zone: UTC
    assert g8._parse("") is None and g8._parse(5) is None and g8._parse("yesterday") is None


def test_odd_numbers_in_an_edited_snapshot_are_not_believed_nor_a_crash():
    v = verdict(data(matches=[MATCH], matches_total="N/A", checked_at="N/A",
                     folders={"vllm": {"last_commit": "2025-12-01T00:00:00Z", "sha": "abc", "error": None}}))
    assert v.status is Status.WARN and v.summary.startswith("1 open issue in ")  # counted from the matches kept
    assert "unchanged for" not in v.summary  # no "now" to age the folder against
    assert v.details[0].startswith("#109 nvidia/vllm is wrong missing Ray (age unknown, 4 comments)")
    assert g8._number(True) is None and g8._number(float("nan")) is None and g8._number(3) == 3


# --- the id and the exact words on every path ---------------------------------------------------------


def test_every_path_is_g8():
    cases = [None, data(), data(matches=[MATCH], matches_total=1), data(issues_checked=None, error="x"),
             data(url_problem="bad"), data(issues_checked=0, issues_unreadable=2),
             {"configured": False, "repo": "r", "slugs": [], "commands": []}]
    assert {verdict(d).id for d in cases} == {"G8"}
    d = data()
    del d["matches"]
    assert verdict(d).id == "G8"


def test_missing_reading_whole_summary():
    assert verdict(None).summary == ("cannot tell: open issues of the playbooks repository unavailable "
                                     "(playbook_issues unavailable (test))")


def test_lacking_matches_whole_summary():
    d = data()
    del d["matches"]
    assert verdict(d).summary == ("cannot tell: open issues of the playbooks repository: the playbook_issues reading "
                                  "has no matches field")


def test_repo_and_host_from_the_reading():
    d = data(repo="me/fork")
    del d["api_host"]
    v = verdict(d)
    assert v.summary == "none of 87 open issues in me/fork name vllm"
    assert rows(v)[1] == ("open issues checked", "GitHub API /repos/me/fork/issues", "87 (4 pull requests left out)")


def test_ok_whole_with_unreadable_items():
    v = verdict(data(issues_checked=5, issues_unreadable=2))
    assert v.summary == "none of 5 readable (2 more could not be read) open issues in NVIDIA/dgx-spark-playbooks name vllm"
    assert v.fix == g8.FIX
    assert ("issues left out (unreadable)", WHERE,
            "2 issue objects without a usable number or title: not matched") in rows(v)


def test_two_untouched_folders_are_both_said():
    old = {"last_commit": _iso(NOW - 100 * DAY), "sha": "a", "error": None}
    v = verdict(data(slugs=["vllm", "sglang"], matches=[MATCH], matches_total=1, folders={"vllm": old, "sglang": old}))
    assert v.summary.endswith(": #109; nvidia/vllm unchanged for 100 d; nvidia/sglang unchanged for 100 d")


def test_the_same_slug_from_two_scripts_is_suggested_once():
    r = readings_of(playbook_issues={"configured": False, "repo": "r", "slugs": [], "commands": []},
                    tpscan={"files": {"a.sh": {"training_markers": ["unsloth"]}, "b.sh": {"training_markers": ["unsloth"]}}})
    v = judge(r, Config())
    assert [e.value for e in v.evidence if e.what == "suggests unsloth"] == ["'unsloth' in a.sh"]


def test_skip_without_suggestions_whole_summary():
    v = verdict({"configured": False, "repo": "r", "slugs": [], "commands": [], "suggestions_error": "denied"})
    assert v.summary == ("nothing to watch: no playbook or command configured (set [playbooks] slugs, or pass "
                         "--playbook SLUG / --command CMD)")
    assert ("running processes", "process scan", "not scanned: denied") in rows(v)


@pytest.mark.parametrize("over,text", [
    ({"source": "stale-cache", "error": "offline", "age_s": 60.0, "requests": 0},
     "from the disk cache: the refresh failed; data 60 s old; error: offline; 0 requests made; anonymous: 60 requests/hour"),
    ({"source": "cache-304", "error": "odd", "age_s": 60.0, "requests": 1},
     "from the disk cache, confirmed unchanged by the server (304); data 60 s old; 1 request made; anonymous: 60 requests/hour"),
    ({"source": None, "age_s": None, "auth": None},
     "unknown; 1 request made"),
])
def test_source_text_whole(over, text):
    assert g8._source_text(data(**over)) == text


def test_source_text_without_a_request_count():
    d = data(auth=None)
    del d["requests"]
    assert g8._source_text(d) == "fetched now; 0 requests made"


def test_folder_rows_without_a_date_or_a_now():
    v = verdict(data(folders={"vllm": {"last_commit": None, "error": None}}))
    assert rows(v)[-1] == ("nvidia/vllm last change", "GitHub commits of nvidia/vllm", "unavailable: no date")
    v = verdict(data(checked_at=None, folders={"vllm": {"last_commit": "2025-12-01T00:00:00Z", "error": None}}))
    assert rows(v)[-1] == ("nvidia/vllm last change", "GitHub commits of nvidia/vllm", "2025-12-01T00:00:00Z")


def test_rate_limit_rows_whole():
    v = verdict(data(rate_limit={"limited": True, "reset_at": NOW + 60, "status": 403}))
    assert ("rate limit", WHERE, "exhausted; resets at 2026-05-28 20:27 UTC; no request before then") in rows(v)
    v = verdict(data(rate_limit={"limited": True, "reset_at": NOW + 60, "status": 503}))
    assert ("server asked to wait", WHERE,
            "HTTP 503 with Retry-After; next request after 2026-05-28 20:27 UTC, none before then") in rows(v)


def test_detail_without_comments_and_utc_cut():
    assert "(12 d, 0 comments)" in g8._detail({**MATCH, "comments": None}, NOW)
    assert g8._utc("y" * 50) == f"an unreadable time ({'y' * 40})"


@pytest.mark.parametrize("days, status", [(g8.STALE_MAX_DAYS - 0.1, Status.OK), (g8.STALE_MAX_DAYS + 0.1, Status.UNKNOWN)])
def test_a_kept_list_after_a_failed_refresh_stands_up_to_seven_days_then_is_unknown(days, status):
    """Just under and just over STALE_MAX_DAYS (7): a week-old listing kept from the cache still says
    "none open"; a day older it cannot (the mutation run found the bound unpinned)."""
    v = verdict(data(source="stale-cache", age_s=days * DAY, fetched_at=NOW - days * DAY, error="HTTP 500"))
    assert v.status is status, v.summary
    if status is Status.UNKNOWN:
        assert "over 7 d is out of date" in v.summary and "refresh failed: HTTP 500" in v.summary
