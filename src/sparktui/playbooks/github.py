"""The open issues of the playbooks repository, over GitHub's REST API (async httpx).

Built to be cheap and honest about what it saw:
- every page is cached on disk with its ETag; a refresh inside the TTL makes no request, a later
  one is conditional (``If-None-Match``), and a 304 reuses the cached page (GitHub does not count
  a 304 against the rate limit);
- offline or failing: the last good listing comes back with its age and the error in words;
- rate limited, or told to wait by a ``Retry-After`` on any status (a 503 too): the time is stored
  in the cache dir and no request is made before it; a wait is never taken as longer than
  ``MAX_WAIT_S`` (GitHub's window is an hour), so a bogus header cannot silence G8 for years;
- other 5xx and timeouts are retried a bounded number of times with exponential backoff;
- a cache dir that cannot be written still works (every run then asks the server) and says so;
- bodies are streamed and capped; malformed JSON is an error in words.

The token goes only to the configured API origin, never over plain http except to a literal
loopback address or ``localhost``, and never into logs, reprs, errors or the cache. Which token
(``discover_token``): ``GITHUB_TOKEN``/``GH_TOKEN`` are github.com's tokens (as for ``gh``), so they
go only to ``https://api.github.com``, or to the one API host the user names for them in
``SPARKTUI_GITHUB_TOKEN_HOST`` (``ghe.example.com``, ``127.0.0.1:8080``; a host without a port means
the URL scheme's default port); never to another ``--api-url``, loopback included (any local user
can listen on a loopback port). Otherwise ``gh auth token --hostname HOST``, which gh keeps per host
(the user's own login for that host), for a non-loopback API host. An API URL with a user name or password, a query or a fragment,
or a bad host or port is refused before anything is sent (``api_url_problem``).
Nothing raises past ``fetch_open_issues``: it returns a ``FetchResult``; whatever goes wrong during
a refresh, the last good listing comes back with the error in words.

API base URL precedence (``resolve_api_url``): an explicit setting (``--api-url`` or the config
file's ``[playbooks] api_url``) beats the ``SPARKTUI_GITHUB_API`` environment variable, which beats
the built-in default ``https://api.github.com``. A configured value equal to the built-in default
counts as "not set", so the environment variable can redirect a default install.
"""

from __future__ import annotations

import asyncio
import hashlib
import ipaddress
import json
import math
import os
import re
import shutil
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping
from urllib.parse import urljoin, urlsplit

from sparktui.core.atomic import write_text_atomic
from sparktui.core.units import is_number

if TYPE_CHECKING:  # imported by the first request: ~6 MB that a G8 with nothing to watch (no request) never needs
    import httpx

DEFAULT_API_URL = "https://api.github.com"
ENV_API_URL = "SPARKTUI_GITHUB_API"
TOKEN_ENV_VARS = ("GITHUB_TOKEN", "GH_TOKEN")
ENV_TOKEN_HOST = "SPARKTUI_GITHUB_TOKEN_HOST"  # the API host[:port] the user allows the env token to go to
GITHUB_API_HOST = "api.github.com"
MAX_BODY_BYTES = 20 * 1024 * 1024
BODY_KEEP_CHARS = 20_000  # of each issue body, kept for matching and the cache
ANONYMOUS_LIMIT_NOTE = "anonymous: 60 requests/hour"
CACHE_VERSION = 1  # bump when the trimmed page format changes: older files then read as absent
MAX_WAIT_S = 3600.0  # the longest rate-limit / Retry-After wait believed (GitHub's window is an hour)

SOURCE_NETWORK = "network"  # at least one page came back 200
SOURCE_CACHE_FRESH = "cache-fresh"  # inside the TTL: no request made
SOURCE_CACHE_304 = "cache-304"  # every page asked was answered 304 Not Modified
SOURCE_STALE = "stale-cache"  # the refresh failed; the last good listing, with its age

_REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_REDIRECTS = (301, 302, 303, 307, 308)
_SCHEME_RE = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*://")
_USERINFO_RE = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*://)[^/?#]*@")
_HOST_RE = re.compile(r"^[\w.-]+$")
_INT_RE = re.compile(r"^-?[0-9]{1,18}$")


# --------------------------------------------------------------------------- settings and policy


def resolve_api_url(configured: str | None, env: Mapping[str, str] | None = None) -> str:
    """The API base URL to use (see the module docstring for the precedence)."""
    env = os.environ if env is None else env
    explicit = (configured or "").strip()
    if explicit and explicit.rstrip("/") != DEFAULT_API_URL:
        return explicit.rstrip("/")
    from_env = (env.get(ENV_API_URL) or "").strip()
    return (from_env or DEFAULT_API_URL).rstrip("/")


def is_loopback_host(host: str | None) -> bool:
    """A literal loopback address (127.0.0.0/8, ::1) or exactly ``localhost``; never ``*.localhost``,
    whose DNS answer could point anywhere and would then get the token over plain http."""
    if not host:
        return False
    h = host.strip("[]").lower()
    if h == "localhost":
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def safe_url(url: str, limit: int = 200) -> str:
    """``url`` fit to show: any user name/password replaced by ``***``, cut to ``limit`` characters."""
    text = str(url)
    if _SCHEME_RE.match(text):
        text = _USERINFO_RE.sub(r"\1***@", text)
    elif "@" in text:  # "user:pw@host" without a scheme: everything before the last @ may be secret
        text = "***@" + text.rpartition("@")[2]
    return text if len(text) <= limit else text[: limit - 1] + "…"


