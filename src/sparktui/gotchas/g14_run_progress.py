"""G14: the run itself. Is it making progress, at what rate; why did it slow down; why did it end.

A pure function of the ``run`` reading (probes/run_log.py, followed live by live/run.py), enriched by
what the machine showed meanwhile: the telemetry samples (G4's clock-event counters and reasons, the
SM clock; the samples' memory figures), the meminfo reading (PSI, MemAvailable), the processes (one
that started) and the kernel log (an OOM kill or an Xid naming one of the run's pids).

``now`` is the reading's ``read_at``, never the wall clock: a replay judges the run as it was. The
pace is the run's own: seconds per step from consecutive progress points (dt / dstep, so a log that
prints every tenth step gives the same pace), else the printed rate; the expected gap between two
progress lines is their median gap. Each rule below is a small function; ``_decide`` takes the first
that speaks, in the contract's order. Reviewing a recording, the whole progress list is scanned: the
longest stall and the deepest slowdown, each with when and the causes seen then.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass, field
from statistics import median
from typing import Any, Callable, Mapping

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.shapes import KERNEL_LOG, MEMINFO, PROCESSES, RUN, TELEMETRY
from sparktui.core.telemetry import CLOCK_EVENT_COUNTERS, SLOWDOWN_REASONS, THERMAL_POLICY_COUNTER, counter_ns
from sparktui.core.units import GIB, age_text, is_number, utc_text
from sparktui.core.verdict import Evidence, Status, Verdict
from sparktui.gotchas._fix import block, comment
from sparktui.gotchas.base import Feed, Finding, Gotcha, first_finding, unknown_from, unknown_if_lacking

ID = "G14"

# The stall threshold by default: the run's own pace, never under ten minutes (a checkpoint save or an
# evaluation pass of a few minutes is not a stall).
STALL_FLOOR_S = 600.0
LATE_FLOOR_S = 60.0  # a pause under a minute is never late: a checkpoint save, an eval, the log's own buffering
STALL_PACE_FACTOR = 3.0  # default stall: this many times late_factor times the median gap between progress lines
SLOW_MIN_POINTS = 3  # progress points inside the slow window before its rate is judged
SLOW_BASELINE_WINDOWS = 2.0  # progress before the window must span this many windows: the run's median
# Causes of a slowdown or a stall, seen in the same stretch of time:
CLOCK_DROP_SHARE = 0.10  # SM clock under load down this share against the samples before the stretch
CLOCK_EVENT_SHARE = 0.01  # a clock-event counter held the clocks this share of the stretch (G4's SLOWDOWN_SHARE)
REASON_MIN_SAMPLES = 2  # a slowdown reason in this many samples (one is a snapshot; G4's too)
COUNTERS_READ_S = 10.0  # probes/sampler.py COUNTERS_EVERY_S (gotchas do not import probes)
LOCK_QUIET_SHARE = 0.5  # the SM clock dropped with no slowdown reason in this share of the loaded samples: a lock
PSI_CAUSE_PCT = 2.0  # PSI memory some/full avg10 (or avg60) at or above this share of time
SWAP_GROWTH_GIB = 0.25  # swap in use grew this much inside the stretch
ERROR_TEXT_CHARS = 300  # the run's error line is shown cut to this many characters (its own field)
NAME_CHARS = 60  # a process name or command named as a cause, cut
SHORT_WINDOW_S = 300.0  # a window shorter than this prints its ends to the second: a minute clock is up to 59 s off at each end

_COUNTERS = tuple((k, words) for k, words, _ in CLOCK_EVENT_COUNTERS if k != "sync_boost_ns") + \
    ((THERMAL_POLICY_COUNTER[0], "thermal policy counter"),)
_ERROR_WORDS = {"cuda_oom": "CUDA out of memory", "nccl_timeout": "NCCL timeout", "nccl_error": "NCCL error",
                "traceback": "a Python exception", "segfault": "a segmentation fault", "killed": "killed",
                "assertion": "an assertion failed"}
_KERNEL_DEATHS = ("oom_kill", "xid", "nv_no_memory")
NAME_IT = "name it with `sparktui check G14 --run-log FILE` or `[run] log = \"FILE\"` in the config"

FIX_TEXT = """\
Look at the run's own log first (the last lines before it stopped or slowed), then at what the
machine did at that moment: sparktui names what it saw in the same minutes.

- **Slowdown with clock events or an SM clock drop**: the GPU was throttled (see G4: air, power
  brick, `sparktui check G4 --watch 15`).
- **Slowdown with memory pressure** (PSI, swap growing, MemAvailable under the floor): something
  took the unified pool (see G3 and G6: `sparktui check G6` lists who holds it); stop it, or lower the
  batch size.
- **A process started in the same minutes**: another job or an inference server shares the GPU (G6).
- **Died with CUDA out of memory, or an OOM kill / Xid naming the run (G11)**: reduce the batch size
  or sequence length, or free the pool first; `sparktui check G11` shows the kernel's side.
- **Non-finite loss**: lower the learning rate, enable gradient clipping, check the data at that step;
  resume from the last good checkpoint.
- Record long runs so the moment can be replayed: `sparktui record -o run.jsonl`, then
  `sparktui check --replay run.jsonl G14` names the longest stall and the deepest slowdown with their
  causes.
- **Stall with nothing seen**: a dataloader or an NCCL collective may hang. The Python stacks of the
  run's processes, read without stopping them:

"""


def fix_for(pids: set[int]) -> str:
    """The fix, its stack dump naming the run's pids where they were seen (else finding them)."""
    if pids:
        lines = [comment("the run's processes, as sparktui saw them"), "pip install py-spy"]
        lines += [f"sudo py-spy dump --pid {p}" for p in sorted(pids)[:8]]
    else:
        lines = [comment("the run's processes were not seen: find them by their command line"), "pip install py-spy",
                 "for p in $(pgrep -f 'torchrun|accelerate|deepspeed|train'); do sudo py-spy dump --pid \"$p\"; done"]
    return FIX_TEXT + block(lines)


