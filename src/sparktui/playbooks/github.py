"""The open issues of the playbooks repository, over GitHub's REST API (async httpx).

Built to be cheap and honest about what it saw:
- every page is cached on disk with its ETag; a refresh inside the TTL makes no request, a later
  one is conditional (``If-None-Match``), and a 304 reuses the cached page (GitHub does not count
  a 304 against the rate limit);
- offline or failing: the last good listing comes back with its age and the error in words;
- rate limited: the reset time is stored in the cache dir and no request is made before it;
- 5xx and timeouts are retried a bounded number of times with exponential backoff;
- bodies are streamed and capped; malformed JSON is an error in words.

The token (``GITHUB_TOKEN``/``GH_TOKEN``, else ``gh auth token``) goes only to the configured API
origin, never over plain http except to loopback, and never into logs, reprs, errors or the cache.
Nothing raises past ``fetch_open_issues``: it returns a ``FetchResult``.

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
import os
import re
import shutil
import subprocess
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, Callable, Mapping
from urllib.parse import urljoin, urlsplit

import httpx

DEFAULT_API_URL = "https://api.github.com"
ENV_API_URL = "SPARKTUI_GITHUB_API"
TOKEN_ENV_VARS = ("GITHUB_TOKEN", "GH_TOKEN")
MAX_BODY_BYTES = 20 * 1024 * 1024
BODY_KEEP_CHARS = 20_000  # of each issue body, kept for matching and the cache
ANONYMOUS_LIMIT_NOTE = "anonymous: 60 requests/hour"
CACHE_VERSION = 1  # bump when the trimmed page format changes: older files then read as absent

SOURCE_NETWORK = "network"  # at least one page came back 200
SOURCE_CACHE_FRESH = "cache-fresh"  # inside the TTL: no request made
SOURCE_CACHE_304 = "cache-304"  # every page asked was answered 304 Not Modified
SOURCE_STALE = "stale-cache"  # the refresh failed; the last good listing, with its age

_REPO_RE = re.compile(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+$")
_SLUG_RE = re.compile(r"^[a-z0-9][a-z0-9._-]*$")
_REDIRECTS = (301, 302, 303, 307, 308)


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
    if not host:
        return False
    h = host.strip("[]").lower()
    if h == "localhost" or h.endswith(".localhost"):
        return True
    try:
        return ipaddress.ip_address(h).is_loopback
    except ValueError:
        return False


def url_problem(url: str) -> str | None:
    """Why a URL must not be requested (None when it may): https only, plain http for loopback alone."""
    try:
        parts = urlsplit(url)
    except ValueError as e:
        return f"not a usable URL {url!r}: {e}"
    if not parts.hostname:
        return f"not a usable URL {url!r}: no host"
    if parts.scheme == "https":
        return None
    if parts.scheme == "http":
        if is_loopback_host(parts.hostname):
            return None
        return (f"refusing plain http:// to {parts.hostname}: GitHub API URLs must use https "
                "(plain http is allowed only for loopback hosts such as 127.0.0.1)")
    return f"unsupported URL scheme {parts.scheme!r} in {url!r}: use https"


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


def discover_token(api_url: str, env: Mapping[str, str] | None = None, gh_timeout_s: float = 3.0) -> Token | None:
    """GITHUB_TOKEN / GH_TOKEN, else ``gh auth token`` for a non-loopback API host when gh is on PATH."""
    env = os.environ if env is None else env
    for var in TOKEN_ENV_VARS:
        value = (env.get(var) or "").strip()
        if value:
            return Token(value, var)
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

    def to_dict(self) -> dict[str, Any]:
        return {"limit": self.limit, "remaining": self.remaining, "reset_at": self.reset_at, "limited": self.limited}


@dataclass
class FetchResult:
    """What one refresh produced. ``issues`` is None only when nothing (not even a cache) exists."""

    repo: str
    api_url: str
    issues: list[dict[str, Any]] | None = None  # open issues, pull requests removed
    pull_requests_skipped: int = 0
    truncated: bool = False  # stopped at max_pages
    source: str | None = None  # SOURCE_* or None
    fetched_at: float | None = None  # when the server last confirmed this data
    checked_at: float = 0.0  # when this refresh ran
    error: str | None = None  # in words; set with SOURCE_STALE or when issues is None
    rate_limit: RateLimit | None = None
    requests: int = 0  # HTTP requests actually sent (retries included)
    folders: dict[str, dict[str, Any]] = field(default_factory=dict)  # slug -> {last_commit, sha, error}
    auth: str = ANONYMOUS_LIMIT_NOTE  # where the token came from, never the token

    @property
    def ok(self) -> bool:
        return self.issues is not None

    @property
    def age_s(self) -> float | None:
        return None if self.fetched_at is None else max(0.0, self.checked_at - self.fetched_at)

    def to_dict(self) -> dict[str, Any]:
        return {
            "repo": self.repo, "api_url": self.api_url, "issues": self.issues,
            "pull_requests_skipped": self.pull_requests_skipped, "truncated": self.truncated,
            "source": self.source, "fetched_at": self.fetched_at, "checked_at": self.checked_at,
            "age_s": self.age_s, "error": self.error,
            "rate_limit": self.rate_limit.to_dict() if self.rate_limit else None,
            "requests": self.requests, "folders": self.folders, "auth": self.auth,
        }


class FetchError(Exception):
    """A refresh that cannot complete; the message is shown to the user as is."""


class _BodyTooLarge(Exception):
    pass


# --------------------------------------------------------------------------- disk cache


class _DiskCache:
    """One JSON file per URL (body already trimmed, ETag, fetch time, next link) + rate-limit state.

    Never holds request headers, so the token cannot end up here. A corrupt file reads as absent.
    """

    def __init__(self, root: Path) -> None:
        self.root = root

    def _path(self, url: str) -> Path:
        return self.root / (hashlib.sha256(url.encode()).hexdigest()[:40] + ".json")

    def load(self, url: str) -> dict[str, Any] | None:
        try:
            doc = json.loads(self._path(url).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if (not isinstance(doc, dict) or doc.get("v") != CACHE_VERSION or doc.get("url") != url
                or not isinstance(doc.get("fetched_at"), (int, float)) or not isinstance(doc.get("data"), dict)):
            return None
        return doc

    def save(self, entry: dict[str, Any]) -> None:
        self._write(self._path(entry["url"]), entry)

    def _write(self, path: Path, doc: dict[str, Any]) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}.tmp")
            tmp.write_text(json.dumps(doc, separators=(",", ":")), encoding="utf-8")
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only cache costs requests, not correctness

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
    issues, prs = [], 0
    for item in payload:
        if not isinstance(item, dict):
            raise FetchError("unexpected answer: an issue list entry is not an object")
        if "pull_request" in item:
            prs += 1
            continue
        number, title = item.get("number"), item.get("title")
        if not isinstance(number, int) or not isinstance(title, str):
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
    return {"issues": issues, "pull_requests": prs}


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


def _fmt_when(ts: float, now: float) -> str:
    wait = max(0.0, ts - now)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(ts))
    return f"{stamp} (in {wait / 60:.0f} min)" if wait >= 60 else f"{stamp} (in {wait:.0f} s)"


def _int_header(headers: httpx.Headers, name: str) -> int | None:
    try:
        return int(headers.get(name, ""))
    except ValueError:
        return None


_SSL_CONTEXTS: dict[bool, Any] = {}


def _ssl_context(trust_env: bool) -> Any:
    """Built once per process: loading the CA bundle costs ~50 ms, more than a cached refresh."""
    ctx = _SSL_CONTEXTS.get(trust_env)
    if ctx is None:
        ctx = _SSL_CONTEXTS[trust_env] = httpx.create_ssl_context(trust_env=trust_env)
    return ctx


class GitHubClient:
    """One refresh's worth of requests. Use as ``async with GitHubClient(settings, token) as c``."""

    def __init__(self, settings: ClientSettings, token: Token | None = None) -> None:
        self.s = settings
        self._token = token
        self.api_url = settings.api_url.rstrip("/")
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

    async def open_issues(self) -> tuple[list[dict[str, Any]], int, bool, float]:
        """(issues, pull requests skipped, truncated, oldest fetch time); raises FetchError."""
        url: str | None = self.issues_url()
        issues: dict[int, dict[str, Any]] = {}
        prs, pages, oldest = 0, 0, float("inf")
        while url and pages < self.s.max_pages:
            entry = await self.get(url, _trim_issue_page)
            for issue in entry["data"]["issues"]:
                issues.setdefault(issue["number"], issue)  # an issue can shift across pages
            prs += int(entry["data"].get("pull_requests", 0))
            oldest = min(oldest, entry["fetched_at"])
            url = entry.get("next")
            pages += 1
        return list(issues.values()), prs, bool(url), oldest

    def cached_open_issues(self) -> tuple[list[dict[str, Any]], int, float] | None:
        """The last complete listing from disk, however old, or None when a page is missing."""
        url: str | None = self.issues_url()
        issues: dict[int, dict[str, Any]] = {}
        prs, pages, oldest = 0, 0, float("inf")
        while url and pages < self.s.max_pages:
            entry = self.cache.load(url)
            if entry is None:
                return None
            for issue in entry["data"]["issues"]:
                issues.setdefault(issue["number"], issue)
            prs += int(entry["data"].get("pull_requests", 0))
            oldest = min(oldest, entry["fetched_at"])
            url = entry.get("next")
            pages += 1
        return list(issues.values()), prs, oldest

    async def folder_last_commit(self, slug: str) -> dict[str, Any]:
        """The playbook folder's newest commit (date, sha), or an error in words; never raises."""
        if not _SLUG_RE.match(slug):
            return {"last_commit": None, "sha": None, "error": f"not a playbook slug: {slug!r}"}
        try:
            entry = await self.get(self.commits_url(slug), _trim_commits)
        except FetchError as e:
            return self.cached_folder(slug, self._redact(str(e)))
        commits = entry["data"]["commits"]
        if not commits:
            return {"last_commit": None, "sha": None, "error": f"no commits touch nvidia/{slug} (no such playbook?)"}
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
                where = getattr(e, "lineno", None)
                pos = f" at line {e.lineno}, column {e.colno}" if where else ""
                msg = getattr(e, "msg", None) or type(e).__name__
                raise FetchError(f"malformed JSON from {self._where(url)}{pos}: {msg}") from None
            entry = {"v": CACHE_VERSION, "url": url, "etag": headers.get("etag"), "fetched_at": now, "next": next_url,
                     "data": trim(payload)}
            self.counts["200"] += 1
            self.cache.save(entry)
            return entry
        raise FetchError(self._status_error(url, status, headers, body, now))

    def _check_not_limited(self, now: float) -> None:
        state = self.cache.load_limit(self._origin_key)
        if state is None:
            return
        if state["reset_at"] <= now:
            self.cache.save_limit(self._origin_key, None)
            return
        self.rate_limit = RateLimit(limit=state.get("limit"), remaining=0, reset_at=state["reset_at"], limited=True)
        raise FetchError(f"rate limited by {self._api_origin[1]} until {_fmt_when(state['reset_at'], now)}; "
                         "not asking again before then")

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
        limited = status in (403, 429) and (remaining == 0 or retry_after is not None or "rate limit" in message.lower())
        if limited:
            reset_at = None
            if retry_after is not None:
                reset_at = _parse_retry_after(retry_after, now)
            if reset_at is None and remaining == 0:
                reset_at = _int_header(headers, "x-ratelimit-reset")
            if reset_at is None or reset_at <= now:
                reset_at = now + 60.0  # GitHub: wait at least a minute when it does not say
            self.rate_limit = RateLimit(limit=_int_header(headers, "x-ratelimit-limit"), remaining=0,
                                        reset_at=float(reset_at), limited=True)
            self.cache.save_limit(self._origin_key, {"reset_at": float(reset_at), "seen_at": now,
                                                     "limit": self.rate_limit.limit})
            hint = "" if self._token else " (unauthenticated; set GITHUB_TOKEN or log in with `gh auth login`)"
            return (f"rate limited by {self._api_origin[1]} (HTTP {status}) until {_fmt_when(reset_at, now)}; "
                    f"not asking again before then{hint}")
        said = f": {message}" if message else ""
        if status == 404:
            return f"repository {self.s.repo} not found at {self._api_origin[1]} (HTTP 404{said})"
        if status == 401:
            return (f"{self._api_origin[1]} rejected the credentials (HTTP 401{said}); "
                    f"check the token in {self._token.source if self._token else 'GITHUB_TOKEN/GH_TOKEN'}")
        if status == 304:
            return f"{self._where(url)} answered 304 Not Modified but nothing is cached for it"
        return f"{self._where(url)} answered HTTP {status}{said}"

    async def _request(self, url: str, etag: str | None) -> tuple[int, httpx.Headers, bytes, str | None]:
        """One GET with bounded retries on 5xx / timeouts / network errors."""
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
                last = f"{self._where(url)} answered HTTP {status}"
            if attempt + 1 < attempts:
                await asyncio.sleep(self.s.backoff_s * (2 ** attempt))
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
                                    reset_at=float(reset) if reset is not None else None, limited=False)

    def _where(self, url: str) -> str:
        p = urlsplit(url)
        return f"{p.hostname}{':' + str(p.port) if p.port else ''}{p.path}"

    def _redact(self, text: str) -> str:
        if self._token is not None and len(self._token.reveal()) >= 6:  # real tokens are long
            text = text.replace(self._token.reveal(), "<token>")
        return text


