"""G4: thermal throttling (and the power-delivery fault that looks like it).

Evidence in order of standing: NVML's clock-event counters (cumulative time the clocks were held
down, per cause: they see everything between two samples), then the clock-event reasons (a snapshot
at each sample), then, only where neither can be read, the SM clock itself. Temperature alone is
never evidence: ~80 W at 83-85 °C is a normal GB10 under load. A fraction of a second of slowdown is
not a headline either: a cause counts once it held the clocks for SLOWDOWN_SHARE of the window.
Values no GPU can produce are measurement errors, never evidence. Live, the trailing window is
judged; reviewing a recording, every full window is, and the worst is reported with when it was.
Each rule below is a small function; ``_decide`` applies them in order.
"""

from __future__ import annotations

import bisect
import math
from itertools import accumulate
from statistics import median
from typing import Any, Callable, Sequence

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.shapes import HOST, NVML, TELEMETRY
from sparktui.core.telemetry import (CLOCK_EVENT_COUNTERS, HW_REASONS, LEGACY_COUNTERS, POWER_REASONS,
                                     SLOWDOWN_REASONS, THERMAL_POLICY_COUNTER, THERMAL_REASONS, counter_ns)
from sparktui.core import validate
from sparktui.core.verdict import Evidence, Status, Verdict
from sparktui.core.units import is_number, offset_text, when_text
from sparktui.gotchas.base import Finding, first_finding, worst_index
from sparktui.gotchas.base import Feed, Gotcha, unknown_from
from sparktui.gotchas._facts import capability_pair, field_error, field_value

CLIMB_C = 3.0  # late-third mean minus early-third mean that counts as "climbing"
NEAR_PEAK = 0.9  # heuristic: a late SM clock under load at or above this share of the window's peak is "held"
REASONS_SEEN = 0.9  # share of samples with readable clock-event reasons that counts as "readable"
PLATEAU_C = (80.0, 86.0)  # public GB10 reports: 81 °C under Ollama, an 83-85 °C plateau serving
# A slowdown cause counts once it held the clocks for this share of the window (counters: its growth
# over the window's span; reasons: the share of samples showing it). 1% of 10 min is 6 s. A public
# GB10 sample: 0.9 s of SW thermal slowdown at 81 °C is not throttling; 173 s under an Ollama load
# (ollama #13552) is.
SLOWDOWN_SHARE = 0.01
REASON_MIN_SAMPLES = 2  # a reason seen in one sample only is a snapshot, not sustained
HW_FAIL_S = 1.0  # HW thermal slowdown / HW power brake (clocks cut by 2x or more) this long fails; less warns
FAULT_MIN_SAMPLES = 3  # power-delivery fault: at least this many loaded samples with low clock and power ...
FAULT_SHARE = 0.8  # ... making up at least this share of the loaded samples
# A clock lock NVML does not name: on a real H100 (driver 580.159.04, issue 27) `nvidia-smi -lgc
# 300,600` held the SM clock at 600 MHz of 1980 under a 99-100 % load with NO clock-event reason
# active (mask 0x0, not the 0x2 clock-setting reason), while the driver booked the locked time on the
# SW thermal slowdown counter (+~1 s a second, at 49 °C) and the SW power capping counter. A loaded
# sample with readable reasons, none of them a slowdown (or idle), and the SM clock at or under this
# share of the GPU's maximum is "held without a reason"; held in LOCK_MIN_SAMPLES such samples making
# up LOCK_SHARE of the loaded ones, it is a lock, and counter growth no reason confirms is its booking.
LOCK_CLOCK_SHARE = 0.6
LOCK_MIN_SAMPLES = 3
LOCK_SHARE = 0.3
LOAD_POWER_SHARE = 0.3  # without utilization, a sample draws this share of the rated power to count as loaded
# What a GPU can report at all (class 3): outside these a reading is a measurement error, not evidence.
# One table of them (core/validate.py) serves G3, G4, G6 and the snapshot reader.
TEMP_RANGE_C = validate.TEMP_RANGE_C
POWER_MAX_W = validate.POWER_MAX_W
SM_MAX_MHZ = validate.SM_MAX_MHZ
UTIL_MAX_PCT = validate.UTIL_MAX_PCT
# A counter can grow by at most the time since its previous reading (sample timestamps and reads are
# apart by up to this much); one that shrinks is a reset (driver reload) only if what it shows fits
# into that time, otherwise a measurement error.
COUNTER_SLACK_S = 2.0
# A sample stamped this much earlier than the one before it (or later than the one after it) is out of
# order: a clock step or a corrupt line, not a moment of the run.
SAMPLE_TIME_SLACK_S = 1.0
# The sampler reads the counters at least this often (probes/sampler.py COUNTERS_EVERY_S) and carries
# the value between reads: a window this long holds two readings even when unmarked.
COUNTERS_READ_WITHIN_S = 10.0
REVIEW_STEP_S = 60.0  # reviewing a recording: a full window ending at every minute of it is judged
# The Spark's own SPBM readings (spark_hwmon, probes/spark_hwmon.py) explain what NVML's counters do not:
BRICK_W = 240.0  # the DGX Spark's USB-C power brick (the GB10 itself is listed at 140 W)
BRICK_NEAR = 0.9  # DC input at this share of the brick or more is at the brick's limit (216 W)
LIMIT_NEAR = 0.95  # a power-limit controller's EWMA power at this share of its cap or more is held there
NS_PER_S = 1e9  # the counters count nanoseconds (nvml.h: "in ns"; nvidia-smi shows microseconds)

# sync boost (field 76) is recorded and shown, never judged: it matches clocks across a sync-boost group
_SW_THERMAL, _HW_THERMAL, _HW_BRAKE, _POWER_CAP = "sw_thermal_ns", "hw_thermal_ns", "hw_power_brake_ns", "sw_power_cap_ns"
_POLICY = THERMAL_POLICY_COUNTER[0]
_LABEL = {k: words for k, words, _ in CLOCK_EVENT_COUNTERS}
_LABEL[_POLICY] = "thermal policy counter"
_FIELD = {k: fid for k, _, fid in CLOCK_EVENT_COUNTERS}
_FIELD[_POLICY] = THERMAL_POLICY_COUNTER[2]

_FIX_HEAD = """\
Throttling is the GPU protecting itself; the fixes are about heat and power delivery.

- Watch it for a representative stretch before judging (`sparktui check G4 --watch 15`), and record
  long runs so you can see when it started: `sparktui record -o run.jsonl`, then
  `sparktui check --replay run.jsonl G4` names the worst 10-minute window.
- Cap run length or checkpoint more often if it throttles (or reboots) late in long runs.
"""

_FIX_SPARK = """\
- Give the Spark air: it breathes front to back; keep 10+ cm clear, nothing stacked on top, room
  temperature down. Dust the intake on older units.
- Locking the clocks a little lower (`sudo nvidia-smi -lgc 0,2000`) has lowered the temperature
  ~10 °C with no visible speed loss; G4 reports a lock NVML shows (its clock-setting reason under
  load), so one left from an experiment is seen (`sudo nvidia-smi -rgc` undoes it).
- If clocks sit at 500-850 MHz with low power under load and no thermal reason, or the HW power brake
  counter grows, suspect a failed USB-PD power negotiation or the ~30 W safe mode: use the original
  power brick and cable, then do a full power cycle (shut down, unplug the power cable for 30 s, plug
  in, boot); a reboot alone does not clear it. RMA if it persists.
"""

_FIX_OTHER = """\
- Power capping at the enforced limit under a full load is the GPU working as designed. A limit set
  below the default is undone by giving `sudo nvidia-smi -pl` the default limit that
  `nvidia-smi -q -d POWER` shows ("Default Power Limit").
- Thermal or HW slowdown, or the HW power brake: check the server's airflow and inlet temperature,
  its fans, and the power supplies in the BMC's event log.
"""

