"""What a gotcha is: its fixed id, its texts, and its judge.

A judge is a pure function ``(Readings, Config) -> Verdict``: it reads plain probe data and never
touches the machine, so every verdict can be reproduced from a snapshot.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence, TypeVar

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings, checked
from sparktui.core.verdict import Evidence, Status, Verdict

Judge = Callable[[Readings, Config], Verdict]
Marks = Callable[[Verdict], frozenset[int]]


class Feed(enum.Enum):
    """How a check is fed: the front ends schedule from this, never from a check's id."""

    PROBES = "probes"  # its probes are read (in their own threads) when it is due by its cadence
    TELEMETRY = "telemetry"  # judged from the sampler's window of samples: no probe is run for it
    ON_REQUEST = "on request"  # the judge reads a kept result; the measurement runs only when asked
    FOLLOWED = "followed live"  # read like PROBES, then judged again as each live event of ``follows`` arrives


@dataclass(frozen=True)
class Gotcha:
    id: str  # "G1", "G2", ...: load-bearing, never renumbered
    slug: str
    title: str
    symptom: str
    cause: str
    check: str  # how sparktui checks it, in words
    fix: str  # Markdown; commands in fenced code blocks
    intrusive: bool  # loads the machine or needs root: never run automatically
    cadence_s: float | None  # how often the dashboard reruns it; None = on demand only
    probes: tuple[str, ...]  # readings the judge needs
    judge: Judge
    references: tuple[str, ...] = ()
    feed: Feed = Feed.PROBES
    enriched_by: tuple[str, ...] = ()  # of ``probes``: judged without these first, again once they are in
    follows: str | None = None  # FOLLOWED: the reading whose live events re-judge it
    shows: str | None = None  # the dashboard panel that lists what it judges ("processes", "playbook issues")
    marks: Marks | None = None  # the pids the dashboard must mark from one of its verdicts

    def __post_init__(self) -> None:
        object.__setattr__(self, "judge", _shape_checked(self.judge, self.probes))
        if not set(self.enriched_by) <= set(self.probes):
            raise ValueError(f"{self.id}: enriched_by {self.enriched_by} must be among its probes {self.probes}")
        if (self.feed is Feed.FOLLOWED) != (self.follows is not None and self.follows in self.probes):
            raise ValueError(f"{self.id}: a check followed live names the reading it follows, among its probes")

    @property
    def required(self) -> tuple[str, ...]:
        """The probes it cannot be judged without (``enriched_by`` only adds to a verdict)."""
        return tuple(p for p in self.probes if p not in self.enriched_by)

    @property
    def number(self) -> int:
        return int(self.id[1:])

    def explain(self) -> str:
        """The gotcha's card as Markdown (``sparktui explain G4``)."""
        cadence = "on demand only" if self.cadence_s is None else _every(self.cadence_s)
        lines = [
            f"# {self.id}: {self.title}",
            "",
            f"**Symptom.** {self.symptom}",
            "",
            f"**Cause.** {self.cause}",
            "",
            f"**How sparktui checks it.** {self.check}",
            "",
            f"**Intrusive:** {'yes: never run automatically; sparktui asks first' if self.intrusive else 'no'}. "
            f"**Reruns:** {cadence}.",
            "",
            "## Fix",
            "",
            self.fix.strip(),
        ]
        if self.references:
            lines += ["", "## Seen in", ""] + [f"- {r}" for r in self.references]
        return "\n".join(lines) + "\n"


def _shape_checked(inner: Judge, probes: tuple[str, ...]) -> Judge:
    """``inner`` seeing the readings it uses only in their declared shapes: one that does not fit (a
    recording's line with ``"rss_bytes": "x"``, a value no GPU reports) reaches it as a failed reading
    naming the field, so the judge says unknown with that reason instead of crashing or believing it.
    Whatever made the readings (a live probe, a recording's samples, a snapshot, a peer)."""
    @functools.wraps(inner)  # judge.__wrapped__ is the module's own judge
    def judge(r: Readings, cfg: Config) -> Verdict:
        return inner(Readings({name: checked(rd) if name in probes else rd for name, rd in r.items()}), cfg)

    return judge


def _every(seconds: float) -> str:
    if seconds >= 3600 and seconds % 3600 == 0:
        return f"every {int(seconds // 3600)} h"
    if seconds >= 60:
        return f"every {seconds / 60:g} min"
    return f"every {seconds:g} s"


def unknown_from(gid: str, reading: Reading, what: str) -> Verdict:
    """The verdict when a needed reading is missing: ``unknown`` with the probe's own reason."""
    reason = reading.error or "no data"
    return Verdict(
        id=gid,
        status=Status.UNKNOWN,
        summary=f"cannot tell: {what} unavailable ({reason})",
        evidence=(Evidence(what, reading.source or reading.probe, f"unavailable: {reason}"),),
    )


def unknown_if_lacking(gid: str, reading: Reading, what: str, *keys: str) -> Verdict | None:
    """``unknown`` when a reading lacks a field its judge decides on (a snapshot written by another
    sparktui version, or edited by hand): an absent list must not read as an empty one, which would
    be an ``ok`` from evidence never seen. None when every field is there."""
    data = reading.data if isinstance(reading.data, dict) else {}
    missing = [k for k in keys if k not in data]
    if not missing:
        return None
    reason = f"the {reading.probe} reading has no {', '.join(missing)} field"
    return Verdict(id=gid, status=Status.UNKNOWN, summary=f"cannot tell: {what}: {reason}",
                   evidence=(Evidence(what, reading.source or reading.probe, f"unavailable: {reason}"),))


# --- named rules: the machinery the judges with rules share ------------------------------------------
# A large judge is a list of small rules, each deciding one thing about what it is given (a window of
# samples, a view of the processes, a scan): a rule returns a Finding or None (nothing to say). A judge
# takes the first rule that speaks (rules in order of precedence) or every finding and the worst of them.

Subject = TypeVar("Subject")


@dataclass
class Finding:
    """What one rule found: the status, the summary it would give, and how far past (or near) its
    threshold (``weight``), which ranks findings of one status (the larger, the worse)."""

    status: Status
    text: str
    weight: float = 0.0

    def rank(self) -> tuple[int, float]:
        """Worse first by status, then by weight."""
        return self.status.severity, self.weight


Rule = Callable[[Subject], Finding | None]


def first_finding(rules: Iterable[Callable[[Subject], Finding | None]], subject: Subject) -> Finding | None:
    """The first rule that speaks, in order; the rules after it are not asked."""
    for rule in rules:
        found = rule(subject)
        if found is not None:
            return found
    return None


def all_findings(rules: Iterable[Callable[[Subject], Finding | None]], subject: Subject) -> list[Finding]:
    """What every rule found, in the rules' order."""
    return [f for f in (rule(subject) for rule in rules) if f is not None]


def worst_index(findings: Sequence[Finding]) -> int:
    """Where the worst finding is: the first of the most severe (by status, then weight)."""
    if not findings:
        raise ValueError("worst of no findings")
    return max(range(len(findings)), key=lambda i: findings[i].rank())


def worst_of(findings: Sequence[Finding]) -> Finding:
    """The worst finding: the first of the most severe (by status, then weight)."""
    return findings[worst_index(findings)]
