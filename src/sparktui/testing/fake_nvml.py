"""A stand-in for the ``pynvml`` module, modelled on what real machines answer.

It raises the real library's exception classes (``pynvml.NVMLError(code)`` maps each code to its
subclass) and carries the real constants, so code under test cannot tell it from nvidia-ml-py.
Function names and return shapes follow nvidia-ml-py 13.x: power in milliwatts, clocks in MHz,
violation time in nanoseconds inside a struct with ``referenceTime``/``violationTime``, the clock-event
counters as field values (74 SW power capping, 75 thermal policy, 76 sync boost, 269 SW thermal
slowdown, 270 HW thermal slowdown, 271 HW power brake: cumulative ns, each with its own return code),
process lists as objects with ``pid`` and ``usedGpuMemory`` (None when the driver cannot say).

Two profiles:

- ``gb10()``: DGX Spark per docs/reference/FACTS.md (driver 580.x, CUDA 13.0, "NVIDIA GB10", capability (12, 1);
  device memory and the power limit NOT_SUPPORTED; memory clock N/A; power 3-11 W idle; temperature,
  SM/graphics clocks, clock-event reasons and the clock-event counters work (docs/reference/FIELD-FACTS.md: SW power
  capping 165687 us and SW thermal slowdown 903158 us at 81 °C, every reason "Not Active"); utilization.memory always 0;
  per-process list works on the host and is EMPTY inside a container).
- ``h200()``: a discrete data-centre GPU where everything answers (docs/reference/FIELD-FACTS.md: fields 74-79, 269-271).

Scripting: ``fake.set(power_w=80)`` changes what the next reads return; ``fake.fail("power_w")``
makes one field raise NOT_SUPPORTED (or any code); ``fake.lose_gpu()`` makes every device call raise
GPU_IS_LOST; ``fake.script([...])`` applies one dict of values per ``tick()``; ``library_missing=True``
makes nvmlInit raise LIBRARY_NOT_FOUND.
"""

from __future__ import annotations

import contextlib
import os
import time
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pynvml

NVMLError = pynvml.NVMLError
NOT_SUPPORTED = pynvml.NVML_ERROR_NOT_SUPPORTED
GPU_IS_LOST = pynvml.NVML_ERROR_GPU_IS_LOST
LIBRARY_NOT_FOUND = pynvml.NVML_ERROR_LIBRARY_NOT_FOUND
UNINITIALIZED = pynvml.NVML_ERROR_UNINITIALIZED
INVALID_ARGUMENT = pynvml.NVML_ERROR_INVALID_ARGUMENT
FUNCTION_NOT_FOUND = pynvml.NVML_ERROR_FUNCTION_NOT_FOUND

# Field names the fake scripts, mapped to the NVML call that reads them (for fail()).
COUNTERS = ("sw_power_cap_ns", "sync_boost_ns", "sw_thermal_ns", "hw_thermal_ns", "hw_power_brake_ns",
            "thermal_policy_ns")
FIELDS = ("temp_c", "power_w", "power_limit_w", "sm_mhz", "gr_mhz", "mem_mhz", "util", "reasons",
          *COUNTERS, "field_values", "memory", "processes", "name", "capability", "energy_mj", "pci", "minor",
          "app_clocks")
# NVML field ids -> the counter each reads (nvml.h, 580 drivers)
FIELD_IDS = {74: "sw_power_cap_ns", 75: "thermal_policy_ns", 76: "sync_boost_ns", 269: "sw_thermal_ns",
             270: "hw_thermal_ns", 271: "hw_power_brake_ns"}


@dataclass
class GpuState:
    name: str
    uuid: str
    capability: tuple[int, int]
    values: dict[str, Any]
    errors: dict[str, int] = field(default_factory=dict)  # field -> NVML error code
    processes: list[tuple[int, int | None]] = field(default_factory=list)  # (pid, bytes or None)
    graphics_processes: list[tuple[int, int | None]] = field(default_factory=list)
    lost: bool = False
    process_util: list[tuple[int, int]] = field(default_factory=list)  # (pid, SM %): nvmlDeviceGetProcessUtilization's samples


