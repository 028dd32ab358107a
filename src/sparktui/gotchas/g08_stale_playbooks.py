"""G8: the official playbook being followed has open issues that say it no longer works as written.

The judge is pure: it reads the "playbook_issues" reading (already matched by the probe) and
uses the reading's own ``checked_at`` as "now" for ages, so a snapshot judges the same later.
"""

from __future__ import annotations

import json
from datetime import datetime, timezone
from typing import Any, Mapping, Sequence

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.shapes import PLAYBOOK_ISSUES, TPSCAN
from sparktui.core.units import age_rounded, number_or_none
from sparktui.core.verdict import Evidence, EvidenceList, Status, Verdict
from sparktui.gotchas._fix import block, sh
from sparktui.gotchas.base import Gotcha, unknown_from, unknown_if_lacking

PROBE = "playbook_issues"
UNTOUCHED_DAYS = 90  # a playbook folder unchanged this long while issues match is worth saying
DETAIL_LINES = 20
STALE_MAX_DAYS = 7  # a listing older than this, kept because the refresh failed, no longer says "none open"

_SOURCE_WORDS = {
    "network": "fetched now",
    "cache-fresh": "from the disk cache, inside its TTL (no request made)",
    "cache-304": "from the disk cache, confirmed unchanged by the server (304)",
    "stale-cache": "from the disk cache: the refresh failed",
}


def _script_suggestions(scan: Mapping[str, Any] | None) -> list[dict[str, str]]:
    """Playbooks the G10 scan's launch scripts point at (a `vllm serve` line suggests vllm)."""
    from sparktui.playbooks.matching import suggest_slugs

    out: list[dict[str, str]] = []
    files = (scan or {}).get("files") or {}
    for path, info in sorted(files.items()):
        for marker in (info.get("serving_markers") or []) + (info.get("training_markers") or []):
            for slug, _ in suggest_slugs([str(marker)]):
                out.append({"slug": slug, "why": f"'{marker}' in {path}", "from": "launch scripts"})
    return out


def judge(r: Readings, cfg: Config) -> Verdict:
    reading = r.get_reading(PLAYBOOK_ISSUES)
    d: Any = reading.data  # the helpers below take plain dicts (PlaybookIssuesData is its shape)
    if d is None:
        return unknown_from("G8", reading, "open issues of the playbooks repository")
    repo = d.get("repo") or cfg.playbooks.repo
    if not d.get("configured"):
        return _nothing_to_watch(r, d, repo)
    ev = EvidenceList()
    ev.items.append(_ev_config(d, repo))
    where = f"{d.get('api_host') or 'GitHub API'} /repos/{repo}/issues"
    unfetched = _not_fetched(reading, d, repo, where, ev)
    if unfetched is not None:
        return unfetched
    lacking = unknown_if_lacking("G8", reading, "open issues of the playbooks repository", "matches")
    if lacking is not None:
        return lacking
    now = _number(d.get("checked_at"))
    unreadable = _fetched_evidence(d, where, ev)
    untouched = _folders(ev, d, now)
    stale = d.get("source") == "stale-cache"
    suffix = f" (as of {_span(d.get('age_s'))} ago; refresh failed: {d.get('error')})" if stale else ""
    matches = d.get("matches") or []
    if not matches:
        return _no_match(d, repo, unreadable, stale, suffix, ev)
    total = _number(d.get("matches_total")) or len(matches)
    numbers = ", ".join(f"#{m.get('number')}" for m in matches[:5]) + (" …" if total > 5 else "")
    summary = (f"{total} open issue{'s' if total != 1 else ''} in {repo} name {_following(d)}: {numbers}"
               + "".join(f"; nvidia/{slug} unchanged for {days} d" for slug, days in untouched) + suffix)
    details = [_detail(m, now) for m in matches[:DETAIL_LINES]]
    if total > DETAIL_LINES:
        details.append(f"… and {total - DETAIL_LINES} more")
    return Verdict("G8", Status.WARN, summary, evidence=ev.tuple(), fix=fix_for(d, repo, matches),
                   details=tuple(details))


