"""G4: thermal throttling (and the power-delivery fault that looks like it).

Direct evidence first: NVML's clock-event reasons and cumulative violation counters work on GB10
and win over any heuristic. Then the power-delivery fault pattern (low clocks + low power under
load, no thermal reason). Only then, once the rolling window is full, the source's heuristic:
power flat well under the rating while temperature climbs or sits high.
"""

from __future__ import annotations

from statistics import mean, pstdev
from typing import Any

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.telemetry import HW_REASONS, POWER_REASONS, THERMAL_REASONS, sample_window
from sparktui.core.verdict import Evidence, Status, Verdict, worst
from sparktui.gotchas.base import Gotcha, unknown_from

CLIMB_C = 3.0  # late-third mean minus early-third mean that counts as "climbing"
FLAT_CV = 0.15  # power spread (stdev/mean) in the last third that counts as a plateau
NEAR_PEAK = 0.9  # late power at or above this share of the window's peak is "still near peak"

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


def _judge_gpu(idx: int, rows: list[dict[str, Any]], times: list[float], cfg: Config, src: str,
               prefix: str) -> tuple[Status, str, list[Evidence]]:
    ev: list[Evidence] = []

    def add(what: str, value: Any) -> None:
        ev.append(Evidence(prefix + what, src, value))

    th = cfg.thermal
    need_s = th.window_min * 60.0
    span = times[-1] - times[0] if len(times) > 1 else 0.0
    add("window", f"{span / 60:.1f} of {th.window_min:g} min, {len(rows)} samples")

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
    for label, key, growth in (("thermal", "thermal_viol_ns", th_growth), ("power", "power_viol_ns", pw_growth)):
        if growth is None:
            add(f"{label} violation counter", f"unavailable: {_why(rows, key)}")
        else:
            share = f" ({growth / 1e9 / span:.0%} of the window)" if span > 0 else ""
            add(f"{label} violation counter", f"+{growth / 1e9:.1f} s{share}")

    def count(names: frozenset) -> int:
        return sum(1 for g in with_reasons if names & set(g["reasons"]))

    n_r = len(with_reasons)
    hw = count(HW_REASONS)
    if hw:
        names = ", ".join(sorted(HW_REASONS & set(seen)))
        return Status.FAIL, f"hardware slowdown ({names}) in {hw} of {n_r} samples: the GPU is cutting clocks hard", ev
    thermal = count(THERMAL_REASONS)
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

    # Which samples are under load: utilization when NVML gives it, else power.
    def loaded(g: dict[str, Any]) -> bool:
        if isinstance(g.get("util_gpu"), (int, float)):
            return g["util_gpu"] >= th.load_util_pct and "gpu_idle" not in (g.get("reasons") or [])
        return isinstance(g.get("power_w"), (int, float)) and g["power_w"] >= 0.3 * rated

    busy = [g for g in rows if loaded(g)]
    fault = [g for g in busy if isinstance(g.get("sm_mhz"), (int, float)) and g["sm_mhz"] < th.fault_clock_mhz
             and isinstance(g.get("power_w"), (int, float)) and g["power_w"] < th.fault_power_w]
    if len(fault) >= 3 and len(fault) >= 0.8 * len(busy):
        clk, pw = mean(g["sm_mhz"] for g in fault), mean(g["power_w"] for g in fault)
        text = (f"clocks pinned at ~{clk:.0f} MHz with ~{pw:.0f} W under load and no thermal reason: "
                f"suspect a power-delivery fault (failed USB-PD negotiation / safe mode), not heat")
        if all(isinstance(g.get("reasons"), list) for g in fault):
            return Status.FAIL, text, ev
        hot = any(t >= th.hot_c for t in temps)
        if not hot:
            return Status.WARN, text.replace("and no thermal reason", "(reasons unreadable, temperature normal)"), ev

    if span + 1e-6 < need_s:
        seen_txt = "no slowdown reason so far" if with_reasons else "clock-event reasons unreadable"
        return Status.UNKNOWN, (f"watching: {span / 60:.1f} of {th.window_min:g} min sampled ({seen_txt}); "
                                f"use --watch {th.window_min:g} or the dashboard for a verdict"), ev

    # The heuristic, on a full window.
    n = len(rows)
    third = max(1, n // 3)
    early, late = rows[:third], rows[-third:]
    late_busy = [g for g in late if loaded(g)]
    if not late_busy:
        state = "no slowdown reported" if with_reasons else "clock-event reasons unreadable"
        return Status.OK, f"no sustained load in the last {th.window_min:g} min; {state}", ev
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
    clean = " (NVML reports no slowdown reason)" if with_reasons else ""
    if under and flat and (hot or climbing):
        if climbing and not hot and lp >= NEAR_PEAK * peak:
            return Status.OK, (f"not throttling yet: temperature climbing {et:.0f} → {lt:.0f} °C with power still "
                               f"near its peak ({lp:.0f} of {peak:.0f} W); keep watching"), ev
        temp_txt = f"sits at {lt:.0f} °C" if hot else f"climbs {et:.0f} → {lt:.0f} °C"
        return Status.WARN, (f"throttling signature: power flat at {lp:.0f} W, well under the {rated:g} W rating, "
                             f"while temperature {temp_txt}{clean}"), ev
    if climbing:
        return Status.OK, (f"not throttling yet: temperature climbing {et:.0f} → {lt:.0f} °C with power near "
                           f"{lp:.0f} W; keep watching"), ev
    return Status.OK, f"no throttling: {lp:.0f} W at {lt:.0f} °C over {span / 60:.0f} min{clean}", ev


def judge(r: Readings, cfg: Config) -> Verdict:
    reading = r.get_reading("telemetry")
    data = reading.data
    if not data or not data.get("samples"):
        return unknown_from("G4", reading, "telemetry samples")
    src = reading.source or "telemetry"
    samples = sample_window(data["samples"], cfg.thermal.window_min * 60.0)
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
        results.append(_judge_gpu(idx, rows, times, cfg, src, prefix))
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
           "thermal/power violation counters) over a rolling `thermal.window_min` window. Active slowdown "
           "reasons or growing violation counters are direct evidence and decide at once. Low clocks with low "
           "power under load and no thermal reason is reported as a suspected power-delivery fault. Otherwise, "
           "once the window is full: power flat well under the rating (`hardware.rated_power_w`; NVML's limit "
           "reads N/A on GB10) while temperature climbs or sits at `thermal.hot_c` is throttling; temperature "
           "climbing with power still near its peak is \"not yet\". Before the window is full the verdict is "
           "unknown (\"watching, N of 10 min\")."),
    fix=FIX,
    intrusive=False,
    cadence_s=5.0,
    probes=("telemetry",),
    judge=judge,
    references=("GB10 power draw, limit N/A, clock-event counters: nvitop PR #208, leptonai/gpud PR #1170",
                "USB-PD low-power fault states on DGX Spark: FACTS.md (power, heat, faults)"),
)