class _Handle:
    def __init__(self, index: int) -> None:
        self.index = index

    def __repr__(self) -> str:
        return f"<fake nvmlDevice {self.index}>"


class _Obj:
    """Like pynvml's nvmlFriendlyObject / ctypes structs: attributes only."""

    def __init__(self, **kw: Any) -> None:
        self.__dict__.update(kw)


class FakeNvml(types.ModuleType):
    """Install with ``sparktui.probes.nvml.set_backend(fake)``."""

    def __init__(self, gpus: list[GpuState], *, driver: str = "580.95.05", cuda: int = 13000,
                 library_missing: bool = False, in_container: bool = False) -> None:
        super().__init__("fake_pynvml")
        # Real constants and exception classes, so callers written against pynvml work unchanged.
        for name in dir(pynvml):
            if name.startswith(("NVML_", "NVMLError", "nvmlClocks")):
                setattr(self, name, getattr(pynvml, name))
        self.NVMLError = pynvml.NVMLError
        self.gpus = gpus
        self.driver = driver
        self.cuda = cuda
        self.library_missing = library_missing
        self.in_container = in_container
        self.initialised = 0
        self.calls: dict[str, int] = {}
        self.field_ids_asked: list[list[int]] = []  # each nvmlDeviceGetFieldValues call's ids
        self._script: list[dict[str, Any]] = []

    # -- scripting -------------------------------------------------------------------------
    def set(self, gpu: int = 0, **values: Any) -> "FakeNvml":
        self.gpus[gpu].values.update(values)
        return self

    def fail(self, *fields: str, code: int = NOT_SUPPORTED, gpu: int = 0) -> "FakeNvml":
        for f in fields:
            self.gpus[gpu].errors[f] = code
        return self

    def heal(self, *fields: str, gpu: int = 0) -> "FakeNvml":
        for f in fields:
            self.gpus[gpu].errors.pop(f, None)
        return self

    def lose_gpu(self, gpu: int = 0) -> "FakeNvml":
        self.gpus[gpu].lost = True
        return self

    def set_processes(self, procs: list[tuple[int, int | None]], gpu: int = 0,
                      graphics: list[tuple[int, int | None]] | None = None) -> "FakeNvml":
        self.gpus[gpu].processes = list(procs)
        self.gpus[gpu].graphics_processes = list(graphics or [])
        return self

    def script(self, steps: list[dict[str, Any]]) -> "FakeNvml":
        """One dict of values per tick(); ``{"lost": True}`` loses GPU 0 at that step."""
        self._script = list(steps)
        return self

    def tick(self) -> None:
        if not self._script:
            return
        step = dict(self._script.pop(0))
        if step.pop("lost", False):
            self.lose_gpu(0)
        self.set(0, **step)

    # -- plumbing ----------------------------------------------------------------------------
    def _count(self, fn: str) -> None:
        self.calls[fn] = self.calls.get(fn, 0) + 1

    def _ready(self, fn: str) -> None:
        self._count(fn)
        if self.library_missing:
            raise NVMLError(UNINITIALIZED)
        if self.initialised <= 0:
            raise NVMLError(UNINITIALIZED)

    def _gpu(self, handle: Any, fn: str, fld: str | None = None) -> GpuState:
        self._ready(fn)
        if not isinstance(handle, _Handle) or not 0 <= handle.index < len(self.gpus):
            raise NVMLError(INVALID_ARGUMENT)
        g = self.gpus[handle.index]
        if g.lost:
            raise NVMLError(GPU_IS_LOST)
        if fld is not None and fld in g.errors:
            raise NVMLError(g.errors[fld])
        return g

    # -- the pynvml API subset sparktui uses ----------------------------------------------------
    def nvmlInit(self) -> None:
        self._count("nvmlInit")
        if self.library_missing:
            raise NVMLError(LIBRARY_NOT_FOUND)
        self.initialised += 1

    def nvmlInitWithFlags(self, flags: int) -> None:
        self.nvmlInit()

    def nvmlShutdown(self) -> None:
        self._count("nvmlShutdown")
        if self.initialised <= 0:
            raise NVMLError(UNINITIALIZED)
        self.initialised -= 1

    def nvmlSystemGetDriverVersion(self) -> str:
        self._ready("nvmlSystemGetDriverVersion")
        return self.driver

    def nvmlSystemGetCudaDriverVersion(self) -> int:
        self._ready("nvmlSystemGetCudaDriverVersion")
        return self.cuda

    def nvmlSystemGetCudaDriverVersion_v2(self) -> int:
        self._ready("nvmlSystemGetCudaDriverVersion_v2")
        return self.cuda

    def nvmlSystemGetNVMLVersion(self) -> str:
        self._ready("nvmlSystemGetNVMLVersion")
        return "13." + self.driver

    def nvmlDeviceGetCount(self) -> int:
        self._ready("nvmlDeviceGetCount")
        return len(self.gpus)

    def nvmlDeviceGetHandleByIndex(self, index: int) -> _Handle:
        self._ready("nvmlDeviceGetHandleByIndex")
        if not 0 <= index < len(self.gpus):
            raise NVMLError(INVALID_ARGUMENT)
        return _Handle(index)

    def nvmlDeviceGetName(self, h: Any) -> str:
        return self._gpu(h, "nvmlDeviceGetName", "name").name

    def nvmlDeviceGetUUID(self, h: Any) -> str:
        return self._gpu(h, "nvmlDeviceGetUUID").uuid

    def nvmlDeviceGetCudaComputeCapability(self, h: Any) -> tuple[int, int]:
        return self._gpu(h, "nvmlDeviceGetCudaComputeCapability", "capability").capability

    def nvmlDeviceGetMemoryInfo(self, h: Any, version: Any = None) -> Any:
        g = self._gpu(h, "nvmlDeviceGetMemoryInfo", "memory")
        v = g.values
        return _Obj(total=v["mem_total"], free=v["mem_total"] - v["mem_used"], used=v["mem_used"],
                    **({"reserved": 0, "version": version} if version else {}))

    def nvmlDeviceGetTemperature(self, h: Any, sensor: int) -> int:
        g = self._gpu(h, "nvmlDeviceGetTemperature", "temp_c")
        if sensor != pynvml.NVML_TEMPERATURE_GPU:
            raise NVMLError(INVALID_ARGUMENT)
        return int(g.values["temp_c"])

    def nvmlDeviceGetPowerUsage(self, h: Any) -> int:
        return int(round(self._gpu(h, "nvmlDeviceGetPowerUsage", "power_w").values["power_w"] * 1000))

    def nvmlDeviceGetTotalEnergyConsumption(self, h: Any) -> int:
        return int(self._gpu(h, "nvmlDeviceGetTotalEnergyConsumption", "energy_mj").values["energy_mj"])

    def nvmlDeviceGetPciInfo(self, h: Any) -> Any:
        return _Obj(busId=self._gpu(h, "nvmlDeviceGetPciInfo", "pci").values["pci_bus_id"].encode())

    def nvmlDeviceGetMinorNumber(self, h: Any) -> int:
        return int(self._gpu(h, "nvmlDeviceGetMinorNumber", "minor").values.get("minor", h.index))

    def nvmlDeviceGetEnforcedPowerLimit(self, h: Any) -> int:
        return int(self._gpu(h, "nvmlDeviceGetEnforcedPowerLimit", "power_limit_w").values["power_limit_w"] * 1000)

    def nvmlDeviceGetPowerManagementDefaultLimit(self, h: Any) -> int:
        return int(self._gpu(h, "nvmlDeviceGetPowerManagementDefaultLimit", "power_limit_w").values["power_limit_w"] * 1000)

    def nvmlDeviceGetClockInfo(self, h: Any, clock_type: int) -> int:
        fld = {pynvml.NVML_CLOCK_SM: "sm_mhz", pynvml.NVML_CLOCK_GRAPHICS: "gr_mhz",
               pynvml.NVML_CLOCK_MEM: "mem_mhz"}.get(clock_type)
        if fld is None:
            raise NVMLError(INVALID_ARGUMENT)
        return int(self._gpu(h, "nvmlDeviceGetClockInfo", fld).values[fld])

    def nvmlDeviceGetMaxClockInfo(self, h: Any, clock_type: int) -> int:
        """Answered only when a test gives ``max_sm_mhz`` (GB10's answer is not on record: NOT_SUPPORTED)."""
        v = self._gpu(h, "nvmlDeviceGetMaxClockInfo", "max_sm_mhz").values.get("max_sm_mhz")
        if clock_type != pynvml.NVML_CLOCK_SM or v is None:
            raise NVMLError(NOT_SUPPORTED)
        return int(v)

    def nvmlDeviceGetClock(self, h: Any, clock_type: int, clock_id: int) -> int:
        """Application clocks as nvmlDeviceGetClock(type, NVML_CLOCK_ID_APP_CLOCK_TARGET / _DEFAULT) give
        them, from ``app_gr_mhz`` / ``default_app_gr_mhz`` (and ``_mem_``); NOT_SUPPORTED where the profile
        has none (GB10's answer is not on record). The current clock is that of nvmlDeviceGetClockInfo."""
        g = self._gpu(h, "nvmlDeviceGetClock", "app_clocks")
        kind = {pynvml.NVML_CLOCK_GRAPHICS: "gr", pynvml.NVML_CLOCK_SM: "gr", pynvml.NVML_CLOCK_MEM: "mem"}.get(clock_type)
        if kind is None:
            raise NVMLError(INVALID_ARGUMENT)
        if clock_id == pynvml.NVML_CLOCK_ID_CURRENT:
            return self.nvmlDeviceGetClockInfo(h, clock_type)
        key = {pynvml.NVML_CLOCK_ID_APP_CLOCK_TARGET: f"app_{kind}_mhz",
               pynvml.NVML_CLOCK_ID_APP_CLOCK_DEFAULT: f"default_app_{kind}_mhz"}.get(clock_id)
        if key is None or g.values.get(key) is None:
            raise NVMLError(NOT_SUPPORTED)
        return int(g.values[key])

    def nvmlDeviceGetUtilizationRates(self, h: Any) -> Any:
        v = self._gpu(h, "nvmlDeviceGetUtilizationRates", "util").values
        return _Obj(gpu=int(v["util_gpu"]), memory=int(v["util_mem"]))

    def nvmlDeviceGetCurrentClocksEventReasons(self, h: Any) -> int:
        return int(self._gpu(h, "nvmlDeviceGetCurrentClocksEventReasons", "reasons").values["reasons"])

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, h: Any) -> int:
        return int(self._gpu(h, "nvmlDeviceGetCurrentClocksThrottleReasons", "reasons").values["reasons"])

    def nvmlDeviceGetViolationStatus(self, h: Any, policy: int) -> Any:
        fld = {pynvml.NVML_PERF_POLICY_THERMAL: "thermal_policy_ns", pynvml.NVML_PERF_POLICY_POWER: "sw_power_cap_ns",
               pynvml.NVML_PERF_POLICY_SYNC_BOOST: "sync_boost_ns"}.get(policy)
        if fld is None:
            raise NVMLError(NOT_SUPPORTED)
        g = self._gpu(h, "nvmlDeviceGetViolationStatus", fld)
        return _Obj(referenceTime=int(g.values.get("reference_ns", 0)), violationTime=int(g.values[fld]))

    def nvmlDeviceGetFieldValues(self, h: Any, field_ids: list[int]) -> list[Any]:
        """Per-value return codes as the real call gives them; ``fail("field_values")`` fails the
        whole call (a driver without field support), ``fail("sw_thermal_ns")`` one value."""
        g = self._gpu(h, "nvmlDeviceGetFieldValues", "field_values")
        self.field_ids_asked.append(list(field_ids))
        out = []
        for fid in field_ids:
            fld = FIELD_IDS.get(fid)
            code = NOT_SUPPORTED if fld is None else g.errors.get(fld, pynvml.NVML_SUCCESS)
            value = int(g.values.get(fld, 0)) if fld is not None and code == pynvml.NVML_SUCCESS else 0
            out.append(_Obj(fieldId=fid, scopeId=0, timestamp=0, latencyUsec=0, nvmlReturn=code,
                            valueType=pynvml.NVML_VALUE_TYPE_UNSIGNED_LONG_LONG, value=_Obj(ullVal=value)))
        return out

    def _procs(self, h: Any, fn: str, graphics: bool) -> list[Any]:
        g = self._gpu(h, fn, "processes")
        if self.in_container:
            return []  # docs/reference/FACTS.md: the list comes back empty inside a container's PID namespace
        src = g.graphics_processes if graphics else g.processes
        return [_Obj(pid=pid, usedGpuMemory=mem, gpuInstanceId=0xFFFFFFFF, computeInstanceId=0xFFFFFFFF)
                for pid, mem in src]

    def set_process_util(self, samples: list[tuple[int, int]], gpu: int = 0) -> "FakeNvml":
        """The per-process SM utilisation samples NVML's buffer holds: (pid, SM %)."""
        self.gpus[gpu].process_util = list(samples)
        return self

    def nvmlDeviceGetProcessUtilization(self, h: Any, last_seen_us: int) -> list[Any]:
        """As the real call: one sample per pid newer than ``last_seen_us``; NOT_FOUND when the buffer
        holds none (no process ran on the GPU lately, or a container's PID namespace). GB10's answer is
        not on record (docs/reference/FACTS.md names none): its profile refuses with NOT_SUPPORTED."""
        g = self._gpu(h, "nvmlDeviceGetProcessUtilization", "process_util")
        if self.in_container or not g.process_util:
            raise NVMLError(pynvml.NVML_ERROR_NOT_FOUND)
        stamp = max(int(time.time() * 1e6), int(last_seen_us) + 1)
        return [_Obj(pid=pid, timeStamp=stamp, smUtil=sm, memUtil=0, encUtil=0, decUtil=0) for pid, sm in g.process_util]

    def nvmlDeviceGetComputeRunningProcesses(self, h: Any) -> list[Any]:
        return self._procs(h, "nvmlDeviceGetComputeRunningProcesses", False)

    def nvmlDeviceGetComputeRunningProcesses_v3(self, h: Any) -> list[Any]:
        return self._procs(h, "nvmlDeviceGetComputeRunningProcesses_v3", False)

    def nvmlDeviceGetGraphicsRunningProcesses(self, h: Any) -> list[Any]:
        return self._procs(h, "nvmlDeviceGetGraphicsRunningProcesses", True)

    def nvmlDeviceGetGraphicsRunningProcesses_v3(self, h: Any) -> list[Any]:
        return self._procs(h, "nvmlDeviceGetGraphicsRunningProcesses_v3", True)


