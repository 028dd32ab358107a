"""Shared, pure helpers for judges: which GPU the readings describe, and small formatters."""

from __future__ import annotations

from typing import Any, Mapping

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.shapes import NVML, TARGET


def field_value(d: Mapping[str, Any] | None, key: str) -> Any:
    """Value of an NVML field dict ``{"value": ..}`` / ``{"error": ..}``, or None."""
    if not isinstance(d, dict):
        return None
    f = d.get(key)
    if isinstance(f, dict):
        return f.get("value")
    return f


def field_error(d: Mapping[str, Any] | None, key: str) -> str | None:
    if not isinstance(d, dict):
        return None
    f = d.get(key)
    return f.get("error") if isinstance(f, dict) else None


def capability_pair(v: Any) -> tuple[int, int] | None:
    """A compute capability as (major, minor) when it is two integers; None for N/A, a string or
    anything else: an unreadable capability is not evidence about the GPU (G1 and G7 then say so)."""
    if not isinstance(v, (list, tuple)) or len(v) != 2:
        return None
    if not all(isinstance(x, int) and not isinstance(x, bool) for x in v):
        return None
    return int(v[0]), int(v[1])


class GpuFacts:
    """What the readings say about GPU 0: name and capability, from NVML first, else the target torch."""

    def __init__(self, r: Readings, cfg: Config) -> None:
        self.name: str | None = None
        self.capability: tuple[int, int] | None = None
        self.name_source = self.cap_source = ""
        self.driver: str | None = None
        self.driver_cuda: str | None = None
        nv = r.data(NVML)
        if nv:
            self.driver = field_value(nv, "driver_version")
            self.driver_cuda = field_value(nv, "cuda_driver_version")
            devs = nv.get("devices") or []
            if devs:
                d0 = devs[0]
                name = field_value(d0, "name")
                if isinstance(name, str) and name:
                    self.name, self.name_source = name, "NVML nvmlDeviceGetName"
                cc = capability_pair(field_value(d0, "compute_capability"))
                if cc:
                    self.capability, self.cap_source = cc, "NVML nvmlDeviceGetCudaComputeCapability"
        t = r.data(TARGET)
        tc = (t.get("torch_cuda") if t else None) or {}
        tdevs = tc.get("devices") or []
        if tdevs:
            tname = tdevs[0].get("name") if isinstance(tdevs[0], dict) else None
            if self.name is None and isinstance(tname, str) and tname:
                self.name, self.name_source = tname, "torch.cuda.get_device_name(0)"
            cap = capability_pair(tdevs[0].get("capability") if isinstance(tdevs[0], dict) else None)
            if self.capability is None and cap:
                self.capability, self.cap_source = cap, "torch.cuda.get_device_capability(0)"
        if self.name is None and cfg.hardware.gpu_name_hint:
            self.name, self.name_source = cfg.hardware.gpu_name_hint, "config [hardware] gpu_name_hint"

    @property
    def seen(self) -> bool:
        return self.name is not None or self.capability is not None

    @property
    def is_gb10(self) -> bool:
        return (self.capability == (12, 1)) or ("GB10" in (self.name or "").upper())

    def label(self) -> str:
        cc = f"sm_{self.capability[0]}{self.capability[1]}" if self.capability else "capability unknown"
        return f"{self.name or 'unnamed GPU'} ({cc})"


def major(version: str | None) -> int | None:
    if not version:
        return None
    head = str(version).split(".")[0]
    return int(head) if head.isdigit() else None
