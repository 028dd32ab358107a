"""G8 client against real HTTP servers on 127.0.0.1: paging, PRs, ETag/304, TTL, rate limits,
retries, timeouts, bad bodies, and where the token may go."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time

import pytest

from sparktui.testing.github_server import IssuesApp, LocalServer, Reply, make_issue, serve_issues
from sparktui.playbooks import github
from sparktui.playbooks.github import Token, fetch_open_issues
from tests.gotchas.builders import Clock, client_settings as settings, g8_judged_live as _judged


def items(n: int, prs: set[int] = frozenset()) -> list[dict]:
    return [make_issue(i, f"Issue {i}", f"body {i}", pr=i in prs) for i in range(n, 0, -1)]


async def test_pages_through_link_header_and_leaves_out_pull_requests(tmp_path):
    server, _ = serve_issues(items(250, prs={5, 17, 100, 101, 249}))
    with server:
        r = await fetch_open_issues(settings(server.url, tmp_path))
    assert r.error is None and r.source == github.SOURCE_NETWORK
    assert len(r.issues) == 245 and r.pull_requests_skipped == 5
    assert {i["number"] for i in r.issues}.isdisjoint({5, 17, 100, 101, 249})
    assert r.requests == 3 and [q.query.get("page", "1") for q in server.requests] == ["1", "2", "3"]
    assert all(q.query["per_page"] == "100" and q.query["state"] == "open" for q in server.requests)
    assert r.rate_limit.remaining == 57 and r.rate_limit.limit == 60


async def test_ttl_then_conditional_304_then_changed_page(tmp_path):
    server, app = serve_issues(items(150))
    clock = Clock()
    s = settings(server.url, tmp_path, clock)
    with server:
        first = await fetch_open_issues(s)
        assert (first.source, first.requests) == (github.SOURCE_NETWORK, 2)

        clock.t += 300  # inside the TTL: nothing sent at all
        fresh = await fetch_open_issues(s)
        assert (fresh.source, fresh.requests, len(server.requests)) == (github.SOURCE_CACHE_FRESH, 0, 2)
        assert fresh.age_s == 300 and len(fresh.issues) == 150

        clock.t += 400  # TTL over: conditional requests only, all answered 304
        revalidated = await fetch_open_issues(s)
        conditional = server.requests[2:]
        assert revalidated.source == github.SOURCE_CACHE_304 and revalidated.requests == 2
        assert all(q.headers.get("if-none-match", "").startswith('W/"') for q in conditional)
        assert revalidated.age_s == 0 and len(revalidated.issues) == 150
        assert app.remaining == 58  # the 304s did not spend the rate limit

        app.items.insert(0, make_issue(151, "SGLang: new failure"))
        clock.t += 700
        changed = await fetch_open_issues(s)
    assert changed.source == github.SOURCE_NETWORK
    assert 151 in {i["number"] for i in changed.issues} and len(changed.issues) == 151


async def test_rate_limited_403_waits_for_reset_even_across_clients(tmp_path):
    clock = Clock()
    limited = {"on": True}
    ok_app = IssuesApp(items(3))

    def app(req):
        if limited["on"]:
            return Reply(403, {"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0",
                               "X-RateLimit-Reset": str(int(clock.t) + 1800)},
                         b'{"message": "API rate limit exceeded for 127.0.0.1."}')
        return ok_app(req)

    with LocalServer(app) as server:
        ok_app.bind(server)
        r = await fetch_open_issues(settings(server.url, tmp_path, clock))
        assert r.issues is None and r.source is None and r.requests == 1
        assert r.rate_limit.limited and r.rate_limit.reset_at == clock.t + 1800
        assert "rate limited" in r.error and "in 30 min" in r.error and "GITHUB_TOKEN" in r.error

        limited["on"] = False
        clock.t += 600  # before the reset: a new client (new process) still does not ask
        again = await fetch_open_issues(settings(server.url, tmp_path, clock))
        assert again.requests == 0 and len(server.requests) == 1
        assert again.rate_limit.limited and "not asking again" in again.error

        clock.t += 1300  # after the reset
        after = await fetch_open_issues(settings(server.url, tmp_path, clock))
    assert after.source == github.SOURCE_NETWORK and after.error is None and len(after.issues) == 3


def _ok_then(bad: Reply, n: int = 5):
    """An app that answers like GitHub until ``state["bad"]`` is set, then always ``bad``."""
    ok_app = IssuesApp(items(n))
    state = {"bad": False}

    def app(req):
        return bad if state["bad"] else ok_app(req)

    return app, ok_app, state


@contextlib.asynccontextmanager
async def went_bad(tmp_path, clock, bad: Reply):
    """A server that answered like GitHub once (the cache is seeded), then only ``bad``, 1000 s on."""
    app, ok_app, state = _ok_then(bad)
    with LocalServer(app) as server:
        ok_app.bind(server)
        s = settings(server.url, tmp_path, clock)
        assert (await fetch_open_issues(s)).source == github.SOURCE_NETWORK
        state["bad"] = True
        clock.t += 1000
        yield server, s, state


async def test_retry_after_429_keeps_the_cached_list(tmp_path):
    clock = Clock()
    async with went_bad(tmp_path, clock, Reply(429, {"Retry-After": "120"}, b'{"message": "slow down"}')) as (server, s, state):
        r = await fetch_open_issues(s)
    assert r.source == github.SOURCE_STALE and len(r.issues) == 5 and r.age_s == 1000
    assert r.rate_limit.limited and r.rate_limit.reset_at == clock.t + 120 and "HTTP 429" in r.error


async def test_5xx_is_retried_with_backoff_then_succeeds(tmp_path):
    ok_app = IssuesApp(items(2))
    failures = {"left": 2}

    def app(req):
        if failures["left"]:
            failures["left"] -= 1
            return Reply(502, {}, b"bad gateway")
        return ok_app(req)

    with LocalServer(app) as server:
        ok_app.bind(server)
        r = await fetch_open_issues(settings(server.url, tmp_path))
    assert r.error is None and r.source == github.SOURCE_NETWORK and r.requests == 3 and len(r.issues) == 2


async def test_5xx_that_persists_is_an_error_in_words_after_bounded_attempts(tmp_path):
    with LocalServer(lambda req: Reply(500, {}, b"boom")) as server:
        r = await fetch_open_issues(settings(server.url, tmp_path, retries=1))
    assert r.issues is None and r.requests == 2 and len(server.requests) == 2
    assert "answered HTTP 500" in r.error and "tried 2 times" in r.error


async def test_slow_server_times_out_and_is_retried_a_bounded_number_of_times(tmp_path):
    with LocalServer(lambda req: Reply(200, {}, b"[]", delay_s=3.0)) as server:
        t0 = time.perf_counter()
        r = await fetch_open_issues(settings(server.url, tmp_path, timeout_s=0.2, retries=1))
        took = time.perf_counter() - t0
    assert r.issues is None and r.requests == 2
    assert "no answer" in r.error and "0.2 s" in r.error and "tried 2 times" in r.error
    assert took < 1.5


async def test_offline_keeps_last_good_list_with_age_and_error(tmp_path):
    clock = Clock()
    server, _ = serve_issues(items(4), commit_dates={"vllm": "2025-11-02T08:00:00Z"})
    s = settings(server.url, tmp_path, clock, retries=0)
    with server:
        assert (await fetch_open_issues(s, folder_slugs=["vllm"])).source == github.SOURCE_NETWORK
    clock.t += 7200  # the server is gone now: connection refused
    r = await fetch_open_issues(s, folder_slugs=["vllm"])
    assert r.source == github.SOURCE_STALE and len(r.issues) == 4 and r.age_s == 7200
    assert "cannot reach" in r.error and "ConnectError" in r.error
    assert r.requests == 1  # the folder lookup is not retried against a dead host
    assert r.folders["vllm"]["last_commit"] == "2025-11-02T08:00:00Z" and "not refreshed" in r.folders["vllm"]["error"]


async def test_malformed_json_is_a_clear_error_and_not_retried(tmp_path):
    with LocalServer(lambda req: Reply(200, {"Content-Type": "application/json"}, b'[{"number": 1, "title": ')) as server:
        r = await fetch_open_issues(settings(server.url, tmp_path))
    assert r.issues is None and r.requests == 1
    assert r.error.startswith("malformed JSON from 127.0.0.1") and "line 1" in r.error


async def test_object_instead_of_list_is_a_clear_error(tmp_path):
    with LocalServer(lambda req: Reply(200, {}, b'{"message": "Moved Permanently"}')) as server:
        r = await fetch_open_issues(settings(server.url, tmp_path))
    assert r.issues is None and "expected a list of issues" in r.error and "Moved Permanently" in r.error


async def test_huge_declared_body_is_refused_without_reading_it(tmp_path):
    def app(req):
        return Reply(200, {"Content-Length": str(30 * 1024 * 1024)}, (b" " * 65536 for _ in range(480)))

    with LocalServer(app) as server:
        r = await fetch_open_issues(settings(server.url, tmp_path, max_body_bytes=1_000_000))
    assert r.issues is None and "larger than 1 MB" in r.error and r.requests == 1


async def test_huge_streamed_body_stops_at_the_cap(tmp_path):
    def endless():
        yield b"["
        for _ in range(2000):  # ~130 MB if nobody stopped reading
            yield b'{"number": 1, "title": "x"},' * 2000

    with LocalServer(lambda req: Reply(200, {}, endless())) as server:
        t0 = time.perf_counter()
        r = await fetch_open_issues(settings(server.url, tmp_path, max_body_bytes=2_000_000))
    assert r.issues is None and "larger than 2 MB" in r.error and "stopped reading" in r.error
    assert time.perf_counter() - t0 < 3


async def test_token_goes_only_to_the_configured_api_origin(tmp_path):
    other = LocalServer(IssuesApp(items(150)))  # a second host on another port
    other.app.bind(other)
    api, _ = serve_issues(items(150), link_base=other.url)  # its page 1 links to the other host
    secret = "ghp_s3cr3t-T0KEN-value"
    with api, other:
        r = await fetch_open_issues(settings(api.url, tmp_path), token=Token(secret, "GITHUB_TOKEN"))
    assert r.error is None and len(r.issues) == 150
    assert [q.headers.get("authorization") for q in api.requests] == [f"Bearer {secret}"]
    assert len(other.requests) == 1 and "authorization" not in other.requests[0].headers
    # nor in the result, its repr, or anything written to the cache
    assert secret not in json.dumps(r.to_dict()) and secret not in repr(r) and r.auth == "token from GITHUB_TOKEN"
    for f in (tmp_path / "gh-cache").iterdir():
        assert secret not in f.read_text()


async def test_server_echoing_the_token_in_an_error_is_redacted(tmp_path):
    secret = "ghp_echoed_secret_123"
    with LocalServer(lambda req: Reply(418, {}, json.dumps({"message": req.headers.get("authorization", "")}).encode())) as server:
        r = await fetch_open_issues(settings(server.url, tmp_path), token=Token(secret, "GH_TOKEN"))
    assert "HTTP 418" in r.error and secret not in r.error and "<token>" in r.error


async def test_plain_http_to_a_non_loopback_host_is_refused_without_a_request(tmp_path):
    r = await fetch_open_issues(settings("http://api.example.com", tmp_path), token=Token("t", "GITHUB_TOKEN"))
    assert r.issues is None and r.requests == 0 and "plain http" in r.error and "https" in r.error


async def test_plain_http_next_link_to_a_non_loopback_host_is_not_followed(tmp_path):
    server, _ = serve_issues(items(150), link_base="http://mirror.example.com")
    with server:
        r = await fetch_open_issues(settings(server.url, tmp_path), token=Token("ghp_long_enough_token", "GITHUB_TOKEN"))
    assert r.issues is None and r.requests == 1 and "refusing plain http:// to mirror.example.com" in r.error


def test_url_policy_allows_https_and_loopback_http_only():
    allowed = ["https://api.github.com", "https://ghe.example.com/api/v3", "http://127.0.0.1:8080",
               "http://127.3.4.5", "http://[::1]:9000", "http://localhost:1234"]
    refused = ["http://api.github.com", "http://10.0.0.1", "http://192.168.1.2:80", "ftp://api.github.com",
               "http://localhost.example.com"]
    assert [github.url_problem(u) for u in allowed] == [None] * len(allowed)
    assert all(github.url_problem(u) for u in refused)


async def test_folder_last_commit_dates(tmp_path):
    server, _ = serve_issues(items(1), commit_dates={"vllm": "2025-11-02T08:00:00Z"})
    with server:
        r = await fetch_open_issues(settings(server.url, tmp_path), folder_slugs=["vllm", "nosuch"])
    assert r.folders["vllm"] == {"last_commit": "2025-11-02T08:00:00Z", "sha": "a" * 12, "error": None}
    assert r.folders["nosuch"]["last_commit"] is None and "no commits" in r.folders["nosuch"]["error"]
    assert sorted(q.query["path"] for q in server.seen("/commits")) == ["nvidia/nosuch", "nvidia/vllm"]


async def test_bad_repo_name_makes_no_request(tmp_path):
    r = await fetch_open_issues(settings("http://127.0.0.1:9", tmp_path, repo="not a repo"))
    assert r.issues is None and r.requests == 0 and "OWNER/NAME" in r.error


def test_api_url_precedence():
    env = {github.ENV_API_URL: "https://ghe.corp/api/v3/"}
    assert github.resolve_api_url("https://api.github.com", env) == "https://ghe.corp/api/v3"  # env beats default
    assert github.resolve_api_url("http://127.0.0.1:5000", env) == "http://127.0.0.1:5000"  # explicit beats env
    assert github.resolve_api_url("https://api.github.com", {}) == "https://api.github.com"


def test_token_discovery_env_then_gh_but_never_gh_for_loopback(tmp_path, monkeypatch):
    monkeypatch.setenv("GH_TOKEN", "from-env")
    t = github.discover_token("https://api.github.com")
    assert t.source == "GH_TOKEN" and t.reveal() == "from-env" and "from-env" not in repr(t) + str(t)
    monkeypatch.delenv("GH_TOKEN")

    bindir = tmp_path / "bin"
    bindir.mkdir()
    gh = bindir / "gh"
    log = tmp_path / "gh-args"
    gh.write_text(f'#!/bin/sh\necho "$@" > {log}\necho gho_from_gh\n')
    gh.chmod(gh.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    assert github.discover_token("http://127.0.0.1:8000") is None and not log.exists()
    t = github.discover_token("https://api.github.com")
    assert t.source == "gh auth token" and t.reveal() == "gho_from_gh"
    assert log.read_text().split() == ["auth", "token", "--hostname", "github.com"]


async def test_sync_wrapper_works_inside_a_running_event_loop(tmp_path):
    server, _ = serve_issues(items(3))
    with server:
        r = github.fetch_open_issues_sync(settings(server.url, tmp_path))
    assert r.source == github.SOURCE_NETWORK and len(r.issues) == 3


async def test_corrupt_cache_files_read_as_absent(tmp_path):
    clock = Clock()
    server, _ = serve_issues(items(3))
    s = settings(server.url, tmp_path, clock)
    with server:
        await fetch_open_issues(s)
        for f in (tmp_path / "gh-cache").iterdir():
            f.write_text('{"url": truncated')
        clock.t += 10  # inside the TTL, but nothing usable is cached: fetch again, do not crash
        r = await fetch_open_issues(s)
    assert r.error is None and r.source == github.SOURCE_NETWORK and len(r.issues) == 3 and r.requests == 1


# --------------------------------------------------------------------------- audit: bounded waits


@pytest.mark.parametrize("status, headers", [
    (429, {"Retry-After": "9" * 30}),  # used to raise OverflowError while formatting: the cache was lost
    (429, {"Retry-After": "Thu, 01 Jan 2099 00:00:00 GMT"}),  # used to mean no request for 73 years
    (403, {"X-RateLimit-Limit": "60", "X-RateLimit-Remaining": "0", "X-RateLimit-Reset": "100000000000000"}),
])
async def test_absurd_rate_limit_waits_are_bounded_to_an_hour_and_the_cache_is_kept(tmp_path, status, headers):
    clock = Clock()
    async with went_bad(tmp_path, clock, Reply(status, headers, b'{"message": "API rate limit exceeded"}')) as (server, s, state):
        r = await fetch_open_issues(s)
        assert r.source == github.SOURCE_STALE and len(r.issues) == 5 and r.requests == 1
        assert r.rate_limit.limited and r.rate_limit.reset_at == clock.t + github.MAX_WAIT_S
        assert "in 60 min" in r.error and "internal error" not in r.error
        stored = json.loads((tmp_path / "gh-cache" / "ratelimit.json").read_text())
        assert [e["reset_at"] for e in stored.values()] == [clock.t + github.MAX_WAIT_S]

        state["bad"] = False
        clock.t += github.MAX_WAIT_S + 1  # an hour later G8 asks again
        after = await fetch_open_issues(s)
    assert after.error is None and after.requests == 1 and after.source == github.SOURCE_CACHE_304


async def test_a_far_reset_stored_by_an_older_version_expires_within_the_hour(tmp_path):
    clock = Clock()
    server, _ = serve_issues(items(3))
    with server:
        cache = tmp_path / "gh-cache"
        cache.mkdir()
        origin = f"http://127.0.0.1:{server.httpd.server_address[1]}"
        (cache / "ratelimit.json").write_text(json.dumps({origin: {"reset_at": 4.1e9, "limit": 60}}))  # 2099
        s = settings(server.url, tmp_path, clock)
        r = await fetch_open_issues(s)
        assert r.requests == 0 and r.rate_limit.reset_at == clock.t + github.MAX_WAIT_S and "in 60 min" in r.error
        clock.t += github.MAX_WAIT_S + 1
        after = await fetch_open_issues(s)
    assert after.source == github.SOURCE_NETWORK and after.error is None and len(after.issues) == 3


def test_time_formatting_survives_any_number():
    for ts in (1e30, 1e14, float("nan"), float("inf"), -1e20):
        assert isinstance(github._fmt_when(ts, 1_800_000_000.0), str)
    assert github._bounded_reset(10 ** 400, 5.0) == 5.0 + github.MAX_WAIT_S
    assert github._bounded_reset(float("nan"), 5.0) == 5.0 + github.MAX_WAIT_S


async def test_an_unexpected_exception_during_a_refresh_falls_back_to_the_cache(tmp_path, monkeypatch):
    clock = Clock()
    server, app = serve_issues(items(4))
    s = settings(server.url, tmp_path, clock)
    with server:
        assert (await fetch_open_issues(s)).source == github.SOURCE_NETWORK
        app.items.insert(0, make_issue(5, "new"))  # a changed page: 200, trimmed again

        def boom(payload):
            raise RuntimeError("trim blew up")

        monkeypatch.setattr(github, "_trim_issue_page", boom)
        clock.t += 900
        r = await fetch_open_issues(s)
    assert r.source == github.SOURCE_STALE and len(r.issues) == 4 and r.age_s == 900
    assert r.error == "internal error while fetching: RuntimeError: trim blew up"


# --------------------------------------------------------------------------- audit: unwritable cache


async def test_an_unwritable_cache_dir_still_works_and_says_so(tmp_path):
    not_a_dir = tmp_path / "gh-cache"
    not_a_dir.write_text("a file where the cache dir should be")
    server, _ = serve_issues(items(3))
    s = settings(server.url, tmp_path)  # cache_dir is that file
    with server:
        r = await fetch_open_issues(s)
        again = await fetch_open_issues(s)  # inside the TTL, but nothing could be kept
    assert r.source == github.SOURCE_NETWORK and len(r.issues) == 3
    assert r.cache_error == f"cache not writable: {not_a_dir} (not a directory)"
    assert again.requests == 1 and again.cache_error == r.cache_error
    assert not_a_dir.read_text() == "a file where the cache dir should be"  # nothing lost


async def test_a_writable_cache_reports_no_cache_error(tmp_path):
    server, _ = serve_issues(items(1))
    with server:
        r = await fetch_open_issues(settings(server.url, tmp_path))
    assert r.cache_error is None and r.to_dict()["cache_error"] is None


# --------------------------------------------------------------------------- audit: Retry-After on 5xx


async def test_503_with_retry_after_is_not_retried_and_is_remembered(tmp_path):
    clock = Clock()
    async with went_bad(tmp_path, clock, Reply(503, {"Retry-After": "3600"}, b'{"message": "Service Unavailable"}')) as (server, s, state):
        r = await fetch_open_issues(s)
        assert r.requests == 1 and len(server.requests) == 2  # one 503, no retries before the hour
        assert r.source == github.SOURCE_STALE and len(r.issues) == 5
        assert "HTTP 503: Service Unavailable and asked to wait until" in r.error and "in 60 min" in r.error
        assert r.rate_limit.limited and r.rate_limit.status == 503 and r.rate_limit.reset_at == clock.t + 3600

        clock.t += 600  # a new run before then sends nothing
        again = await fetch_open_issues(s)
        assert again.requests == 0 and len(server.requests) == 2
        assert "asked to wait (HTTP 503) until" in again.error and "in 50 min" in again.error

        state["bad"] = False
        clock.t += 3001
        after = await fetch_open_issues(s)
    assert after.error is None and after.requests == 1


async def test_503_with_a_huge_retry_after_is_bounded(tmp_path):
    clock = Clock()
    with LocalServer(lambda req: Reply(503, {"Retry-After": "99999999999"}, b"")) as server:
        r = await fetch_open_issues(settings(server.url, tmp_path, clock))
    assert r.issues is None and r.requests == 1 and r.rate_limit.reset_at == clock.t + github.MAX_WAIT_S


async def test_503_with_a_retry_after_shorter_than_the_backoff_is_still_retried(tmp_path):
    ok_app = IssuesApp(items(2))
    failures = {"left": 2}

    def app(req):
        if failures["left"]:
            failures["left"] -= 1
            return Reply(503, {"Retry-After": "0"}, b"")
        return ok_app(req)

    with LocalServer(app) as server:
        ok_app.bind(server)
        r = await fetch_open_issues(settings(server.url, tmp_path))
    assert r.error is None and r.requests == 3 and len(r.issues) == 2


# --------------------------------------------------------------------------- audit: odd API URLs


BAD_API_URLS = {
    "http://[::1": "IPv6",
    "http://127.0.0.1:99999": "port must be a number from 1 to 65535",
    "http://127.0.0.1:notaport": "port must be a number from 1 to 65535",
    "http://127.0.0.1:0": "port must be a number from 1 to 65535",
    "https://user:pw@api.github.com": "user name or password",
    "https://api.github.com/?x=1#frag": "no ?query or #fragment",
    "https://api.github.com#frag": "no ?query or #fragment",
    "http://evil.localhost:8080": "refusing plain http:// to evil.localhost",
    "https://exa mple.com": "is not a host name",
    "api.github.com": "must start with https://",
    "": "must start with https://",
}


@pytest.mark.parametrize("url, why", sorted(BAD_API_URLS.items()))
async def test_bad_api_urls_are_refused_in_words_without_a_request(tmp_path, url, why):
    assert why in github.api_url_problem(url)
    r = await fetch_open_issues(settings(url, tmp_path), token=Token("ghp_never_sent_anywhere", "GITHUB_TOKEN"))
    assert r.issues is None and r.requests == 0 and why in r.error
    assert "pw" not in json.dumps(r.to_dict())


async def test_userinfo_query_or_fragment_on_a_real_server_sends_nothing(tmp_path):
    server, _ = serve_issues(items(1))
    port = server.httpd.server_address[1]
    with server:
        for url in (f"http://user:pw@127.0.0.1:{port}", f"{server.url}/?x=1#frag", f"{server.url}#x"):
            r = await fetch_open_issues(settings(url, tmp_path), token=Token("ghp_never_sent_anywhere", "GITHUB_TOKEN"))
            assert r.issues is None and r.requests == 0, url
            assert "pw" not in r.error and "pw" not in r.api_url
    assert server.requests == []


def test_plain_http_loopback_means_a_literal_address_or_exactly_localhost():
    assert all(github.is_loopback_host(h) for h in ("127.0.0.1", "127.9.9.9", "::1", "[::1]", "localhost", "LOCALHOST"))
    assert not any(github.is_loopback_host(h) for h in ("foo.localhost", "localhost.", "localhost.example.com",
                                                         "127.0.0.1.nip.io", "0x7f000001", "10.0.0.1", "", None))


def test_safe_url_and_host_never_show_credentials():
    assert github.safe_url("https://user:pw@ghe.corp/api/v3") == "https://***@ghe.corp/api/v3"
    assert github.safe_host("https://user:pw@ghe.corp:8443/api/v3") == "ghe.corp:8443"
    assert github.safe_url("user:pw@ghe.corp") == "***@ghe.corp"
    assert github.safe_host("http://[::1") == "[::1"  # odd input shown, never raising


# --------------------------------------------------------------------------- audit: malformed issue objects


async def test_a_numeric_string_number_and_a_missing_title_are_kept_not_dropped(tmp_path):
    odd = make_issue(1, "nvidia/vllm playbook broken")
    odd["number"] = "1"
    untitled = make_issue(2, "")
    del untitled["title"]
    untitled["body"] = "the nvidia/vllm playbook fails"
    server, _ = serve_issues([untitled, odd, make_issue(3, "Issue 3")])
    with server:
        r = await fetch_open_issues(settings(server.url, tmp_path))
    assert r.error is None and r.issues_unreadable == 0
    assert sorted((i["number"], i["title"]) for i in r.issues) == [
        (1, "nvidia/vllm playbook broken"), (2, ""), (3, "Issue 3")]


async def test_unusable_issue_objects_are_counted_not_silently_dropped(tmp_path):
    bad = [make_issue(1, "x"), make_issue(2, "y")]
    bad[0]["number"] = "one"
    bad[1]["number"] = None
    server, _ = serve_issues(bad + [make_issue(3, "Issue 3")])
    with server:
        r = await fetch_open_issues(settings(server.url, tmp_path))
    assert r.error is None and [i["number"] for i in r.issues] == [3]
    assert r.issues_unreadable == 2 and r.to_dict()["issues_unreadable"] == 2


def test_an_api_answering_only_unreadable_items_is_unknown_never_ok_of_zero(tmp_path):
    bad = [make_issue(1, "a"), make_issue(2, "b")]
    bad[0]["number"] = "1.5"
    bad[1]["number"] = {"n": 2}
    server, _ = serve_issues(bad)
    with server:
        v = _judged(server.url, tmp_path)
    assert v.status.value == "unknown", v.summary
    assert "the API answered 2 items sparktui could not read" in v.summary


def test_a_string_number_issue_still_matches_end_to_end(tmp_path):
    odd = make_issue(1, "nvidia/vllm playbook broken")
    odd["number"] = "1"
    server, _ = serve_issues([odd])
    with server:
        v = _judged(server.url, tmp_path)
    assert v.status.value == "warn" and "#1" in v.summary
