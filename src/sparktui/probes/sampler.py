"""Live telemetry: one NVML session, sampled on a fixed interval, into bounded ring buffers.

Each field is read on its own (``NvmlSession.get``): NOT_SUPPORTED, N/A, a lost GPU or a missing
library costs that field, recorded as ``None`` with the reason, never the sample. A field that
answered NOT_SUPPORTED once is not asked again (the answer is a property of the device), which
keeps a GB10 sample cheap. The five clock-event counters nvidia-smi shows (what throttling leaves
behind between two samples) are the exception: they cost ~0.75 ms, so they come in one batched
field-values call every COUNTERS_EVERY_S, each value with its own return code. No subprocess, no
CUDA context, no busy loop: the sampling thread waits on an Event with a timeout.
"""

from __future__ import annotations

import os
import queue
import re
import sys
import threading
import time
from typing import Any, Callable

from sparktui.core import shapes
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.telemetry import MEM_FIELDS, History, decode_reasons
from sparktui.probes.host import MEMINFO
from sparktui.probes.link import RdmaReader
from sparktui.probes.spark_hwmon import SpbmReader
from sparktui.probes.nvml import Field, NvmlSession, describe_error, static_info
from sparktui.probes.declared import Probe

SampleCallback = Callable[[dict[str, Any]], None]

_NOT_SUPPORTED_PREFIX = "NOT_SUPPORTED"
_MISSING_FN = ("FUNCTION_NOT_FOUND", "not in this nvidia-ml-py")


def _w(mw: Any) -> float:
    return round(float(mw) / 1000.0, 3)


# NVML's clock-event counters (core/telemetry.py CLOCK_EVENT_COUNTERS; nvml.h: cumulative, in ns) are
# the slow fields: one nvmlDeviceGetFieldValues call for 9 fields took ~1.7 ms on a real H200, two
# single-field calls ~0.76 ms, nvmlDeviceGetViolationStatus ~0.69 ms a policy (every
# other field 2-8 us). So all five are asked in ONE field-values call, and only every COUNTERS_EVERY_S:
# a cumulative counter loses nothing by being read less often (G4 judges its growth over minutes).
# Between reads a sample carries the last values read, so a recording or a scrape never has a gap.
# Measured here on an H200 (driver 580.159.04): the five in one call 746 us (with field 75 as well,
# 1474 us: so 75 is asked only until 269 is seen to answer); a sample without them 88 us, with them 955 us.
COUNTERS_EVERY_S = 10.0
# (sample key, nvidia-ml-py constant, field id, nvmlDeviceGetViolationStatus policy or None). The ids
# are those of nvml.h from the 580 drivers GB10 ships with (all answer on an H200, driver
# 580.159.04); an nvidia-ml-py without the constant gets the number. A field a device answers
# NOT_SUPPORTED for is recorded None with the reason (never 0) and not asked again.
_COUNTERS = (
    ("sw_power_cap_ns", "NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP", 74, "NVML_PERF_POLICY_POWER"),
    ("sync_boost_ns", "NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST", 76, "NVML_PERF_POLICY_SYNC_BOOST"),
    ("sw_thermal_ns", "NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN", 269, None),
    ("hw_thermal_ns", "NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN", 270, None),
    ("hw_power_brake_ns", "NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN", 271, None),
)
# Field 75, the older thermal policy counter (not nvidia-smi's SW Thermal Slowdown): asked only where
# field 269 cannot be read, as weaker thermal evidence, and through the violation-status fallback.
_THERMAL_POLICY = ("thermal_policy_ns", "NVML_FI_DEV_PERF_POLICY_THERMAL", 75, "NVML_PERF_POLICY_THERMAL")
_NO_FIELD_VALUES = "not readable without nvmlDeviceGetFieldValues ({why})"
# NVML failing mid-run (a driver reload, a GPU off the bus: every call UNINITIALIZED, GPU_IS_LOST or
# UNKNOWN) leaves the session's handles useless; the session is re-opened (nvmlShutdown, nvmlInit,
# new handles) after REOPEN_FIRST_S, then ever less often, at most REOPEN_MAX_S apart.
REOPEN_FIRST_S = 1.0
REOPEN_MAX_S = 60.0
_LIVE_FIELDS = ("temp_c", "power_w", "sm_mhz", "gr_mhz", "util_gpu", "reasons_mask", "mem_used")


