"""flows/notify.py end to end: a real HTTP server on 127.0.0.1 receives the webhook's POSTs, real
children run the command; the dashboard sends one POST when a check gets worse, none in a replay."""

from __future__ import annotations

import json
import logging
import os
import sys
import threading
import time
from dataclasses import dataclass, field
from typing import Any

import pytest

from sparktui.core.config import NotifyConfig
from sparktui.flows import notify
from sparktui.flows.notify import Notifier, make_event, passes, payload, shown_url, webhook_target
from sparktui.testing.github_server import LocalServer, Reply, Request


@dataclass
class Seen:
    method: str
    path: str  # the target as sent, its query included
    headers: dict[str, str]
    body: bytes
    t: float

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Answer:
    status: int = 204
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0


class Hook(LocalServer):
    """A webhook receiver (testing.github_server's real server): answers each POST with the next of
    ``answers`` (then ``default``) and records every request (GETs too: a redirect's Location must
    never be fetched)."""

    def __init__(self, answers: list[Answer] | None = None, default: Answer | None = None) -> None:
        self.answers = list(answers or [])
        self.default = default or Answer()
        self.lock = threading.Lock()
        super().__init__(self._reply)

    def _reply(self, req: Request) -> Reply:
        with self.lock:
            ans = self.answers.pop(0) if self.answers and req.method == "POST" else self.default
        return Reply(ans.status, dict(ans.headers), b"" if ans.status in (204, 304) else b"ok", ans.delay_s)

    @property
    def seen(self) -> list[Seen]:  # type: ignore[override]
        with self.lock:
            return [Seen(r.method, r.target, r.headers, r.body, r.t) for r in self.requests]

    def posts(self) -> list[Seen]:
        return [r for r in self.seen if r.method == "POST"]


@pytest.fixture
def hook():
    servers: list[Hook] = []

    def make(*answers: Answer, default: Answer | None = None) -> Hook:
        h = Hook(list(answers), default)
        servers.append(h)
        return h

    yield make
    for h in servers:
        h.close()


def until(pred, timeout: float = 5.0, what: str = "") -> Any:
    end = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > end:
            pytest.fail(f"timed out waiting for {what}; last: {v!r}")
        time.sleep(0.01)


class Failures(list):
    def __call__(self, words: str) -> None:
        self.append(words)


def cfg(**kw: Any) -> NotifyConfig:
    base = {"min_interval_s": 0.0, "timeout_s": 2.0, "retries": 2}
    base.update(kw)
    return NotifyConfig(**base)


def event(id: str = "G14", status: str = "fail", summary: str = "no progress for 23 min", **kw: Any) -> dict:
    return make_event(id, status, kw.pop("old", "ok"), kw.pop("title", "The run is making progress"), summary,
                      t=1_700_000_000.0, host="spark-01", **kw)


def made(**kw: Any) -> tuple[Notifier, Failures]:
    """A notifier on ``cfg(**kw)`` with a short back-off (0.05 s, then doubling), and its failures."""
    failures = Failures()
    return Notifier(cfg(**kw), failures, backoff_s=0.05), failures


# -- the webhook -------------------------------------------------------------------------------------


def test_one_event_is_one_json_post_that_slack_and_discord_read(hook):
    h = hook()
    n, failures = made(webhook=h.url + "/services/T0/B0/abc")
    try:
        assert n.send(event(summary="vLLM <!channel> & <@U123> started; ESC\x1b[2J"))
        until(lambda: n.stats["sent"] == 1, what="the POST answered")
    finally:
        n.close()
    (p,) = h.posts()
    assert p.path == "/services/T0/B0/abc"
    assert p.headers["content-type"] == "application/json"
    assert p.headers["user-agent"].startswith("sparktui")
    body = p.json()
    # Slack: text, its control characters escaped (no channel ping from a process name)
    assert body["text"].startswith("G14 fail (was ok) on spark-01: The run is making progress\n")
    assert "&lt;!channel&gt; &amp; &lt;@U123&gt;" in body["text"] and "<!channel>" not in body["text"]
    # Discord: content, and no mention of anyone whatever the text says
    assert "<!channel>" in body["content"] and body["allowed_mentions"] == {"parse": []}
    assert "\x1b" not in body["text"] and "\\e[2J" in body["content"]  # a terminal escape is shown, not sent raw
    # the event itself, as data
    assert body["event"]["id"] == "G14" and body["event"]["status"] == "fail" and body["event"]["old"] == "ok"
    assert body["event"]["summary"].endswith("ESC\x1b[2J") and body["event"]["folded"] == 0
    assert body["event"]["host"] == "spark-01" and body["event"]["kind"] == "verdict"
    assert failures == []