def _nothing_to_watch(r: Readings, d: dict[str, Any], repo: str) -> Verdict:
    """skip: no playbook or command configured; the running processes and launch scripts suggest some."""
    suggestions = [{**s, "from": "running processes"} for s in d.get("suggestions") or []
                   if isinstance(s, dict) and s.get("slug")]
    seen = {s["slug"] for s in suggestions}
    for s in _script_suggestions(r.get_reading(TPSCAN).data):
        if s["slug"] not in seen:
            seen.add(s["slug"])
            suggestions.append(s)
    hint = ""
    if suggestions:
        flags = " ".join(f"--playbook {s['slug']}" for s in suggestions[:3])
        where = " and ".join(sorted({s["from"] for s in suggestions}))
        hint = f"; {where} suggest: {flags}"
    evidence = [_ev_config(d, repo)]
    if d.get("suggestions_error"):  # no suggestion from processes is then not "none running"
        evidence.append(Evidence("running processes", "process scan", f"not scanned: {d['suggestions_error']}"))
    evidence += [Evidence(f"suggests {s['slug']}", s["from"], s.get("why")) for s in suggestions]
    return Verdict("G8", Status.SKIP,
                   "nothing to watch: no playbook or command configured (set [playbooks] slugs, "
                   f"or pass --playbook SLUG / --command CMD){hint}",
                   evidence=tuple(evidence), fix=fix_for(d, repo, suggested=[s["slug"] for s in suggestions]))


def _not_fetched(reading: Any, d: dict[str, Any], repo: str, where: str, ev: EvidenceList) -> Verdict | None:
    """unknown when the API URL cannot be used or nothing was fetched nor cached; None otherwise."""
    if d.get("url_problem"):  # nothing was asked: say what is wrong with the URL, not "offline"
        ev.add("GitHub API URL", "--api-url / [playbooks] api_url / SPARKTUI_GITHUB_API",
               f"not usable: {d['url_problem']}")
        return Verdict("G8", Status.UNKNOWN,
                       f"cannot tell: the GitHub API URL cannot be used, so no issue was fetched ({d['url_problem']})",
                       evidence=ev.tuple(), fix=fix_for(d, repo))
    if d.get("issues_checked") is not None:
        return None
    error = d.get("error")
    ev.add("open issues", where, f"unavailable: {error or reading.error or 'no data'}")
    _rate_limit(ev, d, where)
    _cache_error(ev, d)
    return Verdict("G8", Status.UNKNOWN,
                   f"cannot tell: the open issues of {repo} could not be fetched and nothing is cached "
                   f"({error or reading.error or 'no data'})",
                   evidence=ev.tuple(), fix=fix_for(d, repo))


def _fetched_evidence(d: dict[str, Any], where: str, ev: EvidenceList) -> int:
    """What was checked, left out and where the list came from; the count of unreadable issues."""
    prs = d.get("pull_requests_skipped") or 0
    ev.add("open issues checked", where,
           f"{d.get('issues_checked')}" + (f" ({prs} pull requests left out)" if prs else "")
           + (" (stopped at the page limit; more exist)" if d.get("truncated") else ""))
    left_out = d.get("issues_unreadable")
    unreadable = left_out if isinstance(left_out, int) else 0
    if unreadable:
        ev.add("issues left out (unreadable)", where,
               f"{unreadable} issue object{'s' if unreadable != 1 else ''} without a usable number or title: not matched")
    ev.add("where the list came from", where, _source_text(d))
    _rate_limit(ev, d, where)
    _cache_error(ev, d)
    return unreadable