GIB = 1024 ** 3


def gb10(**kw: Any) -> FakeNvml:
    """A DGX Spark at idle, answering as docs/reference/FACTS.md reports (driver 580.x, CUDA 13.0)."""
    values = {
        "temp_c": 41, "power_w": 4.7, "power_limit_w": 140.0, "sm_mhz": 208, "gr_mhz": 208, "mem_mhz": 0,
        "util_gpu": 0, "util_mem": 0, "reasons": pynvml.nvmlClocksEventReasonGpuIdle,
        "sw_power_cap_ns": 165_687_000, "sync_boost_ns": 0, "sw_thermal_ns": 903_158_000, "hw_thermal_ns": 0,
        "hw_power_brake_ns": 0, "thermal_policy_ns": 0, "mem_total": 0, "mem_used": 0,
        # mJ since the driver loaded (dcgm-exporter's TOTAL_ENERGY_CONSUMPTION answers on GB10);
        # the GPU's PCI address as a DGX Spark's nvidia-smi shows it
        "energy_mj": 1_236_547_000, "pci_bus_id": "0000000F:01:00.0",
    }
    gpu = GpuState(name="NVIDIA GB10", uuid="GPU-5b7f3c1e-0000-4000-8000-00000000gb10", capability=(12, 1),
                   values=values,
                   errors={"memory": NOT_SUPPORTED, "power_limit_w": NOT_SUPPORTED, "mem_mhz": NOT_SUPPORTED,
                           "process_util": NOT_SUPPORTED})  # per-process utilisation: not on record for GB10
    return FakeNvml([gpu], driver=kw.pop("driver", "580.95.05"), cuda=13000, **kw)


