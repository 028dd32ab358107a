"""Telling the person who is not looking: an event (a check that got worse, a kernel-log event)
sent to a webhook and/or handed to a command. Opt-in: nothing is built unless ``[notify] webhook``
or ``[notify] command`` is set. docs/notify.md is the user's side of this module.

``Notifier(cfg.notify, on_failure)``; ``send(event)`` never blocks and never raises: the event is
filtered (``min_status``), rate limited (one per check id per ``min_interval_s``; later ones in the
interval are folded into a count that rides with the next one sent), then queued (bounded: when
full, the oldest unsent event is dropped and counted) for one worker thread, which POSTs it and/or
runs the command. A failure is told to ``on_failure`` once per kind (a redirect, an HTTP status, a
timeout, a command's exit...) until that channel works again; it is never fatal.

The webhook (httpx, no redirects followed, ``timeout_s`` per attempt, at most ``retries`` more
attempts after a 5xx, a 429, a timeout or a network error, with capped exponential back-off and a
429's ``Retry-After`` honoured up to ``RETRY_AFTER_CAP_S``):

- one JSON body for Slack and Discord (and whatever accepts either: Mattermost, Rocket.Chat, a
  script): ``text`` (Slack; ``&``, ``<``, ``>`` escaped, so ``<!channel>`` in a process name is
  text, not a ping), ``content`` and ``allowed_mentions: {"parse": []}`` (Discord: no
  ``@everyone``, role or user ping), and ``event`` (the event itself, for anything else). Each
  service ignores the other's keys, so no detection is needed;
- ntfy is the exception: its JSON publishing wants the body POSTed to the server's root with the
  topic in it, and posted to ``/TOPIC`` a JSON body would be shown as raw text. A URL whose host is
  ``ntfy.sh`` or starts with ``ntfy.``, or that ends with the fragment ``#ntfy`` (a self-hosted
  server under another name; fragments are never sent), is an ntfy URL: the last path segment is
  the topic, the body is ntfy's (``topic``, ``title``, ``message``, ``priority``, ``tags``), and it
  goes to the URL without that segment (the query, e.g. ``?auth=``, and ``user:pass@`` kept).

The URL is a secret (Slack's and Discord's tokens are in its path, ntfy's topic is a password,
``?auth=`` and ``user:pass@`` are credentials): every message says only ``scheme://host/...``,
exception texts are cleaned of every piece of it, and httpx's own log line (``HTTP Request: POST
URL``, INFO) is rewritten the same way while a notifier lives.

The command (``[notify] command = [...]``) runs without a shell, tracked by core/children.py (its
group dies with sparktui), the event in its environment (``SPARKTUI_EVENT_*``), stdin from
/dev/null, its output read and discarded (the first ``OUTPUT_KEEP`` bytes kept for a failure's
message), killed with its group after ``timeout_s``.

Outside text (summaries hold process names and log lines) is data: JSON-escaped in the body, made
visible (no terminal escapes, no bidi tricks; core/inert.py) in the human-readable fields and the
environment, and scrubbed of anything shaped like a secret (core/secrets.py) before it leaves.
"""

from __future__ import annotations

import json
import logging
import math
import os
import select
import signal
import socket
import subprocess
import threading
import time
from collections import deque
from email.utils import parsedate_to_datetime
from typing import Any, Callable, Mapping
from urllib.parse import parse_qsl, urlsplit, urlunsplit

from sparktui.core import children
from sparktui.core.inert import visible, visible_lines
from sparktui.core.secrets import scrub_secrets, secret_env_values

QUEUE_MAX = 64  # events waiting for the worker; beyond this the oldest unsent is dropped
MAX_RETRIES = 10  # more configured retries are taken as this many (with the back-off cap, under 5 minutes)
BACKOFF_S = 0.5  # the first retry waits this, then doubles
BACKOFF_CAP_S = 30.0  # the longest wait between two attempts
RETRY_AFTER_CAP_S = 60.0  # a 429's Retry-After believed up to this; a longer one gives the event up
CLOSE_JOIN_S = 1.0  # how long close() waits for the worker (the dashboard's exit must not hang)
OUTPUT_KEEP = 1024  # bytes of a command's output kept for its failure message (the rest is read and dropped)
TEXT_MAX = 1900  # characters of the human-readable text (Discord's content limit is 2000)
ENV_MAX = 8000  # characters of one SPARKTUI_EVENT_* value
USER_AGENT = "sparktui (notify)"
REDIRECTS = (301, 302, 303, 307, 308)