class GpuReader:
    """Reads one GPU's fields through the session; remembers which fields the device lacks."""

    def __init__(self, session: NvmlSession, index: int, handle: Any, *,
                 counters_every_s: float = COUNTERS_EVERY_S, clock: Callable[[], float] = time.monotonic) -> None:
        self.s, self.index, self.h = session, index, handle
        self.unsupported: dict[str, str] = {}  # field -> reason, asked once
        self.counters_every_s, self.clock = counters_every_s, clock
        self.counter_fields: bool | None = None  # field-values path usable? None: not tried yet
        self._counters_due = 0.0
        self._last_counters: dict[str, Field] = {}
        self.counters_fresh = False  # did the last read() read the counters (not carry them)?
        self._last_energy: Field | None = None
        self._energy_due = 0.0
        nv = session.nv
        self.k = {
            "temp": getattr(nv, "NVML_TEMPERATURE_GPU", 0),
            "sm": getattr(nv, "NVML_CLOCK_SM", 1),
            "gr": getattr(nv, "NVML_CLOCK_GRAPHICS", 0),
            "mem": getattr(nv, "NVML_CLOCK_MEM", 2),
        }
        self._fv_unsupported: dict[str, str] = {}  # counter -> why its field value is not asked again
        self._fv_batch: list[tuple[str, int]] = []  # the counters' field ids still asked
        self._fv_settled = False  # has a field-values call answered (and settled the batch)?
        self._fv_why: str | None = None  # why the field-values path is not used

    def _get(self, name: str, calls: list[tuple[str, tuple, Callable[[Any], Any] | None]]) -> Field:
        """First call that answers wins; a function this driver/binding lacks falls through."""
        if name in self.unsupported:
            return Field(error=self.unsupported[name])
        first: Field | None = None
        for fn, args, convert in calls:
            f = self.s.get(fn, self.h, *args, convert=convert)
            if f.error is None:
                return f
            first = first or f
            if not any(m in f.error for m in _MISSING_FN):
                break
        assert first is not None
        if first.error and first.error.startswith(_NOT_SUPPORTED_PREFIX):
            self.unsupported[name] = sys.intern(first.error)
        return first

    def read(self) -> dict[str, Any]:
        k = self.k
        out: dict[str, Any] = {"index": self.index}
        errors: dict[str, str] = {}

        def put(name: str, f: Field) -> None:
            out[name] = f.value
            if f.error is not None:
                errors[name] = sys.intern(f.error)

        put("temp_c", self._get("temp_c", [("nvmlDeviceGetTemperature", (k["temp"],), int),
                                           ("nvmlDeviceGetTemperatureV", (k["temp"],), int)]))
        put("power_w", self._get("power_w", [("nvmlDeviceGetPowerUsage", (), _w)]))
        put("power_limit_w", self._get("power_limit_w", [("nvmlDeviceGetEnforcedPowerLimit", (), _w)]))
        put("energy_mj", self._energy())  # mJ since the driver loaded: on the counters' cadence
        put("sm_mhz", self._get("sm_mhz", [("nvmlDeviceGetClockInfo", (k["sm"],), int)]))
        put("gr_mhz", self._get("gr_mhz", [("nvmlDeviceGetClockInfo", (k["gr"],), int)]))
        put("mem_mhz", self._get("mem_mhz", [("nvmlDeviceGetClockInfo", (k["mem"],), int)]))
        util = self._get("util", [("nvmlDeviceGetUtilizationRates", (), lambda u: (int(u.gpu), int(u.memory)))])
        put("util_gpu", Field(util.value[0], None) if util.error is None else util)
        put("util_mem", Field(util.value[1], None) if util.error is None else util)
        put("reasons_mask", self._get("reasons", [("nvmlDeviceGetCurrentClocksEventReasons", (), int),
                                                  ("nvmlDeviceGetCurrentClocksThrottleReasons", (), int)]))
        out["reasons"] = decode_reasons(out["reasons_mask"])
        for name, f in self._counters().items():
            put(name, f)
        mem = self._get("memory", [("nvmlDeviceGetMemoryInfo", (), lambda m: (int(m.used), int(m.total)))])
        put("mem_used", Field(mem.value[0], None) if mem.error is None else mem)
        put("mem_total", Field(mem.value[1], None) if mem.error is None else mem)
        out["errors"] = errors
        return out


    def _energy(self) -> Field:
        """The energy counter (mJ, cumulative), read every ``counters_every_s`` and carried
        between: on the lent H100 the call took ~4 ms, 87 % of the sampler thread's CPU when read
        each second, and its one reader (the DCGM-named export, scraped every 15 s or so) needs
        no more."""
        now = self.clock()
        if self._last_energy is None or now >= self._energy_due:
            self._energy_due = now + self.counters_every_s
            self._last_energy = self._get("energy_mj", [("nvmlDeviceGetTotalEnergyConsumption", (), int)])
        return self._last_energy

    def read_counters_next(self) -> None:
        """Make the next read() read the counters whatever their cadence: the end of a short window
        needs a second reading, or its growth cannot be told from the value its first sample read."""
        self._counters_due = float("-inf")

    def _counters(self) -> dict[str, Field]:
        """The clock-event counters (ns, cumulative): read now, or the last read when not due."""
        now = self.clock()
        self.counters_fresh = now >= self._counters_due
        if not self.counters_fresh:
            return self._last_counters
        self._counters_due = now + self.counters_every_s
        got = self._counters_by_field_values() if self.counter_fields is not False else None
        if got is not None:
            self.counter_fields = True
        else:
            self.counter_fields = False
            got = self._counters_by_violation_status()
        self._last_counters = got
        return got

    def _counters_by_violation_status(self) -> dict[str, Field]:
        """The fallback where field values are unsupported: nvmlDeviceGetViolationStatus gives SW power
        capping, sync boost and the field-75 thermal policy counter; the HW counters and SW thermal
        slowdown have no such call, and say so."""
        nv = self.s.nv
        viol = lambda v: int(v.violationTime)  # noqa: E731 - nanoseconds, cumulative
        why = self._fv_why or "unsupported"
        out: dict[str, Field] = {}
        for name, _, _, policy in (*_COUNTERS, _THERMAL_POLICY):
            if policy is None or getattr(nv, policy, None) is None:
                out[name] = Field(error=_NO_FIELD_VALUES.format(why=why))
            else:
                out[name] = self._get(name, [("nvmlDeviceGetViolationStatus", (getattr(nv, policy),), viol)])
        return out

    def _counters_by_field_values(self) -> dict[str, Field] | None:
        """All counters in one nvmlDeviceGetFieldValues call; None when the driver cannot."""
        nv = self.s.nv
        first = not self._fv_settled
        if first:
            # Until a call answers, field 75 is asked too: kept only if field 269 (SW thermal slowdown) fails.
            self._fv_batch = [(name, getattr(nv, const, fid)) for name, const, fid, _ in (*_COUNTERS, _THERMAL_POLICY)]
            self._fv_unsupported = {}
        batch = self._fv_batch
        out: dict[str, Field] = {name: Field(error=why) for name, why in self._fv_unsupported.items()}
        if not batch:
            return out
        f = self.s.get("nvmlDeviceGetFieldValues", self.h, [fid for _, fid in batch], convert=list)
        if f.error is not None:
            if any(m in f.error for m in _MISSING_FN) or f.error.startswith(_NOT_SUPPORTED_PREFIX):
                self._fv_why = sys.intern(f"nvmlDeviceGetFieldValues: {f.error}")
                return None  # this driver lacks the path: use the other one from now on
            out.update({name: Field(error=f.error) for name, _ in batch})  # e.g. GPU lost: the reason, every field
            return out
        for (name, _), v in zip(batch, f.value):
            code = int(getattr(v, "nvmlReturn", -1))
            if code == 0:
                out[name] = Field(int(v.value.ullVal))
                continue
            why = sys.intern(describe_error(nv, nv.NVMLError(code)))
            out[name] = Field(error=why)
            if why.startswith(_NOT_SUPPORTED_PREFIX) or code == getattr(nv, "NVML_ERROR_INVALID_ARGUMENT", None):
                self._fv_unsupported[name] = why  # a property of the device (or an id this driver lacks)
        if first:
            if all(out[name].error is not None for name, _, _, _ in _COUNTERS):
                self._fv_why = sys.intern("no counter answered: " + (out["sw_thermal_ns"].error or "?"))
                return None  # never answered here: fall back to the violation-status call
            self._fv_settled = True
            if out["sw_thermal_ns"].error is None:  # field 269 answers: field 75 is not needed
                out.pop(_THERMAL_POLICY[0], None)
                self._fv_unsupported.pop(_THERMAL_POLICY[0], None)
                batch = [(n, fid) for n, fid in batch if n != _THERMAL_POLICY[0]]
        self._fv_batch = [(n, fid) for n, fid in batch if n not in self._fv_unsupported]
        return out


