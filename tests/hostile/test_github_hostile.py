"""The GitHub API answering garbage, from a real local HTTP server (src/sparktui/testing/github_server.py): G8 never ok on it.

Pages of any JSON shape (wrong types in issue fields, huge bodies, invalid UTF-8) and headers with
garbage values (Link, ETag, Retry-After, X-RateLimit-*): the fetch never raises, ends in bounded
time, and the judge says unknown or names what it read, never ok from nothing. Then the Seen cases of
issue 15: a playbook that does not exist, ``../../etc``, a 57-year-old cache after a failed
refresh, and a cache entry with a non-string ETag.
"""

from __future__ import annotations

import json
import time

from hypothesis import given, settings
from hypothesis import strategies as st

from sparktui.core.config import Config
from sparktui.core.verdict import Status, Verdict
from sparktui.gotchas.g08_stale_playbooks import judge
from sparktui.probes import playbooks as probe
from tests.conftest import readings_of
from sparktui.playbooks import github
from sparktui.testing.github_server import IssuesApp, LocalServer, Reply, make_issue, serve_issues
from tests.hostile.test_snapshot_fields import JSON_TREES
from tests.gotchas.builders import Clock, g8_judged_live as _judged
from tests.gotchas.builders import client_settings

HEADER_TEXT = st.text(st.characters(min_codepoint=0x20, max_codepoint=0xFF), max_size=60)
GARBAGE_HEADERS = st.dictionaries(
    st.sampled_from(["Link", "ETag", "Retry-After", "X-RateLimit-Limit", "X-RateLimit-Remaining",
                     "X-RateLimit-Reset", "Content-Type"]),
    HEADER_TEXT | st.sampled_from(["-1", "nan", "1e308", "9" * 40, '<http://evil.example/x>; rel="next"',
                                   "<::>; rel=next", "Thu, 01 Jan 1970 00:00:00 GMT"]), max_size=4)
ISSUE_FIELD = st.sampled_from(["number", "title", "body", "created_at", "comments", "labels", "pull_request", "html_url"])
BODIES = st.one_of(
    JSON_TREES.map(lambda v: json.dumps(v).encode()),
    st.tuples(ISSUE_FIELD, JSON_TREES).map(
        lambda fv: json.dumps([{**make_issue(1, "nvidia/vllm broken"), fv[0]: fv[1]}]).encode()),
    st.sampled_from([b"", b"\xff\xfe\x00garbage", b"[" * 5000, b'[{"number": 1, "title": "\xc3\x28"}]',
                     json.dumps([make_issue(i, "x" * 5000) for i in range(300)]).encode()]),
)
STATUSES = st.sampled_from([200, 200, 200, 304, 403, 429, 500, 503])
# The client's own bound is its timeout 2 s x (1 try + 2 retries) + backoff, about 6 s; an answer takes
# well under 2 s here, and the rest is slack for a loaded 2-core CI machine (one took 23 s there).
BOUND_S = 30.0


@settings(max_examples=40)
@given(status=STATUSES, headers=GARBAGE_HEADERS, body=BODIES)
def test_any_page_and_headers_give_a_verdict_in_bounded_time_never_ok_on_garbage(tmp_path_factory, status, headers,
                                                                                 body):
    tmp = tmp_path_factory.mktemp("gh")
    with LocalServer(lambda req: Reply(status, headers, body)) as server:
        t0 = time.monotonic()
        v = _judged(server.url, tmp)
        took = time.monotonic() - t0
    assert took < BOUND_S, f"{took:.1f} s"
    assert "judge error" not in v.summary
    if v.status is Status.OK:  # only a page that is a list of readable issues may say none name vllm
        page = json.loads(body)
        assert status == 200 and isinstance(page, list), v.summary
        assert v.summary.startswith("none of ")


def _stale_after_failure(tmp_path, age_s: float) -> Verdict:
    """G8 on a good listing cached, then ``age_s`` later refreshed from the same server answering 500."""
    clock, broken = Clock(), []
    app = IssuesApp([make_issue(1, "Issue 1")])
    with LocalServer(lambda req: Reply(500, {}, b'{"message": "boom"}') if broken else app(req)) as server:
        app.bind(server)
        s = client_settings(server.url, tmp_path, clock)
        assert github.fetch_open_issues_sync(s).error is None
        clock.t += age_s
        broken.append(True)
        cfg = Config().with_overrides(playbooks={"slugs": ["vllm"], "api_url": server.url})
        return judge(readings_of(playbook_issues=probe.read(cfg, settings=s, token=None)), cfg)


def test_a_57_year_old_cache_after_a_failed_refresh_is_unknown_saying_how_old_and_why(tmp_path):
    v = _stale_after_failure(tmp_path / "old", 57 * 365.25 * 86400)
    assert v.status is Status.UNKNOWN
    assert v.summary.startswith("cannot tell: the last list of open issues is 20819 d old (kept from the cache; over 7 d")
    assert "refresh failed: " in v.summary and "HTTP 500" in v.summary
    recent = _stale_after_failure(tmp_path / "recent", 3600.0)  # an hour old: it stands, with its age
    assert recent.status is Status.OK and "refresh failed" in recent.summary


def test_a_cache_entry_with_a_non_string_etag_is_discarded_not_trusted(tmp_path):
    clock = Clock()
    server, _ = serve_issues([make_issue(1, "Issue 1")])
    with server:
        s = client_settings(server.url, tmp_path, clock)
        assert github.fetch_open_issues_sync(s).error is None
        (path,) = [p for p in (tmp_path / "gh-cache").glob("*.json") if p.name != "ratelimit.json"]
        path.write_text(json.dumps({**json.loads(path.read_text()), "etag": 12345}))
        clock.t += 3600  # past the TTL: a refresh
        again = github.fetch_open_issues_sync(s)
    assert again.error is None and again.source == github.SOURCE_NETWORK  # fetched afresh, not stale forever


def test_a_playbook_that_does_not_exist_and_a_path_slug_are_unknown_never_ok(tmp_path):
    server, _ = serve_issues([make_issue(1, "Issue 1")])
    with server:
        missing = _judged(server.url, tmp_path / "a", slugs=("no-such-playbook",))
        escaping = _judged(server.url, tmp_path / "b", slugs=("../../etc",))
        paths = [q.path for q in server.requests]
    assert missing.status is Status.UNKNOWN
    assert "no commits touch nvidia/no-such-playbook (no such playbook?)" in missing.summary
    assert escaping.status is Status.UNKNOWN and "not a playbook slug: '../../etc'" in escaping.summary
    assert not any(".." in p for p in paths)  # nothing asked outside the repository's folders