# Which statuses reach a given min_status: "worst of" order (core/verdict.py), skip never.
RANK = {"ok": 0, "unknown": 1, "warn": 2, "fail": 3}
ENV_KEYS = ("id", "status", "old", "title", "summary", "t", "host", "kind", "folded")
ENV_NAMES = {"t": "SPARKTUI_EVENT_TIME"}


def env_name(key: str) -> str:
    return ENV_NAMES.get(key, f"SPARKTUI_EVENT_{key.upper()}")


def make_event(id: str, status: str, old: str | None, title: str, summary: str, kind: str = "verdict",
               t: float | None = None, host: str | None = None) -> dict[str, Any]:
    """An event as the notifier takes it (the dashboard builds them with this)."""
    return {"id": str(id), "status": str(status), "old": old, "title": str(title), "summary": str(summary),
            "t": time.time() if t is None else float(t), "host": host or _hostname(), "kind": kind}


def _hostname() -> str:
    try:
        return socket.gethostname()
    except OSError:
        return "?"


def normalized(event: Mapping[str, Any]) -> dict[str, Any]:
    """The event's fields as the payload and the environment take them: strings (``old`` may be
    None), ``t`` a finite number or None; whatever else it holds is left out."""
    def text(v: Any) -> str:
        return v.decode("utf-8", "replace") if isinstance(v, (bytes, bytearray)) else str(v)

    t = event.get("t")
    old = event.get("old")
    return {"id": text(event.get("id", "?")), "status": text(event.get("status")),
            "old": None if old is None else text(old), "title": text(event.get("title") or ""),
            "summary": text(event.get("summary") or ""),
            "t": float(t) if isinstance(t, (int, float)) and not isinstance(t, bool) and math.isfinite(t) else None,
            "host": text(event.get("host") or _hostname()), "kind": text(event.get("kind") or "verdict")}


def passes(status: Any, min_status: str) -> bool:
    """Is ``status`` at or above ``min_status``? ok < unknown < warn < fail; skip and anything else never."""
    rank, floor = RANK.get(str(status)), RANK.get(min_status, RANK["fail"])
    return rank is not None and rank >= floor


# -- the URL, shown and cleaned ---------------------------------------------------------------------


def shown_url(url: str) -> str:
    """``scheme://host[:port]/...``: never the user, password, path, query or fragment."""
    try:
        p = urlsplit(str(url))
        host = p.hostname or "?"
        port = f":{p.port}" if p.port else ""
    except ValueError:
        return "(an unreadable URL)"
    host = f"[{host}]" if ":" in host else host
    rest = "/..." if (p.path not in ("", "/") or p.query) else "/"
    return f"{p.scheme or '?'}://{visible(host)}{port}{rest}"


def _secret_pieces(*urls: str) -> list[str]:
    """Every part of the URLs that may be secret, longest first (to cut out of any text)."""
    pieces: set[str] = set()
    for url in urls:
        if not url:
            continue
        pieces.add(url)
        try:
            p = urlsplit(url)
        except ValueError:
            continue
        for part in (p.netloc.rpartition("@")[0] if "@" in p.netloc else "", p.username or "", p.password or "",
                     p.path if p.path not in ("", "/") else "", p.query, p.fragment):
            pieces.add(part)
        pieces.update(seg for seg in p.path.split("/") if len(seg) >= 4)
        for k, v in parse_qsl(p.query, keep_blank_values=True):
            pieces.update(x for x in (k, v) if len(x) >= 4)
        try:
            import httpx

            pieces.add(str(httpx.URL(url)))
        except Exception:  # noqa: BLE001 (httpx's own form is only one more piece to hide)
            pass
    return sorted((x for x in pieces if len(x) >= 2), key=len, reverse=True)