def _no_match(d: dict[str, Any], repo: str, unreadable: int, stale: bool, suffix: str, ev: EvidenceList) -> Verdict:
    """No open issue names what is followed: ok, unless the reading or the list cannot stand for that."""
    checked = d.get("issues_checked")
    total = _number(d.get("matches_total")) or 0
    if total:  # an edited or torn reading: what it counted is not there to show
        return Verdict("G8", Status.UNKNOWN, f"cannot tell: the reading counts {total:g} matching issues but lists none",
                       evidence=ev.tuple(), fix=fix_for(d, repo))
    if unreadable and not checked:
        return Verdict("G8", Status.UNKNOWN,
                       f"cannot tell: the API answered {unreadable} items sparktui could not read "
                       f"(no usable issue number or title){suffix}", evidence=ev.tuple(), fix=fix_for(d, repo))
    scope = f"the first {checked}" if d.get("truncated") else f"{checked}"
    if unreadable:
        scope += f" readable ({unreadable} more could not be read)"
    unsure = _why_none_is_no_news(d, stale)
    if unsure:
        return Verdict("G8", Status.UNKNOWN, f"cannot tell: {unsure}", evidence=ev.tuple(), fix=fix_for(d, repo))
    return Verdict("G8", Status.OK, f"none of {scope} open issues in {repo} name {_following(d)}{suffix}",
                   evidence=ev.tuple(), fix=FIX)


# --------------------------------------------------------------------------- pieces


def _ev_config(d: dict[str, Any], repo: str) -> Evidence:
    slugs = d.get("slugs") or []
    commands = d.get("commands") or []
    value = {"repo": repo, "slugs": slugs, "commands": commands}
    if d.get("unknown_slugs"):
        value["not in sparktui's catalog (matched by path/URL only)"] = d["unknown_slugs"]
    return Evidence("what is followed", "config [playbooks] / --playbook / --command", value)


def _following(d: dict[str, Any]) -> str:
    parts = [", ".join(d["slugs"])] if d.get("slugs") else []
    n = len(d.get("commands") or [])
    if n:
        parts.append("your command" if n == 1 else f"your {n} commands")
    return " or ".join(parts) if parts else "nothing"


def _source_text(d: dict[str, Any]) -> str:
    source = d.get("source") or "unknown"
    text = _SOURCE_WORDS.get(source, source)
    age = d.get("age_s")
    if age is not None and source != "network":
        text += f"; data {_span(age)} old"
    if source == "stale-cache" and d.get("error"):
        text += f"; error: {d['error']}"
    text += f"; {d.get('requests', 0)} request{'s' if d.get('requests') != 1 else ''} made"
    if d.get("auth"):
        text += f"; {d['auth']}"
    return text


def _rate_limit(ev: EvidenceList, d: dict[str, Any], where: str) -> None:
    rl = d.get("rate_limit") or {}
    status = rl.get("status")
    if rl.get("limited") and rl.get("reset_at") and status not in (None, 403, 429):  # e.g. 503 + Retry-After
        ev.add("server asked to wait", where,
               f"HTTP {status} with Retry-After; next request after {_utc(rl['reset_at'])}, none before then")
    elif rl.get("limited") and rl.get("reset_at"):
        ev.add("rate limit", where, f"exhausted; resets at {_utc(rl['reset_at'])}; no request before then")
    elif rl.get("remaining") is not None:
        ev.add("rate limit", where, f"{rl['remaining']} of {rl.get('limit')} requests left")


def _cache_error(ev: EvidenceList, d: dict[str, Any]) -> None:
    """A cache that cannot be written still works, but every run then asks the server in full."""
    if d.get("cache_error"):
        ev.add("disk cache", "sparktui cache dir",
               f"{d['cache_error']}; every refresh asks the server in full (no TTL, no 304)")


def _why_none_is_no_news(d: dict[str, Any], stale: bool) -> str | None:
    """Why "no open issue names it" proves nothing, or None: a followed slug outside sparktui's catalog
    that the repository has no folder for (or that cannot be a folder name, like ../../etc), or a list
    kept from the cache after a failed refresh that is too old (or of no known age) to stand for now."""
    unknown: list[Any] = d["unknown_slugs"] if isinstance(d.get("unknown_slugs"), list) else []
    missing = [str(info.get("error") or f"no playbook {slug!r}") for slug, info in (d.get("folders") or {}).items()
               if isinstance(info, dict) and info.get("exists") is False and slug in unknown]
    if missing:
        return f"{'; '.join(missing)}: no issue names a playbook that is not there (check the slug)"
    if not stale:
        return None
    age, refresh = _number(d.get("age_s")), f"refresh failed: {d.get('error') or 'no reason given'}"
    if age is None:
        return f"the cached list of open issues is of unknown age; {refresh}"
    if age < 0:
        return f"the cached list of open issues is dated {_span(-age)} in the future; {refresh}"
    if age > STALE_MAX_DAYS * 86400:
        return (f"the last list of open issues is {_span(age)} old (kept from the cache; over {STALE_MAX_DAYS} d "
                f"is out of date); {refresh}")
    return None


