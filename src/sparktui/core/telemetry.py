"""Telemetry samples: their shape, the clock-event reason names, `free`'s arithmetic, ring buffers.

A sample is a plain JSON-able dict, the same whether it comes from the live sampler, a recording
or a test::

    {"t": 1733200000.5,                                  # unix time of the sample
     "gpus": [{"index": 0, "temp_c": 72, "power_w": 80.1, "power_limit_w": None, "sm_mhz": 2405,
               "gr_mhz": 2405, "mem_mhz": None, "util_gpu": 97, "util_mem": 0, "reasons_mask": 32,
               "reasons": ["sw_thermal_slowdown"], "sw_power_cap_ns": 165687000, "sync_boost_ns": 0,
               "sw_thermal_ns": 903158000, "hw_thermal_ns": 0, "hw_power_brake_ns": 0,
               "mem_used": None, "mem_total": None,
               "errors": {"power_limit_w": "NOT_SUPPORTED (Not Supported)", ...}}],
     "mem": {"MemTotal": 130_668_..., "MemAvailable": ..., ...},   # /proc/meminfo (MEM_FIELDS), bytes;
                                                                     # HugePages_Total/Free are counts
     "errors": {"nvml": "nvmlInit failed: ..."}}                     # only when something failed

A field that could not be read is ``None`` and its reason is in the matching ``errors`` map.
This module is pure (no I/O) so judges, the recorder and the dashboard can all use it.
"""

from __future__ import annotations

import bisect
import itertools
import sys
import threading
from collections import deque
from typing import Any, Iterable, Mapping

from sparktui.core.units import GIB  # noqa: F401  (the name the panels and judges import from here)

SAMPLE_SCHEMA = 1

# NVML's clock-event counters, as nvidia-smi -q shows them ("Clocks Event Reasons Counters"): cumulative
# time the clocks were held down, per cause, read as field values (nvml.h: "in ns"; nvidia-smi prints
# microseconds). (sample key, words, NVML field id.) Reasons are a snapshot at each sample; only these
# see what happened between two samples.
CLOCK_EVENT_COUNTERS: tuple[tuple[str, str, int], ...] = (
    ("sw_power_cap_ns", "SW power capping", 74),
    ("sync_boost_ns", "sync boost", 76),
    ("sw_thermal_ns", "SW thermal slowdown", 269),
    ("hw_thermal_ns", "HW thermal slowdown", 270),
    ("hw_power_brake_ns", "HW power brake", 271),
)
# Field 75 (NVML_FI_DEV_PERF_POLICY_THERMAL, nvmlDeviceGetViolationStatus's thermal policy) is an older
# thermal counter, NOT nvidia-smi's "SW Thermal Slowdown": kept only where field 269 cannot be read.
THERMAL_POLICY_COUNTER = ("thermal_policy_ns", "thermal policy counter (field 75)", 75)
# Recordings made before the five counters were read carry two keys: power_viol_ns was the same counter
# as SW power capping (field 74); thermal_viol_ns was field 75. Read them under the new names.
LEGACY_COUNTERS = {"power_viol_ns": "sw_power_cap_ns", "thermal_viol_ns": "thermal_policy_ns"}
COUNTER_FIELDS = tuple(k for k, _, _ in CLOCK_EVENT_COUNTERS) + (THERMAL_POLICY_COUNTER[0],)

GPU_FIELDS = ("temp_c", "power_w", "power_limit_w", "sm_mhz", "gr_mhz", "mem_mhz", "util_gpu", "util_mem",
              "reasons_mask", *COUNTER_FIELDS, "mem_used", "mem_total", *LEGACY_COUNTERS, "energy_mj")
# Fields a sample carries only sometimes (field 75 where 269 fails; an old recording's keys): the ring
# buffers give them back only where they were there.
OPTIONAL_GPU_FIELDS = frozenset({THERMAL_POLICY_COUNTER[0], *LEGACY_COUNTERS, "energy_mj"})  # energy: since 2026-12-05
# The /proc/meminfo fields a sample and the meminfo reading keep: what `free` shows, and what G3
# needs to say what holds the pool (process memory, tmpfs, locked pages, hugepages, cache, the kernel).
MEM_FIELDS = ("MemTotal", "MemFree", "MemAvailable", "Buffers", "Cached", "SReclaimable", "Shmem",
              "SwapTotal", "SwapFree", "KReclaimable", "AnonPages", "Unevictable", "Mlocked", "CmaTotal", "CmaFree",
              "SwapCached", "HugePages_Total", "HugePages_Free", "Hugepagesize", "Dirty", "Mapped")