FIX = fix_for(set())


# -- small words -------------------------------------------------------------------------------------

def _num(v: Any) -> float | None:
    return float(v) if is_number(v) else None


def _int(v: Any) -> int | None:
    """A whole number a float can hold (a step, a count), else None."""
    return int(v) if type(v) is int and is_number(v) else None


def _count(v: Any) -> int | None:
    n = _int(v)
    return n if n is not None and n >= 0 else None


def _clock(t: float | None) -> str:
    return (utc_text(t, "%H:%M UTC") if t is not None else None) or "at an unknown time"


def _span(t0: float, t1: float) -> str:
    """"from 17:35:04 to 17:35:34 UTC" for a window under SHORT_WINDOW_S, else "from 17:35 UTC to 17:40 UTC"."""
    if t1 - t0 < SHORT_WINDOW_S:
        a, b = utc_text(t0, "%H:%M:%S"), utc_text(t1, "%H:%M:%S UTC")
        if a and b:
            return f"from {a} to {b}"
    return f"from {_clock(t0)} to {_clock(t1)}"


def _dur(s: float) -> str:
    return age_text(s)


def _pace(interval: float) -> str:
    """Seconds per step as a person reads a rate: s/step from a second up, else steps/s."""
    if interval >= 1.0:
        return f"{interval:.3g} s/step"
    return f"{1.0 / interval:.3g} steps/s" if interval > 0 else "no time per step"


