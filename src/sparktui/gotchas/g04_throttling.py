"""G4: thermal throttling (and the power-delivery fault that looks like it).

The power-delivery fault pattern first (low clocks + low power under load): only a thermal reason
rules it out, a power reason is what a starved GPU would show anyway. Then direct evidence: NVML's
clock-event reasons and cumulative violation counters work on GB10 and win over any heuristic. Once
the rolling window is full and that evidence was readable and clean, the verdict is ok: ~80 W at
83-85 °C is a normal GB10 under load. Only when NVML cannot say does the source's heuristic apply
(power flat well under the rating while temperature climbs or sits high), and it says so.
"""

from __future__ import annotations

import math
from statistics import mean, median, pstdev
from typing import Any

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.telemetry import HW_REASONS, POWER_REASONS, THERMAL_REASONS, sample_window
from sparktui.core.verdict import Evidence, Status, Verdict, worst
from sparktui.gotchas.base import Gotcha, unknown_from

CLIMB_C = 3.0  # late-third mean minus early-third mean that counts as "climbing"
FLAT_CV = 0.15  # power spread (stdev/mean) in the last third that counts as a plateau
NEAR_PEAK = 0.9  # late power at or above this share of the window's peak is "still near peak"
REASONS_SEEN = 0.9  # share of samples with readable clock-event reasons that counts as "readable"
PLATEAU_C = (80.0, 86.0)  # FACTS.md: 81 °C under Ollama, an 83-85 °C plateau serving
# The sampler reads the violation counters at least this often (probes/sampler.py COUNTERS_EVERY_S)
# and carries the value between reads: a window this long holds two readings even when unmarked.
COUNTERS_READ_WITHIN_S = 10.0

FIX = """\
Throttling is the box protecting itself; the fixes are about heat and power delivery.

- Give it air: the Spark breathes front to back; keep 10+ cm clear, nothing stacked on top, room
  temperature down. Dust the intake on older units.
- Watch it for a representative stretch before judging (`sparktui check G4 --watch 15`), and record
  long runs so you can see when it started: `sparktui record -o run.jsonl`.
- Cap run length or checkpoint more often if it throttles (or reboots) late in long runs.
- If clocks sit at 500-850 MHz with low power under load and no thermal reason, suspect a failed
  USB-PD power negotiation or the ~30 W safe mode: use the original power brick and cable, then do a
  full power cycle (shut down, unplug the power cable for 30 s, plug in, boot); a reboot alone does not
  clear it.

Current reasons and the cumulative counters are also visible with:

```
nvidia-smi -q -d PERFORMANCE
```
"""


def _fmt(v: float | None, unit: str, nd: int = 0) -> str:
    return "?" if v is None else f"{v:.{nd}f} {unit}"


def _vals(rows: list[dict[str, Any]], key: str) -> list[float]:
    return [g[key] for g in rows if isinstance(g.get(key), (int, float))]


def _why(rows: list[dict[str, Any]], key: str) -> str:
    for g in reversed(rows):
        why = (g.get("errors") or {}).get(key)
        if why:
            return why
    return "not in the samples"


def _pctile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[int(q * (len(s) - 1))]


def _counter_growth(rows: list[dict[str, Any]], key: str) -> float | None:
    """Growth of a cumulative counter over the rows (ns); None when unreadable; resets ignored."""
    xs = _vals(rows, key)
    if len(xs) < 2:
        return None
    growth = 0.0
    for a, b in zip(xs, xs[1:]):
        if b > a:
            growth += b - a
    return growth


def _counter_readings(rows: list[dict[str, Any]], times: list[float], key: str,
                      read_t: list[float] | None) -> int:
    """How many distinct readings of a counter the window holds (2 meaning "at least 2"). Samples
    carry the last value between reads, so a flat series may be one reading repeated: gather() lists
    when it read them; otherwise a change, or a span the sampler's cadence guarantees, tells."""
    if read_t is not None:
        return 1 + sum(1 for t in read_t if times[0] < t <= times[-1])
    xs = _vals(rows, key)
    changes = sum(1 for a, b in zip(xs, xs[1:]) if a != b)
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    return max(changes + 1, 2 if span >= COUNTERS_READ_WITHIN_S else 1)