def safe_host(url: str) -> str:
    """host[:port] of ``url`` for display, never its user name or password; never raises."""
    m = re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://([^/?#]*)", str(url))
    return safe_url(m.group(1).rpartition("@")[2] if m else "", 100)


def url_problem(url: str) -> str | None:
    """Why a URL must not be requested (None when it may): https, or plain http to a literal loopback
    address or ``localhost``; a real host and port; no user name or password. Never raises."""
    shown = safe_url(url)
    if not _SCHEME_RE.match(str(url)):
        return f"not a usable URL {shown!r}: it must start with https://"
    try:
        parts = urlsplit(url)
    except ValueError as e:
        why = "unbalanced [ ] around an IPv6 address (write it as http://[::1]:8080)" if "IPv6" in str(e) else str(e)
        return f"not a usable URL {shown!r}: {why}"
    if parts.scheme not in ("http", "https"):
        return f"unsupported URL scheme {parts.scheme!r} in {shown!r}: use https"
    if "@" in parts.netloc:
        return (f"refusing {shown!r}: a user name or password in the URL (not shown); "
                "give the token in GITHUB_TOKEN or GH_TOKEN instead")
    host = parts.hostname
    if not host:
        return f"not a usable URL {shown!r}: no host"
    if not (parts.netloc.startswith("[") or _HOST_RE.match(host)):
        return f"not a usable URL {shown!r}: {host!r} is not a host name"
    try:
        port = parts.port
    except ValueError:
        port = 0
    if port == 0:
        return f"not a usable URL {shown!r}: the port must be a number from 1 to 65535"
    if parts.scheme == "https":
        return None
    if is_loopback_host(host):
        return None
    return (f"refusing plain http:// to {host}: GitHub API URLs must use https "
            "(plain http is allowed only for a loopback address such as 127.0.0.1, ::1 or localhost)")


def api_url_problem(url: str) -> str | None:
    """``url_problem`` for the configured base URL, which also must carry no ?query or #fragment
    (the request paths are appended to it). Never raises."""
    problem = url_problem(url)
    if problem is None and ("?" in str(url) or "#" in str(url)):
        problem = (f"not a usable API base URL {safe_url(url)!r}: no ?query or #fragment allowed "
                   "(for example https://api.github.com or https://HOST/api/v3)")
    return problem


def origin_of(url: str) -> tuple[str, str, int]:
    p = urlsplit(url)
    port = p.port or (443 if p.scheme == "https" else 80)
    return (p.scheme, (p.hostname or "").lower(), port)


class Token:
    """An API token that never shows itself: repr/str hide it; only ``reveal()`` gives it out."""

    __slots__ = ("_value", "source")

    def __init__(self, value: str, source: str) -> None:
        self._value = value
        self.source = source  # "GITHUB_TOKEN", "GH_TOKEN" or "gh auth token": safe to show

    def reveal(self) -> str:
        return self._value

    def __repr__(self) -> str:
        return f"Token(<hidden>, from {self.source})"

    __str__ = __repr__

    def __reduce__(self):  # no pickling a secret into some cache by accident
        raise TypeError("Token is not picklable")


def env_token_may_go_to(api_url: str, env: Mapping[str, str] | None = None) -> bool:
    """May GITHUB_TOKEN / GH_TOKEN be sent to ``api_url``? Only to ``https://api.github.com`` (port
    443) and to the host the user names in ``SPARKTUI_GITHUB_TOKEN_HOST`` (``host`` for the scheme's
    default port, or ``host:port``; several separated by commas). Never raises."""
    env = os.environ if env is None else env
    try:
        parts = urlsplit(str(api_url))
        port = parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return False
    host = (parts.hostname or "").lower()
    if not host or parts.scheme not in ("http", "https"):
        return False
    if parts.scheme == "https" and host == GITHUB_API_HOST and port == 443:
        return True
    shown = f"[{host}]" if ":" in host else host
    allowed = {n.strip().lower() for n in (env.get(ENV_TOKEN_HOST) or "").split(",") if n.strip()}
    default_port = 443 if parts.scheme == "https" else 80
    return f"{shown}:{port}" in allowed or (port == default_port and shown in allowed)


def withheld_env_token(api_url: str, env: Mapping[str, str] | None = None) -> str | None:
    """The name of a set GITHUB_TOKEN / GH_TOKEN that is not sent to ``api_url`` (None when none is
    set, or it may go there): for the messages that would otherwise say "set GITHUB_TOKEN"."""
    env = os.environ if env is None else env
    var = next((v for v in TOKEN_ENV_VARS if (env.get(v) or "").strip()), None)
    return var if var and not env_token_may_go_to(api_url, env) else None