def _inert(text: Any, limit: int) -> str:
    """Outside text as data: one line (control characters as spaces), cut."""
    s = "".join(c if c.isprintable() else " " for c in str(text))
    s = " ".join(s.split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def _step_text(step: int | None, total: int | None) -> str:
    if step is None:
        return "an unknown step"
    return f"{step}/{total}" if total is not None else f"{step}"


# -- the run's progress, read once --------------------------------------------------------------------

@dataclass
class _Point:
    t: float | None
    step: int | None
    total: int | None
    step_s: float | None
    rate: float | None
    rate_unit: str | None


@dataclass
class _Obs:
    """One observation of the pace: a stretch [t0, t1] that did ``steps`` steps (a pair of points), or a
    printed rate at t1 (t0 = t1, the printed seconds per step for one step)."""

    t0: float
    t1: float
    steps: float
    seconds: float

    @property
    def interval(self) -> float:
        return self.seconds / self.steps


@dataclass
class _Run:
    data: Mapping[str, Any]
    now: float | None
    points: list[_Point]
    timed: list[_Point]  # points with a time, in time order
    obs: list[_Obs]  # the pace, in time order of their ends
    basis: str  # "progress times" | "printed rate" | ""
    median_s: float | None  # seconds per step
    gap_s: float | None  # seconds between progress lines
    pids: set[int]
    alive: bool | None
    last: _Point | None
    last_t: float | None  # when the last progress was seen (or the log last written, ``last_t_basis``)
    last_t_basis: str
    src: str

    @property
    def age(self) -> float | None:
        if self.now is None or self.last_t is None:
            return None
        return max(0.0, self.now - self.last_t)


def _point(p: Any) -> _Point | None:
    if not isinstance(p, Mapping):
        return None
    step = _int(p.get("step"))
    total = _int(p.get("total"))
    total = total if total is not None and total > 0 else None
    step_s = _num(p.get("step_s"))
    unit = p.get("rate_unit")
    return _Point(_num(p.get("t")), step, total, step_s if step_s is not None and step_s > 0 else None,
                  _num(p.get("rate")), _inert(unit, 16) if isinstance(unit, str) and unit else None)


def _observations(timed: list[_Point]) -> tuple[list[_Obs], str]:
    pairs: list[_Obs] = []
    for a, b in zip(timed, timed[1:]):
        assert a.t is not None and b.t is not None
        if a.step is None or b.step is None:
            continue
        d_step, dt = b.step - a.step, b.t - a.t
        if d_step > 0 and dt > 0:
            pairs.append(_Obs(a.t, b.t, float(d_step), dt))
    if pairs:
        return pairs, "progress times"
    printed = [_Obs(p.t, p.t, 1.0, p.step_s) for p in timed if p.t is not None and p.step_s is not None]
    if printed:
        return printed, "printed rate"
    return [], ""


def _read_run(data: Mapping[str, Any], src: str) -> _Run:
    raw = data.get("progress")
    points = [q for q in (_point(p) for p in (raw if isinstance(raw, list) else [])) if q is not None]
    timed = sorted((p for p in points if p.t is not None), key=lambda p: p.t or 0.0)
    obs, basis = _observations(timed)
    median_s = median(o.interval for o in obs) if obs else None
    gaps = [b.t - a.t for a, b in zip(timed, timed[1:]) if a.t is not None and b.t is not None and b.t > a.t]
    gap_s = median(gaps) if gaps else None
    if median_s is None:
        printed = [p.step_s for p in points if p.step_s is not None]
        if printed:  # untimed lines with a printed rate: the pace is known, not the times
            median_s = median(printed)
            basis = "printed rate"
    if gap_s is None and median_s is not None:
        # no two lines timed apart: the steps between lines times the pace (a line a step where unknown)
        d_steps = [b.step - a.step for a, b in zip(points, points[1:])
                   if a.step is not None and b.step is not None and b.step > a.step]
        gap_s = median_s * (median(d_steps) if d_steps else 1)
    pids_raw = data.get("pids")
    pids = {p for p in pids_raw if isinstance(p, int) and not isinstance(p, bool)} if isinstance(pids_raw, list) else set()
    alive = data.get("alive") if isinstance(data.get("alive"), bool) else None
    last = points[-1] if points else None
    last_t, basis_t = (timed[-1].t, "progress line") if timed else (None, "")
    if last_t is None and points:
        log = data.get("log")  # a mapping: the judge said unknown otherwise
        for key, words in (("last_line_t", "the log's last line"), ("mtime", "the log file's last write")):
            v = _num(data.get(key) if key == "last_line_t" or not isinstance(log, Mapping) else log.get(key))
            if v is not None:
                last_t, basis_t = v, words
                break
    return _Run(data, _num(data.get("read_at")), points, timed, obs, basis, median_s, gap_s, pids, alive, last,
                last_t, basis_t, src)


# -- causes: what the machine showed in a stretch of time ---------------------------------------------

@dataclass
class _Causes:
    seen: list[str] = field(default_factory=list)  # causes, in words
    looked: list[str] = field(default_factory=list)  # sources looked at over the stretch
    unseen: list[str] = field(default_factory=list)  # sources not seen, with why

    def text(self) -> str:
        if self.seen:
            out = "while " + "; ".join(self.seen)
        elif self.looked:
            out = f"no cause seen in the {_join(self.looked)}"
        else:
            out = "no cause could be looked for"
        if self.unseen:
            out += f" (not seen: {'; '.join(self.unseen)})"
        return out


def _sep(c: _Causes) -> str:
    return " " if c.seen else "; "


def _join(words: list[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def _samples(r: Readings) -> tuple[list[Mapping[str, Any]], str | None]:
    reading = r.get_reading(TELEMETRY)
    data = reading.data
    if not isinstance(data, Mapping):
        return [], reading.error or "not read"
    raw = data.get("samples")
    if not isinstance(raw, list) or not raw:
        return [], "no samples"
    smp: list[Mapping[str, Any]] = [s for s in raw if isinstance(s, Mapping) and is_number(s.get("t"))]
    smp.sort(key=lambda s: float(s["t"]))
    return smp, None


def _gpu_rows(smp: list[Mapping[str, Any]]) -> dict[int, list[tuple[float, Mapping[str, Any]]]]:
    out: dict[int, list[tuple[float, Mapping[str, Any]]]] = {}
    for s in smp:
        gpus = s.get("gpus")
        for i, g in enumerate(gpus if isinstance(gpus, list) else []):
            if isinstance(g, Mapping):
                idx = g.get("index", i)
                out.setdefault(idx if isinstance(idx, int) and not isinstance(idx, bool) else i, []).append((float(s["t"]), g))
    return out


def _gpu_causes(rows: list[tuple[float, Mapping[str, Any]]], t0: float, t1: float, cfg: Config, who: str) -> list[str]:
    inside = [(t, g) for t, g in rows if t0 <= t <= t1]
    if not inside:
        return []
    counters: list[str] = []  # clock-event counters that grew, and slowdown reasons active: in words, no GPU named
    active: list[str] = []
    span = max(t1 - t0, inside[-1][0] - inside[0][0], 1e-9)
    for key, words in _COUNTERS:
        grown_ns: float = 0
        prev: float | None = None
        prev_t: float | None = None  # when the last value was first seen
        last_t: float | None = None  # the sample before
        for t, g in inside:
            v = counter_ns(dict(g), key)[0]
            if not is_number(v) or v < 0:
                continue
            # the sampler reads the counters every COUNTERS_READ_S and carries the value between
            # (a real recording: +10 s between two samples 1 s apart), so growth may span the time since
            # the value was first seen, up to one read period past the gap between the samples
            if prev is not None and prev_t is not None and last_t is not None and v > prev \
                    and (v - prev) / 1e9 <= min(t - prev_t, t - last_t + COUNTERS_READ_S) + 2.0:
                grown_ns += v - prev  # nanoseconds summed exactly, then said in seconds
            if v != prev:
                prev, prev_t = v, t
            last_t = t
        grown = grown_ns / 1e9
        if grown > 0 and grown / span >= CLOCK_EVENT_SHARE:
            counters.append(f"{words} +{grown:.1f} s ({grown / span:.0%} of the time)")
    n = len(inside)
    counts: dict[str, int] = {}
    for _, g in inside:
        reasons = g.get("reasons")
        if isinstance(reasons, list):
            for name in {x for x in reasons if isinstance(x, str) and x in SLOWDOWN_REASONS}:
                counts[name] = counts.get(name, 0) + 1
    for name in sorted(counts):
        if counts[name] >= REASON_MIN_SAMPLES and counts[name] / n >= CLOCK_EVENT_SHARE:
            active.append(f"clock-event reason {name} in {counts[name]} of {n} samples")
    load = cfg.thermal.load_util_pct

    def loaded_clock(t: float, g: Mapping[str, Any]) -> float | None:
        u, c = g.get("util_gpu"), g.get("sm_mhz")
        if is_number(u) and is_number(c) and load <= u <= 100 and 0 < c <= 4000:
            return float(c)
        return None

    before = [c for t, g in rows if t < t0 and (c := loaded_clock(t, g)) is not None]
    during = [c for t, g in inside if (c := loaded_clock(t, g)) is not None]
    drop = None
    if before and during:
        d = median(during)
        # a slowdown longer than the stretch began before it: the samples just before the stretch are
        # as low as those in it, and the baseline is what came before them (live on the lent H100,
        # 86 s into a 100 s lock, the 2-minute window held 56 s locked and 34 s unlocked before the
        # last 30 s: their median was the lock's own 600 MHz and the drop went unsaid)
        k = len(before)
        while k and (before[k - 1] - d) < CLOCK_DROP_SHARE * before[k - 1]:
            k -= 1
        b = median(before[:k] or before)
        if b > 0 and (b - d) / b >= CLOCK_DROP_SHARE:
            drop = f"SM clock under load {b:.0f} → {d:.0f} MHz (-{(b - d) / b:.0%})"
            # the clock down with no reason active: held by a setting, as a real H100 driver shows a
            # `nvidia-smi -lgc` lock (no reason at all; the time booked on the SW thermal counter)
            read = [set(x for x in g["reasons"] if isinstance(x, str)) for t, g in inside
                    if loaded_clock(t, g) is not None and isinstance(g.get("reasons"), list)]
            quiet = sum(1 for x in read if SLOWDOWN_REASONS.isdisjoint(x) and "gpu_idle" not in x)
            if quiet >= REASON_MIN_SAMPLES and quiet >= LOCK_QUIET_SHARE * len(read):
                return _lock_causes(who, drop, quiet, len(read), counters, active)
    return [who + x for x in counters + active + ([drop] if drop else [])]


def _lock_causes(who: str, drop: str, quiet: int, read: int, counters: list[str], active: list[str]) -> list[str]:
    """The clocks held by a setting lead: the drop and the quiet reasons. With no slowdown reason named,
    the counters that grew meanwhile are what the driver booked during the lock (a real H100 books a
    `-lgc` lock on SW thermal slowdown and SW power capping), not causes of their own."""
    lock = (f"{who}clocks were held by a setting: {drop}, no clock-event reason active in {quiet} of {read} "
            f"loaded samples (a lock with `nvidia-smi -lgc`; G4)")
    if active:  # a reason active in some samples: a cause of its own beside the lock, and so the counters
        return [lock] + [who + x for x in active + counters]
    lock += ", not heat or power"
    if counters:
        lock += "; the driver booked that time as " + (counters[0] if len(counters) == 1 else
                                                       ", ".join(counters[:-1]) + " and " + counters[-1])
    return [lock]


def _gib(v: float) -> str:
    return f"{v / GIB:.1f} GiB"


def _memory_causes(r: Readings, smp: list[Mapping[str, Any]], t0: float, t1: float, cfg: Config,
                   live_end: bool) -> tuple[list[str], bool, str | None]:
    """Memory causes in [t0, t1], whether any memory figure covered it, and why not."""
    floor = cfg.memory.available_floor_gib * GIB
    avail: list[tuple[float, float]] = []
    swap: list[tuple[float, float]] = []
    for s in smp:
        t = float(s["t"])
        mem = s.get("mem")
        if not (t0 <= t <= t1) or not isinstance(mem, Mapping):
            continue
        a = mem.get("MemAvailable")
        if is_number(a) and a >= 0:
            avail.append((t, float(a)))
        st, sf = mem.get("SwapTotal"), mem.get("SwapFree")
        if is_number(st) and is_number(sf) and st > 0 and 0 <= sf <= st:
            swap.append((t, float(st - sf)))
    reading = r.get_reading(MEMINFO)
    mi = reading.data if isinstance(reading.data, Mapping) else None
    psi_seen = False
    found: list[str] = []
    if mi is not None:
        series = mi.get("series")
        for row in series if isinstance(series, list) else []:
            if isinstance(row, list) and len(row) >= 2 and is_number(row[0]) and t0 <= row[0] <= t1 \
                    and is_number(row[1]) and row[1] >= 0:
                avail.append((float(row[0]), float(row[1])))
        if live_end and not mi.get("review"):
            a = mi.get("MemAvailable")
            if is_number(a) and a >= 0 and not series:
                avail.append((t1, float(a)))
            psi = mi.get("psi")
            if isinstance(psi, Mapping):
                worst: tuple[float, str] | None = None
                for kind in ("some", "full"):
                    line = psi.get(kind)
                    if not isinstance(line, Mapping):
                        continue
                    for key in ("avg10", "avg60"):
                        v = line.get(key)
                        if is_number(v) and 0 <= v <= 100:
                            psi_seen = True
                            if v >= PSI_CAUSE_PCT and (worst is None or v > worst[0]):
                                worst = (float(v), f"{kind} {key}")
                if worst is not None:
                    found.append(f"memory pressure: PSI {worst[1]} {worst[0]:.1f}%")
    if avail:
        low_t, low = min(avail, key=lambda x: x[1])
        if low < floor:
            found.append(f"MemAvailable down to {_gib(low)} at {_clock(low_t)} (floor {cfg.memory.available_floor_gib:g} GiB)")
    if len(swap) >= 2:
        swap.sort()
        first = swap[0][1]
        peak = max(v for _, v in swap)
        if peak - first >= SWAP_GROWTH_GIB * GIB:
            found.append(f"swap in use grew {_gib(first)} → {_gib(peak)}")
    covered = bool(avail) or len(swap) >= 2 or psi_seen
    why = None if covered else ("memory: no figures in that stretch"
                                + (f" (meminfo: {_inert(reading.error, 120)})" if mi is None and reading.error else ""))
    return found, covered, why


def _is_own(row: Mapping[str, Any]) -> bool:
    words = f"{row.get('name') or ''} {row.get('command') or ''}"
    return "sparktui" in words


def _process_causes(r: Readings, run: _Run, t0: float, t1: float) -> tuple[list[str], bool, str | None]:
    reading = r.get_reading(PROCESSES)
    data = reading.data
    if not isinstance(data, Mapping) or not isinstance(data.get("rows"), list):
        return [], False, f"processes: {_inert(reading.error or 'not read', 120)}"
    hist = data.get("history")
    snaps: list[Mapping[str, Any]] = [s for s in hist if isinstance(s, Mapping)] if isinstance(hist, list) else []
    snaps.append(data)
    seen: dict[int, str] = {}
    for s in snaps:
        at = _num(s.get("t"))
        at = at if at is not None else run.now
        rows = s.get("rows")
        for row in rows if isinstance(rows, list) else []:
            if not isinstance(row, Mapping) or not isinstance(row.get("pid"), int):
                continue
            pid, age = row["pid"], _num(row.get("age_s"))
            if age is None or at is None or pid in run.pids or pid in seen or _is_own(row):
                continue
            if row.get("group") in run.pids or row.get("ppid") in run.pids:
                continue  # one of the run's own ranks or workers
            started = at - age
            if t0 <= started <= t1:
                kind = row.get("server") or row.get("kind") or "process"
                name = _inert(row.get("name") or row.get("command") or "?", NAME_CHARS)
                seen[pid] = f"{name} (pid {pid}, {_inert(kind, 20)}) started at {_clock(started)}"
    return list(seen.values()), True, None


def _kernel_words(e: Mapping[str, Any]) -> str:
    kind = e.get("kind")
    pid = e.get("pid") if isinstance(e.get("pid"), int) else None
    who = f"pid {pid}" + (f" ({_inert(e['name'], 32)})" if isinstance(e.get("name"), str) and e.get("name") else "") \
        if pid is not None else ""
    if kind == "oom_kill":
        rss = _count(e.get("anon_rss_kb"))
        size = f", anon-rss {_gib(rss * 1024.0)}" if rss is not None else ""
        return f"OOM kill of {who or 'a process'}{size}"
    if kind == "xid":
        x = e.get("xid")
        return f"Xid {x if isinstance(x, int) else '?'}" + (f" naming {who}" if who else "")
    if kind == "nv_no_memory":
        return "NVIDIA driver out of memory (NV_ERR_NO_MEMORY)" + (f" for {who}" if who else "")
    words = {"aer": "PCIe AER error", "soft_lockup": "CPU lockup", "gpu_lost": "GPU lost"}
    return words.get(str(kind), "kernel log incident") + (f" ({who})" if who else "")


def _kernel_events(r: Readings) -> tuple[list[Mapping[str, Any]], str | None]:
    reading = r.get_reading(KERNEL_LOG)
    data = reading.data
    if not isinstance(data, Mapping) or not isinstance(data.get("events"), list):
        return [], f"kernel log: {_inert(reading.error or 'not read', 120)}"
    return [e for e in data["events"] if isinstance(e, Mapping)], None


def causes_in(r: Readings, cfg: Config, run: _Run, t0: float, t1: float, live_end: bool) -> _Causes:
    """What the telemetry, the memory figures, the processes and the kernel log showed in [t0, t1]."""
    c = _Causes()
    smp, why = _samples(r)
    if why is not None:
        c.unseen.append(f"telemetry: {_inert(why, 120)}")
    else:
        inside = [s for s in smp if t0 <= float(s["t"]) <= t1]
        if not inside:
            c.unseen.append("telemetry: no samples in that stretch")
        else:
            c.looked.append("telemetry")
            rows = _gpu_rows(smp)
            for idx in sorted(rows):
                c.seen += _gpu_causes(rows[idx], t0, t1, cfg, f"GPU {idx} " if len(rows) > 1 else "")
    mem, covered, mwhy = _memory_causes(r, smp, t0, t1, cfg, live_end)
    if covered:
        c.looked.append("memory")
        c.seen += mem
    elif mwhy:
        c.unseen.append(mwhy)
    procs, ok, pwhy = _process_causes(r, run, t0, t1)
    if ok:
        c.looked.append("processes")
        c.seen += procs
    elif pwhy:
        c.unseen.append(pwhy)
    events, kwhy = _kernel_events(r)
    if kwhy:
        c.unseen.append(kwhy)
    else:
        c.looked.append("kernel log")
        for e in events:
            t = _num(e.get("t"))
            if t is not None and t0 <= t <= t1:
                c.seen.append(f"{_kernel_words(e)} at {_clock(t)}")
    return c


# -- the scans: stalls and slowdowns ------------------------------------------------------------------

def stall_after(run: _Run, cfg: Config) -> tuple[float | None, str]:
    """No progress this long while the run lives is a stall: the setting, else the run's own pace."""
    if cfg.run.stall_after_s is not None:
        return float(cfg.run.stall_after_s), "run.stall_after_s"
    if run.gap_s is None:
        return None, ""  # no pace: only the setting can say
    pace = STALL_PACE_FACTOR * cfg.run.late_factor * run.gap_s
    if pace > STALL_FLOOR_S:
        return pace, f"{STALL_PACE_FACTOR:g} x {cfg.run.late_factor:g} x the median gap {_dur(run.gap_s)}"
    return STALL_FLOOR_S, f"the floor; the run's pace gives {pace:.0f} s"


@dataclass
class _Slow:
    t0: float
    t1: float
    recent_s: float  # seconds per step in the window
    base_s: float  # the run's median seconds per step before it
    points: int

    @property
    def ratio(self) -> float:
        return self.base_s / self.recent_s  # recent rate / median rate


def _slow_at(run: _Run, cfg: Config, ends: list[float]) -> _Slow | None:
    """The slowest window among those ending at ``ends`` (each ``slow_window_s`` long): the rate of the
    pace observations inside it against the median of those wholly before it, once at least
    SLOW_MIN_POINTS progress points fall inside and the progress before it spans SLOW_BASELINE_WINDOWS
    windows. One pass: the ends in time order, a sorted list of the baseline intervals."""
    obs = run.obs
    if not obs or not run.timed:
        return None
    w = cfg.run.slow_window_s
    first_t = run.timed[0].t
    assert first_t is not None
    times = [p.t for p in run.timed if p.t is not None]
    obs_end = [o.t1 for o in obs]
    pre_s = [0.0]
    pre_n = [0.0]
    for o in obs:
        pre_s.append(pre_s[-1] + o.seconds)
        pre_n.append(pre_n[-1] + o.steps)
    base: list[float] = []
    added = 0
    worst: _Slow | None = None
    for end in sorted(ends):
        start = end - w
        while added < len(obs) and obs[added].t1 <= start:
            bisect.insort(base, obs[added].interval)
            added += 1
        n_pts = bisect.bisect_right(times, end) - bisect.bisect_left(times, start)
        if n_pts < SLOW_MIN_POINTS or first_t > start - SLOW_BASELINE_WINDOWS * w or len(base) < 2:
            continue
        lo = bisect.bisect_left(obs_end, start)
        hi = bisect.bisect_right(obs_end, end)
        idx = [i for i in range(lo, hi) if obs[i].t0 >= start]
        if len(idx) < SLOW_MIN_POINTS - 1 and run.basis == "progress times":
            continue
        seconds = math.fsum(obs[i].seconds for i in idx)
        steps = math.fsum(obs[i].steps for i in idx)
        if steps <= 0 or seconds <= 0:
            continue
        k = len(base)
        base_s = base[k // 2] if k % 2 else (base[k // 2 - 1] + base[k // 2]) / 2
        s = _Slow(start, end, seconds / steps, base_s, n_pts)
        if worst is None or s.ratio < worst.ratio:
            worst = s
    return worst


def _stalls(run: _Run, review: bool) -> tuple[float, float, bool] | None:
    """The longest stretch with no progress: (from, to, still going at ``now``). Live only the open
    one (since the last progress); reviewing a recording, every gap between progress lines too."""
    best: tuple[float, float, bool] | None = None
    if review:
        for a, b in zip(run.timed, run.timed[1:]):
            if a.t is not None and b.t is not None and (best is None or b.t - a.t > best[1] - best[0]):
                best = (a.t, b.t, False)
    if run.alive is True and run.now is not None and run.last_t is not None:
        open_gap = (run.last_t, max(run.now, run.last_t), True)
        if best is None or open_gap[1] - open_gap[0] >= best[1] - best[0]:
            best = open_gap
    return best


# -- the rules ---------------------------------------------------------------------------------------

@dataclass
class _Ctx:
    r: Readings
    cfg: Config
    run: _Run
    review: bool
    evidence: list[Evidence] = field(default_factory=list)

    def add(self, what: str, value: Any) -> None:
        self.evidence.append(Evidence(what, self.run.src, value))


def _at_step(run: _Run) -> str:
    """"step N/M" of the last progress line, or "an unknown step" (a line without a step number)."""
    last = run.last
    if last is None or last.step is None:
        return "an unknown step"
    return f"step {_step_text(last.step, last.total)}"


def _paren(t: float | None) -> str:
    """" (03:12 UTC)" when the time is known, else nothing: a saved log's lines carry none."""
    return f" ({_clock(t)})" if t is not None and utc_text(t) is not None else ""


def _error_kind(ev: Mapping[str, Any]) -> str:
    kind = ev.get("error")
    if isinstance(kind, str) and kind in _ERROR_WORDS:
        return _ERROR_WORDS[kind]
    return f"an error ({_inert(kind, 24)})" if isinstance(kind, str) and kind else "an error"


def _after_progress(run: _Run, ev: Mapping[str, Any]) -> bool:
    """The error came after the last progress line (the log ended with it)."""
    if run.last is None:
        return True
    t = _num(ev.get("t"))
    if t is not None and run.last_t is not None and run.last_t_basis == "progress line":
        return t >= run.last_t
    step = _int(ev.get("step"))
    return step is not None and run.last.step is not None and step >= run.last.step


def rule_died_with_error(c: _Ctx) -> Finding | None:
    run = c.run
    err = run.data.get("error")
    if not isinstance(err, Mapping) or run.alive is True:
        return None
    if run.alive is None and not _after_progress(run, err):
        return None
    step = _int(err.get("step"))
    step = step if step is not None else (run.last.step if run.last else None)
    total = run.last.total if run.last else None
    at = _num(err.get("t"))
    c.add("error", f"{_error_kind(err)} at {_clock(at)}")
    if err.get("text"):
        c.add("error line", _inert(err.get("text"), ERROR_TEXT_CHARS))
    where = f"at step {_step_text(step, total)}" if step is not None else "before any progress line"
    gone = "its processes are gone" if run.alive is False else "the log ends with it"
    return Finding(Status.FAIL, f"died {where}{_paren(at)}: {_error_kind(err)} ({gone}; the line is in the evidence)")


def rule_killed_by_kernel(c: _Ctx) -> Finding | None:
    run = c.run
    if not run.pids:
        return None
    events, _ = _kernel_events(c.r)
    started = _num(run.data.get("started_at"))
    hits = []
    for e in events:
        pid = e.get("pid")
        if e.get("kind") not in _KERNEL_DEATHS or not isinstance(pid, int) or pid not in run.pids:
            continue
        t = _num(e.get("t"))
        if started is not None and t is not None and t < started:
            continue  # an earlier process with the same pid
        hits.append((t, e))
    if not hits:
        return None
    t, e = hits[-1]
    words = _kernel_words(e)
    c.add("kernel log", f"{words} at {_clock(t)}" + (f" (and {len(hits) - 1} more naming the run)" if len(hits) > 1 else ""))
    verb = "died" if run.alive is not True else "hit"
    return Finding(Status.FAIL, f"{verb} at {_at_step(run)}: the kernel log shows {words} at {_clock(t)}, "
                                f"one of the run's processes (G11)")


def rule_finished(c: _Ctx) -> Finding | None:
    fin = c.run.data.get("finished")
    if not isinstance(fin, Mapping):
        return None
    c.add("finished", f"at {_clock(_num(fin.get('t')))}")
    return Finding(Status.OK, f"finished at {_at_step(c.run)}{_paren(_num(fin.get('t')))}")


def rule_nonfinite(c: _Ctx) -> Finding | None:
    events = c.run.data.get("events")
    bad = [e for e in (events if isinstance(events, list) else []) if isinstance(e, Mapping) and e.get("kind") == "nonfinite"]
    if not bad:
        return None
    e = bad[0]
    name = "grad_norm" if e.get("field") == "grad_norm" else "loss"
    value = e.get("value") if e.get("value") in ("nan", "inf", "-inf") else "not finite"
    step = _int(e.get("step"))
    more = f" ({len(bad) - 1} more non-finite values after it)" if len(bad) > 1 else ""
    c.add("non-finite", f"{name} {value} at step {step if step is not None else '?'}, {_clock(_num(e.get('t')))}{more}")
    where = f"at step {step}" if step is not None else "at an unknown step"
    return Finding(Status.FAIL, f"{name} was {value} {where}{_paren(_num(e.get('t')))}{more}")


def rule_stall(c: _Ctx) -> Finding | None:
    run = c.run
    limit, why = stall_after(run, c.cfg)
    gap = _stalls(run, c.review)
    if limit is None or gap is None:
        return None
    t0, t1, going = gap
    if t1 - t0 < limit or (going and run.alive is not True):
        return None
    causes = causes_in(c.r, c.cfg, run, t0, t1, live_end=going)
    c.add("stall", f"{_dur(t1 - t0)} from {_clock(t0)}" + ("" if going else f" to {_clock(t1)}"))
    c.add("stall after", f"{limit:g} s ({why})")
    c.add("causes in the stall", causes.text())
    if going:
        text = f"no progress for {_dur(t1 - t0)} (since {_clock(t0)}) at {_at_step(run)}, the processes alive"
    else:
        text = f"stalled {_dur(t1 - t0)} from {_clock(t0)} to {_clock(t1)}"
    return Finding(Status.FAIL, f"{text}{_sep(causes)}{causes.text()}")


def rule_slowdown(c: _Ctx) -> Finding | None:
    run, cfg = c.run, c.cfg
    if c.review:  # every window ending at a progress line: no need of ``now``
        ends = [p.t for p in run.timed if p.t is not None]
    elif run.now is not None:
        ends = [run.now]
    else:
        return None
    s = _slow_at(run, cfg, ends)
    if s is None or s.ratio >= cfg.run.slow_ratio:
        return None
    live_end = not c.review and s.t1 == run.now
    causes = causes_in(c.r, cfg, run, s.t0, s.t1, live_end)
    where = _span(s.t0, s.t1) if c.review else f"over the last {_dur(cfg.run.slow_window_s)}"
    c.add("slowdown", f"{_pace(s.recent_s)} {where} ({s.points} progress lines) against the run's median "
                      f"{_pace(s.base_s)} before it: {s.ratio:.0%} of the rate")
    c.add("causes in the slowdown", causes.text())
    return Finding(Status.WARN, (f"slowdown: {_pace(s.recent_s)} {where} against the run's median {_pace(s.base_s)} "
                                 f"({s.ratio:.0%} of its rate, slow under {cfg.run.slow_ratio:.0%}){_sep(causes)}"
                                 f"{causes.text()}"))


def rule_late(c: _Ctx) -> Finding | None:
    run, cfg = c.run, c.cfg
    age = run.age
    if age is None or run.gap_s is None or run.alive is False:
        return None
    late = max(cfg.run.late_factor * run.gap_s, LATE_FLOOR_S)
    if age <= late:
        return None
    limit, _ = stall_after(run, cfg)
    alive = "" if run.alive is True else "; whether the run still lives is not known"
    stall = f" (a stall from {_dur(limit)})" if limit is not None and run.alive is True else ""
    return Finding(Status.WARN, (f"late: no progress for {_dur(age)} (since {_clock(run.last_t)}) at {_at_step(run)}, "
                                 f"over {cfg.run.late_factor:g} x the median gap of {_dur(run.gap_s)}{stall}{alive}"))


def rule_stopped(c: _Ctx) -> Finding | None:
    run = c.run
    if run.alive is not False or not run.points:
        return None
    return Finding(Status.WARN, (f"the log stops at {_at_step(run)}{_paren(run.last_t)} with no error and no "
                                 f"end: the run's processes are gone"))


def rule_progress(c: _Ctx) -> Finding | None:
    run, cfg = c.run, c.cfg
    if not run.points:
        return None
    if run.alive is None and run.age is None:
        return Finding(Status.UNKNOWN, (f"the log reaches {_at_step(run)} with no end and no error; when that was, "
                                        f"and whether the run still lives, is not known"))
    if run.median_s is None or run.gap_s is None:
        return Finding(Status.UNKNOWN, f"at {_at_step(run)}: the run's pace is not known yet (one progress line, no printed rate)")
    if run.age is None:
        return Finding(Status.UNKNOWN, f"at {_at_step(run)}: when its last progress was is not known (no time on the lines)")
    recent = _slow_at(run, cfg, [run.now]) if run.now is not None else None
    pace_s = recent.recent_s if recent is not None else run.median_s
    eta = ""
    last = run.last
    if last is not None and last.step is not None and last.total is not None and last.total > last.step \
            and run.now is not None:
        left = (last.total - last.step) * pace_s
        eta = f"; ETA {_dur(left)} ({_clock(run.now + left)})"
    return Finding(Status.OK, (f"progressing: {_at_step(run)} at {_pace(pace_s)} (median {_pace(run.median_s)}), "
                               f"last progress {_dur(run.age)} ago{eta}"))


def rule_no_progress_yet(c: _Ctx) -> Finding | None:
    data = c.run.data
    lines = _count(data.get("lines_read"))
    return Finding(Status.UNKNOWN, (f"no progress line recognised yet ({lines if lines is not None else '?'} lines read); "
                                    f"formats read: tqdm, Hugging Face Trainer, Lightning, Keras, Megatron, plain "
                                    f"`step N/M`"))


RULES: tuple[Callable[[_Ctx], Finding | None], ...] = (
    rule_died_with_error, rule_killed_by_kernel, rule_finished, rule_nonfinite, rule_stall, rule_slowdown,
    rule_late, rule_stopped, rule_progress, rule_no_progress_yet,
)
REVIEW_RULES: tuple[Callable[[_Ctx], Finding | None], ...] = (
    rule_died_with_error, rule_killed_by_kernel, rule_nonfinite, rule_stall, rule_slowdown, rule_finished,
    rule_late, rule_stopped, rule_progress, rule_no_progress_yet,
)


# -- the judge ---------------------------------------------------------------------------------------

def _log_source(data: Mapping[str, Any]) -> str:
    log = data.get("log")
    if not isinstance(log, Mapping):
        return "run log"
    kind = log.get("kind")
    if kind == "tmux" and isinstance(log.get("pane"), str):
        return f"tmux pane {_inert(log['pane'], 20)}"
    if isinstance(log.get("path"), str) and log.get("path"):
        return _inert(log["path"], 200)
    return f"run log ({_inert(kind, 12)})" if isinstance(kind, str) else "run log"


def _base_evidence(c: _Ctx) -> None:
    run, cfg = c.run, c.cfg
    data = run.data
    log: Mapping[str, Any] = data["log"] if isinstance(data.get("log"), Mapping) else {}
    kind = log.get("kind")
    c.add("log", f"{_inert(kind, 12) if isinstance(kind, str) and kind else '?'}: {run.src}")
    if run.pids:
        c.add("run processes", ", ".join(str(p) for p in sorted(run.pids)[:8]) + (
            "" if run.alive is None else (" (alive)" if run.alive else " (gone)")))
    lines, seen = _count(data.get("lines_read")), _count(data.get("points_seen"))
    c.add("progress lines", f"{seen if seen is not None else len(run.points)} of "
                            f"{lines if lines is not None else '?'} lines read")
    last = run.last
    if last is not None:
        c.add("last progress", f"step {_step_text(last.step, last.total)} at {_clock(run.last_t)}"
              + (f" ({run.last_t_basis})" if run.last_t is not None and run.last_t_basis != "progress line" else ""))
        if run.age is not None:
            c.add("age of the last progress", _dur(run.age))
        if last.rate is not None and last.rate_unit:
            c.add("printed rate", f"{last.rate:g} {last.rate_unit}")
    if run.median_s is not None:
        c.add("median step interval", f"{_pace(run.median_s)} (from {run.basis}, {len(run.obs)} observations)")
    if run.gap_s is not None:
        c.add("median gap between progress lines", f"{_dur(run.gap_s)}; late after {cfg.run.late_factor:g} x")


def judge(r: Readings, cfg: Config) -> Verdict:
    reading: Reading[Any] = r.get_reading(RUN)
    data = reading.data
    if not isinstance(data, Mapping):
        return unknown_from(ID, reading, "the training run reading")
    lacking = unknown_if_lacking(ID, reading, "the training run", "found")
    if lacking is not None:
        return lacking
    why = _inert(data.get("why") or "", 300)
    if data.get("found") is not True and data.get("found") is not False:
        return Verdict(ID, Status.UNKNOWN, "cannot tell: the run reading's found field is not true or false",
                       (Evidence("training run", reading.source or "run", "unavailable: found is not a bool"),), FIX)
    if data.get("found") is False:
        return Verdict(ID, Status.SKIP, f"no training run found{': ' + why if why else ''}",
                       (Evidence("training run", reading.source or "run", why or "none found"),), FIX)
    src = _log_source(data)
    log = data.get("log")
    err = log.get("error") if isinstance(log, Mapping) else None
    if not isinstance(log, Mapping) or err:
        reason = _inert(err, 300) if err else (why or "no log found")
        return Verdict(ID, Status.UNKNOWN, f"cannot tell: the run's log cannot be read ({reason}); {NAME_IT}",
                       (Evidence("run log", src, f"unavailable: {reason}"),), FIX)
    run = _read_run(data, src)
    tele = r.get_reading(TELEMETRY).data
    review = isinstance(tele, Mapping) and tele.get("review") is True
    c = _Ctx(r, cfg, run, review)
    _base_evidence(c)
    found = first_finding(REVIEW_RULES if review else RULES, c)
    assert found is not None  # the last rule always speaks
    text = f"{found.text} [the whole recorded run]" if review and found.status in (Status.FAIL, Status.WARN) else found.text
    return Verdict(ID, found.status, text, tuple(c.evidence), fix_for(run.pids))


GOTCHA = Gotcha(
    id=ID,
    slug="run-progress",
    title="The run is making progress",
    symptom=("You left a training run in a tmux pane for the night. Is it still making progress, and at what rate? "
             "Why did its steps get slower after midnight? Why did it die at 03:12, and what did the machine do "
             "then?"),
    cause=("A run slows or stops for reasons its own log does not show: the GPU throttled (G4), the unified pool "
           "ran short and the kernel reclaimed or swapped (G3), another job or a server started beside it (G6), "
           "or the kernel killed one of its processes (an OOM kill or an Xid, G11). A hung NCCL collective or "
           "dataloader stops it without a word; a non-finite loss ruins it while it keeps running."),
    check=("Reads the run's log (its redirected stdout/stderr, its tmux pane, or the file named by `--run-log` or "
           "`[run] log`): step and total, the printed rate, the loss, the error it ended with. The run's pace is its "
           "own: the median seconds per step between progress lines (else the printed rate). Fails when the "
           "processes are gone and the log ended with an error, when the kernel log shows an OOM kill or an Xid "
           "naming one of its pids, on a nan/inf loss or grad norm, and on a stall: no progress for "
           "`run.stall_after_s` while the processes live (default: 3 x `run.late_factor` x the median gap between "
           "progress lines, at least 10 min). Warns on a slowdown (the rate over the last `run.slow_window_s` under "
           "`run.slow_ratio` of the run's median), late progress (over `run.late_factor` median gaps, and over a minute), and a log "
           "that stops with no error and no end. A slowdown or stall names what the machine showed in the same "
           "minutes: clock-event counters or reasons, an SM clock drop, memory pressure (PSI, swap growing, "
           "MemAvailable under `memory.available_floor_gib`), a process that started, kernel log events; a source "
           "not read is said as not seen, never as no cause. Reviewing a recording, the whole run is scanned: the "
           "longest stall and the deepest slowdown, with when and their causes."),
    fix=FIX,
    intrusive=False,
    cadence_s=30.0,
    probes=("run", "telemetry", "meminfo", "processes", "kernel_log"),
    enriched_by=("telemetry", "meminfo", "processes", "kernel_log"),
    feed=Feed.TELEMETRY,
    judge=judge,
    references=("Training log formats: tqdm, Hugging Face Trainer, Lightning, Keras, Megatron-LM; excerpts with their "
                "sources in tests/data/run_logs/",
                "Throttling and memory pressure as causes: G4 (NVML clock-event counters) and G3 (Linux PSI, "
                "Documentation/accounting/psi.rst)",
                "OOM kills and Xids naming a pid: G11 (the kernel log)"),
)