def gb10_loaded(fake: FakeNvml | None = None) -> FakeNvml:
    """GB10 under an LLM load: ~80 W, 2.4 GHz, full utilization (memory utilization still 0)."""
    fake = fake or gb10()
    return fake.set(temp_c=72, power_w=80.0, sm_mhz=2405, gr_mhz=2405, util_gpu=97, util_mem=0, reasons=0)


def h200(**kw: Any) -> FakeNvml:
    """A discrete H200 where every field answers (141 GB HBM3e, 700 W limit)."""
    values = {
        "temp_c": 34, "power_w": 78.0, "power_limit_w": 700.0, "sm_mhz": 345, "gr_mhz": 345, "mem_mhz": 3201,
        "util_gpu": 0, "util_mem": 0, "reasons": pynvml.nvmlClocksEventReasonGpuIdle,
        "sw_power_cap_ns": 0, "sync_boost_ns": 0, "sw_thermal_ns": 0, "hw_thermal_ns": 0, "hw_power_brake_ns": 0,
        "thermal_policy_ns": 0, "mem_total": 143_771 * 1024 * 1024, "mem_used": 512 * 1024 * 1024,
        "energy_mj": 98_765_432_000, "pci_bus_id": "00000000:19:00.0",
    }
    gpu = GpuState(name="NVIDIA H200", uuid="GPU-0f0e0d0c-0000-4000-8000-000000h200", capability=(9, 0), values=values)
    return FakeNvml([gpu], driver=kw.pop("driver", "570.124.06"), cuda=12080, **kw)