def discover_token(api_url: str, env: Mapping[str, str] | None = None, gh_timeout_s: float = 3.0) -> Token | None:
    """GITHUB_TOKEN / GH_TOKEN where they may go (``env_token_may_go_to``), else ``gh auth token``
    for a non-loopback API host when gh is on PATH."""
    env = os.environ if env is None else env
    if env_token_may_go_to(api_url, env):
        for var in TOKEN_ENV_VARS:
            value = (env.get(var) or "").strip()
            if value:
                return Token(value, var)
    if api_url_problem(api_url):
        return None  # nothing is sent to an unusable URL, so no token is needed for it
    host = urlsplit(api_url).hostname or ""
    if is_loopback_host(host) or not shutil.which("gh"):
        return None  # never hand the user's GitHub login to a local test server
    gh_host = "github.com" if host == "api.github.com" else host
    try:
        proc = subprocess.run(["gh", "auth", "token", "--hostname", gh_host], capture_output=True, text=True,
                              timeout=gh_timeout_s, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError):
        return None
    value = proc.stdout.strip() if proc.returncode == 0 else ""
    return Token(value, "gh auth token") if value and "\n" not in value else None


@dataclass
class ClientSettings:
    api_url: str = DEFAULT_API_URL
    repo: str = "NVIDIA/dgx-spark-playbooks"
    ttl_s: float = 600.0
    timeout_s: float = 10.0  # per attempt, whole request including the body
    retries: int = 2  # extra attempts after a 5xx, a timeout or a network error
    backoff_s: float = 0.5  # first retry waits this, then doubles
    max_body_bytes: int = MAX_BODY_BYTES
    per_page: int = 100
    max_pages: int = 50
    cache_dir: Path | None = None  # default: <cache>/sparktui/github
    clock: Callable[[], float] = time.time

    def resolved_cache_dir(self) -> Path:
        if self.cache_dir is not None:
            return Path(self.cache_dir)
        from sparktui.core.config import default_cache_dir

        return default_cache_dir() / "github"


# --------------------------------------------------------------------------- results


@dataclass
class RateLimit:
    limit: int | None = None
    remaining: int | None = None
    reset_at: float | None = None  # unix time the window resets
    limited: bool = False  # True: the server refused us; no request before reset_at
    status: int | None = None  # the HTTP status that said to wait (403/429 rate limit, 503 with Retry-After, ...)

    def to_dict(self) -> dict[str, Any]:
        return {"limit": self.limit, "remaining": self.remaining, "reset_at": self.reset_at, "limited": self.limited,
                "status": self.status}


@dataclass
class FetchResult:
    """What one refresh produced. ``issues`` is None only when nothing (not even a cache) exists."""

    repo: str
    api_url: str
    issues: list[dict[str, Any]] | None = None  # open issues, pull requests removed
    pull_requests_skipped: int = 0
    issues_unreadable: int = 0  # issue objects the API sent that could not be used (no number ...)
    truncated: bool = False  # stopped at max_pages
    source: str | None = None  # SOURCE_* or None
    fetched_at: float | None = None  # when the server last confirmed this data
    checked_at: float = 0.0  # when this refresh ran
    error: str | None = None  # in words; set with SOURCE_STALE or when issues is None
    rate_limit: RateLimit | None = None
    requests: int = 0  # HTTP requests actually sent (retries included)
    folders: dict[str, dict[str, Any]] = field(default_factory=dict)  # slug -> {last_commit, sha, error}
    auth: str = ANONYMOUS_LIMIT_NOTE  # where the token came from, never the token
    cache_error: str | None = None  # "cache not writable: PATH (why)": works, but every run asks the server

    @property
    def ok(self) -> bool:
        return self.issues is not None

    @property
    def age_s(self) -> float | None:
        return None if self.fetched_at is None else max(0.0, self.checked_at - self.fetched_at)

    def to_dict(self) -> dict[str, Any]:
        return {
            "repo": self.repo, "api_url": self.api_url, "issues": self.issues,
            "pull_requests_skipped": self.pull_requests_skipped, "issues_unreadable": self.issues_unreadable,
            "truncated": self.truncated,
            "source": self.source, "fetched_at": self.fetched_at, "checked_at": self.checked_at,
            "age_s": self.age_s, "error": self.error,
            "rate_limit": self.rate_limit.to_dict() if self.rate_limit else None,
            "requests": self.requests, "folders": self.folders, "auth": self.auth, "cache_error": self.cache_error,
        }


class FetchError(Exception):
    """A refresh that cannot complete; the message is shown to the user as is."""


class _BodyTooLarge(Exception):
    pass


# --------------------------------------------------------------------------- disk cache