def _folders(ev: EvidenceList, d: dict[str, Any], now: float | None) -> list[tuple[str, int]]:
    untouched = []
    for slug, info in (d.get("folders") or {}).items():
        if not isinstance(info, dict):
            continue
        when = _parse(info.get("last_commit"))
        source = f"GitHub commits of nvidia/{slug}"
        if when is None:
            ev.add(f"nvidia/{slug} last change", source, f"unavailable: {info.get('error') or 'no date'}")
            continue
        days = int((now - when) // 86400) if now else None
        ev.add(f"nvidia/{slug} last change", source,
               f"{info.get('last_commit')}" + (f" ({days} d before this check)" if days is not None else "")
               + (f" (cached; {info['error']})" if info.get("error") else ""))
        if days is not None and days >= UNTOUCHED_DAYS:
            untouched.append((slug, days))
    return untouched


def _detail(m: dict[str, Any], now: float | None) -> str:
    created = _parse(m.get("created_at"))
    age = f"{_span(now - created)}" if created is not None and now else "age unknown"
    n = m.get("comments") or 0
    reasons = "; ".join(m.get("reasons") or [])
    return f"#{m.get('number')} {m.get('title')} ({age}, {n} comment{'s' if n != 1 else ''}): {reasons}"


_number = number_or_none  # a reading's number, or None (an edited snapshot's "N/A", NaN): core/units


def _parse(stamp: Any) -> float | None:
    if not isinstance(stamp, str) or not stamp:
        return None
    try:
        dt = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        return None
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    return dt.timestamp()


_span = age_rounded  # "42 s", "3 min", "5 h", "2 d" (core/units)


def _utc(ts: Any) -> str:
    """A time for people; a snapshot holding an absurd one (year 5 million, NaN) gives words, not a crash."""
    try:
        return datetime.fromtimestamp(float(ts), tz=timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    except (TypeError, ValueError, OverflowError, OSError):
        return f"an unreadable time ({str(ts)[:40]})"


# --------------------------------------------------------------------------- texts

FIX = """\
Tell sparktui what you follow, so it can watch that playbook's open issues. In
`~/.config/sparktui/config.toml`:

```toml
[playbooks]
slugs = ["vllm"]                      # folder names under nvidia/ in the repository
commands = ["vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 0.8"]
```

or once, headless:

```bash
sparktui check G8 --playbook vllm --command "vllm serve Qwen/Qwen3-8B --gpu-memory-utilization 0.8"
```

Then read every listed issue before a long or expensive run: many carry the working fix (a
different container tag, a missing package, a changed flag) in the issue or its comments. The
same search by hand:

```bash
gh issue list -R NVIDIA/dgx-spark-playbooks --state open --search "vllm in:title,body"
gh issue view 123 -R NVIDIA/dgx-spark-playbooks --comments
```

Anonymous API use is limited to 60 requests an hour; sparktui caches with ETags so refreshes are
mostly free, but on a shared address set a token:

```bash
export GITHUB_TOKEN=...        # or: gh auth login   (sparktui then asks `gh auth token`)
```

GitHub Enterprise or a mirror: `--api-url https://HOST/api/v3`, `[playbooks] api_url`, or
`SPARKTUI_GITHUB_API` (a flag or config value beats the environment variable).
"""

ISSUES_TO_OPEN = 5  # issues the fix opens one by one (the details list up to DETAIL_LINES)
TOKEN_TEXT = ("Anonymous API use is limited to 60 requests an hour; sparktui caches with ETags so refreshes are "
              "mostly free, but on a shared address set a token (sparktui also asks `gh auth token` itself):\n")
TOKEN_LINE = 'export GITHUB_TOKEN="$(gh auth token)"    # after `gh auth login`'


def fix_for(d: Mapping[str, Any], repo: str, matches: Sequence[dict[str, Any]] = (), suggested: Sequence[str] = ()) -> str:
    """FIX filled from the reading: the slugs followed (or suggested, or a listing of them), the
    matching issues to open by number, the searches by hand; a token taken from gh."""
    slugs = list(d.get("slugs") or []) or list(dict.fromkeys(suggested))
    parts: list[str] = []
    if not d.get("configured") and slugs:
        parts += ["Tell sparktui what you follow, so it can watch that playbook's open issues. In "
                  "`~/.config/sparktui/config.toml`:\n", block(["[playbooks]", f"slugs = {json.dumps(slugs)}"], "toml"),
                  "or once, headless:\n",
                  block([sh("sparktui", "check", "G8", *(w for slug in slugs for w in ("--playbook", slug)))])]
    elif not d.get("configured"):
        parts += ["Tell sparktui which playbook you follow (`--playbook`, or `[playbooks] slugs` in "
                  "`~/.config/sparktui/config.toml`): they are the folders under nvidia/ in the repository:\n",
                  block(["# the playbooks there: pass the one you follow with --playbook",
                         sh("gh", "api", f"repos/{repo}/contents/nvidia", "--jq", ".[].name")])]
    else:
        views = [sh("gh", "issue", "view", str(m["number"]), "-R", repo, "--comments")
                 for m in matches[:ISSUES_TO_OPEN] if isinstance(m.get("number"), int)]
        searches = [sh("gh", "issue", "list", "-R", repo, "--state", "open", "--search", f"{slug} in:title,body")
                    for slug in slugs]
        if views or searches:
            parts += ["Read every listed issue before a long or expensive run: many carry the working fix (a "
                      "different container tag, a missing package, a changed flag) in the issue or its comments. "
                      "The issues, and the same search by hand:\n", block(views + searches)]
    return "\n".join(parts + [TOKEN_TEXT, block([TOKEN_LINE])])


GOTCHA = Gotcha(
    id="G8",
    slug="stale-playbooks",
    title="Stale official playbooks",
    symptom=("A playbook from NVIDIA/dgx-spark-playbooks, followed step by step, fails part-way: a container "
             "tag that no longer has the needed package (Ray missing from the vLLM image), a pinned version "
             "that conflicts, a download URL that moved, or build.nvidia.com and GitHub disagreeing on the image."),
    cause=("The playbooks are snapshots of fast-moving stacks (vLLM, SGLang, TRT-LLM, Unsloth, NeMo). The "
           "frameworks and NGC tags move weekly; a playbook folder can sit unchanged for months while its "
           "failures are reported only as open issues. Those issues carry no labels: they name the playbook "
           "by a title prefix (\"SGLang: ...\"), a path nvidia/<slug>, a tree/main or build.nvidia.com URL, a "
           "container tag or a command (trtllm-serve), sometimes misspelled (\"Unsolth\")."),
    check=("Lists the repository's open issues over GitHub's REST API (pull requests left out; pages followed "
           "through the Link header), then ranks the ones that name the followed playbook slugs or the "
           "significant parts of your launch commands, each with the reasons it matched. Responses are cached "
           "with their ETag: a refresh inside the TTL sends nothing and a later one is a conditional request. "
           "Also shows when each followed playbook folder last changed. Offline, the last good list is judged "
           "with its age; with nothing cached the verdict is unknown. With nothing configured, running "
           "processes and launch scripts suggest playbooks to follow; sparktui itself, every process it "
           "started (the target probe names unsloth, vllm ...) and any sparktui probe script are never "
           "counted, and a process list that cannot be read is said, not taken as none running."),
    fix=FIX,
    intrusive=False,
    cadence_s=900.0,
    probes=(PROBE, "tpscan"),
    enriched_by=("tpscan",),  # the scan's launch scripts suggest what to follow; a slow scan must not hold G8
    shows="playbook issues",
    judge=judge,
    references=(
        "NVIDIA/dgx-spark-playbooks #109: nvidia/vllm is wrong missing Ray",
        "NVIDIA/dgx-spark-playbooks #68: SGLang: build.nvidia.com and GitHub name different container images",
        "NVIDIA/dgx-spark-playbooks #15: \"Unsolth\" playbook issues (misspelled title)",
    ),
)