def test_ntfy_urls_get_ntfys_json_at_the_server_root_with_the_topic(hook):
    h = hook(default=Answer(200))
    n, failures = made(webhook=h.url + "/sparky-alerts?auth=QWxhZGRpbjpvcGVu#ntfy")
    try:
        n.send(event())
        until(lambda: n.stats["sent"] == 1, what="the POST answered")
    finally:
        n.close()
    (p,) = h.posts()
    assert p.path == "/?auth=QWxhZGRpbjpvcGVu"  # the root, the query (ntfy's auth) kept
    body = p.json()
    assert body["topic"] == "sparky-alerts" and body["priority"] == 4 and body["tags"] == ["rotating_light"]
    assert body["title"].startswith("G14 fail (was ok) on spark-01") and "no progress for 23 min" in body["message"]
    assert webhook_target("https://ntfy.sh/mytopic")[:2] == ("https://ntfy.sh/", "mytopic")
    assert webhook_target("https://ntfy.example.org/")[2] and "names no topic" in webhook_target("https://ntfy.sh")[2]
    assert webhook_target("https://hooks.slack.com/services/T/B/x")[1] is None


def test_min_status_filters_and_skip_never_goes():
    assert passes("fail", "fail") and not passes("warn", "fail") and not passes("unknown", "fail")
    assert passes("warn", "warn") and passes("fail", "warn") and not passes("unknown", "warn")
    assert passes("unknown", "unknown") and not passes("ok", "unknown") and passes("ok", "ok")
    assert not passes("skip", "ok") and not passes("bogus", "ok") and not passes(None, "ok")


def test_below_min_status_nothing_is_posted(hook):
    h = hook()
    n, _ = made(webhook=h.url)
    try:
        assert not n.send(event(status="warn"))
        assert n.send(event(status="fail"))
        until(lambda: n.stats["sent"] == 1)
    finally:
        n.close()
    assert len(h.posts()) == 1 and n.stats["filtered"] == 1


def test_rate_limit_one_per_check_per_interval_then_the_fold_count(hook):
    h = hook()
    n, _ = made(webhook=h.url, min_interval_s=0.5)
    try:
        t0 = time.monotonic()
        assert n.send(event("G14", summary="first"))
        assert not n.send(event("G14", summary="second"))  # inside the interval: folded
        assert not n.send(event("G14", summary="third"))
        assert n.send(event("G4", summary="another check"))  # per check id
        until(lambda: n.stats["sent"] == 2)
        assert len(h.posts()) == 2 and n.stats["folded"] == 2
        time.sleep(max(0.0, 0.55 - (time.monotonic() - t0)))
        assert n.send(event("G14", summary="after the interval"))
        until(lambda: n.stats["sent"] == 3)
    finally:
        n.close()
    last = h.posts()[-1].json()
    assert last["event"]["summary"] == "after the interval" and last["event"]["folded"] == 2
    assert "(+2 more for G14 since the last notification" in last["content"]


def test_a_500_is_retried_then_success_is_quiet(hook):
    h = hook(Answer(500), Answer(503))
    n, failures = made(webhook=h.url, retries=2)
    try:
        n.send(event())
        until(lambda: n.stats["sent"] == 1)
    finally:
        n.close()
    assert len(h.posts()) == 3 and failures == [] and n.stats["attempts"] == 3