class _DiskCache:
    """One JSON file per URL (body already trimmed, ETag, fetch time, next link) + rate-limit state.

    Never holds request headers, so the token cannot end up here. A corrupt file reads as absent.
    A failed write is remembered in ``write_error`` (shown to the user), never raised.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.write_error: str | None = None

    def _path(self, url: str) -> Path:
        return self.root / (hashlib.sha256(url.encode()).hexdigest()[:40] + ".json")

    def load(self, url: str) -> dict[str, Any] | None:
        try:
            doc = json.loads(self._path(url).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if (not isinstance(doc, dict) or doc.get("v") != CACHE_VERSION or doc.get("url") != url
                or not _finite(doc.get("fetched_at")) or not isinstance(doc.get("data"), dict)
                or not all(isinstance(doc.get(k), (str, type(None))) for k in ("etag", "next"))):
            return None  # a malformed entry is discarded, never trusted: a non-string ETag failed every refresh
        return doc

    def save(self, entry: dict[str, Any]) -> None:
        self._write(self._path(entry["url"]), entry)

    def _write(self, path: Path, doc: dict[str, Any]) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            write_text_atomic(path, json.dumps(doc, separators=(",", ":")))
        except OSError as e:  # a read-only cache costs requests, not correctness; but say so
            if self.write_error is None:
                why = "not a directory" if self.root.exists() and not self.root.is_dir() else (e.strerror or str(e))
                self.write_error = f"cache not writable: {self.root} ({why})"

    def _limits_path(self) -> Path:
        return self.root / "ratelimit.json"

    def load_limit(self, origin: str) -> dict[str, Any] | None:
        try:
            doc = json.loads(self._limits_path().read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        entry = doc.get(origin) if isinstance(doc, dict) else None
        return entry if isinstance(entry, dict) and isinstance(entry.get("reset_at"), (int, float)) else None

    def save_limit(self, origin: str, entry: dict[str, Any] | None) -> None:
        try:
            doc = json.loads(self._limits_path().read_text(encoding="utf-8"))
            doc = doc if isinstance(doc, dict) else {}
        except (OSError, ValueError):
            doc = {}
        if entry is None:
            if origin not in doc:
                return
            doc.pop(origin, None)
        else:
            doc[origin] = entry
        self._write(self._limits_path(), doc)


# --------------------------------------------------------------------------- trimming of answers


def _trim_issue_page(payload: Any) -> dict[str, Any]:
    """Keep what matching and the UI need; drop pull requests (they carry a ``pull_request`` key)."""
    if not isinstance(payload, list):
        what = f"an object ({str(payload.get('message'))[:200]!r})" if isinstance(payload, dict) else type(payload).__name__
        raise FetchError(f"unexpected answer: expected a list of issues, got {what}")
    issues, prs, unreadable = [], 0, 0
    for item in payload:
        if not isinstance(item, dict):
            raise FetchError("unexpected answer: an issue list entry is not an object")
        if "pull_request" in item:
            prs += 1
            continue
        number, title = _issue_number(item.get("number")), _issue_title(item.get("title"))
        if number is None or title is None or not _looks_like_an_issue(item):
            unreadable += 1  # counted, never silently gone: the verdict says how many
            continue
        user = item.get("user")
        issues.append({
            "number": number,
            "title": title,
            "html_url": str(item.get("html_url") or ""),
            "created_at": item.get("created_at"),
            "updated_at": item.get("updated_at"),
            "comments": item.get("comments") if isinstance(item.get("comments"), int) else 0,
            "body": (item.get("body") or "")[:BODY_KEEP_CHARS] if isinstance(item.get("body"), (str, type(None))) else "",
            "user": user.get("login") if isinstance(user, dict) else None,
        })
    return {"issues": issues, "pull_requests": prs, "unreadable": unreadable}


def _refuse_all_unreadable(usable: int, unreadable: int) -> None:
    """Items came back but none could be used: that is no listing, never "0 open issues"."""
    if unreadable and not usable:
        raise FetchError(f"unexpected answer: the API answered {unreadable} items sparktui could not read "
                         "(no usable issue number or title)")


def _issue_number(v: Any) -> int | None:
    """An issue number as GitHub sends it (an int), or as a numeric string ("1"); None otherwise."""
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v if v > 0 else None
    if isinstance(v, str) and v.strip().isascii() and v.strip().isdigit() and len(v.strip()) <= 12:
        return int(v.strip()) or None
    if isinstance(v, float) and math.isfinite(v) and v.is_integer() and v > 0:
        return int(v)
    return None


# Fields GitHub sends as strings with every issue object (REST "List repository issues"); an item holding
# none of them, nor a title, is not an issue: `{"number": 1}` alone would read as "1 open issue, none
# names vllm", an ok on nothing (issue 22).
_ISSUE_TEXT_FIELDS = ("html_url", "url", "node_id", "state", "created_at", "updated_at", "body")


def _looks_like_an_issue(item: dict[str, Any]) -> bool:
    """A non-empty string title, or one of the string fields every GitHub issue carries."""
    title = item.get("title")
    if isinstance(title, str) and title.strip():
        return True
    return any(isinstance(item.get(k), str) and item[k].strip() for k in _ISSUE_TEXT_FIELDS)


def _issue_title(v: Any) -> str | None:
    """A missing or null title is an empty title; a number is written out; anything else: None."""
    if v is None:
        return ""
    if isinstance(v, str):
        return v
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return str(v)
    return None


def _trim_commits(payload: Any) -> dict[str, Any]:
    if not isinstance(payload, list):
        raise FetchError("unexpected answer: expected a list of commits")
    out = []
    for item in payload[:1]:
        commit = item.get("commit") if isinstance(item, dict) else None
        if not isinstance(commit, dict):
            continue
        who = commit.get("committer") or commit.get("author") or {}
        out.append({"sha": str(item.get("sha") or "")[:12], "date": who.get("date") if isinstance(who, dict) else None,
                    "message": str(commit.get("message") or "").splitlines()[0][:200] if commit.get("message") else ""})
    return {"commits": out}


# --------------------------------------------------------------------------- the client


_finite = is_number  # one meaning of a number (core/units): an int past a float raised in math.isfinite


def _bounded_reset(reset_at: Any, now: float) -> float:
    """A reset time believed: at most ``MAX_WAIT_S`` after ``now`` (anything odd counts as that)."""
    try:
        value = float(reset_at)
    except (TypeError, ValueError, OverflowError):
        return now + MAX_WAIT_S
    return value if math.isfinite(value) and value <= now + MAX_WAIT_S else now + MAX_WAIT_S


def _fmt_when(ts: float, now: float) -> str:
    """"2026-01-01 10:00:00 UTC (in 5 min)"; any number (huge, NaN) gives words, never an exception."""
    try:
        wait = max(0.0, float(ts) - float(now))
        stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(float(ts)))
        if not math.isfinite(wait):
            raise ValueError(ts)
    except (TypeError, ValueError, OverflowError, OSError):
        return f"an unreadable time ({str(ts)[:40]})"
    return f"{stamp} (in {wait / 60:.0f} min)" if wait >= 60 else f"{stamp} (in {wait:.0f} s)"


def _int_header(headers: httpx.Headers, name: str) -> int | None:
    value = headers.get(name, "").strip()
    if not _INT_RE.match(value):
        return None  # not a number, or more digits than any real count or time has
    return int(value)


_SSL_CONTEXTS: dict[bool, Any] = {}


def _ssl_context(trust_env: bool) -> Any:
    """Built once per process: loading the CA bundle costs ~50 ms, more than a cached refresh."""
    ctx = _SSL_CONTEXTS.get(trust_env)
    if ctx is None:
        import httpx

        ctx = _SSL_CONTEXTS[trust_env] = httpx.create_ssl_context(trust_env=trust_env)
    return ctx


class GitHubClient:
    """One refresh's worth of requests. Use as ``async with GitHubClient(settings, token) as c``."""

    def __init__(self, settings: ClientSettings, token: Token | None = None) -> None:
        self.s = settings
        self._token = token
        self.api_url = settings.api_url.rstrip("/")  # validated by api_url_problem before use
        self._api_origin = origin_of(self.api_url)
        self._origin_key = "%s://%s:%d" % self._api_origin
        self.cache = _DiskCache(settings.resolved_cache_dir())
        self.requests = 0
        self.rate_limit: RateLimit | None = None
        self.counts = {"200": 0, "304": 0, "fresh": 0}
        self._http: httpx.AsyncClient | None = None

    def __repr__(self) -> str:
        return f"GitHubClient({self.api_url!r}, token={'yes' if self._token else 'no'})"

    async def __aenter__(self) -> "GitHubClient":
        import httpx

        loopback = is_loopback_host(urlsplit(self.api_url).hostname)
        # trust_env for proxies on real networks; never route loopback test servers via a proxy.
        self._http = httpx.AsyncClient(
            timeout=httpx.Timeout(self.s.timeout_s), follow_redirects=False, trust_env=not loopback,
            verify=_ssl_context(not loopback),
            headers={"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28",
                     "User-Agent": "sparktui (DGX Spark checker; G8)"},
        )
        return self

    async def __aexit__(self, *exc) -> None:
        if self._http is not None:
            await self._http.aclose()

    # -- public ---------------------------------------------------------------------------------

    def issues_url(self) -> str:
        return f"{self.api_url}/repos/{self.s.repo}/issues?state=open&per_page={self.s.per_page}"

    def commits_url(self, slug: str) -> str:
        return f"{self.api_url}/repos/{self.s.repo}/commits?path=nvidia/{slug}&per_page=1"

    issues_unreadable = 0  # issue objects of the last listing that could not be used (counted, dropped)

    async def open_issues(self) -> tuple[list[dict[str, Any]], int, bool, float]:
        """(issues, pull requests skipped, truncated, oldest fetch time); raises FetchError."""
        url: str | None = self.issues_url()
        issues: dict[int, dict[str, Any]] = {}
        prs, pages, oldest, unreadable = 0, 0, float("inf"), 0
        while url and pages < self.s.max_pages:
            entry = await self.get(url, _trim_issue_page)
            for issue in entry["data"]["issues"]:
                issues.setdefault(issue["number"], issue)  # an issue can shift across pages
            prs += int(entry["data"].get("pull_requests", 0))
            unreadable += int(entry["data"].get("unreadable", 0))
            oldest = min(oldest, entry["fetched_at"])
            url = entry.get("next")
            pages += 1
        self.issues_unreadable = unreadable
        _refuse_all_unreadable(len(issues), unreadable)
        return list(issues.values()), prs, bool(url), oldest

    def cached_open_issues(self) -> tuple[list[dict[str, Any]], int, float] | None:
        """The last complete listing from disk, however old, or None when a page is missing."""
        url: str | None = self.issues_url()
        issues: dict[int, dict[str, Any]] = {}
        prs, pages, oldest, unreadable = 0, 0, float("inf"), 0
        while url and pages < self.s.max_pages:
            entry = self.cache.load(url)
            if entry is None:
                return None
            for issue in entry["data"]["issues"]:
                issues.setdefault(issue["number"], issue)
            prs += int(entry["data"].get("pull_requests", 0))
            unreadable += int(entry["data"].get("unreadable", 0))
            oldest = min(oldest, entry["fetched_at"])
            url = entry.get("next")
            pages += 1
        if unreadable and not issues:
            return None  # a listing of nothing sparktui could read is no listing
        self.issues_unreadable = unreadable
        return list(issues.values()), prs, oldest

    async def folder_last_commit(self, slug: str) -> dict[str, Any]:
        """The playbook folder's newest commit (date, sha), or an error in words; never raises."""
        if not _SLUG_RE.match(slug):
            return {"last_commit": None, "sha": None, "exists": False,
                    "error": f"not a playbook slug: {slug!r} (a folder name under nvidia/, like 'vllm')"}
        try:
            entry = await self.get(self.commits_url(slug), _trim_commits)
        except Exception as e:  # a FetchError or a bug: either way the cached date, with the error
            return self.cached_folder(slug, self._error_words(e))
        commits = entry["data"]["commits"]
        if not commits:
            return {"last_commit": None, "sha": None, "exists": False,
                    "error": f"no commits touch nvidia/{slug} (no such playbook?)"}
        return {"last_commit": commits[0]["date"], "sha": commits[0]["sha"], "error": None}

    def cached_folder(self, slug: str, error: str) -> dict[str, Any]:
        cached = self.cache.load(self.commits_url(slug)) if _SLUG_RE.match(slug) else None
        commits = cached["data"].get("commits", []) if cached else []
        c = commits[0] if commits else {}
        return {"last_commit": c.get("date"), "sha": c.get("sha"), "error": error}

    # -- one URL --------------------------------------------------------------------------------

    async def get(self, url: str, trim: Callable[[Any], dict[str, Any]]) -> dict[str, Any]:
        """The cache entry for ``url``: fresh from disk, revalidated (304) or fetched (200)."""
        now = self.s.clock()
        cached = self.cache.load(url)
        if cached is not None and 0 <= now - cached["fetched_at"] < self.s.ttl_s:
            self.counts["fresh"] += 1
            return cached
        problem = url_problem(url)  # e.g. a Link header pointing at plain http elsewhere
        if problem:
            raise FetchError(problem)
        self._check_not_limited(now)
        status, headers, body, next_url = await self._request(url, cached.get("etag") if cached else None)
        now = self.s.clock()
        if status == 304 and cached is not None:
            self.counts["304"] += 1
            cached["fetched_at"] = now
            self.cache.save(cached)
            return cached
        if status == 200:
            try:
                payload = json.loads(body)
            except (ValueError, UnicodeDecodeError) as e:
                pos = f" at line {e.lineno}, column {e.colno}" if isinstance(e, json.JSONDecodeError) and e.lineno else ""
                msg = getattr(e, "msg", None) or type(e).__name__
                raise FetchError(f"malformed JSON from {self._where(url)}{pos}: {msg}") from None
            entry = {"v": CACHE_VERSION, "url": url, "etag": headers.get("etag"), "fetched_at": now, "next": next_url,
                     "data": trim(payload)}
            self.counts["200"] += 1
            self.cache.save(entry)
            return entry
        raise FetchError(self._status_error(url, status, headers, body, now))

    def _check_not_limited(self, now: float) -> None:
        """Raise when a stored wait (rate limit or Retry-After) is not over yet.

        The stored time is believed for at most ``MAX_WAIT_S`` after it was seen, so a file written
        by an older version (or edited by hand) with a reset in 2099 expires within the hour."""
        state = self.cache.load_limit(self._origin_key)
        if state is None:
            return
        seen = state.get("seen_at")
        if not _finite(seen) or seen > now:
            seen = now
            self.cache.save_limit(self._origin_key, {**state, "seen_at": now, "reset_at": _bounded_reset(state["reset_at"], now)})
        reset_at = _bounded_reset(state["reset_at"], seen)
        if reset_at <= now:
            self.cache.save_limit(self._origin_key, None)
            return
        status = state.get("status") if isinstance(state.get("status"), int) else None
        rate = status in (None, 403, 429)
        limit = state.get("limit") if isinstance(state.get("limit"), int) else None
        self.rate_limit = RateLimit(limit=limit, remaining=0 if rate else None, reset_at=reset_at, limited=True,
                                    status=status)
        why = f"rate limited by {self._api_origin[1]}" if rate else f"{self._api_origin[1]} asked to wait (HTTP {status})"
        raise FetchError(f"{why} until {_fmt_when(reset_at, now)}; not asking again before then")

    def _status_error(self, url: str, status: int, headers: httpx.Headers, body: bytes, now: float) -> str:
        message = ""
        try:
            doc = json.loads(body) if body else None
            if isinstance(doc, dict) and isinstance(doc.get("message"), str):
                message = doc["message"][:200]
        except ValueError:
            pass
        remaining = _int_header(headers, "x-ratelimit-remaining")
        retry_after = headers.get("retry-after")
        asked = _parse_retry_after(retry_after, now) if retry_after is not None else None
        said = f": {message}" if message else ""
        limited = status in (403, 429) and (remaining == 0 or retry_after is not None or "rate limit" in message.lower())
        if limited:
            reset_at = asked
            if reset_at is None and remaining == 0:
                reset_at = _int_header(headers, "x-ratelimit-reset")
            if reset_at is None or reset_at <= now:
                reset_at = now + 60.0  # GitHub: wait at least a minute when it does not say
            reset_at = self._remember_wait(status, reset_at, now, _int_header(headers, "x-ratelimit-limit"))
            withheld = None if self._token else withheld_env_token(self.api_url)
            hint = ("" if self._token else
                    f" (unauthenticated: {withheld} is sent only to {GITHUB_API_HOST}; name this host in "
                    f"{ENV_TOKEN_HOST} to send it here)" if withheld else
                    " (unauthenticated; set GITHUB_TOKEN or log in with `gh auth login`)")
            return (f"rate limited by {self._api_origin[1]} (HTTP {status}) until {_fmt_when(reset_at, now)}; "
                    f"not asking again before then{hint}")
        if asked is not None and asked > now:  # Retry-After on any other status (a 503 most often)
            reset_at = self._remember_wait(status, asked, now, None)
            return (f"{self._where(url)} answered HTTP {status}{said} and asked to wait until "
                    f"{_fmt_when(reset_at, now)}; not asking again before then")
        if status == 404:
            return f"repository {self.s.repo} not found at {self._api_origin[1]} (HTTP 404{said})"
        if status == 401:
            return (f"{self._api_origin[1]} rejected the credentials (HTTP 401{said}); "
                    f"check the token in {self._token.source if self._token else 'GITHUB_TOKEN/GH_TOKEN'}")
        if status == 304:
            return f"{self._where(url)} answered 304 Not Modified but nothing is cached for it"
        return f"{self._where(url)} answered HTTP {status}{said}"

    def _remember_wait(self, status: int, reset_at: float, now: float, limit: int | None) -> float:
        """Store "no request before reset_at" for this origin (bounded to ``MAX_WAIT_S``); returns it."""
        reset_at = _bounded_reset(reset_at, now)
        rate = status in (403, 429)
        self.rate_limit = RateLimit(limit=limit, remaining=0 if rate else None, reset_at=reset_at, limited=True,
                                    status=status)
        self.cache.save_limit(self._origin_key, {"reset_at": reset_at, "seen_at": now, "limit": limit, "status": status})
        return reset_at

    async def _request(self, url: str, etag: str | None) -> tuple[int, httpx.Headers, bytes, str | None]:
        """One GET with bounded retries on 5xx / timeouts / network errors."""
        import httpx

        last = ""
        attempts = self.s.retries + 1
        for attempt in range(attempts):
            self.requests += 1
            try:
                status, headers, body, next_url = await asyncio.wait_for(self._once(url, etag), self.s.timeout_s)
            except (asyncio.TimeoutError, httpx.TimeoutException):
                last = f"no answer from {self._where(url)} within {self.s.timeout_s:g} s"
            except _BodyTooLarge:
                raise FetchError(f"answer from {self._where(url)} is larger than "
                                 f"{self.s.max_body_bytes / 1e6:g} MB; stopped reading it") from None
            except httpx.TransportError as e:
                last = f"cannot reach {self._where(url)} ({type(e).__name__}: {self._redact(str(e)) or 'no detail'})"
            else:
                self._note_rate_headers(headers)
                if status < 500:
                    return status, headers, body, next_url
                asked = _parse_retry_after(headers.get("retry-after") or "", self.s.clock())
                if asked is not None and asked - self.s.clock() > self.s.backoff_s * (2 ** attempt):
                    return status, headers, body, next_url  # told to wait longer than a retry would: stop
                last = f"{self._where(url)} answered HTTP {status}"
            if attempt + 1 < attempts:
                await asyncio.sleep(self.s.backoff_s * (2 ** attempt))  # not before any Retry-After (checked above)
        raise FetchError(f"{last} (tried {attempts} time{'s' if attempts > 1 else ''})")

    async def _once(self, url: str, etag: str | None) -> tuple[int, httpx.Headers, bytes, str | None]:
        assert self._http is not None, "use GitHubClient as an async context manager"
        for _hop in range(4):
            problem = url_problem(url)
            if problem:
                raise FetchError(problem)
            headers = {}
            if etag:
                headers["If-None-Match"] = etag
            if self._token is not None and origin_of(url) == self._api_origin:
                headers["Authorization"] = f"Bearer {self._token.reveal()}"
            async with self._http.stream("GET", url, headers=headers) as resp:
                if resp.status_code in _REDIRECTS and resp.headers.get("location"):
                    url = urljoin(url, resp.headers["location"])
                    continue
                declared = _int_header(resp.headers, "content-length")
                if declared is not None and declared > self.s.max_body_bytes:
                    raise _BodyTooLarge()
                buf = bytearray()
                async for chunk in resp.aiter_bytes():
                    buf += chunk
                    if len(buf) > self.s.max_body_bytes:
                        raise _BodyTooLarge()
                nxt = resp.links.get("next", {}).get("url")
                return resp.status_code, resp.headers, bytes(buf), urljoin(url, nxt) if nxt else None
        raise FetchError(f"too many redirects from {self._where(url)}")

    def _note_rate_headers(self, headers: httpx.Headers) -> None:
        remaining = _int_header(headers, "x-ratelimit-remaining")
        if remaining is None:
            return
        reset = _int_header(headers, "x-ratelimit-reset")
        self.rate_limit = RateLimit(limit=_int_header(headers, "x-ratelimit-limit"), remaining=remaining,
                                    reset_at=_bounded_reset(reset, self.s.clock()) if reset is not None else None,
                                    limited=False)

    def _where(self, url: str) -> str:
        try:
            p = urlsplit(url)
            return f"{p.hostname}{':' + str(p.port) if p.port else ''}{p.path}"
        except ValueError:
            return safe_url(url)

    def _redact(self, text: str) -> str:
        if self._token is not None and len(self._token.reveal()) >= 6:  # real tokens are long
            text = text.replace(self._token.reveal(), "<token>")
        return text

    def _error_words(self, e: BaseException) -> str:
        """A FetchError's own words; anything else is a bug or an odd failure, named as such."""
        text = str(e) if isinstance(e, FetchError) else f"internal error while fetching: {type(e).__name__}: {e}"
        return self._redact(text)


