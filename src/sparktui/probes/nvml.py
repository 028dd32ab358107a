"""The NVML boundary: every NVIDIA query sparktui makes goes through here.

NVML (nvidia-ml-py) reads the driver without creating a CUDA context, so the watcher takes no
memory from the run. Each field is read on its own: NOT_SUPPORTED (GB10 answers so for device
memory and the power limit), a lost GPU or a missing library costs that field, never the reading.
Tests swap the backend for a fake modelled on real GB10 answers (``set_backend``).
"""

from __future__ import annotations

import threading
import time
from typing import Any, Callable

from sparktui.core import shapes
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.probes.declared import Probe

_backend: Any = None  # the pynvml module, or a stand-in installed by set_backend()
_backend_error: str | None = None
_lock = threading.Lock()


def set_backend(module: Any) -> None:
    """Install an NVML implementation (a fake in tests, or None to reload the real one). Under the
    lock ``backend`` loads under: a thread loading the real binding at that moment (a sampler still
    running) cannot overwrite the fake just installed."""
    global _backend, _backend_error
    with _lock:
        _backend, _backend_error = module, None


def backend() -> tuple[Any, str | None]:
    global _backend, _backend_error
    with _lock:
        if _backend is None and _backend_error is None:
            try:
                import pynvml  # provided by nvidia-ml-py

                _backend = pynvml
            except Exception as e:  # missing or broken binding
                _backend_error = f"nvidia-ml-py not importable: {e}"
        return _backend, _backend_error


def describe_error(nv: Any, e: BaseException) -> str:
    """An NVML exception in words, e.g. 'NOT_SUPPORTED (Not Supported)'."""
    code = getattr(e, "value", None)
    if code is not None:
        for name in dir(nv):
            if name.startswith("NVML_ERROR_") and getattr(nv, name, None) == code:
                return f"{name[len('NVML_ERROR_'):]} ({e})"
    return f"{type(e).__name__}: {e}"


def is_gpu_lost(nv: Any, e: BaseException) -> bool:
    return getattr(e, "value", None) == getattr(nv, "NVML_ERROR_GPU_IS_LOST", object())


def _text(v: Any) -> Any:
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


class Field:
    """One field's result: a value, or the reason it is unavailable."""

    __slots__ = ("value", "error")

    def __init__(self, value: Any = None, error: str | None = None) -> None:
        self.value, self.error = value, error

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value} if self.error is None else {"value": None, "error": self.error}


class NvmlSession:
    """One NVML init for the life of the session; ``close`` shuts it down."""

    def __init__(self) -> None:
        self.nv, err = backend()
        self.error: str | None = err
        self.handles: list[Any] = []
        self.open = False
        if self.nv is None:
            return
        try:
            self.nv.nvmlInit()
            self.open = True
        except Exception as e:
            self.error = f"nvmlInit failed: {describe_error(self.nv, e)}"
            return
        try:
            n = self.nv.nvmlDeviceGetCount()
            for i in range(n):
                try:
                    self.handles.append(self.nv.nvmlDeviceGetHandleByIndex(i))
                except Exception:
                    self.handles.append(None)
        except Exception as e:
            self.error = f"nvmlDeviceGetCount failed: {describe_error(self.nv, e)}"

    def get(self, fn_name: str, *args: Any, convert: Callable[[Any], Any] | None = None) -> Field:
        """Call ``nvml<fn_name>(*args)``; any failure becomes a Field with the reason."""
        if self.nv is None or not self.open:
            return Field(error=self.error or "NVML not initialised")
        fn = getattr(self.nv, fn_name, None)
        if fn is None:
            return Field(error=f"{fn_name} not in this nvidia-ml-py")
        if args and args[0] is None:
            return Field(error="device handle unavailable")
        try:
            v = fn(*args)
        except Exception as e:
            return Field(error=describe_error(self.nv, e))
        try:
            return Field(convert(v) if convert else _text(v))
        except Exception as e:
            return Field(error=f"unexpected value from {fn_name}: {e!r}")

    def close(self) -> None:
        if self.open:
            try:
                self.nv.nvmlShutdown()
            except Exception:
                pass
            self.open = False


def _mem(v: Any) -> dict[str, int]:
    return {"total": int(v.total), "free": int(v.free), "used": int(v.used)}