def test_always_500_is_tried_exactly_retries_plus_one_times_and_said_once(hook):
    h = hook(default=Answer(500))
    n, failures = made(webhook=h.url, retries=2)
    try:
        n.send(event("G14"))
        until(lambda: n.stats["failed"] == 1)
        assert len(h.posts()) == 3
        n.send(event("G4"))
        until(lambda: n.stats["failed"] == 2)
        assert len(h.posts()) == 6
    finally:
        n.close()
    assert len(failures) == 1, failures  # the same kind of failure is said once
    assert "answered HTTP 500" in failures[0] and "(tried 3 times)" in failures[0]
    assert failures[0].startswith("notification not sent: webhook http://127.0.0.1:")
    ts = [p.t for p in h.posts()[:3]]
    assert ts[1] - ts[0] >= 0.045 and ts[2] - ts[1] >= 0.09  # 0.05 s, then doubled


def test_zero_retries_is_one_attempt(hook):
    h = hook(default=Answer(502))
    n, failures = made(webhook=h.url, retries=0)
    try:
        n.send(event())
        until(lambda: n.stats["failed"] == 1)
    finally:
        n.close()
    assert len(h.posts()) == 1 and "(tried 1 time)" in failures[0]


def test_429_retry_after_is_honoured(hook):
    h = hook(Answer(429, {"Retry-After": "1"}))
    n, failures = made(webhook=h.url, retries=2)
    try:
        n.send(event())
        until(lambda: n.stats["sent"] == 1, timeout=6)
    finally:
        n.close()
    first, second = h.posts()
    assert second.t - first.t >= 0.95 and failures == []  # waited as asked, not the 0.05 s back-off


def test_429_asking_longer_than_the_cap_gives_the_event_up(hook):
    h = hook(default=Answer(429, {"Retry-After": "3600"}))
    n = Notifier(cfg(webhook=h.url, retries=2), (failures := Failures()), backoff_s=0.05, retry_after_cap_s=5)
    try:
        n.send(event())
        until(lambda: n.stats["failed"] == 1)
    finally:
        n.close()
    assert len(h.posts()) == 1
    assert "HTTP 429" in failures[0] and "asked to wait 3600 s, more than 5 s" in failures[0]


def test_a_redirect_is_refused_and_its_location_never_fetched(hook):
    h = hook(default=Answer(302, {"Location": "/elsewhere"}))
    h2 = hook()
    h.default.headers["Location"] = h2.url + "/stolen"
    n, failures = made(webhook=h.url + "/hook", retries=2)
    try:
        n.send(event())
        until(lambda: n.stats["failed"] == 1)
    finally:
        n.close()
    assert [s.path for s in h.seen] == ["/hook"] and h2.seen == []  # one POST, not retried, not followed
    assert "HTTP 302" in failures[0] and "redirect refused" in failures[0]


def test_a_server_that_does_not_answer_is_a_timeout_said_once(hook):
    h = hook(default=Answer(204, delay_s=5))
    n, failures = made(webhook=h.url, retries=1, timeout_s=0.3)
    t0 = time.monotonic()
    try:
        n.send(event())
        until(lambda: n.stats["failed"] == 1, timeout=4)
    finally:
        n.close()
    assert time.monotonic() - t0 < 3
    assert len(h.posts()) == 2
    assert "no answer from webhook http://127.0.0.1:" in failures[0] and "within 0.3 s" in failures[0]
    assert "(tried 2 times)" in failures[0]


SECRETS = ("s3cr3t-user", "pa55-w0rd", "T0SECRET", "B0SECRET", "XXsecretpathXX", "tok-9f8e7d6c")


def _secret_url(base: str) -> str:
    host = base.split("://", 1)[1]
    return f"http://s3cr3t-user:pa55-w0rd@{host}/services/T0SECRET/B0SECRET/XXsecretpathXX?token=tok-9f8e7d6c"


@pytest.mark.parametrize("answer", [Answer(500), Answer(404), Answer(302, {"Location": "/x"}),
                                    Answer(429, {"Retry-After": "999"}), Answer(204, delay_s=3), None])