_MEM_LINE = re.compile(rb"^(" + b"|".join(k.encode() for k in MEM_FIELDS) + rb"):\s+(\d+)( kB)?", re.M)


class MemReader:
    """The sampled /proc/meminfo fields, read cheaply: the file stays open and is re-read with
    pread (procfs regenerates it on every read), and only the wanted lines are parsed. About a
    third of the cost of open + read + a full parse, on every sample for as long as it runs."""

    def __init__(self, path: str = MEMINFO) -> None:
        self.path = path
        self.keep_open = path.startswith("/proc/")  # a test's regular file may be replaced between reads
        self._fd: int | None = None

    def read(self) -> tuple[dict[str, int], str | None]:
        try:
            if self.keep_open:
                if self._fd is None:
                    self._fd = os.open(self.path, os.O_RDONLY)
                raw = os.pread(self._fd, 65536, 0)
            else:
                with open(self.path, "rb") as f:
                    raw = f.read()
        except OSError as e:
            self.close()
            return {}, sys.intern(f"cannot read {self.path}: {e.strerror or e}")
        return {k.decode(): int(v) * 1024 if unit else int(v) for k, v, unit in _MEM_LINE.findall(raw)}, None

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            except OSError:
                pass
            self._fd = None


def read_mem(path: str = MEMINFO) -> tuple[dict[str, int], str | None]:
    """One read of the sampled meminfo fields (bytes), or the reason it failed."""
    r = MemReader(path)
    try:
        return r.read()
    finally:
        r.close()