# Counts of hugepages, not sizes: meminfo prints them without "kB" (bytes = count * Hugepagesize).
MEM_COUNT_FIELDS = ("HugePages_Total", "HugePages_Free")
MEM_BYTE_FIELDS = tuple(k for k in MEM_FIELDS if k not in MEM_COUNT_FIELDS)

# nvmlClocksEventReason* bits (nvml.h); names as nvidia-smi -q prints them, in snake case.
REASON_BITS: tuple[tuple[int, str], ...] = (
    (0x001, "gpu_idle"),
    (0x002, "applications_clocks_setting"),
    (0x004, "sw_power_cap"),
    (0x008, "hw_slowdown"),
    (0x010, "sync_boost"),
    (0x020, "sw_thermal_slowdown"),
    (0x040, "hw_thermal_slowdown"),
    (0x080, "hw_power_brake_slowdown"),
    (0x100, "display_clock_setting"),
    (0x200, "board_limit"),
    (0x400, "reliability"),
)
THERMAL_REASONS = frozenset({"sw_thermal_slowdown", "hw_thermal_slowdown"})
POWER_REASONS = frozenset({"sw_power_cap", "hw_power_brake_slowdown"})
HW_REASONS = frozenset({"hw_slowdown", "hw_thermal_slowdown", "hw_power_brake_slowdown"})
SLOWDOWN_REASONS = THERMAL_REASONS | POWER_REASONS | HW_REASONS


def counter_ns(g: dict[str, Any], key: str) -> tuple[Any, str | None]:
    """A clock-event counter of one GPU record: (value, reason it is unavailable), reading a recording
    made before the five counters under its legacy key (LEGACY_COUNTERS)."""
    v = g.get(key)
    errors = g.get("errors") or {}
    if v is None:
        for old, new in LEGACY_COUNTERS.items():
            if new == key and g.get(old) is not None:
                return g[old], None
    why = errors.get(key) if isinstance(errors, dict) else None
    if v is None and why is None and isinstance(errors, dict):
        why = next((errors[old] for old, new in LEGACY_COUNTERS.items() if new == key and errors.get(old)), None)
    return v, why


def decode_reasons(mask: int | None) -> list[str] | None:
    """Clock-event bitmask -> names; unknown bits show as ``bit_0x...``."""
    if mask is None:
        return None
    names, rest = [], int(mask)
    for bit, name in REASON_BITS:
        if rest & bit:
            names.append(name)
            rest &= ~bit
    b = 1
    while rest:
        if rest & b:
            names.append(f"bit_{b:#x}")
            rest &= ~b
        b <<= 1
    return names


def free_gib(mem: Mapping[str, Any]) -> dict[str, float | None]:
    """/proc/meminfo bytes -> the columns of ``free`` in GiB (floats).

    procps-ng 4.x (checked against free 4.0.2's man page and output): used = MemTotal - MemAvailable;
    buff/cache = Buffers + Cached + SReclaimable; shared = Shmem. procps-ng 3.3.x computed used as
    total - free - buffers - cache instead, which differs by the unreclaimable part of the cache.
    """

    def g(*keys: str) -> float | None:
        if any(mem.get(k) is None for k in keys):
            return None
        return sum(mem[k] for k in keys) / GIB

    total, avail = mem.get("MemTotal"), mem.get("MemAvailable")
    used = (total - avail) / GIB if total is not None and avail is not None else None
    buffcache = None
    if mem.get("Buffers") is not None and mem.get("Cached") is not None:
        buffcache = (mem["Buffers"] + mem["Cached"] + (mem.get("SReclaimable") or 0)) / GIB
    swap_used = None
    if mem.get("SwapTotal") is not None and mem.get("SwapFree") is not None:
        swap_used = (mem["SwapTotal"] - mem["SwapFree"]) / GIB
    return {"total": g("MemTotal"), "used": used, "free": g("MemFree"), "shared": g("Shmem"),
            "buff_cache": buffcache, "available": g("MemAvailable"), "swap_total": g("SwapTotal"),
            "swap_used": swap_used, "swap_free": g("SwapFree")}