def test_the_urls_secrets_never_appear_in_a_failure_or_the_log(hook, caplog, answer):
    if answer is None:  # nothing listens: a connection error, whose text httpx writes
        h = hook()
        url = _secret_url(h.url)
        h.close()
    else:
        h = hook(default=answer)
        url = _secret_url(h.url)
    caplog.set_level(logging.DEBUG)
    n, failures = made(webhook=url, retries=1, timeout_s=0.3)
    try:
        assert n.shown == "http://127.0.0.1:%s/..." % url.split(":")[3].split("/")[0]
        n.send(event())
        until(lambda: n.stats["failed"] + n.stats["sent"] == 1, timeout=5)
    finally:
        n.close()
    assert failures, "a failure was said"
    said = "\n".join(failures) + "\n" + "\n".join(n.errors) + "\n" + caplog.text
    for secret in SECRETS:
        assert secret not in said, (secret, said)
    assert "http://127.0.0.1:" in failures[0] and "/..." in failures[0]
    if answer is not None and answer.status == 500:
        p = h.posts()[0]
        assert p.path.startswith("/services/T0SECRET/") and p.headers["authorization"].startswith("Basic ")


def test_shown_url_keeps_only_scheme_and_host():
    assert shown_url("https://hooks.slack.com/services/T/B/secret") == "https://hooks.slack.com/..."
    assert shown_url("https://u:p@ntfy.sh/topic?auth=x") == "https://ntfy.sh/..."
    assert shown_url("https://example.org") == "https://example.org/"
    assert shown_url("http://[::1]:8080/x") == "http://[::1]:8080/..."


def test_a_bad_url_is_said_at_once_and_nothing_is_sent():
    failures = Failures()
    n = Notifier(cfg(webhook="ftp://u:hunter2pass@example.org/x"), failures)
    assert not n.send(event()) and not n.enabled
    n.close()
    assert len(failures) == 1 and "must start with https://" in failures[0] and "hunter2pass" not in failures[0]


def test_send_never_raises_on_odd_events(hook):
    h = hook()
    n, _ = made(webhook=h.url)
    try:
        assert not n.send({})  # no status: below any min_status
        assert not n.send(None)  # type: ignore[arg-type]
        assert n.send({"id": 14, "status": "fail", "summary": b"bytes", "t": float("nan")})
        until(lambda: n.stats["sent"] == 1)
    finally:
        n.close()


def test_a_full_queue_drops_the_oldest_and_send_never_blocks(hook):
    h = hook(Answer(204, delay_s=1.5))  # the first POST is slow: the worker is stuck on it
    failures = Failures()
    n = Notifier(cfg(webhook=h.url, timeout_s=3), failures, queue_max=3)
    try:
        n.send(event("E0"))
        until(lambda: len(h.posts()) == 1, what="the worker busy with E0")
        slowest = 0.0
        for i in range(1, 10):
            t0 = time.monotonic()
            assert n.send(event(f"E{i}"))
            slowest = max(slowest, time.monotonic() - t0)
        assert slowest < 0.2, slowest  # the worker is stuck on a slow server (1.5 s); send is not
        assert n.stats["dropped"] == 6 and n.pending() == 3
        until(lambda: n.stats["sent"] == 4, timeout=5)
    finally:
        n.close()
    assert [p.json()["event"]["id"] for p in h.posts()] == ["E0", "E7", "E8", "E9"]
    assert len(failures) == 1 and "notifications dropped" in failures[0]


def test_close_returns_promptly_while_a_post_hangs(hook):
    h = hook(default=Answer(204, delay_s=5))
    n, _ = made(webhook=h.url, timeout_s=5)
    n.send(event("A"))
    n.send(event("B"))
    until(lambda: len(h.posts()) == 1)
    t0 = time.monotonic()
    n.close(timeout=0.3)
    assert time.monotonic() - t0 < 1.0
    assert not n.send(event("C")) and n.stats["dropped"] == 1  # B was still queued


# -- the command ---------------------------------------------------------------------------------------