def _span_text(span: float) -> str:
    """Seconds under a minute; minutes truncated to a tenth, so 598 s never reads "10.0 of 10"."""
    if span < 60:
        return f"{span:.0f} s" if span >= 1 else f"{span:.1f} s"
    return f"{math.floor(span / 6 + 1e-9) / 10:.1f}"


def _slack(times: list[float], need_s: float) -> float:
    """One sampling interval (the first sample stands for the interval before it), plus half of one
    for jitter: a window trimmed to exactly ``need_s`` spans need_s minus up to one interval, so
    without this a full window reads as short, and flips with the timestamps. Capped at a fifth of
    the window, so a few far-apart samples never pass for one."""
    gaps = [b - a for a, b in zip(times, times[1:]) if b > a]
    return min(1.5 * median(gaps), need_s / 5) if gaps else 0.0


def _judge_gpu(idx: int, rows: list[dict[str, Any]], times: list[float], cfg: Config, src: str,
               prefix: str, read_t: list[float] | None = None) -> tuple[Status, str, list[Evidence]]:
    ev: list[Evidence] = []

    def add(what: str, value: Any) -> None:
        ev.append(Evidence(prefix + what, src, value))

    th = cfg.thermal
    need_s = th.window_min * 60.0
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    add("window", f"{_span_text(span)} of {th.window_min:g} min, {len(rows)} samples")

    temps, powers, clocks = _vals(rows, "temp_c"), _vals(rows, "power_w"), _vals(rows, "sm_mhz")
    add("temperature", f"{temps[0]:.0f} → {temps[-1]:.0f} °C (max {max(temps):.0f})" if temps
        else f"unavailable: {_why(rows, 'temp_c')}")
    limits = _vals(rows, "power_limit_w")
    rated = limits[-1] if limits else cfg.hardware.rated_power_w
    rated_src = "NVML enforced limit" if limits else \
        f"config hardware.rated_power_w (NVML limit: {_why(rows, 'power_limit_w')})"
    add("power draw", f"{min(powers):.0f}-{max(powers):.0f} W, last {powers[-1]:.0f} W" if powers
        else f"unavailable: {_why(rows, 'power_w')}")
    add("rated power", f"{rated:g} W ({rated_src})")
    add("SM clock", f"{min(clocks):.0f}-{max(clocks):.0f} MHz, last {clocks[-1]:.0f} MHz" if clocks
        else f"unavailable: {_why(rows, 'sm_mhz')}")

    with_reasons = [g for g in rows if isinstance(g.get("reasons"), list)]
    seen: dict[str, int] = {}
    for g in with_reasons:
        for name in g["reasons"]:
            seen[name] = seen.get(name, 0) + 1
    if with_reasons:
        shown = ", ".join(f"{k} in {v}/{len(with_reasons)}" for k, v in sorted(seen.items())) or "none"
        add("clock-event reasons", shown)
    else:
        add("clock-event reasons", f"unavailable: {_why(rows, 'reasons_mask')}")
    th_growth = _counter_growth(rows, "thermal_viol_ns")
    pw_growth = _counter_growth(rows, "power_viol_ns")
    th_reads = _counter_readings(rows, times, "thermal_viol_ns", read_t)
    for label, key, growth in (("thermal", "thermal_viol_ns", th_growth), ("power", "power_viol_ns", pw_growth)):
        if growth is None:
            add(f"{label} violation counter", f"unavailable: {_why(rows, key)}")
        elif _counter_readings(rows, times, key, read_t) < 2:
            add(f"{label} violation counter", "read once: cannot tell growth")
        else:
            share = f" ({growth / 1e9 / span:.0%} of the window)" if span > 0 else ""
            add(f"{label} violation counter", f"+{growth / 1e9:.1f} s{share}")

    def count(names: frozenset) -> int:
        return sum(1 for g in with_reasons if names & set(g["reasons"]))

    # Which samples are under load: utilization when NVML gives it, else power.
    def loaded(g: dict[str, Any]) -> bool:
        if isinstance(g.get("util_gpu"), (int, float)):
            return g["util_gpu"] >= th.load_util_pct and "gpu_idle" not in (g.get("reasons") or [])
        return isinstance(g.get("power_w"), (int, float)) and g["power_w"] >= 0.3 * rated

    n_r = len(with_reasons)
    thermal = count(THERMAL_REASONS)
    busy = [g for g in rows if loaded(g)]
    fault = [g for g in busy if isinstance(g.get("sm_mhz"), (int, float)) and g["sm_mhz"] < th.fault_clock_mhz
             and isinstance(g.get("power_w"), (int, float)) and g["power_w"] < th.fault_power_w]
    # Before the power-reason branches: a GPU held to a low power budget by a failed negotiation may
    # well show sw_power_cap or a power brake too. Only a thermal reason rules the fault out.
    if len(fault) >= 3 and len(fault) >= 0.8 * len(busy) and not thermal and not th_growth:
        clk, pw = mean(g["sm_mhz"] for g in fault), mean(g["power_w"] for g in fault)
        power_names = sorted((POWER_REASONS | HW_REASONS) & set(seen))
        active = f" ({', '.join(power_names)} active)" if power_names else ""
        text = (f"clocks pinned at ~{clk:.0f} MHz with ~{pw:.0f} W under load{active} and no thermal reason: "
                f"suspect a power-delivery fault (failed USB-PD negotiation / ~30 W safe mode), not heat; "
                f"a full power cycle clears it")
        if all(isinstance(g.get("reasons"), list) for g in fault):
            return Status.FAIL, text, ev
        hot = any(t >= th.hot_c for t in temps)
        if not hot:
            return Status.WARN, text.replace("and no thermal reason", "(reasons unreadable, temperature normal)"), ev

    hw = count(HW_REASONS)
    if hw:
        names = ", ".join(sorted(HW_REASONS & set(seen)))
        return Status.FAIL, f"hardware slowdown ({names}) in {hw} of {n_r} samples: the GPU is cutting clocks hard", ev
    if thermal or (th_growth or 0) > 0:
        parts = []
        if thermal:
            parts.append(f"thermal slowdown active in {thermal} of {n_r} samples")
        if th_growth:
            parts.append(f"thermal violation counter +{th_growth / 1e9:.1f} s")
        temp = f" at {temps[-1]:.0f} °C" if temps else ""
        return Status.WARN, f"thermal throttling{temp}: " + ", ".join(parts), ev
    power = count(POWER_REASONS)
    if power or (pw_growth or 0) > 0:
        parts = []
        if power:
            parts.append(f"power cap active in {power} of {n_r} samples")
        if pw_growth:
            parts.append(f"power violation counter +{pw_growth / 1e9:.1f} s")
        return Status.WARN, "power capping: " + ", ".join(parts), ev

    if span + _slack(times, need_s) < need_s - 1e-6:
        seen_txt = "no slowdown reason so far" if with_reasons else "clock-event reasons unreadable"
        return Status.UNKNOWN, (f"watching: {_span_text(span)} of {th.window_min:g} min sampled ({seen_txt}); "
                                f"a verdict needs the full window (the dashboard keeps watching; headless: --watch {th.window_min:g})"), ev

    # Was NVML able to say, over the whole window? Reasons are snapshots; the thermal counter covers
    # the time between them, so both must be readable (the counter read at least twice).
    unreadable = None
    if n_r < REASONS_SEEN * len(rows):
        unreadable = "clock-event reasons unreadable"
    elif th_growth is None:
        unreadable = "thermal violation counter unreadable"
    elif th_reads < 2:
        unreadable = "thermal violation counter read once"

    # A full window.
    n = len(rows)
    third = max(1, n // 3)
    early, late = rows[:third], rows[-third:]
    late_busy = [g for g in late if loaded(g)]
    if not late_busy:
        # "No load" is a reading too: it needs utilization or power draw actually seen in the late
        # samples, not a window of empty GPU records.
        load_seen = [g for g in late if isinstance(g.get("util_gpu"), (int, float))
                     or isinstance(g.get("power_w"), (int, float))]
        if len(load_seen) * 2 < len(late):
            why = f"utilization: {_why(rows, 'util_gpu')}; power draw: {_why(rows, 'power_w')}"
            return Status.UNKNOWN, (f"cannot tell: GPU load unknown in the last {th.window_min:g} min "
                                    f"(utilization and power draw unavailable in {len(late) - len(load_seen)} of "
                                    f"{len(late)} late samples; {why})"), ev
        state = "no slowdown reported" if with_reasons else "clock-event reasons unreadable"
        return Status.OK, f"no sustained load in the last {th.window_min:g} min; {state}", ev
    if unreadable is None:
        return Status.OK, _clean_text(late_busy, late, early, n_r, th.window_min), ev

    # The heuristic, only where NVML cannot say.
    if not temps or not powers:
        missing = "temperature" if not temps else "power draw"
        key = "temp_c" if not temps else "power_w"
        return Status.UNKNOWN, f"cannot apply the power/temperature test: {missing} unavailable ({_why(rows, key)})", ev
    late_p = _vals(late_busy, "power_w")
    late_t, early_t = _vals(late, "temp_c"), _vals(early, "temp_c")
    busy_p = _vals(busy, "power_w")
    if not late_p or not late_t or not early_t:
        return Status.UNKNOWN, "cannot apply the power/temperature test: too few readable samples", ev
    lp, peak = mean(late_p), _pctile(busy_p, 0.95)
    lt, et = mean(late_t), mean(early_t)
    flat = lp > 0 and (pstdev(late_p) / lp) <= FLAT_CV
    under = lp < th.plateau_fraction * rated
    hot, climbing = lt >= th.hot_c, (lt - et) >= CLIMB_C
    ev.append(Evidence(prefix + "last third vs first third", src,
                       f"power {lp:.0f} W (peak {peak:.0f} W), temperature {et:.0f} → {lt:.0f} °C"))
    basis = f" (heuristic: {unreadable})"
    if under and flat and (hot or climbing):
        if climbing and not hot and lp >= NEAR_PEAK * peak:
            return Status.OK, (f"not throttling yet{basis}: temperature climbing {et:.0f} → {lt:.0f} °C with power "
                               f"still near its peak ({lp:.0f} of {peak:.0f} W); keep watching"), ev
        temp_txt = f"sits at {lt:.0f} °C" if hot else f"climbs {et:.0f} → {lt:.0f} °C"
        return Status.WARN, (f"throttling signature{basis}: power flat at {lp:.0f} W, well under the {rated:g} W "
                             f"rating, while temperature {temp_txt}"), ev
    if climbing:
        return Status.OK, (f"not throttling yet{basis}: temperature climbing {et:.0f} → {lt:.0f} °C with power near "
                           f"{lp:.0f} W; keep watching"), ev
    return Status.OK, f"no throttling{basis}: {lp:.0f} W at {lt:.0f} °C over {span / 60:.0f} min", ev


def _clean_text(late_busy: list[dict[str, Any]], late: list[dict[str, Any]], early: list[dict[str, Any]],
                n_r: int, window_min: float) -> str:
    """The ok verdict when NVML could say and said nothing: what was seen, and why the heat is fine."""
    nvml = (f"NVML reports no slowdown over {window_min:g} min (no slowdown reason in {n_r} samples, "
            f"thermal violation counter flat)")
    late_p, late_t, early_t = _vals(late_busy, "power_w"), _vals(late, "temp_c"), _vals(early, "temp_c")
    if not late_t:
        return f"no throttling: {nvml}"
    lt = mean(late_t)
    power = f"{mean(late_p):.0f} W at " if late_p else ""
    if early_t and lt - mean(early_t) >= CLIMB_C and lt < PLATEAU_C[0]:
        return (f"not throttling yet: temperature climbing {mean(early_t):.0f} → {lt:.0f} °C ({power}{lt:.0f} °C); "
                f"{nvml}; keep watching")
    if PLATEAU_C[0] <= lt <= PLATEAU_C[1]:
        note = ", the normal GB10 plateau under load (83-85 °C serving)"
    elif lt > PLATEAU_C[1]:
        note = ", hotter than the usual 83-85 °C plateau but not slowing"
    else:
        note = ""
    return f"no throttling: {power}{lt:.0f} °C{note}; {nvml}"


def judge(r: Readings, cfg: Config) -> Verdict:
    reading = r.get_reading("telemetry")
    data = reading.data
    if not data or not data.get("samples"):
        return unknown_from("G4", reading, "telemetry samples")
    src = reading.source or "telemetry"
    samples = sample_window(data["samples"], cfg.thermal.window_min * 60.0)
    read_t = data.get("counters_read_t")  # gather(): the samples that read the counters
    indices = sorted({g.get("index", i) for s in samples for i, g in enumerate(s.get("gpus") or [])})
    if not indices:
        why = next((s["errors"]["nvml"] for s in reversed(samples) if (s.get("errors") or {}).get("nvml")), None)
        reason = why or "no GPU in the samples"
        return Verdict("G4", Status.UNKNOWN, f"cannot tell: no GPU readings ({reason})",
                       (Evidence("GPU telemetry", src, f"unavailable: {reason}"),), FIX)
    results = []
    for idx in indices:
        rows, times = [], []
        for s in samples:
            for i, g in enumerate(s.get("gpus") or []):
                if g.get("index", i) == idx:
                    rows.append(g)
                    times.append(float(s["t"]))
        prefix = f"GPU {idx} " if len(indices) > 1 else ""
        results.append(_judge_gpu(idx, rows, times, cfg, src, prefix, read_t))
    status = worst([s for s, _, _ in results])
    main = next(res for res in results if res[0] is status)
    summary = main[1] if len(results) == 1 else f"GPU {indices[results.index(main)]}: {main[1]}"
    evidence = tuple(e for _, _, evs in results for e in evs)
    return Verdict("G4", status, summary, evidence, FIX)


GOTCHA = Gotcha(
    id="G4",
    slug="throttling",
    title="Thermal throttling",
    symptom=("Throughput sags partway through a long run, or the box reboots under sustained load. Steps that "
             "took 1.0 s take 1.3 s an hour later with nothing changed in the code."),
    cause=("The GB10 sheds clock speed to stay within its thermal and power envelope. Under a sustained load it "
           "draws around 80-100 W, far below the 240 W brick (the GB10 itself is listed at 140 W), while the "
           "temperature settles around 83-85 °C; peaks near 98 °C have been seen under HPL. Some units also "
           "fall into a low-power fault state (failed USB-PD negotiation: clocks pinned at 500-850 MHz, or a "
           "~30 W safe mode) that looks like throttling but is not heat."),
    check=("Samples NVML (temperature, power, SM clock, utilization, clock-event reasons and the cumulative "
           "thermal/power violation counters) over a rolling `thermal.window_min` window. Low clocks with low "
           "power under load is reported as a suspected power-delivery fault unless a thermal reason or the "
           "thermal counter says heat (a power reason does not rule it out). Active slowdown reasons or growing "
           "violation counters are direct evidence and decide at once. Once the window is full (give or take "
           "one sampling interval): if the reasons and the thermal counter were readable and show nothing, it "
           "is ok, since ~80 W at 83-85 °C is a normal GB10 under load. Only when NVML cannot say does the "
           "heuristic apply, and the verdict says so: power flat well under the rating "
           "(`hardware.rated_power_w`; NVML's limit reads N/A on GB10) while temperature climbs or sits at "
           "`thermal.hot_c` is throttling; temperature climbing with power still near its peak is \"not yet\". "
           "Before the window is full the verdict is unknown (\"watching, N of 10 min\")."),
    fix=FIX,
    intrusive=False,
    cadence_s=5.0,
    probes=("telemetry",),
    judge=judge,
    references=("GB10 power draw, limit N/A, clock-event counters: nvitop PR #208, leptonai/gpud PR #1170",
                "USB-PD low-power fault states on DGX Spark: FACTS.md (power, heat, faults)"),
)