class Sampler:
    """Samples NVML and /proc/meminfo every ``interval_s`` into a ``History``.

    ``sample_once()`` takes one sample now (any thread); ``start()`` runs a daemon thread that
    samples until ``stop()``; ``pause()``/``resume()`` hold it without stopping. New samples go to
    ``on_sample`` and/or ``out_queue`` (put without blocking; a full queue drops the sample and
    counts it in ``dropped``), and process scans (every ``processes_every_s``, if set) to
    ``on_processes``. Callback errors are counted, never raised into the loop.
    """

    def __init__(self, cfg: Config | None = None, *, interval_s: float | None = None, history: int | None = None,
                 on_sample: SampleCallback | None = None, out_queue: "queue.Queue | None" = None,
                 on_processes: SampleCallback | None = None, processes_every_s: float | None = None,
                 meminfo_path: str = MEMINFO, clock: Callable[[], float] = time.time, sys_root: str = "/") -> None:
        self.cfg = cfg or Config()
        self.interval_s = float(interval_s or self.cfg.telemetry.interval_s)
        self.history = History(history or self.cfg.telemetry.history)
        self.on_sample, self.out_queue, self.on_processes = on_sample, out_queue, on_processes
        self.processes_every_s = processes_every_s
        self.meminfo_path = meminfo_path
        self.mem_reader = MemReader(meminfo_path)
        # RDMA (ConnectX-7) traffic never shows in /proc/net/dev: its port counters, 2 sysfs files a port
        # a sample; "rdma" is in a sample only where there is an RDMA device.
        self.rdma_reader = RdmaReader(sys_root)
        # The Spark's own SPBM power readings (spark_hwmon, G4): 13 small sysfs files a sample where the
        # module is loaded; "spbm" is in a sample only then (looked for again every minute while absent).
        self.spbm_reader = SpbmReader(sys_root)
        self.clock = clock
        self.session: NvmlSession | None = None
        self.readers: list[GpuReader] = []
        self.latest_processes: dict[str, Any] | None = None
        self.dropped = 0
        self.callback_errors = 0
        self.last_callback_error: str | None = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._wake = threading.Event()
        self._paused = False
        self._thread: threading.Thread | None = None
        self._next_processes = 0.0
        self.nvml_worked = False  # has a sample read NVML? (until then a failure is "unavailable", not an outage)
        self.nvml_down_since: float | None = None  # sample time NVML started failing mid-run; None: it answers
        self.reopens = 0  # sessions re-opened while it failed
        self._reopen_wait = REOPEN_FIRST_S
        self._reopen_at = 0.0  # monotonic

    # -- session -------------------------------------------------------------------------------
    def open(self) -> NvmlSession:
        """Open the one NVML session (idempotent). A missing library is recorded, not raised."""
        if self.session is None:
            self.session = NvmlSession()
            self.readers = [GpuReader(self.session, i, h) for i, h in enumerate(self.session.handles)]
        return self.session

    def close(self) -> None:
        self.mem_reader.close()
        if self.session is not None:
            self.session.close()

    def static(self) -> dict[str, Any]:
        """Driver, CUDA and device facts for a recording header."""
        s = self.open()
        if not s.open:
            return {"error": s.error or "NVML unavailable"}
        try:
            return static_info(s)
        except Exception as e:  # never let a header cost the recording
            return {"error": f"static info failed: {e!r}"}

    # -- sampling ------------------------------------------------------------------------------
    def take(self) -> dict[str, Any]:
        """One sample (not stored). Never raises."""
        s = self._reopen() if self.nvml_down_since is not None and time.monotonic() >= self._reopen_at else self.open()
        sample: dict[str, Any] = {"t": round(self.clock(), 3), "gpus": []}
        errors: dict[str, str] = {}
        if not s.open or s.error:
            errors["nvml"] = sys.intern(s.error or "NVML not initialised")
        for r in self.readers:
            try:
                sample["gpus"].append(r.read())
            except Exception as e:  # a bug in one GPU's read costs that GPU, not the sample
                sample["gpus"].append({"index": r.index, "errors": {"all": f"read failed: {e!r}"}})
        self._track_outage(sample, errors)
        mem, mem_err = self.mem_reader.read()
        sample["mem"] = mem
        if mem_err:
            errors["meminfo"] = mem_err
        for key, what, reader in (("rdma", "RDMA", self.rdma_reader), ("spbm", "SPBM", self.spbm_reader)):
            try:
                value, why = reader.read()
            except Exception as e:  # a bug here costs that line, not the sample
                value, why = None, f"{what} read failed: {e!r}"
            if value is not None:
                sample[key] = value
            if why:
                errors[key] = sys.intern(why)
        if errors:
            sample["errors"] = errors
        return sample

    def _track_outage(self, sample: dict[str, Any], errors: dict[str, str]) -> None:
        """An NVML that answered before and now answers nothing is an outage: the sample says
        since when (``nvml_down_since``) and why (``errors["nvml"]``), and the session is re-opened
        on the backoff until it answers again."""
        answered = any(g.get(f) is not None for g in sample["gpus"] for f in _LIVE_FIELDS)
        if answered:
            self.nvml_worked = True
            if self.nvml_down_since is not None:
                self.nvml_down_since, self._reopen_wait = None, REOPEN_FIRST_S
            return
        if not self.nvml_worked:
            return  # never answered here: unavailable (the reason is in the fields), not an outage
        if self.nvml_down_since is None:
            self.nvml_down_since = sample["t"]
            self._reopen_at = time.monotonic() + self._reopen_wait
        first = (sample["gpus"][0].get("errors") or {}) if sample["gpus"] else {}
        errors["nvml"] = errors.get("nvml") or next(
            (why for why in first.values() if not why.startswith(_NOT_SUPPORTED_PREFIX)), "no GPU answered")
        sample["nvml_down_since"] = self.nvml_down_since
        # No GPU readings at all (the counters carried between reads would pass for current ones):
        # the plots show a gap, the exporter no series, and G4's window stops at the last reading.
        sample["gpus"] = []

    def _reopen(self) -> NvmlSession:
        """A new NVML session in place of one that stopped answering; the next try waits twice as long."""
        if self.session is not None:
            self.session.close()
        self.session, self.readers = None, []
        self.reopens += 1
        self._reopen_wait = min(self._reopen_wait * 2, REOPEN_MAX_S)
        self._reopen_at = time.monotonic() + self._reopen_wait
        return self.open()

    def sample_once(self) -> dict[str, Any]:
        """Take a sample now, store it in the ring buffers and hand it to the listeners."""
        with self._lock:
            sample = self.take()
            self.history.append(sample)
        self._emit(self.on_sample, sample)
        if self.out_queue is not None:
            try:
                self.out_queue.put_nowait(sample)
            except queue.Full:
                self.dropped += 1
        return sample

    def scan_processes(self) -> dict[str, Any]:
        from sparktui.probes import processes  # psutil import only when the view is wanted

        with self._lock:
            data = processes.scan(self.open(), self.cfg)
        self.latest_processes = data
        self._emit(self.on_processes, data)
        return data

    def _emit(self, cb: SampleCallback | None, payload: dict[str, Any]) -> None:
        if cb is None:
            return
        try:
            cb(payload)
        except Exception as e:
            self.callback_errors += 1
            self.last_callback_error = repr(e)

    # -- thread --------------------------------------------------------------------------------
    def start(self) -> "Sampler":
        if self._thread is not None and self._thread.is_alive():
            return self
        self._stop.clear()
        self.open()
        self._thread = threading.Thread(target=self._run, name="sparktui-sampler", daemon=True)
        self._thread.start()
        return self

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self.close()

    def pause(self) -> None:
        self._paused = True

    def resume(self) -> None:
        self._paused = False
        self._wake.set()

    @property
    def paused(self) -> bool:
        return self._paused

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def _run(self) -> None:
        next_at = time.monotonic()
        while not self._stop.is_set():
            if not self._paused:
                self.sample_once()
                if self.processes_every_s and time.monotonic() >= self._next_processes:
                    self._next_processes = time.monotonic() + self.processes_every_s
                    try:
                        self.scan_processes()
                    except Exception as e:  # the scan guards itself; this is belt and braces
                        self.last_callback_error = f"process scan: {e!r}"
            next_at += self.interval_s
            delay = next_at - time.monotonic()
            if delay < 0:  # fell behind (suspend, slow call): skip missed ticks, do not burst
                next_at = time.monotonic()
                delay = 0.0
            self._wake.wait(delay if not self._paused else self.interval_s)
            self._wake.clear()