DUMP_ENV = ("import json, os, sys; json.dump({k: v for k, v in os.environ.items() if k.startswith('SPARKTUI_EVENT_')}, "
            "open(sys.argv[1], 'w')); sys.stdin.read(); print('x' * 1000000)")


def test_the_command_runs_without_a_shell_with_the_event_in_its_environment(tmp_path):
    out = tmp_path / "env.json"
    failures = Failures()
    n = Notifier(cfg(command=[sys.executable, "-c", DUMP_ENV, str(out)]), failures)
    try:
        n.send(event(summary="line one\nline two; $(rm -rf ~) `x` \x00 nul", old="warn"))
        until(lambda: n.stats["sent"] == 1)
    finally:
        n.close()
    env = json.loads(out.read_text())
    assert env["SPARKTUI_EVENT_ID"] == "G14" and env["SPARKTUI_EVENT_STATUS"] == "fail"
    assert env["SPARKTUI_EVENT_OLD"] == "warn" and env["SPARKTUI_EVENT_TITLE"] == "The run is making progress"
    assert env["SPARKTUI_EVENT_SUMMARY"] == "line one\nline two; $(rm -rf ~) `x` \\x00 nul"  # data: no shell ran it
    assert env["SPARKTUI_EVENT_TIME"] == "1700000000" and env["SPARKTUI_EVENT_HOST"] == "spark-01"
    assert env["SPARKTUI_EVENT_KIND"] == "verdict" and env["SPARKTUI_EVENT_FOLDED"] == "0"
    assert failures == []  # stdin was /dev/null (read returned), a megabyte of output read and dropped


def test_a_failing_command_is_said_once(tmp_path):
    failures = Failures()
    n = Notifier(cfg(command=[sys.executable, "-c", "import sys; print('boom: no display'); sys.exit(3)"]), failures)
    try:
        n.send(event("G1"))
        n.send(event("G2"))
        until(lambda: n.stats["failed"] == 2)
    finally:
        n.close()
    assert failures == [f"notify command {os.path.basename(sys.executable)!r} exited 3: boom: no display"]


def test_a_missing_command_is_said(tmp_path):
    failures = Failures()
    n = Notifier(cfg(command=[str(tmp_path / "no-such-notifier")]), failures)
    try:
        n.send(event())
        until(lambda: n.stats["failed"] == 1)
    finally:
        n.close()
    assert "could not start" in failures[0] and "No such file" in failures[0]


