"""Probe "playbook_issues": open issues of the playbooks repository that name what the user follows.

Reads (over the network, through the cached client in ``sparktui.playbooks.github``) and matches
(pure ``sparktui.playbooks.matching``); it does not judge. Nothing configured means no request.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Mapping

from sparktui.core import shapes
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.playbooks.matching import CATALOG, Matcher, is_own_probe, suggest_slugs
from sparktui.probes.processes import cut_argv
from sparktui.probes.declared import Probe

if TYPE_CHECKING:  # httpx is imported only when a fetch actually happens
    from sparktui.playbooks import github

PROBE = "playbook_issues"
MAX_MATCHES = 50  # kept in the reading (the total is reported too)
EXCERPT_CHARS = 1500  # of each matched issue's body, for the dashboard's detail view
MAX_FOLDERS = 8  # playbook folders whose last commit is looked up


def settings_for(cfg: Config, env: Mapping[str, str] | None = None) -> "github.ClientSettings":
    from sparktui.playbooks import github

    pb = cfg.playbooks
    return github.ClientSettings(api_url=github.resolve_api_url(pb.api_url, env), repo=pb.repo, ttl_s=pb.ttl_s)


def read(cfg: Config, settings: github.ClientSettings | None = None,
         token: github.Token | None | str = "discover") -> Reading:
    """``settings``/``token`` are for tests and the benchmark; by default both come from cfg/env.

    The API URL is checked before anything else reads it: a bad one (no host, a bad port, a user
    name or password, a query) is a reading with the reason in ``url_problem``, no request and no
    token lookup; the URL and host shown never carry a user name or password."""
    from sparktui.playbooks import github

    settings = settings or settings_for(cfg)
    matcher = Matcher(cfg.playbooks.slugs, cfg.playbooks.commands)
    url_problem = github.api_url_problem(settings.api_url)
    base: dict[str, Any] = {
        "configured": bool(matcher.slugs or matcher.commands),
        "repo": settings.repo,
        "api_url": github.safe_url(settings.api_url),
        "api_host": github.safe_host(settings.api_url),
        "slugs": matcher.slugs,
        "commands": [c for c, _ in matcher.commands],
        "unknown_slugs": [s for s in matcher.slugs if s not in CATALOG],
    }
    source = f"GitHub REST API {base['api_host']} ({settings.repo})"
    if not base["configured"]:
        try:
            lines = _process_cmdlines()
        except ProcessScanError as e:
            lines = []
            base["suggestions_error"] = str(e)
        base["suggestions"] = [{"slug": slug, "why": why} for slug, why in suggest_slugs(lines)]
        return Reading(PROBE, base, source="config [playbooks] (nothing to watch: no request made); running processes")
    if url_problem:
        data = {**base, **_result_data(github.FetchResult(repo=settings.repo, api_url=base["api_url"],
                                                          checked_at=time.time(), error=url_problem)), "url_problem": url_problem}
        return Reading(PROBE, data, error=url_problem, source=source)
    if token == "discover":
        token = github.discover_token(settings.api_url, os.environ)
    result = github.fetch_open_issues_sync(settings, token if isinstance(token, github.Token) else None,
                                           folder_slugs=matcher.slugs[:MAX_FOLDERS])
    data = {**base, **_result_data(result)}
    if result.issues is not None:
        matches = matcher.rank(result.issues)
        bodies = {i["number"]: i.get("body") or "" for i in result.issues}
        data["matches_total"] = len(matches)
        data["matches"] = [{**m.to_dict(), "body_excerpt": _excerpt(bodies.get(m.number, ""))}
                           for m in matches[:MAX_MATCHES]]
    error = result.error if result.issues is None else None
    return Reading(PROBE, data, error=error, source=source)


def _result_data(r: github.FetchResult) -> dict[str, Any]:
    return {
        "issues_checked": None if r.issues is None else len(r.issues),
        "issues_unreadable": getattr(r, "issues_unreadable", 0),  # items the API sent that could not be read
        "pull_requests_skipped": r.pull_requests_skipped,
        "truncated": r.truncated,
        "matches": [],
        "matches_total": 0,
        "source": r.source,
        "fetched_at": r.fetched_at,
        "checked_at": r.checked_at,
        "age_s": r.age_s,
        "error": r.error,
        "rate_limit": r.rate_limit.to_dict() if r.rate_limit else None,
        "requests": r.requests,
        "auth": r.auth,
        "folders": r.folders,
        "cache_error": r.cache_error,
    }


class ProcessScanError(RuntimeError):
    """The process list could not be read: no suggestion can come from it, and the reading says so."""


def _descends_from(pid: int, ancestor: int, parent: dict[int, int]) -> bool:
    seen: set[int] = set()
    while pid not in seen:
        if pid == ancestor:
            return True
        seen.add(pid)
        pp = parent.get(pid)
        if pp is None or pp <= 0:
            return False
        pid = pp
    return False


def _process_cmdlines(limit: int = 5000, own_pid: int | None = None) -> list[str]:
    """Command lines of the user's running processes (to suggest a slug). sparktui itself
    (``own_pid``, this process by default), everything it started (the target probe, its children)
    and any sparktui probe script are left out: sparktui is never evidence about the user's
    workload. A process gone or denied mid-scan is skipped; a scan that cannot run at all raises
    ProcessScanError."""
    own = os.getpid() if own_pid is None else own_pid
    try:
        import psutil
    except ImportError as e:
        raise ProcessScanError(f"psutil unavailable: {e}") from None
    rows: list[tuple[int, list[str]]] = []
    parent: dict[int, int] = {}
    try:
        for proc in psutil.process_iter(["pid", "ppid", "cmdline"]):
            try:
                info = proc.info
                pid, ppid, argv = info.get("pid"), info.get("ppid"), info.get("cmdline") or []
            except Exception:  # a process gone or denied mid-scan
                continue
            if isinstance(pid, int):
                if isinstance(ppid, int):
                    parent[pid] = ppid
                rows.append((pid, cut_argv([str(a) for a in argv if a is not None])[0]))  # matched: 64 KiB
    except Exception as e:  # /proc unreadable, psutil broken: a failed scan, not an empty machine
        raise ProcessScanError(f"process list unreadable: {e}") from None
    out = []
    for pid, argv in rows:
        if not argv or is_own_probe(argv) or _descends_from(pid, own, parent):
            continue
        out.append(" ".join(argv))
        if len(out) >= limit:
            break
    return out


def _excerpt(body: str) -> str:
    body = body.strip()
    return body if len(body) <= EXCERPT_CHARS else body[: EXCERPT_CHARS - 1] + "…"


PROBES = (Probe(shapes.PLAYBOOK_ISSUES, read, isolated=True),)  # httpx and a TLS context: in a child