def _cleaned(text: str, pieces: list[str], shown: str) -> str:
    for piece in pieces:
        if piece in text:
            text = text.replace(piece, shown if "://" in piece else "…")
    return text


class _HideUrls(logging.Filter):
    """On httpx's logger: its INFO line names the request URL; live notifiers' URLs are rewritten."""

    def __init__(self) -> None:
        super().__init__()
        self.owners: dict[int, tuple[list[str], str]] = {}
        self.lock = threading.Lock()

    def filter(self, record: logging.LogRecord) -> bool:
        with self.lock:
            owners = list(self.owners.values())
        if not owners:
            return True
        try:
            msg = record.getMessage()
        except Exception:  # noqa: BLE001 (a record that cannot format is not ours to fix)
            return True
        new = msg
        for pieces, shown in owners:
            new = _cleaned(new, pieces, shown)
        if new != msg:
            record.msg, record.args = new, None
        return True


_LOG_FILTER = _HideUrls()
logging.getLogger("httpx").addFilter(_LOG_FILTER)


# -- the webhook's target and body --------------------------------------------------------------------


def is_ntfy(url: str) -> bool:
    try:
        p = urlsplit(url)
    except ValueError:
        return False
    host = (p.hostname or "").lower()
    return host == "ntfy.sh" or host.startswith("ntfy.") or p.fragment.lower() == "ntfy"


def webhook_target(url: str) -> tuple[str, str | None, str | None]:
    """(URL to POST to, ntfy topic or None, problem or None). Never raises."""
    try:
        p = urlsplit(str(url).strip())
        p.port  # noqa: B018 (raises on a bad port)
    except ValueError as e:
        return "", None, f"the webhook URL {shown_url(url)} cannot be read ({visible(str(e))[:80]})"
    if p.scheme not in ("http", "https"):
        return "", None, f"the webhook URL {shown_url(url)} must start with https:// (or http://)"
    if not p.hostname:
        return "", None, f"the webhook URL {shown_url(url)} has no host"
    if not is_ntfy(url):
        return urlunsplit((p.scheme, p.netloc, p.path or "/", p.query, "")), None, None
    segs = p.path.rstrip("/").split("/")
    topic = segs[-1] if len(segs) > 1 else ""
    if not topic:
        return "", None, (f"the ntfy URL {shown_url(url)} names no topic: write it as https://ntfy.sh/TOPIC "
                          "(the topic is its last path segment)")
    base = "/".join(segs[:-1]) + "/"
    return urlunsplit((p.scheme, p.netloc, base, p.query, "")), topic, None


