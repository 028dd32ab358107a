"""G5: the bandwidth ceiling. Plans made from the 273 GB/s spec overshoot what a GB10 sustains.

The measurement itself is intrusive (it allocates gigabytes on the one memory pool), so it never
runs automatically: `sparktui bandwidth` or the dashboard's `b` key, after a confirmation. This
judge reads the last kept result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Mapping

from sparktui.core.config import Config
from sparktui.core.readings import UNUSABLE, Readings
from sparktui.core.shapes import BANDWIDTH, BANDWIDTH_LAST
from sparktui.core.units import GIB, age_text
from sparktui.core.validate import bandwidth_result_problem
from sparktui.core.verdict import Evidence, EvidenceList, Status, Verdict
from sparktui.gotchas.base import Feed, Gotcha

ID = "G5"


@dataclass(frozen=True)
class Expected:
    """What a device should sustain, in GB/s. ``copy`` counts bytes read + written per second."""

    pattern: str
    label: str
    spec: float
    copy: tuple[float, float]
    read: tuple[float, float]
    source: str


# Copy ranges for HBM parts: 0.80-0.92 of spec is what a plain device copy reaches on Hopper
# (an H200 copy moves ~4.3 TB/s of its 4.8 TB/s spec). GB10 from public reports (docs/gotchas.md, G5).
# First match wins, and every pattern is bounded by word edges: "GH200" must not read as an H200, nor
# "GB100" as a GB10.
EXPECTED: tuple[Expected, ...] = (
    Expected(r"\bGB10\b", "GB10 (LPDDR5x, unified)", 273.0, (180.0, 220.0), (231.0, 253.0),
             "public GB10 reports: read kernel 231-253 GB/s (antirez/ds4 #773); copy-style kernels 180-217 GB/s; spec 273"),
    Expected(r"\bGH200\b", "GH200 (HBM3)", 4000.0, (3200.0, 3680.0), (3400.0, 3800.0), "spec 4.0 TB/s"),
    Expected(r"\bH200\b", "H200 (HBM3e)", 4800.0, (3840.0, 4420.0), (4080.0, 4560.0), "spec 4.8 TB/s"),
    Expected(r"\bH100\b.*\bNVL\b", "H100 NVL (HBM3)", 3900.0, (3120.0, 3590.0), (3320.0, 3700.0), "spec 3.9 TB/s"),
    Expected(r"\bH100\b.*\bPCIe\b", "H100 PCIe (HBM2e)", 2000.0, (1600.0, 1840.0), (1700.0, 1900.0), "spec 2.0 TB/s"),
    Expected(r"\bH100\b", "H100 SXM (HBM3)", 3350.0, (2680.0, 3080.0), (2850.0, 3180.0), "spec 3.35 TB/s"),
    Expected(r"\bA100\b.*\b80", "A100 80GB", 2039.0, (1630.0, 1880.0), (1730.0, 1940.0), "spec 2.0 TB/s"),
    Expected(r"\bA100\b", "A100 40GB", 1555.0, (1240.0, 1430.0), (1320.0, 1480.0), "spec 1.55 TB/s"),
)
WARN_BELOW = 0.8  # of the low end of the expected range


def expected_for(device: str | None) -> Expected | None:
    if not device or not isinstance(device, str):
        return None
    for e in EXPECTED:
        if re.search(e.pattern, device, re.I):
            return e
    return None


FIX = """\
Budget throughput from the measured figure, not the 273 GB/s on the spec sheet. On a GB10 a
copy-style loop sustains roughly 180-220 GB/s counted as bytes read + written (a read-only kernel
231-253 GB/s). Revise a schedule that assumed the spec before committing to a long run.

Measure on an idle machine (it allocates about 4 GiB on the shared pool and loads it for a few
seconds; sparktui asks first and refuses while another job holds GPU memory):

```bash
sparktui bandwidth            # asks for confirmation
sparktui bandwidth --yes      # for scripts
```