def h100(**kw: Any) -> FakeNvml:
    """A discrete H100 80GB HBM3 at idle. Its clocks are those a real one answered (driver 580.159.04,
    tests/data/h100/clocks-2026-12-05.txt): SM 345 MHz idle, application clocks 1980 / 2619 MHz equal
    to their defaults; the rest as the H200 profile."""
    fake = h200(**kw)
    g = fake.gpus[0]
    g.name, g.uuid = "NVIDIA H100 80GB HBM3", "GPU-1a2b3c4d-0000-4000-8000-000000h100"
    g.values.update(mem_mhz=2619, app_gr_mhz=1980, default_app_gr_mhz=1980, app_mem_mhz=2619, default_app_mem_mhz=2619,
                    max_sm_mhz=1980, mem_total=81_559 * 1024 * 1024)
    return fake


@contextlib.contextmanager
def installed(fake: FakeNvml):
    """Put ``fake`` behind sparktui's NVML boundary for the block; the real binding after."""
    from sparktui.probes import nvml

    nvml.set_backend(fake)
    try:
        yield fake
    finally:
        nvml.set_backend(None)


SRC = Path(__file__).resolve().parents[2]  # the folder holding the sparktui package


def subprocess_env(root: Path, backend: str, env: dict | None = None) -> dict:
    """An environment for a real `python -m sparktui` subprocess with NVML faked at its boundary:
    a sitecustomize.py under ``root`` installs ``backend`` (an expression over this module, e.g.
    ``"gb10_loaded()"`` or ``"FakeNvml([], library_missing=True)"`` for a machine without a driver)
    before sparktui runs. So a test about "no GPU" holds on a machine that has one."""
    site = root / "fake-nvml-site"
    site.mkdir(exist_ok=True)
    (site / "sitecustomize.py").write_text(
        "from sparktui.probes import nvml\nfrom sparktui.testing import fake_nvml\n\n"
        f"nvml.set_backend(fake_nvml.{backend})\n")
    env = dict(os.environ if env is None else env)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(site), str(SRC), env.get("PYTHONPATH", "")) if p)
    return env