def test_a_hung_command_is_killed_after_its_timeout(tmp_path):
    pidfile = tmp_path / "pid"
    script = f"import os, time; open({str(pidfile)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    failures = Failures()
    n = Notifier(cfg(command=[sys.executable, "-c", script], timeout_s=0.5), failures)
    t0 = time.monotonic()
    try:
        n.send(event())
        until(lambda: n.stats["failed"] == 1, timeout=5)
    finally:
        n.close()
    assert time.monotonic() - t0 < 3
    assert "ran past 0.5 s and was killed" in failures[0]
    pid = int(pidfile.read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def test_webhook_and_command_both_run_for_one_event(hook, tmp_path):
    h = hook()
    out = tmp_path / "env.json"
    n = Notifier(cfg(webhook=h.url, command=[sys.executable, "-c", DUMP_ENV, str(out)]), Failures())
    try:
        n.send(event())
        until(lambda: n.stats["sent"] == 1)
    finally:
        n.close()
    assert len(h.posts()) == 1 and out.exists()


def test_payload_is_bounded():
    body = payload(event(summary="x" * 100_000))
    assert len(body["content"]) <= notify.TEXT_MAX and len(body["text"]) <= notify.TEXT_MAX


# -- the dashboard -------------------------------------------------------------------------------------


async def test_the_dashboard_posts_once_when_a_check_gets_worse_and_never_in_a_replay(hook):
    from sparktui.core.config import Config
    from sparktui.core.verdict import Status, Verdict
    from sparktui.ui.app import SparkApp
    from tests.ui.test_dashboard import DEMO, StillSource
    from tests.ui.waiting import loaded, says, wait_for

    h = hook()
    config = Config().with_overrides(notify={"webhook": h.url + "/hook", "min_status": "warn", "min_interval_s": 60.0,
                                             "timeout_s": 2.0})
    app = SparkApp(config, source=StillSource(), auto_checks=False)
    async with app.run_test(size=(120, 36)) as pilot:
        assert app.notifier is not None
        app._set_verdict(Verdict("G10", Status.OK, "no TP settings"), time.monotonic())
        app._set_verdict(Verdict("G10", Status.FAIL, "TP=2 in train.yaml <!here>"), time.monotonic())
        await says(pilot, lambda n: n.title == "got worse" and "G10" in n.message)
        await wait_for(pilot, lambda: app.notifier.stats["sent"] == 1, what="the POST answered")
    assert app.notifier.stats["sent"] == 1
    assert not app.notifier._thread.is_alive()  # closed on exit, its worker joined
    (p,) = h.posts()
    body = p.json()
    assert p.path == "/hook" and body["event"]["id"] == "G10" and body["event"]["old"] == "ok"
    assert body["event"]["status"] == "fail" and "&lt;!here&gt;" in body["text"]

    # a replay (a recording is not the machine now) sends nothing, however worse it gets
    h2 = hook()
    replay = SparkApp(config.with_overrides(notify={"webhook": h2.url}), replay=str(DEMO), speed=None)
    async with replay.run_test(size=(120, 36)) as pilot:
        await loaded(pilot)
        replay._set_verdict(Verdict("G10", Status.OK, "no TP settings"), time.monotonic())
        replay._set_verdict(Verdict("G10", Status.FAIL, "TP=2"), time.monotonic())
        await says(pilot, lambda n: n.title == "got worse" and "G10" in n.message)
        assert replay.notifier is None
    assert h2.seen == []


async def test_a_dashboard_notify_failure_is_shown_never_fatal(hook):
    from sparktui.core.config import Config
    from sparktui.core.verdict import Status, Verdict
    from sparktui.ui.app import SparkApp
    from tests.ui.test_dashboard import StillSource
    from tests.ui.waiting import says

    h = hook(default=Answer(302, {"Location": "/x"}))
    config = Config().with_overrides(notify={"webhook": h.url + "/T/B/secretpart", "timeout_s": 2.0})
    app = SparkApp(config, source=StillSource(), auto_checks=False)
    async with app.run_test(size=(120, 36)) as pilot:
        app._set_verdict(Verdict("G10", Status.OK, "fine"), time.monotonic())
        app._set_verdict(Verdict("G10", Status.FAIL, "bad"), time.monotonic())
        note = await says(pilot, lambda n: n.title == "notify")
        assert "redirect refused" in note.message and "secretpart" not in note.message
        assert app.is_running


async def test_a_kernel_log_event_the_dashboard_pops_up_is_posted(hook, tmp_path):
    from sparktui.core.config import Config
    from sparktui.core.verdict import Status
    from sparktui.ui.app import SparkApp
    from tests.ui.test_dashboard import StillSource
    from tests.ui.test_kernel_events import XID_LINE, append
    from tests.ui.waiting import wait_for

    h = hook()
    log = tmp_path / "kmsg.txt"
    log.write_text("")
    config = Config().with_overrides(notify={"webhook": h.url, "min_interval_s": 60.0, "timeout_s": 2.0})
    app = SparkApp(config, source=StillSource(), auto_checks=False, kernel_log_path=str(log))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for(pilot, lambda: app.kernel_watch.follower is not None, what="the kernel log followed")
        append(log, XID_LINE)
        await wait_for(pilot, lambda: app.board["G11"].verdict and app.board["G11"].verdict.status is Status.FAIL)
        await wait_for(pilot, lambda: app.notifier.stats["sent"] == 1, what="the POST answered")
    (p,) = h.posts()
    ev = p.json()["event"]
    assert ev["kind"] == "kernel" and ev["id"] == "G11" and ev["status"] == "fail" and "Xid 13" in ev["title"]
    assert "Graphics SM Warp Exception" in ev["summary"]