def render_free_g(mem: Mapping[str, Any]) -> str:
    """The two-row table ``free -g`` prints (GiB, truncated to whole numbers as procps does)."""
    f = free_gib(mem)

    def c(v: float | None) -> str:
        return f"{int(v):>11}" if v is not None else f"{'?':>11}"

    head = f"{'':<8}{'total':>12}{'used':>12}{'free':>12}{'shared':>12}{'buff/cache':>12}{'available':>12}"
    row = f"{'Mem:':<8} {c(f['total'])} {c(f['used'])} {c(f['free'])} {c(f['shared'])} {c(f['buff_cache'])} {c(f['available'])}"
    swap = f"{'Swap:':<8} {c(f['swap_total'])} {c(f['swap_used'])} {c(f['swap_free'])}"
    return "\n".join([head, row, swap])


def sample_window(samples: list[dict[str, Any]], seconds: float) -> list[dict[str, Any]]:
    """The samples within ``seconds`` of the last one (the rolling window a judge looks at)."""
    if not samples:
        return []
    end = samples[-1].get("t") or 0.0
    return [s for s in samples if (s.get("t") or 0.0) >= end - seconds]


class Trend:
    """Per-minute extremes of the plotted series over the whole session, for when the full-rate
    history (an hour at 1 Hz) no longer reaches back to the start: someone returning after a night
    sees the night. Bounded too (three days of minutes), and which extreme is kept follows what
    matters: the hottest, hungriest and busiest moment, the lowest clock and the least memory available."""

    KEEP = {"g0.temp_c": max, "g0.power_w": max, "g0.sm_mhz": min, "g0.util_gpu": max, "mem.MemAvailable": min}

    def __init__(self, bucket_s: float = 60.0, maxlen: int = 3 * 24 * 60) -> None:
        self.bucket_s = bucket_s
        self.series: dict[str, deque] = {k: deque(maxlen=maxlen) for k in self.KEEP}
        # the other extreme of each minute, so a span's min and max are both exact (the hottest
        # minute's max is not the coolest reading of the night)
        self.other: dict[str, deque] = {k: deque(maxlen=maxlen) for k in self.KEEP}
        self.first_t: float | None = None
        self._bucket: int | None = None
        self._acc: dict[str, Any] = {}
        self._acc_other: dict[str, Any] = {}

    def add(self, t: float | None, flat: dict[str, Any]) -> None:
        if t is None:
            return
        b = int(t // self.bucket_s)
        if self._bucket is None:
            self._bucket, self.first_t = b, t
        elif b > self._bucket:
            for store, acc in ((self.series, self._acc), (self.other, self._acc_other)):
                for key, d in store.items():
                    d.append(acc.get(key))
                    # minutes with no sample (paused, suspended) stay visible as gaps, within the bound
                    d.extend([None] * min(b - self._bucket - 1, d.maxlen or 0))
            self._acc, self._acc_other, self._bucket = {}, {}, b
        for key, pick in self.KEEP.items():
            v = flat.get(key)
            if v is not None:
                a, o = self._acc.get(key), self._acc_other.get(key)
                self._acc[key] = v if a is None else pick(a, v)
                self._acc_other[key] = v if o is None else (min if pick is max else max)(o, v)

    def values(self, key: str) -> list[Any]:
        """One series, a value per minute, oldest first, the current minute last."""
        return [*self.series.get(key, ()), self._acc.get(key)]

    def other_values(self, key: str) -> list[Any]:
        """The other extreme of each minute (the minimum of a max-kept series), aligned with values()."""
        return [*self.other.get(key, ()), self._acc_other.get(key)]


class History:
    """Bounded ring buffers, one per series (``deque(maxlen=...)``): memory stays flat forever.

    Series are ``t``, ``g{i}.{field}`` and ``mem.{key}``; per-sample error maps are kept as one
    shared object while they do not change, and a value equal to the previous one reuses its
    object, so a 3600-sample history of a GB10 stays within a few MB.

    The sampler thread appends while the dashboard, the exporter and the judges read: one lock
    makes an append whole to every reader. Without it a read could take one column before an
    append and the next after it (a sample's temperature beside the next sample's power), and a
    reader met "deque mutated during iteration" (it crashed the dashboard on a loaded machine).
    Read through the methods, not ``series``.
    """

    def __init__(self, maxlen: int) -> None:
        self._lock = threading.RLock()
        self.maxlen = int(maxlen)
        self.series: dict[str, deque] = {}
        self._errors: deque = deque(maxlen=self.maxlen)
        self._ngpu: deque = deque(maxlen=self.maxlen)
        self.appended = 0  # total ever appended (the buffers hold the last maxlen)
        self.latest: dict[str, Any] | None = None
        self._memo: deque = deque()  # the dicts samples() built last, ending at _memo_end
        self._memo_end = 0
        self.trend = Trend()  # the whole session, a point per minute

    def __len__(self) -> int:
        return len(self._ngpu)

    def _series(self, key: str) -> deque:
        d = self.series.get(key)
        if d is None:
            d = deque([None] * len(self._ngpu), maxlen=self.maxlen)
            self.series[key] = d
        return d

    def append(self, sample: dict[str, Any]) -> None:
        with self._lock:
            self._append(sample)

    def _append(self, sample: dict[str, Any]) -> None:
        flat: dict[str, Any] = {"t": sample.get("t")}
        errors: dict[str, str] = dict(sample.get("errors") or {})
        gpus = sample.get("gpus") or []
        for i, g in enumerate(gpus):
            for f in GPU_FIELDS:
                if f not in OPTIONAL_GPU_FIELDS or g.get(f) is not None:
                    flat[f"g{i}.{f}"] = g.get(f)
            for f, why in (g.get("errors") or {}).items():
                errors[f"g{i}.{f}"] = why
        for k, v in (sample.get("mem") or {}).items():
            flat[f"mem.{k}"] = v
        spbm = sample.get("spbm")  # the board's SPBM readings (probes/spark_hwmon.py), where loaded
        for k, v in (spbm.items() if isinstance(spbm, dict) else ()):
            flat[f"spbm.{k}"] = v
        for key in flat:
            self._series(key)
        for key, d in self.series.items():
            v = flat.get(key)
            if d and d[-1] == v and type(d[-1]) is type(v):
                v = d[-1]  # share the previous object: constant series cost one slot per sample
            d.append(v)
        prev = self._errors[-1] if self._errors else None
        self._errors.append(prev if prev == errors else {k: sys.intern(v) if isinstance(v, str) else v
                                                          for k, v in errors.items()})
        self._ngpu.append(len(gpus))
        self.appended += 1
        self.latest = sample
        self.trend.add(flat.get("t"), flat)

    @property
    def wrapped(self) -> bool:
        """The ring buffers have dropped the session's first samples (then plot the trend)."""
        return self.appended > len(self._ngpu)

    def plotted(self, key: str) -> list[Any]:
        """What a session-long plot shows: every sample while they all fit, else a point a minute."""
        with self._lock:
            return self.trend.values(key) if self.wrapped and key in Trend.KEEP else self.values(key)

    def trend_values(self, key: str) -> tuple[list[Any], list[Any]]:
        """The per-minute series of ``key`` and its other extreme (Trend.values, other_values), together."""
        with self._lock:
            return self.trend.values(key), self.trend.other_values(key)

    def oldest_t(self) -> float | None:
        """The time of the oldest sample the ring buffer still holds."""
        with self._lock:
            times = self.series.get("t")
            return times[0] if times else None

    def values_from(self, key: str, start: int) -> list[Any]:
        """One series from buffer position ``start`` on (a plot's window, without copying the rest)."""
        with self._lock:
            return list(itertools.islice(self.series.get(key, ()), start, None))

    def extend(self, samples: Iterable[dict[str, Any]]) -> None:
        for s in samples:
            self.append(s)

    def values(self, key: str, last: int | None = None) -> list[Any]:
        """One series (e.g. ``"g0.temp_c"``, ``"mem.MemAvailable"``), oldest first."""
        with self._lock:
            d = self.series.get(key)
            vals = list(d) if d is not None else []
        return vals[-last:] if last else vals

    def samples(self, last_s: float | None = None) -> list[dict[str, Any]]:
        """Rebuild sample dicts (oldest first); ``last_s`` keeps only the trailing window.

        The dashboard asks for the same trailing window every few seconds: the dicts built last
        time are kept (as long as that window) and only what was appended since is built, so the
        cost follows the new samples, not the window (600 rebuilt dicts took 7.5 ms). Callers get
        shared dicts: judges are pure and do not change them."""
        with self._lock:
            return self._samples(last_s)

    def _samples(self, last_s: float | None) -> list[dict[str, Any]]:
        n = len(self._ngpu)
        if n == 0:
            return []
        want = n - self._window_start(last_s)
        memo, end = self._memo, self._memo_end
        new = self.appended - end
        if end > self.appended or new >= n or end - len(memo) > self.appended - want:
            memo.clear()  # nothing reusable: build the whole window
            new = want
        memo.extend(self._rebuild(n - new))
        self._memo_end = self.appended
        while len(memo) > want:
            memo.popleft()
        return list(memo)

    def _window_start(self, last_s: float | None) -> int:
        """Index of the first sample inside the trailing ``last_s`` seconds (0: all of them)."""
        times = self.series.get("t")
        if last_s is None or not times or times[-1] is None:
            return 0
        cut = times[-1] - last_s
        ts = list(times)
        if None not in ts:
            return bisect.bisect_left(ts, cut)  # times only grow
        start = 0
        while start < len(ts) and (ts[start] or 0.0) < cut:
            start += 1
        return start

    def _rebuild(self, lo: int) -> list[dict[str, Any]]:
        """Sample dicts for buffer positions lo..end, reading only that tail of each series."""
        n = len(self._ngpu)
        k = n - lo
        if k <= 0:
            return []

        def tail(d: deque) -> list:
            return list(itertools.islice(reversed(d), k))[::-1]

        cols = {key: tail(d) for key, d in self.series.items()}
        times = cols.get("t", [None] * k)
        mem_keys = [key for key in cols if key.startswith("mem.")]
        spbm_keys = [key for key in cols if key.startswith("spbm.")]
        errs, ngpus = tail(self._errors), tail(self._ngpu)
        split_cache: dict[int, tuple[dict[str, str], dict[int, dict[str, str]]]] = {}
        out = []
        for i in range(k):
            e = errs[i]
            split = split_cache.get(id(e))  # consecutive samples share one error map object
            if split is None:
                sample_errors: dict[str, str] = {}
                gpu_errors: dict[int, dict[str, str]] = {}
                for key, why in e.items():
                    if key.startswith("g") and "." in key and key[1:key.index(".")].isdigit():
                        gi = int(key[1:key.index(".")])
                        gpu_errors.setdefault(gi, {})[key[key.index(".") + 1:]] = why
                    else:
                        sample_errors[key] = why
                split = split_cache[id(e)] = (sample_errors, gpu_errors)
            sample_errors, gpu_errors = split
            gpus = []
            for gi in range(ngpus[i]):
                g: dict[str, Any] = {"index": gi}
                for f in GPU_FIELDS:
                    col = cols.get(f"g{gi}.{f}")
                    if f not in OPTIONAL_GPU_FIELDS or (col is not None and col[i] is not None):
                        g[f] = col[i] if col is not None else None
                g["reasons"] = decode_reasons(g["reasons_mask"])
                g["errors"] = dict(gpu_errors.get(gi, {}))
                gpus.append(g)
            smp: dict[str, Any] = {"t": times[i], "gpus": gpus,
                                   "mem": {key[4:]: cols[key][i] for key in mem_keys if cols[key][i] is not None}}
            spbm = {key[5:]: cols[key][i] for key in spbm_keys if cols[key][i] is not None}
            if spbm:
                smp["spbm"] = spbm
            if sample_errors:
                smp["errors"] = dict(sample_errors)
            out.append(smp)
        return out