_FIX_TAIL = """
Current reasons and the cumulative counters are also visible with:

```
nvidia-smi -q -d PERFORMANCE
```
"""

# The card's fix where the machine is not known (`sparktui explain G4`): both kinds, each named.
FIX = (_FIX_HEAD + "\nOn a DGX Spark (GB10):\n\n" + _FIX_SPARK + "\nOn a data-centre or workstation GPU:\n\n"
       + _FIX_OTHER + _FIX_TAIL)
FIX_SPARK = _FIX_HEAD + _FIX_SPARK + _FIX_TAIL
FIX_OTHER = _FIX_HEAD + _FIX_OTHER + _FIX_TAIL

# What names a DGX Spark: the GPU (NVML's name, or compute capability 12.1), else the host's DMI
# product name (/sys/class/dmi/id/product_name: "NVIDIA DGX Spark"; OEM GB10 boxes name GB10 or GX10).
GB10_CAPABILITY = (12, 1)
SPARK_PRODUCT_WORDS = ("DGX SPARK", "GB10", "GX10")


def static_device(r: Readings, data: Any, idx: int) -> dict[str, Any] | None:
    """GPU ``idx``'s NVML static facts: the telemetry's own ``static`` (a recording's header, the
    sampler's start), else the nvml reading; None where neither has it."""
    for st in (data.get("static") if isinstance(data, dict) else None, r.data(NVML)):
        devs = st.get("devices") if isinstance(st, dict) else None
        for i, d in enumerate(devs if isinstance(devs, list) else []):
            if isinstance(d, dict) and _index(d, i) == idx:
                return d
    return None


def machine_of(r: Readings, data: Any, idx: int) -> tuple[bool | None, str]:
    """(a DGX Spark / GB10?, how known); None where nothing names the machine. From GPU ``idx``'s
    NVML static facts, else the host's DMI product name."""
    d = static_device(r, data, idx)
    if d is not None:
        name, cc = field_value(d, "name"), capability_pair(field_value(d, "compute_capability"))
        if cc == GB10_CAPABILITY or (isinstance(name, str) and "GB10" in name.upper()):
            return True, f"{name or 'GPU'} (NVML)"
        if (isinstance(name, str) and name) or cc is not None:
            return False, f"{name or 'GPU'} (NVML)"
    host = r.data(HOST)
    product = host.get("dmi_product") if isinstance(host, dict) else None
    if isinstance(product, str) and product.strip():
        up = product.upper()
        return any(w in up for w in SPARK_PRODUCT_WORDS), f"{product.strip()[:80]} (DMI product name)"
    return None, "machine not named"


_APP_CLOCKS = (("graphics", "app_clock_gr_mhz", "default_app_clock_gr_mhz"),
               ("memory", "app_clock_mem_mhz", "default_app_clock_mem_mhz"))


def app_clocks(d: dict[str, Any] | None) -> tuple[list[str], list[str], str | None]:
    """Application clocks against their defaults (NVML static facts): (changed, at default, why
    unread). ``changed`` names each clock set away from its default ("graphics 1410 MHz, default
    1980 MHz"); a clock NVML would not give (NOT_SUPPORTED: GB10's answer is not on record) is
    unread, never taken as default."""
    if d is None or not any(k in d for _, k, _ in _APP_CLOCKS):
        return [], [], "not in the readings (a recording made before sparktui read them)" if d is not None else None
    changed, default, why = [], [], None
    for what, cur_k, def_k in _APP_CLOCKS:
        cur, dflt = field_value(d, cur_k), field_value(d, def_k)
        if not (is_number(cur) and is_number(dflt)):
            why = why or field_error(d, cur_k) or field_error(d, def_k) or "not read"
        elif cur != dflt:
            changed.append(f"{what} {cur:g} MHz, default {dflt:g} MHz")
        else:
            default.append(f"{what} {cur:g} MHz")
    return changed, default, why


RESET_CLOCKS = """\
Clocks were set by hand. If that was not meant for this run, put them back to their defaults
(`-rgc` undoes a lock made with `-lgc`, `-rac` application clocks set with `-ac`):

```bash
sudo nvidia-smi -rgc
sudo nvidia-smi -rac
```

"""


def fix_for(spark: bool | None, clocks_set: bool = False) -> str:
    """The fix text that fits the machine: Spark advice only on a Spark, both (named) when unknown;
    the reset commands first when the headline is clocks set by hand."""
    text = FIX if spark is None else FIX_SPARK if spark else FIX_OTHER
    return RESET_CLOCKS + text if clocks_set else text


def _mean(xs: list[float]) -> float:
    return math.fsum(xs) / len(xs)


def _pct(x: float) -> str:
    return f"{x * 100:.1f}%" if x < 0.1 else f"{x * 100:.0f}%"


def _span_text(span: float) -> str:
    """Seconds under a minute; minutes truncated to a tenth, so 598 s never reads "10.0 of 10"."""
    if span < 60:
        return f"{span:.0f} s" if span >= 1 else f"{span:.1f} s"
    return f"{math.floor(span / 6 + 1e-9) / 10:.1f}"


def _span_min(span: float) -> str:
    """``_span_text`` with its unit: "49 s", "3.2 min"."""
    return _span_text(span) + (" min" if span >= 60 else "")


def _slack(times: list[float], need_s: float) -> float:
    """One sampling interval (the first sample stands for the interval before it), plus half of one
    for jitter: a window trimmed to exactly ``need_s`` spans need_s minus up to one interval, so
    without this a full window reads as short, and flips with the timestamps. Capped at a fifth of
    the window, so a few far-apart samples never pass for one."""
    gaps = [b - a for a, b in zip(times, times[1:]) if b > a]
    return min(1.5 * median(gaps), need_s / 5) if gaps else 0.0


def _pctile(xs: list[float], q: float) -> float:
    s = sorted(xs)
    return s[int(q * (len(s) - 1))]


# -- one GPU's samples, checked once ---------------------------------------------------------------

_RANGES: tuple[tuple[str, str, str, float, float], ...] = (
    ("temp_c", "temperature", "°C", TEMP_RANGE_C[0], TEMP_RANGE_C[1]),
    ("power_w", "power draw", "W", 0.0, POWER_MAX_W),
    ("sm_mhz", "SM clock", "MHz", 0.0, SM_MAX_MHZ),
    ("util_gpu", "utilization", "%", 0.0, UTIL_MAX_PCT),
)


# "applications_clocks_setting" (0x2): "GPU clocks are limited by current setting of applications clocks"
# (nvml.h); `nvidia-smi -lgc` "supersedes application clocks", so a lock shows as this reason too
CLOCK_SETTING_REASONS = frozenset({"applications_clocks_setting"})
_CATEGORIES = {"thermal": THERMAL_REASONS, "power": POWER_REASONS, "hw": HW_REASONS, "clocks": CLOCK_SETTING_REASONS}


def _prefix(flags: list[Any]) -> list[float]:
    return [0, *accumulate(flags)]



def valid_limit(v: Any) -> float | None:
    """An NVML enforced power limit a GPU can have, else None (N/A, NaN, a bogus value)."""
    return v if is_number(v) and 0 < v <= POWER_MAX_W else None


def rated_power(limits: Sequence[Any], cfg: Config) -> tuple[float, bool]:
    """The rating G4 judges power against, and whether NVML gave it: the newest valid enforced
    limit of ``limits`` (a window's samples, oldest first), else ``hardware.rated_power_w``.
    The dashboard's power plot is scaled by the same rating."""
    limit = next((v for v in reversed(limits) if valid_limit(v) is not None), None)
    return (limit, True) if limit is not None else (cfg.hardware.rated_power_w, False)