def _cuda_version(v: int) -> str:
    return f"{v // 1000}.{(v % 1000) // 10}"


def _bus_id(info: Any) -> str:
    """nvmlPciInfo's busId ("00000000:01:00.0"): bytes in older bindings, str in newer."""
    bus = info.busId
    return bus.decode("ascii", "replace") if isinstance(bus, bytes) else str(bus)


def _clock_sm(s: NvmlSession) -> int:
    return int(getattr(s.nv, "NVML_CLOCK_SM", 1))


def _app_clocks(s: NvmlSession, h: Any) -> dict[str, Any]:
    """Application clocks (target and default) of the graphics and memory clocks, through
    nvmlDeviceGetClock(type, NVML_CLOCK_ID_APP_CLOCK_TARGET / _DEFAULT): what `nvidia-smi -q -d CLOCK`
    shows as "Applications Clocks" and "Default Applications Clocks"."""
    nv = s.nv
    target, default = getattr(nv, "NVML_CLOCK_ID_APP_CLOCK_TARGET", 1), getattr(nv, "NVML_CLOCK_ID_APP_CLOCK_DEFAULT", 2)
    out: dict[str, Any] = {}
    for key, clock in (("gr", getattr(nv, "NVML_CLOCK_GRAPHICS", 0)), ("mem", getattr(nv, "NVML_CLOCK_MEM", 2))):
        out[f"app_clock_{key}_mhz"] = s.get("nvmlDeviceGetClock", h, clock, target, convert=float).to_dict()
        out[f"default_app_clock_{key}_mhz"] = s.get("nvmlDeviceGetClock", h, clock, default, convert=float).to_dict()
    return out


def static_info(s: NvmlSession) -> dict[str, Any]:
    """Facts that do not change during a run: driver, CUDA, names, capability, limits."""
    data: dict[str, Any] = {
        "driver_version": s.get("nvmlSystemGetDriverVersion").to_dict(),
        "cuda_driver_version": s.get("nvmlSystemGetCudaDriverVersion_v2", convert=_cuda_version).to_dict(),
        "nvml_version": s.get("nvmlSystemGetNVMLVersion").to_dict(),
        "devices": [],
    }
    for i, h in enumerate(s.handles):
        dev = {
            "index": i,
            "name": s.get("nvmlDeviceGetName", h).to_dict(),
            "uuid": s.get("nvmlDeviceGetUUID", h).to_dict(),
            # dcgm-exporter's pci_bus_id and device (nvidia<minor>) labels (fleet/dcgm.py)
            "pci_bus_id": s.get("nvmlDeviceGetPciInfo", h, convert=_bus_id).to_dict(),
            "minor_number": s.get("nvmlDeviceGetMinorNumber", h, convert=int).to_dict(),
            "compute_capability": s.get("nvmlDeviceGetCudaComputeCapability", h, convert=lambda v: [int(v[0]), int(v[1])]).to_dict(),
            "memory": s.get("nvmlDeviceGetMemoryInfo", h, convert=_mem).to_dict(),
            "power_limit_w": s.get("nvmlDeviceGetEnforcedPowerLimit", h, convert=lambda v: v / 1000.0).to_dict(),
            "power_default_limit_w": s.get("nvmlDeviceGetPowerManagementDefaultLimit", h, convert=lambda v: v / 1000.0).to_dict(),
            # the top of the SM clock plot; GB10's answer is not on record, so a refusal is expected
            "max_sm_mhz": s.get("nvmlDeviceGetMaxClockInfo", h, _clock_sm(s), convert=float).to_dict(),
            # G4: application clocks set by hand (`nvidia-smi -ac`) are a target that differs from the
            # default; ~1 ms a call on an H100 (driver 580.159.04), read once with the static facts
            **_app_clocks(s, h),
        }
        data["devices"].append(dev)
    return data


def read_static(cfg: Config) -> Reading:
    started = time.time()
    s = NvmlSession()
    try:
        if not s.open:
            return Reading("nvml", None, error=s.error or "NVML unavailable", source="NVML", started_at=started)
        data = static_info(s)
        if s.error:
            data["error"] = s.error
        return Reading("nvml", data, source="NVML (nvidia-ml-py)", started_at=started)
    finally:
        s.close()


PROBES = (Probe(shapes.NVML, read_static),)