def _parse_retry_after(value: str, now: float) -> float | None:
    value = value.strip()
    if value.isdigit():
        return now + int(value)
    try:
        return parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError, IndexError):
        return None


# --------------------------------------------------------------------------- the module boundary


async def fetch_open_issues(settings: ClientSettings, token: Token | None = None,
                            folder_slugs: tuple[str, ...] | list[str] = ()) -> FetchResult:
    """Refresh the open-issue listing (and optionally folders' last commits). Never raises."""
    now = settings.clock()
    result = FetchResult(repo=settings.repo, api_url=settings.api_url.rstrip("/"), checked_at=now,
                         auth=f"token from {token.source}" if token else ANONYMOUS_LIMIT_NOTE)
    problem = url_problem(settings.api_url)
    if not problem and not _REPO_RE.match(settings.repo or ""):
        problem = f"not a GitHub repository name: {settings.repo!r} (expected OWNER/NAME)"
    if problem:
        result.error = problem
        return result
    client = GitHubClient(settings, token)
    try:
        async with client:
            try:
                issues, prs, truncated, oldest = await client.open_issues()
                result.issues, result.pull_requests_skipped, result.truncated = issues, prs, truncated
                result.fetched_at = oldest
                result.source = (SOURCE_NETWORK if client.counts["200"] else
                                 SOURCE_CACHE_304 if client.counts["304"] else SOURCE_CACHE_FRESH)
            except FetchError as e:
                result.error = client._redact(str(e))
                cached = client.cached_open_issues()
                if cached is not None:
                    result.issues, result.pull_requests_skipped, result.fetched_at = cached
                    result.source = SOURCE_STALE
            if folder_slugs:
                slugs = list(dict.fromkeys(folder_slugs))
                if result.error is None:
                    found = await asyncio.gather(*(client.folder_last_commit(s) for s in slugs))
                else:  # offline or limited: do not pay retries again per folder; say what is cached
                    found = [client.cached_folder(s, "not refreshed: the issue list could not be fetched")
                             for s in slugs]
                result.folders = dict(zip(slugs, found))
    except Exception as e:  # the boundary: a bug or an odd failure becomes words, never a crash
        result.error = client._redact(f"internal error while fetching: {type(e).__name__}: {e}")
    result.requests = client.requests
    result.rate_limit = client.rate_limit
    return result


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