class _Series:
    """One GPU's samples in time order, checked once for every window: values no GPU can produce taken
    out (and noted), each counter's growth from one reading to the next worked out, and running totals
    kept so a window's counts cost the same whatever its length (a 12 h review judges ~700 windows)."""

    spark: bool | None = None  # the machine is a DGX Spark / GB10 (None: not named); set by judge()
    device: dict[str, Any] | None = None  # this GPU's NVML static facts, where the readings have them

    def __init__(self, rows: list[dict[str, Any]], times: list[float], bad: list[tuple[int, str]] | None = None,
                 spbm: list[Any] | None = None) -> None:
        self.rows, self.times = rows, times
        # each sample's SPBM board readings (a dict where spark_hwmon was loaded, else None)
        self.spbm: list[dict[str, Any] | None] = [b if isinstance(b, dict) else None for b in (spbm or [None] * len(rows))]
        self.bad: list[tuple[int, str]] = list(bad or [])  # (sample index, what was impossible), in index order
        self.vals: dict[str, list[Any]] = {}
        for key, what, unit, lo, hi in _RANGES:
            col = [g.get(key) for g in rows]
            for i, v in enumerate(col):
                if v is not None and (not is_number(v) or not lo <= v <= hi):
                    col[i] = None
                    if is_number(v):
                        self.bad.append((i, f"{what} {v:g} {unit}"))
            self.vals[key] = col
        self.reasons: list[list[str] | None] = [g.get("reasons") if isinstance(g.get("reasons"), list) else None
                                                for g in rows]
        self.limits = [valid_limit(g.get("power_limit_w")) for g in rows]
        self.pre_reasons = _prefix([r is not None for r in self.reasons])
        self.pre_cat = {c: _prefix([r is not None and not names.isdisjoint(r) for r in self.reasons])
                        for c, names in _CATEGORIES.items()}
        seen = {n for r in self.reasons if r for n in r}
        self.pre_name = {n: _prefix([r is not None and n in r for r in self.reasons]) for n in sorted(seen)}
        self.counter: dict[str, list[Any]] = {}
        self.pre_step: dict[str, list[float]] = {}
        self.pre_read: dict[str, list[float]] = {}
        # a recording made before the five counters: its two keys are read under the new names
        self.legacy = any(old in g for g in rows[:1] + rows[-1:] for old in LEGACY_COUNTERS)
        for key in _LABEL:
            self._counter(key)
        self.bad.sort()

    def _counter(self, key: str) -> None:
        raw = [counter_ns(g, key)[0] for g in self.rows] if self.legacy else [g.get(key) for g in self.rows]
        vals: list[Any] = []
        for i, v in enumerate(raw):
            ok = v is not None and is_number(v) and v >= 0
            vals.append(v if ok else None)
            if not ok and v is not None and is_number(v):  # no counter goes below zero
                self.bad.append((i, f"{_LABEL[key]} counter {v:g} ns"))
        steps = [0.0] * len(vals)
        prev, prev_t = None, math.nan  # the last value read, and when it was first seen
        for i, v in enumerate(vals):
            if v is None or v == prev:
                continue
            t = self.times[i]
            if prev is not None:
                elapsed = t - prev_t + COUNTER_SLACK_S
                if v > prev and (v - prev) / NS_PER_S > elapsed:
                    self.bad.append((i, f"{_LABEL[key]} counter +{(v - prev) / NS_PER_S:.1f} s in {t - prev_t:.0f} s"))
                elif v > prev:
                    steps[i] = float(v - prev)
                elif v / NS_PER_S <= elapsed:
                    steps[i] = float(v)  # reset (driver reloaded): counted again from zero
                else:
                    self.bad.append((i, f"{_LABEL[key]} counter back from {prev / NS_PER_S:.1f} s to "
                                        f"{v / NS_PER_S:.1f} s"))
            prev, prev_t = v, t
        self.counter[key] = vals
        self.pre_step[key] = _prefix(steps)
        self.pre_read[key] = _prefix([v is not None for v in vals])


# -- one window ------------------------------------------------------------------------------------