def slack_escape(text: str) -> str:
    """Slack's three control characters: ``<!channel>`` or ``<@U123>`` in outside text stays text."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _clean(text: Any, limit: int) -> str:
    """Outside text for a human: secrets scrubbed, controls made visible, cut."""
    s = visible_lines(scrub_secrets(str(text if text is not None else ""), secret_env_values()))
    return s if len(s) <= limit else s[: limit - 1] + "…"


def headline(ev: Mapping[str, Any]) -> str:
    """"G14 fail (was ok) on spark-01: The run is making progress"."""
    old = ev.get("old")
    was = f" (was {old})" if old and old != ev.get("status") else ""
    what = "kernel log" if ev.get("kind") == "kernel" else ""
    title = ev.get("title") or what
    return _clean(f"{ev.get('id', '?')} {ev.get('status', '?')}{was} on {ev.get('host', '?')}"
                  + (f": {title}" if title else ""), 300)


def body_text(ev: Mapping[str, Any]) -> str:
    """The summary, when it happened, and how many were folded into this one."""
    lines = [_clean(ev.get("summary", ""), TEXT_MAX - 400)]
    t = ev.get("t")
    if isinstance(t, (int, float)) and math.isfinite(t):
        try:
            lines.append(time.strftime("at %Y-%m-%d %H:%M:%S %Z", time.localtime(t)))
        except (OverflowError, OSError, ValueError):
            pass
    folded = ev.get("folded") or 0
    if folded:
        lines.append(f"(+{folded} more for {_clean(ev.get('id', '?'), 40)} since the last notification, "
                     "not sent one by one)")
    return "\n".join(x for x in lines if x)


def _event_data(ev: Mapping[str, Any]) -> dict[str, Any]:
    out = {}
    for k in ENV_KEYS:
        v = ev.get(k)
        out[k] = scrub_secrets(v, secret_env_values()) if isinstance(v, str) else v
    return out


def payload(ev: Mapping[str, Any], ntfy_topic: str | None = None) -> dict[str, Any]:
    """The JSON body: ntfy's when ``ntfy_topic`` is given, else the one for Slack and Discord."""
    head, body = headline(ev), body_text(ev)
    if ntfy_topic is not None:
        fail = ev.get("status") == "fail"
        return {"topic": ntfy_topic, "title": head, "message": body, "priority": 4 if fail else 3,
                "tags": ["rotating_light" if fail else "warning"]}
    text = f"{head}\n{body}"
    text = text if len(text) <= TEXT_MAX else text[: TEXT_MAX - 1] + "…"
    return {"text": slack_escape(text), "content": text, "allowed_mentions": {"parse": []}, "event": _event_data(ev)}


def event_env(ev: Mapping[str, Any]) -> dict[str, str]:
    """The SPARKTUI_EVENT_* variables: every value visible text (no NUL, no escapes), bounded."""
    out = {}
    for k in ENV_KEYS:
        v = ev.get(k)
        if k == "t":
            v = f"{v:.0f}" if isinstance(v, (int, float)) and math.isfinite(v) else ""
        elif k == "folded":
            v = str(int(v or 0))
        out[env_name(k)] = _clean("" if v is None else v, ENV_MAX)
    return out