def _parse_retry_after(value: str, now: float) -> float | None:
    """Retry-After as a unix time: delay-seconds or an HTTP date; None when unreadable. Not yet
    bounded (``_bounded_reset`` does that where it is stored), but always a finite number."""
    value = value.strip()
    if value.isascii() and value.isdigit():
        return now + (float(value) if len(value) <= 12 else 1e12)  # more digits: "very long", bounded later
    try:
        ts = parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError, OverflowError, OSError):
        return None
    return ts if math.isfinite(ts) else None


# --------------------------------------------------------------------------- the module boundary


async def fetch_open_issues(settings: ClientSettings, token: Token | None = None,
                            folder_slugs: tuple[str, ...] | list[str] = ()) -> FetchResult:
    """Refresh the open-issue listing (and optionally folders' last commits). Never raises: whatever
    fails (a FetchError or a bug), the last good listing comes back with the error in words."""
    now = settings.clock()
    result = FetchResult(repo=settings.repo, api_url=safe_url(settings.api_url.rstrip("/")), checked_at=now,
                         auth=f"token from {token.source}" if token else ANONYMOUS_LIMIT_NOTE)
    problem = api_url_problem(settings.api_url)
    if not problem and not _REPO_RE.match(settings.repo or ""):
        problem = f"not a GitHub repository name: {settings.repo!r} (expected OWNER/NAME)"
    if problem:
        result.error = problem
        return result
    client: GitHubClient | None = None
    try:
        client = GitHubClient(settings, token)
        async with client:
            try:
                issues, prs, truncated, oldest = await client.open_issues()
                result.issues, result.pull_requests_skipped, result.truncated = issues, prs, truncated
                result.issues_unreadable = client.issues_unreadable
                result.fetched_at = oldest
                result.source = (SOURCE_NETWORK if client.counts["200"] else
                                 SOURCE_CACHE_304 if client.counts["304"] else SOURCE_CACHE_FRESH)
            except Exception as e:  # offline, limited, a bad answer, or a bug: the cache, with the error
                result.error = client._error_words(e)
                _use_cache(client, result)
            if folder_slugs:
                slugs = list(dict.fromkeys(folder_slugs))
                if result.error is None:
                    found = await asyncio.gather(*(client.folder_last_commit(s) for s in slugs))
                else:  # offline or limited: do not pay retries again per folder; say what is cached
                    found = [client.cached_folder(s, "not refreshed: the issue list could not be fetched")
                             for s in slugs]
                result.folders = dict(zip(slugs, found))
    except Exception as e:  # the boundary: a bug or an odd failure becomes words, never a crash
        words = client._error_words(e) if client else f"internal error while fetching: {type(e).__name__}: {e}"
        result.error = result.error or words
        if client is not None and result.issues is None:
            _use_cache(client, result)
    if client is not None:
        result.requests = client.requests
        result.rate_limit = client.rate_limit
        result.cache_error = client.cache.write_error
    return result


def _use_cache(client: GitHubClient, result: FetchResult) -> None:
    """Fill ``result`` from the last good listing on disk, when one is complete and readable."""
    try:
        cached = client.cached_open_issues()
    except Exception:  # a cache file of the right shape but odd content: as if absent
        cached = None
    if cached is not None:
        result.issues, result.pull_requests_skipped, result.fetched_at = cached
        result.issues_unreadable = client.issues_unreadable
        result.truncated = False
        result.source = SOURCE_STALE


def fetch_open_issues_sync(settings: ClientSettings, token: Token | None = None,
                           folder_slugs: tuple[str, ...] | list[str] = ()) -> FetchResult:
    """``fetch_open_issues`` from synchronous code (probe threads); safe inside a running loop too."""
    def run() -> FetchResult:
        return asyncio.run(fetch_open_issues(settings, token, folder_slugs))

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return run()
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="g8-fetch") as pool:
        return pool.submit(run).result()