A figure far under the range usually means contention (another process streaming memory) or a
degraded state (clocks pinned low: see G4). Check G6's process table, then measure again.
"""


MIN_BUFFER = 512 << 20


@dataclass(frozen=True)
class GateDecision:
    allowed: bool
    buffer_bytes: int  # possibly scaled down from what was asked
    reasons: tuple[str, ...]  # why it is refused, or notes when allowed
    forced: bool = False


def gate(requested_bytes: int, mem_available: int | None, competitors: list[dict] | None,
         process_view_error: str | None, force: bool) -> GateDecision:
    """Decide whether the intrusive measurement may run.

    Memory: the buffer is scaled down so MemAvailable stays at least three times the buffer; below
    the minimum buffer it is refused, and ``force`` never overrides that. Processes: any other
    process holding GPU memory, or an inference server or training job, refuses it; so does a
    process view that could not be read (idle cannot be confirmed). ``force`` overrides only this.
    """
    notes: list[str] = []
    if mem_available is None:
        return GateDecision(False, 0, ("MemAvailable unreadable: cannot check that the buffer fits (not overridable)",))
    size = int(requested_bytes)
    if mem_available < 3 * size:
        size = (mem_available // 3) // (256 << 20) * (256 << 20)
        if size < MIN_BUFFER:
            return GateDecision(False, 0, (f"MemAvailable is {mem_available / GIB:.1f} GiB, under three times even a "
                                           f"{MIN_BUFFER / GIB:.1f} GiB buffer (not overridable)",))
        notes.append(f"buffer scaled down to {size / GIB:.2f} GiB (MemAvailable {mem_available / GIB:.1f} GiB; "
                     f"asked {requested_bytes / GIB:.2f} GiB)")
    blockers: list[str] = []
    if process_view_error:
        blockers.append(f"cannot confirm the machine is idle: {process_view_error}")
    for c in competitors or ():
        mem = c.get("gpu_memory_bytes")
        what = f"pid {c.get('pid')} {c.get('name') or '?'}"
        if c.get("kind") in ("server", "training"):
            blockers.append(f"{c['kind']} running: {what}" + (f" ({mem / GIB:.1f} GiB GPU memory)" if mem else ""))
        elif mem:
            blockers.append(f"holds GPU memory: {what} ({mem / GIB:.1f} GiB)")
        elif c.get("on_gpu"):  # NVML lists it with N/A memory: an unknown amount, never none
            blockers.append(f"holds GPU memory: {what} (amount N/A)")
    if blockers and not force:
        return GateDecision(False, size, tuple(blockers) + ("use --force to override the process check",))
    if blockers:
        notes += [f"overridden by --force: {b}" for b in blockers]
    return GateDecision(True, size, tuple(notes), forced=bool(blockers))


FUTURE_SLACK_S = 2.0  # a kept timestamp further ahead of the clock than this cannot be an age
REMEASURE = "Run `sparktui bandwidth` again on an idle machine: a good measurement replaces the kept file."


_age = age_text  # an age in words (core/units), under the name the tests pin


def _show(v: object) -> str:
    r = repr(v)
    return r if len(r) <= 60 else r[:57] + "..."


result_problem = bandwidth_result_problem  # the shape check lives with the shape (core/shapes.py)


def _not_measured(res: Mapping[str, Any]) -> Verdict:
    """A probe that refused or failed: skip for a refusal (nothing ran), else unknown with the reason."""
    reason = res.get("reason") or res.get("error") or res.get("status")
    ev = (Evidence("bandwidth probe", str(res.get("source") or "target interpreter"), reason),)
    st = Status.SKIP if res.get("status") == "refused" else Status.UNKNOWN
    hint = str(res.get("hint") or "")
    return Verdict(ID, st, f"not measured: {reason}" + (f"; {hint}" if hint else ""), evidence=ev, fix=hint)


def _unusable(problem: str, fresh: bool, kept: str) -> Verdict:
    ev = (Evidence("result", kept, problem),)
    if fresh:
        return Verdict(ID, Status.UNKNOWN, f"bandwidth result unusable: {problem}", evidence=ev)
    return Verdict(ID, Status.UNKNOWN, f"last result unreadable: {problem}", evidence=ev, fix=REMEASURE)


def _figures_evidence(ev: EvidenceList, res: Mapping[str, Any], copy: float, read: float | None) -> None:
    ev.add("device", str(res.get("source") or "torch.cuda"), res.get("device"))
    ev.add("copy bandwidth in GB/s (bytes read + written per s)", "CUDA events over a device copy loop", copy)
    if read is not None:
        ev.add("read-only bandwidth in GB/s", "CUDA events over a reduction", read)
    buf = res.get("buffer_bytes")
    ev.add("buffer / iterations / repeats", "probe",
           f"{f'{buf / GIB:.2f} GiB' if buf is not None else '?'} / {res.get('iterations')} / {res.get('repeats')}")
    if res.get("spread_pct") is not None:
        ev.add("spread across repeats", "probe", f"{res['spread_pct']:.1f}%")


def _age_evidence(ev: EvidenceList, res: Mapping[str, Any], now: float | None, kept: str) -> tuple[float | None, float | None]:
    """(age, seconds in the future) of the measurement; the one that applies is set, else both None."""
    if now is None or res.get("measured_at") is None:
        return None, None
    delta = float(now) - float(res["measured_at"])
    if delta < -FUTURE_SLACK_S:
        ev.add("measured", kept, f"timestamp {age_text(-delta)} in the future: the clock changed since, age unknown")
        return None, -delta
    ev.add("measured", kept, f"{age_text(max(0.0, delta))} ago")
    return max(0.0, delta), None


def over_spec(copy: float, read: float | None, exp: Expected) -> list[str]:
    """Figures above the device's spec. Both conventions are bounded by it: the copy figure counts
    bytes read + written, and reads plus writes together cannot move more than the bus carries;
    a read-only figure cannot either. Such a figure is a measurement error, never a rate."""
    out = []
    if copy > exp.spec:
        out.append(f"copy {copy:.1f} GB/s (bytes read + written)")
    if read is not None and read > exp.spec:
        out.append(f"read {read:.1f} GB/s")
    return out


def far_below(copy: float, exp: Expected) -> str | None:
    """Words for a copy figure under WARN_BELOW of the low end of its expected range, else None (the
    copy loop is the measurement budgets are made from; the read figure is shown, not judged low)."""
    floor = WARN_BELOW * exp.copy[0]
    return f"copy {copy:.0f} GB/s under {floor:.0f}" if copy < floor else None


def above_range(copy: float, read: float | None, exp: Expected) -> list[str]:
    """Figures above the usual range but not above the spec: possible, and worth saying."""
    out = []
    if copy > exp.copy[1]:
        out.append(f"copy above the usual {exp.copy[0]:.0f}-{exp.copy[1]:.0f}")
    if read is not None and read > exp.read[1]:
        out.append(f"read above the usual {exp.read[0]:.0f}-{exp.read[1]:.0f}")
    return out


SUSPECT_FIX = """\
A figure above the memory's spec cannot be a rate: the buffer was served from cache (too small a
buffer, or one the loop keeps re-reading from L2/SLC) or the timing missed work (events recorded
on another stream, a loop the runtime elided). Measure again with the default 4 GiB buffer on an
idle machine:

```bash
sparktui bandwidth --size 4
```

If the figure stays above the spec, the device name may be wrong (see the evidence), or the probe
has a bug: please report it with `sparktui report`.
"""


def _measurement_error(figure: str, bad: list[str], exp: Expected, fresh: bool, ev: EvidenceList) -> Verdict:
    ev.add("physical limit", exp.source, f"{exp.spec:.0f} GB/s spec on {exp.label}: no figure can exceed it")
    lead = "" if fresh else "last result: "
    return Verdict(ID, Status.UNKNOWN,
                   f"{lead}measurement error: {' and '.join(bad)} is outside what {exp.label} can produce "
                   f"(spec {exp.spec:.0f} GB/s); likely a cache-resident buffer or bad timing, not a rate "
                   f"to budget from ({figure})",
                   evidence=ev.tuple(), fix=SUSPECT_FIX)


def judge_result(res: Mapping[str, Any], now: float | None, fresh: bool) -> Verdict:
    """Judge one bandwidth result. ``fresh``: measured by this run (else a kept result -> skip).

    Rules, in order: not measured -> skip (refused) or unknown; a figure that cannot be read ->
    unknown naming it; a figure above the device's spec -> unknown, a measurement error (fresh or
    kept); a kept result -> skip with its figure and age; far below the range -> warn; else ok. A
    device not in the table has no spec to check against: ok, and the summary says so.
    """
    status = res.get("status") if isinstance(res, dict) else None
    if status and status != "ok":
        return _not_measured(res)
    kept = "kept result" if not fresh else "this run"
    problem = result_problem(res)
    if problem:
        return _unusable(problem, fresh, kept)
    device = res.get("device")
    copy = float(res["copy_gbs"])
    read = res.get("read_gbs")
    ev = EvidenceList()
    _figures_evidence(ev, res, copy, read)
    age, future = _age_evidence(ev, res, now, kept)
    figure = f"{copy:.0f} GB/s copy" + (f", {read:.0f} GB/s read" if read is not None else "")
    exp = expected_for(device)
    if exp is None:
        expected_txt = (f"{device or 'this device'} is not in sparktui's table: no expected range and no spec, "
                        f"so the figure is not checked against what the device can do")
        ev.add("expected range", "sparktui's device table", "none: no spec known for this device")
        low: str | None = None
        high: list[str] = []
    else:
        bad = over_spec(copy, read, exp)
        if bad:
            return _measurement_error(figure, bad, exp, fresh, ev)
        expected_txt = f"expected {exp.copy[0]:.0f}-{exp.copy[1]:.0f} GB/s copy on {exp.label} (spec {exp.spec:.0f})"
        ev.add("expected range", exp.source, f"copy {exp.copy[0]:.0f}-{exp.copy[1]:.0f} GB/s, read {exp.read[0]:.0f}-{exp.read[1]:.0f} GB/s")
        low, high = far_below(copy, exp), above_range(copy, read, exp)
    if not fresh:
        if future is not None:
            when = f" (its timestamp is {age_text(future)} in the future: suspicious, age unknown)"
        else:
            when = f" ({age_text(age)} ago)" if age is not None else ""
        return Verdict(ID, Status.SKIP, f"intrusive, not rerun; last measured {figure}{when}" + ("; that was far below range" if low else ""),
                       evidence=ev.tuple(), fix=FIX if low else "")
    if low:
        return Verdict(ID, Status.WARN, f"measured {figure}, far below what this device sustains ({low}; "
                                        f"{expected_txt}): contention or a degraded state",
                       evidence=ev.tuple(), fix=FIX)
    note = f"; {', '.join(high)}, still under the spec" if high else ""
    return Verdict(ID, Status.OK, f"measured {figure}; budget from this, not the spec ({expected_txt}){note}", evidence=ev.tuple())


def judge(r: Readings, cfg: Config) -> Verdict:
    """skip unless measured in this run (intrusive); the last kept figure and its age are shown.

    A kept file that cannot be read (not JSON, not an object, a figure of the wrong type) is
    unknown with the reason: it is a result sparktui was asked to keep, not a "not run yet".
    """
    fresh = r.data(BANDWIDTH)
    if fresh is not None:
        return judge_result(fresh, r.get_reading(BANDWIDTH).started_at or None, fresh=True)
    last = r.get_reading(BANDWIDTH_LAST)
    if last.data is None:
        err = last.error or ""
        if err.startswith(("unreadable", UNUSABLE)):  # a kept result, not "not run yet"
            why = err.split(":", 1)[1].strip() if ":" in err else err
            return Verdict(ID, Status.UNKNOWN, f"last result unreadable: {why}",
                           evidence=(Evidence("last measurement", last.source or "state dir", err),), fix=REMEASURE)
        return Verdict(ID, Status.SKIP, "intrusive, not run automatically: run `sparktui bandwidth` on an idle machine",
                       evidence=(Evidence("last measurement", last.source or "state dir", last.error or "none"),))
    v = judge_result(last.data, last.started_at or None, fresh=False)
    if v.status is Status.UNKNOWN and last.source:
        v = replace(v, evidence=v.evidence + (Evidence("kept file", "state dir", last.source),))
    return v


GOTCHA = Gotcha(
    id=ID,
    slug="bandwidth",
    title="Bandwidth ceiling: 273 GB/s is a spec, not a rate",
    symptom="Memory-bound work (decode-heavy RL loops, inference-in-the-loop) plateaus well under "
            "the throughput a plan promised.",
    cause="273 GB/s is the LPDDR5x spec ceiling. What kernels sustain is lower: a simple read "
          "kernel measures 231-253 GB/s, copy-style kernels 180-217 GB/s (each byte moved twice, "
          "read + write). Plans built on the spec overshoot.",
    check="Intrusive, so only on request: in the training interpreter, allocate a buffer (about "
          "4 GiB, less when memory is short), warm up, time a device copy loop with CUDA events and "
          "report GB/s as bytes read + written per second, next to a read-only figure, with the "
          "spread across repeats. Refused while another process holds GPU memory or a server or "
          "training job runs, or when MemAvailable is under three times the buffer. The last result "
          "is kept and shown with its age. A figure (copy or read) above the device's spec (GB10: "
          "273 GB/s) is a measurement error, never a rate: unknown, naming the spec and the likely "
          "cause (a cache-resident buffer or bad timing). Under 0.8 of the low end of the expected "
          "range warns (contention or a degraded state); above the range but under the spec is ok "
          "and said. A device not in sparktui's table has no spec to check against: the summary "
          "says so.",
    fix=FIX,
    intrusive=True,
    cadence_s=None,
    probes=("bandwidth_last",),
    feed=Feed.ON_REQUEST,
    judge=judge,
    references=("DGX Spark spec: 273 GB/s LPDDR5x; a saturating read kernel measures 231-234 GB/s (antirez/ds4 #773)",
                "docs/bandwidth.md: what the measurement loads, and its gates"),
)