def _retry_after(value: str | None, now: float) -> float | None:
    """Retry-After in seconds from ``now`` (delay-seconds or an HTTP date); None when absent or unreadable."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(value) if len(value) <= 12 else 1e12
    try:
        ts = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        return None
    return max(0.0, ts - now) if math.isfinite(ts) else None


class _Failed(Exception):
    def __init__(self, kind: str, words: str, retry: bool = False, wait_s: float | None = None) -> None:
        super().__init__(words)
        self.kind, self.words, self.retry, self.wait_s = kind, words, retry, wait_s


# -- the notifier -------------------------------------------------------------------------------------


class Notifier:
    """One worker thread, a bounded queue, the webhook and/or the command (see the module docstring)."""

    def __init__(self, cfg: Any, on_failure: Callable[[str], None], *, queue_max: int = QUEUE_MAX,
                 backoff_s: float = BACKOFF_S, backoff_cap_s: float = BACKOFF_CAP_S,
                 retry_after_cap_s: float = RETRY_AFTER_CAP_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.cfg = cfg
        self._on_failure = on_failure
        self.backoff_s, self.backoff_cap_s, self.retry_after_cap_s = backoff_s, backoff_cap_s, retry_after_cap_s
        self.clock = clock
        self.min_interval_s = float(getattr(cfg, "min_interval_s", 60.0) or 0.0)
        self.timeout_s = float(getattr(cfg, "timeout_s", 10.0) or 10.0)
        self.retries = min(MAX_RETRIES, max(0, int(getattr(cfg, "retries", 2) or 0)))
        self.min_status = str(getattr(cfg, "min_status", "fail") or "fail")
        self.command = [str(a) for a in (getattr(cfg, "command", None) or [])]
        self.url = (getattr(cfg, "webhook", None) or "").strip() or None
        self.shown = shown_url(self.url) if self.url else ""
        self.post_url, self.topic, problem = webhook_target(self.url) if self.url else ("", None, None)
        self._pieces = _secret_pieces(self.url or "", self.post_url)
        if problem:
            self.post_url = ""
        self.stats = {"queued": 0, "sent": 0, "failed": 0, "dropped": 0, "folded": 0, "filtered": 0, "attempts": 0}
        self.errors: deque[str] = deque(maxlen=20)  # the failures' words, newest last
        self._said: set[str] = set()
        self._said_lock = threading.Lock()
        self._queue: deque[dict[str, Any]] = deque()
        self._queue_max = max(1, queue_max)
        self._cv = threading.Condition()
        self._closing = threading.Event()
        self._close_by = math.inf
        self._last: dict[str, float] = {}  # check id -> when its last event was queued
        self._folded: dict[str, int] = {}
        self._proc: subprocess.Popen | None = None
        self._client: Any = None
        if self.url:
            with _LOG_FILTER.lock:
                _LOG_FILTER.owners[id(self)] = (self._pieces, self.shown)
        if problem:
            self._fail("webhook", "url", problem)
        self.enabled = bool(self.post_url or self.command)
        self._thread = threading.Thread(target=self._run, name="notify", daemon=True)
        if self.enabled:
            self._thread.start()

    # -- the caller's side ---------------------------------------------------------------------------

    def send(self, event: Mapping[str, Any]) -> bool:
        """Queue ``event`` for sending; True when queued. Never blocks (beyond a lock held for a
        few list operations) and never raises."""
        try:
            return self._send(event)
        except Exception as e:  # noqa: BLE001 (a bug here must never reach the dashboard)
            self._fail("internal", "send", f"notification not sent: {type(e).__name__}: {visible(str(e))[:200]}")
            return False

    def _send(self, event: Mapping[str, Any]) -> bool:
        if not self.enabled or self._closing.is_set():
            return False
        if not passes(event.get("status"), self.min_status):
            self.stats["filtered"] += 1
            return False
        ev = normalized(event)
        key = ev["id"]
        now = self.clock()
        with self._cv:
            last = self._last.get(key)
            if last is not None and now - last < self.min_interval_s:
                self._folded[key] = self._folded.get(key, 0) + 1
                self.stats["folded"] += 1
                return False
            self._last[key] = now
            ev["folded"] = self._folded.pop(key, 0)
            dropped = 0
            while len(self._queue) >= self._queue_max:
                self._queue.popleft()
                dropped += 1
            self._queue.append(ev)
            self.stats["queued"] += 1
            self.stats["dropped"] += dropped
            self._cv.notify()
        if dropped:
            self._fail("queue", "full", f"notifications dropped ({self.stats['dropped']} so far): more events "
                       f"than the {'webhook ' + self.shown if self.post_url else 'command'} takes")
        return True

    def pending(self) -> int:
        with self._cv:
            return len(self._queue)

    def close(self, timeout: float = CLOSE_JOIN_S) -> None:
        """Stop: no new event is taken; the worker sends what is queued until ``timeout`` (no
        retries once closing), a running command is killed at the end, and the rest is dropped
        (counted). Returns within about ``timeout``; never raises."""
        try:
            with self._cv:
                if self._closing.is_set():
                    return
                self._close_by = self.clock() + max(0.0, timeout)
                self._closing.set()
                self._cv.notify_all()
            if self._thread.is_alive():
                self._thread.join(max(0.0, timeout))
            if self._thread.is_alive():
                proc = self._proc
                if proc is not None:
                    children.kill_group(proc)
                self._thread.join(0.2)
            with self._cv:
                self.stats["dropped"] += len(self._queue)
                self._queue.clear()
        except Exception:  # noqa: BLE001 (closing must never stop the dashboard's exit)
            pass
        finally:
            with _LOG_FILTER.lock:
                _LOG_FILTER.owners.pop(id(self), None)

    # -- failures ------------------------------------------------------------------------------------

    def _fail(self, channel: str, kind: str, words: str) -> None:
        """Count it; tell ``on_failure`` once per (channel, kind) until the channel works again."""
        words = _cleaned(words, self._pieces, self.shown) if self._pieces else words
        key = f"{channel}:{kind}"
        with self._said_lock:
            self.errors.append(words)
            if key in self._said:
                return
            self._said.add(key)
        try:
            self._on_failure(words)
        except Exception:  # noqa: BLE001 (the dashboard's callback failing is not ours to raise)
            pass

    def _worked(self, channel: str) -> None:
        with self._said_lock:
            self._said = {k for k in self._said if not k.startswith(channel + ":")}

    # -- the worker ----------------------------------------------------------------------------------

    def _run(self) -> None:
        try:
            while True:
                with self._cv:
                    while not self._queue and not self._closing.is_set():
                        self._cv.wait()
                    if not self._queue or (self._closing.is_set() and self.clock() >= self._close_by):
                        return
                    ev = self._queue.popleft()
                try:
                    self._deliver(ev)
                except Exception as e:  # noqa: BLE001 (a bug: said, and the worker goes on)
                    self.stats["failed"] += 1
                    self._fail("internal", "deliver", f"notification not sent: internal error: {type(e).__name__}: "
                               f"{visible(str(e))[:200]}")
        finally:
            if self._client is not None:
                try:
                    self._client.close()
                except Exception:  # noqa: BLE001
                    pass

    def _deliver(self, ev: dict[str, Any]) -> None:
        ok = True
        if self.post_url:
            ok = self._post(ev) and ok
        if self.command:
            ok = self._run_command(ev) and ok
        self.stats["sent" if ok else "failed"] += 1

    def _wait(self, seconds: float) -> bool:
        """Sleep for a back-off unless closing; False when closing cut it."""
        return not self._closing.wait(max(0.0, seconds))

    # -- webhook -------------------------------------------------------------------------------------

    def _http(self) -> Any:
        if self._client is None:
            import httpx

            # proxies from the environment for real hosts (as playbooks/github.py), never for a loopback one
            loopback = (urlsplit(self.post_url).hostname or "") in ("localhost", "127.0.0.1", "::1")
            self._client = httpx.Client(timeout=httpx.Timeout(self.timeout_s), follow_redirects=False,
                                        trust_env=not loopback, headers={"User-Agent": USER_AGENT})
        return self._client

    def _post(self, ev: dict[str, Any]) -> bool:
        body = json.dumps(payload(ev, self.topic), ensure_ascii=False, default=str).encode("utf-8")
        attempts = self.retries + 1
        last: _Failed | None = None
        tried = 0
        for attempt in range(attempts):
            if attempt and self._closing.is_set():
                break  # closing: no more retries
            tried += 1
            try:
                self._post_once(body)
            except _Failed as f:
                last = f
                if not f.retry or attempt + 1 >= attempts:
                    break
                wait = min(self.backoff_cap_s, self.backoff_s * (2 ** attempt))
                if f.wait_s is not None:
                    wait = max(wait, f.wait_s)
                if not self._wait(wait):
                    break
            else:
                self._worked("webhook")
                return True
        if last is not None:
            tries = f" (tried {tried} time{'s' if tried > 1 else ''})" if last.retry else ""
            self._fail("webhook", last.kind, f"notification not sent: {last.words}{tries}")
        return False

    def _post_once(self, body: bytes) -> None:
        import httpx

        where = f"webhook {self.shown}"
        self.stats["attempts"] += 1
        try:
            client = self._http()
            resp = client.post(self.post_url, content=body, headers={"Content-Type": "application/json"})
            status = resp.status_code
            retry_after = resp.headers.get("retry-after")
            resp.close()
        except httpx.TimeoutException:
            raise _Failed("timeout", f"no answer from {where} within {self.timeout_s:g} s", retry=True) from None
        except httpx.TransportError as e:
            detail = _cleaned(visible(str(e)), self._pieces, self.shown)[:160] or "no detail"
            raise _Failed("network", f"cannot reach {where} ({type(e).__name__}: {detail})", retry=True) from None
        except Exception as e:  # noqa: BLE001 (an invalid URL, a bug: words, never a crash)
            detail = _cleaned(visible(str(e)), self._pieces, self.shown)[:160]
            raise _Failed("error", f"{where} could not be posted to ({type(e).__name__}: {detail})") from None
        if 200 <= status < 300:
            return
        if status in REDIRECTS or 300 <= status < 400:
            raise _Failed("redirect", f"{where} answered HTTP {status} (a redirect): redirect refused, "
                          "the notification is not sent elsewhere; set the URL the service gives for its webhook")
        if status == 429:
            asked = _retry_after(retry_after, time.time())
            if asked is not None and asked > self.retry_after_cap_s:
                raise _Failed("rate-limited", f"{where} answered HTTP 429 (too many requests) and asked to wait "
                              f"{asked:.0f} s, more than {self.retry_after_cap_s:g} s: this one is given up")
            raise _Failed("rate-limited", f"{where} answered HTTP 429 (too many requests)", retry=True, wait_s=asked)
        if status >= 500:
            asked = _retry_after(retry_after, time.time())
            wait = asked if asked is not None and asked <= self.retry_after_cap_s else None
            raise _Failed("http-5xx", f"{where} answered HTTP {status}", retry=True, wait_s=wait)
        hint = {400: " (the service did not accept the message)", 401: " (not authorised: check the URL's credentials)",
                403: " (forbidden: check the URL)", 404: " (no such webhook: it may have been deleted)"}.get(status, "")
        raise _Failed(f"http-{status}", f"{where} answered HTTP {status}{hint}")

    # -- command -------------------------------------------------------------------------------------

    def _run_command(self, ev: dict[str, Any]) -> bool:
        name = visible(os.path.basename(self.command[0]) or self.command[0])[:80]
        env = dict(os.environ)
        env.update(event_env(ev))
        deadline = time.monotonic() + self.timeout_s
        try:
            proc = children.spawn(self.command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, env=env, close_fds=True)
        except children.Stopping:
            return False
        except (OSError, ValueError) as e:
            why = getattr(e, "strerror", None) or str(e)
            self._fail("command", "start", f"notify command {name!r} could not start: {visible(why)[:200]}")
            return False
        self._proc = proc
        kept = bytearray()
        timed_out = False
        try:
            timed_out = self._drain(proc, deadline, kept)
            if not timed_out:
                try:
                    proc.wait(timeout=max(0.0, deadline - time.monotonic()))
                except subprocess.TimeoutExpired:
                    timed_out = True
        finally:
            rc = children.reap(proc)  # its group too: nothing it started outlives it
            self._proc = None
            try:
                if proc.stdout is not None:
                    proc.stdout.close()
            except OSError:
                pass
        first = _clean(kept.decode("utf-8", "replace").strip().splitlines()[0] if kept.strip() else "", 200)
        said = f": {first}" if first else ""
        if timed_out:
            self._fail("command", "timeout", f"notify command {name!r} ran past {self.timeout_s:g} s and was killed{said}")
            return False
        if rc != 0:
            if rc < 0:
                try:
                    how = f"was killed by {signal.Signals(-rc).name}"
                except ValueError:
                    how = f"was killed by signal {-rc}"
            else:
                how = f"exited {rc}"
            self._fail("command", f"exit-{rc}", f"notify command {name!r} {how}{said}")
            return False
        self._worked("command")
        return True

    def _drain(self, proc: subprocess.Popen, deadline: float, kept: bytearray) -> bool:
        """Read the command's output until it closes (keeping the first OUTPUT_KEEP bytes), the
        command ends (a grandchild may hold the pipe: reap kills it), or the deadline; True on the
        deadline (or when closing has passed its own)."""
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while True:
            left = deadline - time.monotonic()
            if self._closing.is_set():
                left = min(left, self._close_by - self.clock())
            if left <= 0:
                return True
            ready, _, _ = select.select([fd], [], [], min(left, 0.2))
            if not ready:
                if proc.poll() is not None:
                    return False
                continue
            try:
                chunk = os.read(fd, 65536)
            except OSError:
                return False
            if not chunk:
                return False
            if len(kept) < OUTPUT_KEEP:
                kept += chunk[: OUTPUT_KEEP - len(kept)]