class _Window:
    """What one window of samples shows, worked out once for the rules."""

    def __init__(self, s: _Series, lo: int, hi: int, cfg: Config, read_t: list[float] | None, review: bool) -> None:
        th = cfg.thermal
        self.s, self.lo, self.hi, self.cfg, self.th, self.review = s, lo, hi, cfg, th, review
        self.rows = s.rows[lo:hi]
        self.times = s.times[lo:hi]
        self.n = hi - lo
        self.span = self.times[-1] - self.times[0]  # a window holds one sample at least
        self.need_s = th.window_min * 60.0
        self._full: bool | None = None
        self.where = f"in this {th.window_min:g}-min window" if review else f"in the last {th.window_min:g} min"
        self.temp = s.vals["temp_c"][lo:hi]
        self.power = s.vals["power_w"][lo:hi]
        self.clock = s.vals["sm_mhz"][lo:hi]
        self.util = s.vals["util_gpu"][lo:hi]
        self.reasons = s.reasons[lo:hi]
        self.temps = [v for v in self.temp if v is not None]
        self.powers = [v for v in self.power if v is not None]
        self.clocks = [v for v in self.clock if v is not None]
        self.rated, self.rated_from_nvml = rated_power(s.limits[lo:hi], cfg)
        self.n_r = int(s.pre_reasons[hi] - s.pre_reasons[lo])
        self.seen = {n: int(c) for n, pre in s.pre_name.items() if (c := pre[hi] - pre[lo])}
        self.cat = {c: int(pre[hi] - pre[lo]) for c, pre in s.pre_cat.items()}
        load_pct, floor_w = th.load_util_pct, LOAD_POWER_SHARE * self.rated
        self.loaded = [(u >= load_pct and not (r and "gpu_idle" in r)) if u is not None else (p is not None and p >= floor_w)
                       for u, p, r in zip(self.util, self.power, self.reasons)]
        self.busy = [i for i, x in enumerate(self.loaded) if x]
        self.values: dict[str, int] = {}  # readable values of each counter in the window
        self.twice: dict[str, bool] = {}  # ... read at least twice, so its growth is known
        for key in _LABEL:
            self._count_counter(key, read_t)
        self.spbm = [x for x in s.spbm[lo:hi] if x is not None]  # the board's readings, where loaded
        b = bisect.bisect_left(s.bad, (lo,))
        e = bisect.bisect_left(s.bad, (hi,))
        self.bad = s.bad[b:e]

    @property
    def with_reasons(self) -> bool:
        return self.n_r > 0

    def _count_counter(self, key: str, read_t: list[float] | None) -> None:
        s, lo, hi = self.s, self.lo, self.hi
        self.values[key] = n = int(s.pre_read[key][hi] - s.pre_read[key][lo])
        if n < 2:
            self.twice[key] = False
        elif read_t is not None:  # gather() lists when it read them: once more after the first sample
            self.twice[key] = any(self.times[0] < t <= self.times[-1] for t in read_t)
        elif self.span >= COUNTERS_READ_WITHIN_S:  # the sampler's cadence: two readings at least
            self.twice[key] = True
        else:  # samples carry the last value between reads: only a change tells a second reading
            vals = [v for v in s.counter[key][lo:hi] if v is not None]
            self.twice[key] = any(a != b for a, b in zip(vals, vals[1:]))

    # what the window says, in small pieces
    def why(self, key: str) -> str:
        for g in reversed(self.rows):
            why = (g.get("errors") or {}).get(key)
            if why:
                return why
        return "not in the samples"

    def counter_why(self, key: str) -> str:
        if self.values[key]:
            return "read once: cannot tell growth"
        why = next((w for g in reversed(self.rows) if (w := counter_ns(g, key)[1])), None)
        if why:
            return why
        return "not in this recording (made before sparktui read it)" if self.s.legacy else "not in the samples"

    def readable(self, key: str) -> bool:
        return self.twice[key]

    def seconds(self, key: str) -> float:
        """The counter's growth over the window, from the window's first reading to its last."""
        if not self.twice[key]:
            return 0.0
        pre = self.s.pre_step[key]
        return (pre[self.hi] - pre[self.lo + 1]) / NS_PER_S

    def share(self, key: str) -> float:
        """The counter's growth as a share of the window's span: of the window once full, of what has
        been sampled while part-filled (a cause seen holding the clocks that long is reported at once)."""
        return self.seconds(key) / self.span if self.span > 0 else 0.0

    def thermal_counter(self) -> str | None:
        """SW thermal slowdown (field 269); else the older field-75 thermal policy counter."""
        return _SW_THERMAL if self.readable(_SW_THERMAL) else _POLICY if self.readable(_POLICY) else None

    def count(self, category: str) -> int:
        """Samples showing any reason of a category ("thermal", "power", "hw")."""
        return self.cat[category]

    def sustained(self, category: str) -> bool:
        c = self.count(category)
        return c >= REASON_MIN_SAMPLES and c >= SLOWDOWN_SHARE * self.n_r

    def reasons_readable(self) -> bool:
        return self.n_r >= REASONS_SEEN * self.n  # n >= 1: none readable is never readable

    def heat_seen(self) -> bool:
        key = self.thermal_counter()
        return (self.sustained("thermal") or self.seconds(_HW_THERMAL) > 0
                or (key is not None and self.share(key) >= SLOWDOWN_SHARE))

    def held_without_reason(self) -> tuple[int, float, float] | None:
        """Loaded samples whose SM clock sat at or under LOCK_CLOCK_SHARE of the GPU's maximum (static
        facts) with readable reasons naming no slowdown and no idle: (how many, the lowest and the
        highest such clock). None when the maximum is unread."""
        top = field_value(self.s.device, "max_sm_mhz") if self.s.device is not None else None
        if not is_number(top) or top <= 0:
            return None
        low = [c for i in self.busy if (r := self.reasons[i]) is not None and (c := self.clock[i]) is not None
               and c <= LOCK_CLOCK_SHARE * top and SLOWDOWN_REASONS.isdisjoint(r) and "gpu_idle" not in r]
        return (len(low), min(low), max(low)) if low else (0, 0.0, 0.0)

    def locked(self) -> bool:
        held = self.held_without_reason()
        return held is not None and held[0] >= LOCK_MIN_SAMPLES and held[0] >= LOCK_SHARE * len(self.busy)

    def growth_text(self, key: str) -> str:
        return f"+{self.seconds(key):.1f} s ({_pct(self.share(key))} of the window)"

    def counter_text(self, key: str) -> str:
        return f"{_LABEL[key]} {self.growth_text(key)}"

    def when(self, i: int) -> str:
        """When sample i (of the series) was: clock time, and reviewing, its offset into the recording."""
        return when_text(self.s.times[i], self.s.times[0] if self.review else None)

    def full(self) -> bool:
        if self._full is None:
            self._full = self.span + _slack(self.times, self.need_s) >= self.need_s - 1e-6
        return self._full

    def sampled_text(self) -> str:
        return f"{_span_text(self.span)} of {self.th.window_min:g} min"

    def board(self, test: Callable[[dict[str, Any]], bool]) -> int:
        """SPBM samples for which ``test`` holds (a value that is not a number never does)."""
        return sum(1 for b in self.spbm if test(b))

    def board_sustained(self, c: int) -> bool:
        return c >= REASON_MIN_SAMPLES and c >= SLOWDOWN_SHARE * len(self.spbm)

    def board_range(self, key: str) -> tuple[float, float] | None:
        vals = [b[key] for b in self.spbm if is_number(b.get(key))]
        return (min(vals), max(vals)) if vals else None

    def thirds(self) -> tuple[range, range]:
        third = max(1, self.n // 3)
        return range(third), range(self.n - third, self.n)

    def evidence(self, src: str, prefix: str) -> list[Evidence]:
        ev: list[Evidence] = []

        def add(what: str, value: Any) -> None:
            ev.append(Evidence(prefix + what, src, value))

        th = self.th
        add("window", f"{_span_text(self.span)} of {th.window_min:g} min, {self.n} samples")
        t = self.temps
        add("temperature", f"{t[0]:.0f} → {t[-1]:.0f} °C (max {max(t):.0f})" if t
            else f"unavailable: {self.why('temp_c')}")
        p = self.powers
        add("power draw", f"{min(p):.0f}-{max(p):.0f} W, last {p[-1]:.0f} W" if p
            else f"unavailable: {self.why('power_w')}")
        rated_src = "NVML enforced limit" if self.rated_from_nvml else \
            f"config hardware.rated_power_w (NVML limit: {self.why('power_limit_w')})"
        add("rated power", f"{self.rated:g} W ({rated_src})")
        c = self.clocks
        add("SM clock", f"{min(c):.0f}-{max(c):.0f} MHz, last {c[-1]:.0f} MHz" if c
            else f"unavailable: {self.why('sm_mhz')}")
        if self.n_r:
            shown = ", ".join(f"{k} in {v}/{self.n_r}" for k, v in sorted(self.seen.items())) or "none"
            add("clock-event reasons", shown)
        else:
            add("clock-event reasons", f"unavailable: {self.why('reasons_mask')}")
        for key in _LABEL:
            label = f"{_LABEL[key]} (NVML field {_FIELD[key]})"
            if key == _POLICY:
                if not self.values[key] and not any(counter_ns(g, key)[1] for g in self.rows):
                    continue  # not read: field 269 answered, or an old recording without it
                label += ", older than nvidia-smi's SW Thermal Slowdown"
            if self.readable(key):
                add(label, self.growth_text(key))
            else:
                add(label, f"unavailable: {self.counter_why(key)}")
        board = _board_text(self)
        if board is not None:
            add("SPBM board readings (spark_hwmon)", board)
        if self.s.device is not None:
            changed, default, why = app_clocks(self.s.device)
            if changed:
                add("application clocks", "changed from default: " + "; ".join(changed) + " (`sudo nvidia-smi -rac`)")
            elif why:
                add("application clocks", f"unavailable: {why}: clocks set with `nvidia-smi -ac` cannot be seen")
            else:
                add("application clocks", "at their defaults: " + ", ".join(default))
        if self.bad:
            add("measurement errors", "; ".join(f"{what} at {self.when(i)}"
                                                for i, what in self.bad[:5])
                + (f" (+{len(self.bad) - 5} more)" if len(self.bad) > 5 else "") + ": impossible, so not evidence")
        return ev


# -- the rules, in the order they apply ------------------------------------------------------------

def rule_power_delivery_fault(w: _Window) -> Finding | None:
    """Low clocks with low power under load and no heat: a starved GPU (failed USB-PD negotiation, ~30 W
    safe mode). Before the power rules: a starved GPU may well show a power reason too; only heat rules
    it out."""
    th = w.th
    fault = [i for i in w.busy if w.clock[i] is not None and w.clock[i] < th.fault_clock_mhz
             and w.power[i] is not None and w.power[i] < th.fault_power_w]
    if len(fault) < FAULT_MIN_SAMPLES or len(fault) < FAULT_SHARE * len(w.busy) or w.heat_seen():
        return None
    clk, pw = _mean([w.clock[i] for i in fault]), _mean([w.power[i] for i in fault])
    power_names = sorted((POWER_REASONS | HW_REASONS) & set(w.seen))
    active = f" ({', '.join(power_names)} active)" if power_names else ""
    if w.s.spark is False:  # no USB-PD brick on a data-centre GPU: its own power supply and cabling
        cause = "suspect power delivery (the GPU's supply, cables or a limit set low), not heat"
    else:
        cause = ("suspect a power-delivery fault (failed USB-PD negotiation / ~30 W safe mode), not heat; "
                 "a full power cycle clears it")
    text = f"clocks pinned at ~{clk:.0f} MHz with ~{pw:.0f} W under load{active} and no thermal slowdown: {cause}"
    if all(w.reasons[i] is not None for i in fault) or w.thermal_counter() is not None:
        return Finding(Status.FAIL, text)
    if not any(t >= th.hot_c for t in w.temps):
        return Finding(Status.WARN, text.replace("and no thermal slowdown", "(reasons and counters unreadable, "
                                                  "temperature normal)"))
    return None


def rule_hardware_slowdown(w: _Window) -> Finding | None:
    """HW thermal slowdown / HW power brake cut the clocks by half or more: growth of their counters, or
    a HW reason held over samples. A HW reason in one sample only is shown, not headlined (NVML may show
    hw_slowdown for an instant at a clock change)."""
    hw_s = w.seconds(_HW_THERMAL) + w.seconds(_HW_BRAKE)
    sustained = w.sustained("hw")
    if hw_s <= 0 and not sustained:
        return None
    parts = [w.counter_text(k) for k in (_HW_THERMAL, _HW_BRAKE) if w.seconds(k) > 0]
    if sustained:
        names = ", ".join(sorted(HW_REASONS & set(w.seen)))
        parts.append(f"{names} in {w.count('hw')} of {w.n_r} samples")
    cause = ("the power supply braked the GPU: power delivery, not heat" if w.seconds(_HW_BRAKE) > 0
             or "hw_power_brake_slowdown" in w.seen else "the GPU is cutting clocks hard")
    if hw_s >= HW_FAIL_S or sustained:
        return Finding(Status.FAIL, f"hardware slowdown: {', '.join(parts)}: {cause}")
    return Finding(Status.WARN, (f"brief hardware slowdown: {', '.join(parts)} (under the {HW_FAIL_S:g} s that "
                                  f"fails): {cause}"))


def rule_clocks_locked(w: _Window) -> Finding | None:
    """The SM clock held low under load with no clock-event reason active (a `nvidia-smi -lgc` lock as
    a real H100 driver shows it: no 0x2 reason), and no thermal reason held to explain it: a
    warn naming the reset. Counter growth meanwhile is said to be the driver's booking of the lock,
    not heat or power (no reason confirmed it). A state, not a duration: no full window needed."""
    held = w.held_without_reason()
    if held is None or not w.locked() or w.sustained("thermal"):
        return None
    n, lo, hi = held
    top = field_value(w.s.device, "max_sm_mhz")
    clock = f"{lo:.0f} MHz" if lo == hi else f"{lo:.0f}-{hi:.0f} MHz"
    booked = [w.counter_text(k) for k, cat in ((_SW_THERMAL, "thermal"), (_POWER_CAP, "power"))
              if w.readable(k) and w.share(k) >= SLOWDOWN_SHARE and not w.sustained(cat)]
    also = (f"; NVML's counters grew meanwhile ({', '.join(booked)}) with no reason active to confirm them: "
            f"the driver books a lock there, it is not heat or a power cap") if booked else ""
    return Finding(Status.WARN, (f"{CLOCKS_SET_BY_HAND}: SM clock held at {clock} of its {top:g} MHz maximum under "
                                 f"load in {n} of {len(w.busy)} loaded samples with no clock-event reason active "
                                 f"(a lock with `nvidia-smi -lgc`){also}; reset with `sudo nvidia-smi -rgc`"))


def rule_thermal(w: _Window) -> Finding | None:
    """SW thermal slowdown for a real share of the window (the counter), or a thermal reason held."""
    key = w.thermal_counter()
    by_counter = key is not None and w.share(key) >= SLOWDOWN_SHARE
    by_reasons = w.sustained("thermal")
    if not by_counter and not by_reasons:
        return None
    parts = []
    if by_reasons:
        parts.append(f"thermal slowdown active in {w.count('thermal')} of {w.n_r} samples")
    if key is not None and w.seconds(key) > 0:
        note = " (NVML field 75, weaker evidence than field 269)" if key == _POLICY else ""
        parts.append(w.counter_text(key) + note)
    temp = f" at {w.temps[-1]:.0f} °C" if w.temps else ""
    return Finding(Status.WARN, f"thermal throttling{temp}: " + ", ".join(parts))


def rule_power_capping(w: _Window) -> Finding | None:
    """SW power capping for a real share of the window, or a power reason held."""
    by_counter = w.readable(_POWER_CAP) and w.share(_POWER_CAP) >= SLOWDOWN_SHARE
    by_reasons = w.sustained("power")
    if not by_counter and not by_reasons:
        return None
    parts = []
    if by_reasons:
        parts.append(f"power cap active in {w.count('power')} of {w.n_r} samples")
    if w.seconds(_POWER_CAP) > 0:
        parts.append(w.counter_text(_POWER_CAP))
    return Finding(Status.WARN, "power capping: " + ", ".join(parts))


CLOCKS_SET_BY_HAND = "clocks set by hand"


def rule_clocks_set_by_hand(w: _Window) -> Finding | None:
    """Application clocks changed from their default (NVML static facts), or the clock-setting reason
    held over the samples (a lock with `nvidia-smi -lgc`, or application clocks): a warn naming the
    reset. A setting is a state, not a duration: it needs no full window. Unread stays unread (the
    evidence says so), never "at default"."""
    changed, _, _ = app_clocks(w.s.device)
    held = w.sustained("clocks")
    if not changed and not held:
        return None
    parts = []
    if changed:
        parts.append(f"application clocks changed from default ({'; '.join(changed)})")
    if held:
        parts.append(f"clocks held by a clock setting (applications_clocks_setting in {w.count('clocks')} of "
                     f"{w.n_r} samples): locked with `nvidia-smi -lgc` or application clocks set with `-ac`")
    return Finding(Status.WARN, (f"{CLOCKS_SET_BY_HAND}: {'; '.join(parts)}; reset with `sudo nvidia-smi -rgc` "
                                 f"(locked clocks) / `sudo nvidia-smi -rac` (application clocks)"))


def _prochot(b: dict[str, Any]) -> bool:
    return is_number(b.get("prochot")) and b["prochot"] > 0


def _held_at_cap(limit: str) -> Callable[[dict[str, Any]], bool]:
    def test(b: dict[str, Any]) -> bool:
        p, cap = b.get(f"{limit}_w"), b.get(f"{limit}_cap_w")
        return is_number(p) and is_number(cap) and cap > 0 and p >= LIMIT_NEAR * cap
    return test


def _at_brick(b: dict[str, Any]) -> bool:
    return is_number(b.get("dc_input_w")) and b["dc_input_w"] >= BRICK_NEAR * BRICK_W


_LIMIT_NAMES = {"syspl1": "the system power limit (SysPL1)", "pl1": "the package power limit (PL1)"}


def _board_text(w: _Window) -> str | None:
    """The SPBM evidence line: what the board read over the window, or why it was not read (on a
    Spark only: elsewhere there is no such board)."""
    if not w.spbm:
        if w.s.spark is not True:
            return None
        if w.review:
            return "not in the recording (spark_hwmon was not loaded when it was made): PROCHOT and the board's power limits unseen"
        return "not read (spark_hwmon not loaded): PROCHOT and the board's power limits unseen"
    n = len(w.spbm)
    parts = []
    for key, what in (("sys_w", "system"), ("dc_input_w", f"DC input (of the {BRICK_W:g} W brick)"), ("gpu_w", "GPU")):
        r = w.board_range(key)
        if r:
            parts.append(f"{what} {r[0]:.0f}-{r[1]:.0f} W")
    if any(is_number(b.get("prochot")) for b in w.spbm):
        parts.append(f"PROCHOT in {w.board(_prochot)}/{n}")
    lv = w.board_range("pl_level")
    if lv:
        parts.append(f"PL level {lv[0]:.0f}" + (f"-{lv[1]:.0f}" if lv[1] != lv[0] else ""))
    for lim in ("syspl1", "pl1"):
        cap, top = w.board_range(f"{lim}_cap_w"), w.board_range(f"{lim}_max_w")
        if cap:
            lowered = f", max {top[1]:.0f} W" if top else ""
            parts.append(f"{lim} cap {cap[0]:.0f} W{lowered}, at it in {w.board(_held_at_cap(lim))}/{n}")
    return f"{'; '.join(parts) or 'no channel readable'} ({n} samples)"


def rule_board_limits(w: _Window) -> Finding | None:
    """The Spark's own SPBM readings (spark_hwmon) explain a slowdown NVML's counters do not show:
    PROCHOT asserted, a power-limit controller holding the power at its cap, or the DC input at the
    brick's limit, each held (in REASON_MIN_SAMPLES samples and SLOWDOWN_SHARE of those read)."""
    if not w.spbm:
        return None
    n, parts = len(w.spbm), []
    c = w.board(_prochot)
    if w.board_sustained(c):
        parts.append(f"PROCHOT asserted in {c} of {n} samples (the SoC throttled for heat)")
    for lim in ("syspl1", "pl1"):
        c = w.board(_held_at_cap(lim))
        if w.board_sustained(c):
            cap, top = w.board_range(f"{lim}_cap_w"), w.board_range(f"{lim}_max_w")
            lowered = (f", lowered from its {top[1]:.0f} W ceiling (an OS limit is reset by writing 0 to the "
                       f"channel's power*_cap in the spbm hwmon folder)") if cap and top and cap[0] < top[1] else ""
            parts.append(f"{_LIMIT_NAMES[lim]} held the power at its {cap[0]:.0f} W cap in {c} of {n} samples{lowered}"
                         if cap else f"{_LIMIT_NAMES[lim]} held the power in {c} of {n} samples")
    c = w.board(_at_brick)
    if w.board_sustained(c):
        top = w.board_range("dc_input_w")
        parts.append(f"DC input up to {top[1]:.0f} W of the {BRICK_W:g} W brick in {c} of {n} samples "
                     f"(the power supply at its limit)" if top else f"DC input at the brick's limit in {c} of {n} samples")
    if not parts:
        return None
    return Finding(Status.WARN, f"the board limited the GPU where NVML's counters show nothing (spark_hwmon): {'; '.join(parts)}")


def rule_window_not_full(w: _Window) -> Finding | None:
    """No verdict of ok before the window is full (give or take one sampling interval)."""
    if w.full():
        return None
    seen = "no slowdown reason so far" if w.with_reasons else "clock-event reasons unreadable"
    if w.review:
        return Finding(Status.UNKNOWN, (f"cannot tell: the recording covers {_span_text(w.span)} of the "
                                         f"{w.th.window_min:g} min a verdict needs ({seen})"))
    return Finding(Status.UNKNOWN, (f"watching: {_span_text(w.span)} of {w.th.window_min:g} min sampled ({seen}); "
                                     f"a verdict needs the full window (the dashboard keeps watching; headless: "
                                     f"--watch {w.th.window_min:g})"))


def rule_no_load(w: _Window) -> Finding | None:
    """Nothing ran in the last third of the window: no throttling to see. "No load" is a reading too:
    it needs utilization or power draw actually seen, not a window of empty GPU records."""
    _, late = w.thirds()
    if any(w.loaded[i] for i in late):
        return None
    load_seen = sum(1 for i in late if w.util[i] is not None or w.power[i] is not None)
    if load_seen * 2 < len(late):
        why = f"utilization: {w.why('util_gpu')}; power draw: {w.why('power_w')}"
        return Finding(Status.UNKNOWN, (f"cannot tell: GPU load unknown {w.where} (utilization and power draw "
                                         f"unavailable in {len(late) - load_seen} of {len(late)} late samples; {why})"))
    nvml = w.reasons_readable() or w.thermal_counter() is not None
    state = "no slowdown reported" if nvml else "clock-event reasons and counters unreadable"
    return Finding(Status.OK, f"no sustained load {w.where}; {state}")


def rule_clean(w: _Window) -> Finding | None:
    """NVML could say (reasons over the window, or a thermal counter read twice) and said nothing that
    counts: ok, naming what it saw below the thresholds and what it could not see."""
    reasons_ok, key = w.reasons_readable(), w.thermal_counter()
    if not reasons_ok and key is None:
        return None
    said = []
    if reasons_ok:
        minor = sorted((THERMAL_REASONS | POWER_REASONS | HW_REASONS) & set(w.seen))
        said.append(f"no slowdown reason in {w.n_r} samples" if not minor else
                    f"{', '.join(f'{k} in {w.seen[k]}' for k in minor)} of {w.n_r} samples, not sustained")
    else:
        said.append(f"clock-event reasons unreadable ({w.why('reasons_mask')}): judged on the counters")
    if key is not None:
        s = w.seconds(key)
        older = " (field 75: older than nvidia-smi's SW Thermal Slowdown)" if key == _POLICY else ""
        said.append(f"{_LABEL[key]} +{s:.1f} s" + (f" ({_pct(w.share(key))}, under the {_pct(SLOWDOWN_SHARE)} "
                                                    f"that counts)" if s > 0 else "") + older)
    else:
        said.append(f"thermal counters unreadable ({w.counter_why(_SW_THERMAL)}): a slowdown between samples "
                    f"would be missed")
    if w.seconds(_POWER_CAP) > 0:
        said.append(f"SW power capping +{w.seconds(_POWER_CAP):.1f} s ({_pct(w.share(_POWER_CAP))})")
    if w.s.spark is True and not w.spbm:
        said.append("the board's own readings (PROCHOT, power limits) not read: spark_hwmon not loaded")
    nvml = f"NVML reports no sustained slowdown over {w.th.window_min:g} min ({'; '.join(said)})"
    return Finding(Status.OK, _clean_text(w, nvml))


def _clean_text(w: _Window, nvml: str) -> str:
    """The ok text: what was seen, and why the heat is fine."""
    early, late = w.thirds()
    late_t = [w.temp[i] for i in late if w.temp[i] is not None]
    early_t = [w.temp[i] for i in early if w.temp[i] is not None]
    late_p = [w.power[i] for i in late if w.loaded[i] and w.power[i] is not None]
    if not late_t:
        return f"no throttling: {nvml}"
    lt = _mean(late_t)
    power = f"{_mean(late_p):.0f} W at " if late_p else ""
    if early_t and lt - _mean(early_t) >= CLIMB_C and lt < PLATEAU_C[0]:
        return (f"not throttling yet: temperature climbing {_mean(early_t):.0f} → {lt:.0f} °C ({power}{lt:.0f} °C); "
                f"{nvml}; keep watching")
    return f"no throttling: {power}{lt:.0f} °C{_plateau_note(lt, w.s.spark)}; {nvml}"


def _plateau_note(t: float, spark: bool | None = None) -> str:
    if t < PLATEAU_C[0] or spark is False:  # the GB10 plateau says nothing about another GPU
        return ""
    if t <= PLATEAU_C[1]:
        return ", the normal GB10 plateau under load (83-85 °C serving)"
    return ", hotter than the usual 83-85 °C plateau but not slowing"


def rule_heuristic(w: _Window) -> Finding:
    """Neither reasons nor counters readable: judge by the SM clock under load, never by temperature
    alone (80 W at 85 °C is GB10's normal plateau). A clock held near its peak is ok with the gap named;
    a clock down while drawing near the rated power (`thermal.plateau_fraction`) is power capping; a
    clock down while hot or heating is the throttling signature; a clock down while cool and well under
    the rating cannot be explained without NVML's reasons."""
    basis = "(heuristic: clock-event reasons and counters unreadable)"
    early, late = w.thirds()
    late_t = [w.temp[i] for i in late if w.temp[i] is not None]
    early_t = [w.temp[i] for i in early if w.temp[i] is not None]
    if not late_t or not early_t:
        return Finding(Status.UNKNOWN, f"cannot tell {basis}: temperature unavailable ({w.why('temp_c')})")
    busy_clk = [w.clock[i] for i in w.busy if w.clock[i] is not None]
    late_clk = [w.clock[i] for i in late if w.loaded[i] and w.clock[i] is not None]
    if not busy_clk or not late_clk:
        return Finding(Status.UNKNOWN, (f"cannot tell {basis}: SM clock under load unavailable ({w.why('sm_mhz')}); "
                                         f"temperature alone says nothing (GB10 runs 83-85 °C under load)"))
    lc, peak = _mean(late_clk), _pctile(busy_clk, 0.95)
    lt, et = _mean(late_t), _mean(early_t)
    hot, climbing = lt >= w.th.hot_c, (lt - et) >= CLIMB_C
    held = lc >= NEAR_PEAK * peak
    late_p = [w.power[i] for i in late if w.loaded[i] and w.power[i] is not None]
    lp = _mean(late_p) if late_p else None
    if not held and lp is not None and lp >= w.th.plateau_fraction * w.rated:
        return Finding(Status.WARN, (f"power capping signature {basis}: SM clock down to ~{lc:.0f} MHz under load from "
                                      f"{peak:.0f} MHz while drawing {lp:.0f} W, near the {w.rated:g} W rating"))
    if not held and (hot or climbing):
        temp = f"sits at {lt:.0f} °C" if hot else f"climbs {et:.0f} → {lt:.0f} °C"
        return Finding(Status.WARN, (f"throttling signature {basis}: SM clock down to ~{lc:.0f} MHz under load from "
                                      f"{peak:.0f} MHz while temperature {temp}"))
    if not held:
        return Finding(Status.UNKNOWN, (f"cannot tell {basis}: SM clock down to ~{lc:.0f} MHz under load from "
                                         f"{peak:.0f} MHz at {lt:.0f} °C: not heat by the temperature, and the "
                                         f"cause cannot be seen without NVML's reasons or counters"))
    if climbing and lt < PLATEAU_C[0]:
        return Finding(Status.OK, (f"not throttling yet {basis}: temperature climbing {et:.0f} → {lt:.0f} °C with the "
                                    f"SM clock held at ~{lc:.0f} MHz; keep watching"))
    return Finding(Status.OK, (f"no sign of throttling {basis}: SM clock held at ~{lc:.0f} MHz under load at "
                                f"{lt:.0f} °C{_plateau_note(lt, w.s.spark)}; a slowdown between samples cannot be seen"))


def _weight(w: _Window) -> float:
    """How much slowdown a window shows, to rank windows of one status in a review: the largest share of
    the window any cause held the clocks (counter growth, or samples showing a reason), or how far the
    SM clock under load fell from its peak."""
    shares = [w.share(k) for k in (_SW_THERMAL, _POLICY, _POWER_CAP, _HW_THERMAL, _HW_BRAKE)]
    if w.n_r:
        shares += [w.count(c) / w.n_r for c in _CATEGORIES]
    busy_clk = [w.clock[i] for i in w.busy if w.clock[i] is not None]
    if busy_clk:
        _, late = w.thirds()
        late_clk = [w.clock[i] for i in late if w.loaded[i] and w.clock[i] is not None]
        peak = _pctile(busy_clk, 0.95)
        if late_clk and peak > 0:
            shares.append((peak - _mean(late_clk)) / peak)
    return max(shares)


RULES: tuple[Callable[[_Window], Finding | None], ...] = (
    rule_power_delivery_fault, rule_hardware_slowdown, rule_clocks_locked, rule_thermal, rule_power_capping, rule_clocks_set_by_hand,
    rule_board_limits, rule_window_not_full, rule_no_load, rule_clean,
)


def _decide(w: _Window) -> Finding:
    """The first rule that speaks; an ok over a value no GPU can produce is unknown, saying so."""
    found = first_finding(RULES, w) or rule_heuristic(w)
    if found.status in (Status.WARN, Status.FAIL) and not w.full() and not w.review:
        # live, a part-filled window reports what it has seen at once, and says it is part-filled
        found = Finding(found.status, (f"{found.text} [so far: {w.sampled_text()} sampled]"))
    found.weight = _weight(w)
    if found.status is Status.OK and w.bad:
        i, what = w.bad[0]
        more = f" (and {len(w.bad) - 1} more)" if len(w.bad) > 1 else ""
        found = Finding(Status.UNKNOWN, (f"measurement error: {what} at {w.when(i)}{more}, which no GPU or "
                                          f"sampler can produce; otherwise: {found.text}"))
    return found


# -- live: the trailing window; review: every full window of the recording ------------------------

def _review_ends(times: list[float], need_s: float) -> list[int]:
    """The last sample of each window to judge: for the end of the first full window and every minute
    after it, the last sample at or before it (the recording's last sample closes the last window). One
    pass over the samples, whatever time they span; a window that is not full is left to ``_review``."""
    ends: list[int] = []
    for e, t in enumerate(times):
        off = t - times[0] - need_s  # how far past the first full window's end
        boundary = max(0, math.ceil(off / REVIEW_STEP_S)) * REVIEW_STEP_S  # the first at or after this sample
        nxt = times[e + 1] - times[0] - need_s if e + 1 < len(times) else math.inf
        if off <= boundary < nxt:
            ends.append(e)
    return ends


def _review(s: _Series, cfg: Config, src: str, prefix: str) -> tuple[Finding, list[Evidence]]:
    """Judge every full window of a recording; the worst, and when it was. A window left part-filled
    (a recording shorter than the window, or a pause inside it) counts only where it warns or fails,
    and is called part-filled, never full."""
    need_s = cfg.thermal.window_min * 60.0
    times, t0 = s.times, s.times[0]
    ends = _review_ends(times, need_s)
    worst: tuple[Finding, _Window] | None = None
    tally: dict[Status, int] = {}
    gaps = part = 0
    for e in ends:
        lo = bisect.bisect_left(times, times[e] - need_s)
        w = _Window(s, lo, e + 1, cfg, None, review=True)
        f = _decide(w)
        if not w.full():
            if f.status is Status.UNKNOWN:
                gaps += 1  # the recording paused inside this window: the windows around it are judged
                continue
            part += 1
        tally[f.status] = tally.get(f.status, 0) + 1
        if worst is None or f.rank() > worst[0].rank():
            worst = (f, w)
    if worst is None:  # no window full anywhere: the whole recording, as one
        w = _Window(s, 0, len(times), cfg, None, review=True)
        return _decide(w), w.evidence(src, prefix)
    f, w = worst
    n = sum(tally.values())
    full = n - part
    span = f"{when_text(w.times[0], t0)} to {when_text(w.times[-1], t0)}"
    mins = f"{cfg.thermal.window_min:g}-min"
    counts = ", ".join(f"{k} {st.value}" for st, k in sorted(tally.items(), key=lambda kv: -kv[0].severity))
    ev = w.evidence(src, prefix)
    ev.append(Evidence(prefix + "worst window", src, span if w.full() else f"{span} (part-filled: {w.sampled_text()})"))
    skipped = f"; {gaps} left out, a pause in the recording inside them" if gaps else ""
    recorded = offset_text(times[-1] - t0)[1:]
    if not full:
        judged = (f"none full: {recorded} recorded, short of the {cfg.thermal.window_min:g} min a window needs; "
                  f"judged on what there is: {counts}{skipped}")
    else:
        also = f" and {part} part-filled" if part else ""
        judged = f"{full} full {mins} windows{also}, one a minute over {recorded} recorded: {counts}{skipped}"
    ev.append(Evidence(prefix + "windows judged", src, judged))
    if f.status is Status.OK:
        text = f"{f.text} [all {n} {mins} windows of the recording; closest to a threshold: {span}]"
    elif not full:
        text = f"{f.text} [no full {mins} window: the recording covers {_span_min(w.span)}, {span}]"
    else:
        text = f"{f.text} [worst {mins} window: {span}; {tally[f.status]} of {n} windows {f.status.value}]"
    return Finding(f.status, text, f.weight), ev


def _index(g: dict[str, Any], position: int) -> int:
    """A GPU record's index; one that is not an integer is taken as its position in the sample."""
    i = g.get("index", position)
    return i if i.__class__ is int else position


def _trailing(samples: list[Any], seconds: float) -> list[Any]:
    """Live: the samples within ``seconds`` of the last timed one (those without a time are kept for
    the judge to leave out)."""
    end = next((s["t"] for s in reversed(samples) if isinstance(s, dict) and is_number(s.get("t"))), None)
    if end is None:
        return samples
    return [s for s in samples if not (isinstance(s, dict) and is_number(s.get("t"))) or s["t"] >= end - seconds]


def _gpu_rows(samples: list[Any], idx: int) -> tuple[list[dict[str, Any]], list[float], list[tuple[int, str]], list[Any]]:
    """GPU ``idx``'s records and their times, in time order; a sample stamped out of order (earlier than
    the last one kept or later than the one after it, by more than SAMPLE_TIME_SLACK_S) is a clock or
    sampler error: left out, and named as a measurement error next to the sample kept before it."""
    pairs = []
    for s in samples:
        if not isinstance(s, dict) or not is_number(s.get("t")):
            continue
        for i, g in enumerate(s.get("gpus") or []):
            if isinstance(g, dict) and _index(g, i) == idx:
                pairs.append((float(s["t"]), g, s.get("spbm")))
    kept: list[tuple[float, dict[str, Any], Any]] = []
    dropped: list[tuple[float, str]] = []  # (time of the sample kept before it, what)
    for k, (t, g, b) in enumerate(pairs):
        before = bool(kept) and t < kept[-1][0] - SAMPLE_TIME_SLACK_S  # the last sample kept, not a bad one
        after = k + 1 < len(pairs) and t > pairs[k + 1][0] + SAMPLE_TIME_SLACK_S
        if before or after:
            dropped.append((kept[-1][0] if kept else -math.inf, f"a sample stamped out of order (t={t:.0f})"))
        else:
            kept.append((t, g, b))
    kept.sort(key=lambda p: p[0])  # stable: jitter under the slack keeps its recorded order
    times = [t for t, _, _ in kept]
    bad = [(max(0, bisect.bisect_right(times, at) - 1), what) for at, what in dropped]
    return [g for _, g, _ in kept], times, bad, [b for _, _, b in kept]


def judge(r: Readings, cfg: Config) -> Verdict:
    reading = r.get_reading(TELEMETRY)
    data = reading.data
    if not data or not data.get("samples"):
        return unknown_from("G4", reading, "telemetry samples")
    src = reading.source or "telemetry"
    review = bool(data.get("review"))
    recorded: list[Any] = data["samples"]
    samples = recorded if review else _trailing(recorded, cfg.thermal.window_min * 60.0)
    read_t = None if review else data.get("counters_read_t")  # gather(): the samples that read the counters
    indices = sorted({_index(g, i) for s in samples if isinstance(s, dict) for i, g in enumerate(s.get("gpus") or [])
                      if isinstance(g, dict)})
    if not indices:
        why = next((s["errors"]["nvml"] for s in reversed(samples)
                    if isinstance(s, dict) and isinstance(s.get("errors"), dict) and s["errors"].get("nvml")), None)
        reason = why or "no GPU in the samples"
        return Verdict("G4", Status.UNKNOWN, f"cannot tell: no GPU readings ({reason})",
                       (Evidence("GPU telemetry", src, f"unavailable: {reason}"),), FIX)
    results: list[tuple[Finding, list[Evidence]]] = []
    machines: dict[int, tuple[bool | None, str]] = {}
    for idx in indices:
        prefix = f"GPU {idx} " if len(indices) > 1 else ""
        rows, times, time_bad, spbm = _gpu_rows(samples, idx)
        if not rows:
            f = Finding(Status.UNKNOWN, "cannot tell: no timed samples of this GPU")
            results.append((f, [Evidence(prefix + "GPU telemetry", src, "unavailable: no timed samples")]))
            continue
        series = _Series(rows, times, time_bad, spbm)
        machines[idx] = machine_of(r, data, idx)
        series.spark, series.device = machines[idx][0], static_device(r, data, idx)
        if review:
            results.append(_review(series, cfg, src, prefix))
        else:
            w = _Window(series, 0, len(rows), cfg, read_t, review=False)
            results.append((_decide(w), w.evidence(src, prefix)))
    k = worst_index([f for f, _ in results])
    main = results[k][0]
    summary = main.text if len(results) == 1 else f"GPU {indices[k]}: {main.text}"
    evidence = tuple(e for _, evs in results for e in evs)
    spark = machines.get(indices[k], (None, ""))[0]
    return Verdict("G4", main.status, summary, evidence, fix_for(spark, main.text.startswith(CLOCKS_SET_BY_HAND)))


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
    check=("Samples NVML (temperature, power, SM clock, utilization, clock-event reasons, and the five "
           "clock-event counters nvidia-smi shows: SW power capping, sync boost, SW thermal slowdown, HW "
           "thermal slowdown, HW power brake) over a rolling `thermal.window_min` window. Low clocks with low "
           "power under load is a suspected power-delivery fault unless heat is seen. HW thermal slowdown or "
           "HW power brake fails (a second or more; less warns). SW thermal slowdown or power capping warns "
           "once it held the clocks for 1% of the window (counters), or a reason shows in that share of the "
           "samples and in at least two; less is named in an ok, not a headline. Once the window is full (give "
           "or take one sampling interval) and the reasons or the counters were readable, nothing counting is "
           "ok: ~80 W at 83-85 °C is a normal GB10 under load. Where neither can be read, temperature alone is "
           "never a warning: an SM clock held near its peak under load is ok with the gap named; a clock down "
           "while drawing near the rating (`thermal.plateau_fraction`) is power capping, while hot (`thermal.hot_c`) "
           "or heating is the throttling signature, otherwise unknown. Readings no GPU can "
           "produce (temperature outside -40..130 °C, power outside 0..1000 W, SM clock above 4000 MHz, a "
           "counter growing faster than time or going backwards beyond a reset) are measurement errors, never "
           "evidence. A part-filled window (fewer than 10 min sampled, or a recording shorter than the window) "
           "never gives ok: with nothing counting it is unknown (\"watching: N of 10 min sampled\"); a slowdown it "
           "has already seen (a cause holding the clocks for 1% of what was sampled, in two samples at least; a HW "
           "slowdown; the power-delivery pattern) is reported at once, marked \"so far: N of 10 min sampled\" "
           "(reviewing: \"no full window\"). The dashboard, `check` and `check --replay` apply this one rule. "
           "Reviewing a recording (`check --replay`) judges every full window, one a minute, and reports the "
           "worst and when it was. Clocks set by hand warn with the reset (`sudo nvidia-smi -rgc` / `-rac`): "
           "application clocks differing from their defaults (NVML, read with the static facts), or NVML's "
           "clock-setting reason held under load (a `nvidia-smi -lgc` lock); unreadable is said, never taken as "
           "default. On a Spark with the `spark_hwmon` module, the board's own SPBM readings explain what NVML's "
           "counters do not: PROCHOT held, a power limit holding the power at its cap, the DC input at the 240 W "
           "brick (warn); without the module the ok says they were not read. The fix shown fits the machine: DGX Spark advice (airflow, the USB-PD brick) "
           "only where NVML or the DMI product name says GB10 / DGX Spark."),
    fix=FIX,
    intrusive=False,
    cadence_s=5.0,
    probes=("telemetry",),
    feed=Feed.TELEMETRY,
    judge=judge,
    references=("GB10 power draw, limit N/A, clock-event counters: nvitop PR #208, leptonai/gpud PR #1170",
                "NVML field ids 74/76/269/270/271: nvml.h of the 580 drivers; read in one call in ~0.75 ms on an H200",
                "USB-PD low-power fault states on DGX Spark (clocks at 500-850 MHz): spark-gpu-throttle-check",
                "Clocks locked with `nvidia-smi -lgc 0,2000` on Sparks (a DeepSeek recipe report #146); sparkview shows LOCKED",
                "SPBM power telemetry (PROCHOT, PL level, system/DC-input power): antheas/spark_hwmon spbm.c "
                "(fork jaim12005/spark_hwmon)"),
)