def gather(cfg: Config, window_s: float, interval_s: float, *, meminfo_path: str = MEMINFO,
           stop: threading.Event | None = None, clock: Callable[[], float] = time.time) -> dict[str, Any]:
    """Sample for ``window_s`` seconds (first sample at once, last at the window's end).

    Samples are scheduled on the monotonic clock but stamped with the wall clock rounded to the ms,
    so the recorded span can fall a hair short of the window: then one more sample is taken (never
    more), so a ``--watch`` run always covers the window G4 asks for. The last sample (also when
    ``stop`` cuts the window short) reads the violation counters again, whatever their cadence, and
    ``counters_read_t`` lists the samples that read them: with fewer than two readings in a window
    their growth cannot be told."""
    sampler = Sampler(cfg, interval_s=interval_s, history=max(2, int(window_s / interval_s) + 3),
                      meminfo_path=meminfo_path, clock=clock)
    stop = stop or threading.Event()
    requested = window_s
    read_t: list[float] = []
    try:
        static = sampler.static()
        t0 = time.monotonic()
        n = 0
        while True:
            due = n * interval_s  # this sample's offset from the first
            last = stop.is_set() or due >= window_s - 1e-6
            if last:
                for r in sampler.readers:
                    r.read_counters_next()
            sample = sampler.sample_once()
            if any(r.counters_fresh for r in sampler.readers):
                read_t.append(sample["t"])
            n += 1
            if last and (stop.is_set() or due >= window_s + interval_s - 1e-6 or _covers(sampler, window_s)):
                break
            stop.wait(max(0.0, t0 + n * interval_s - time.monotonic()))  # a stop: one last sample, at once
    finally:
        sampler.close()
    samples = sampler.history.samples()
    span = (samples[-1]["t"] - samples[0]["t"]) if len(samples) > 1 else 0.0
    return {"samples": samples, "window_s": round(span, 3), "requested_window_s": requested,
            "interval_s": interval_s, "counters_read_t": read_t, "static": static, "source": "live"}


def _covers(sampler: Sampler, window_s: float) -> bool:
    """Do the recorded timestamps span the window?"""
    ts = sampler.history.values("t")
    return len(ts) > 1 and ts[-1] - ts[0] >= window_s - 1e-6


def read_telemetry(cfg: Config, cancel: threading.Event | None = None) -> Reading:
    """Probe "telemetry": a short window of samples (``telemetry.check_window_s``; ``--watch``).
    ``cancel`` ends the window early; the data then says how long it really was."""
    started = time.time()
    window = cfg.telemetry.check_window_s
    interval = min(cfg.telemetry.interval_s, max(window / 2.0, 0.05)) if window < 60 else cfg.telemetry.interval_s
    data = gather(cfg, window, interval, stop=cancel)
    nvml_err = (data["samples"][-1].get("errors") or {}).get("nvml") if data["samples"] else None
    return Reading("telemetry", data, error=nvml_err, source="NVML (nvidia-ml-py) + /proc/meminfo",
                   started_at=started, took_s=time.time() - started)


PROBES = (Probe(shapes.TELEMETRY, read_telemetry, cancellable=True),)
