"""dcgm-exporter's series for the GB10 fields that mean the same thing, so a fleet's existing
Grafana dashboards and alerts (built on dcgm-exporter) light up for a Spark watched by sparktui.

Names, types, units and HELP texts are dcgm-exporter's own (etc/default-counters.csv of
NVIDIA/dcgm-exporter); the labels are those it puts on every GPU series (`gpu`, `UUID`,
`pci_bus_id`, `device`, `modelName`, `Hostname`, in that order). Only fields GB10 answers and
that mean there what they mean on a discrete GPU are served (a community report of dcgm-exporter on GB10, driver 580.142: its
GPU_UTIL, GPU_TEMP, POWER_USAGE, SM_CLOCK and TOTAL_ENERGY_CONSUMPTION work). Never a faked
`DCGM_FI_DEV_FB_*`: GB10 has no framebuffer of its own; the unified pool is sparktui's own
`sparktui_memory_bytes{field=...}` series. A value NVML did not give is no series, never a zero.

The text is written here rather than by prometheus_client because dcgm-exporter's counter is
named without `_total` (prometheus_client would rename its TYPE line, and a dashboard's query
would then match a series whose type Prometheus no longer knows).
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from sparktui.core.units import is_number

LABELS = ("gpu", "UUID", "pci_bus_id", "device", "modelName", "Hostname")

# (name, type, HELP as dcgm-exporter's default-counters.csv words it, sample key, exported as int)
FIELDS: tuple[tuple[str, str, str, str, bool], ...] = (
    ("DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", "sm_mhz", True),
    ("DCGM_FI_DEV_GPU_TEMP", "gauge", "GPU temperature (in C).", "temp_c", True),
    ("DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", "power_w", False),
    ("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).", "energy_mj", True),
    ("DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", "util_gpu", True),
)
NAMES = tuple(f[0] for f in FIELDS)


def escape(value: str) -> str:
    """A label value as the text exposition format wants it: backslash, quote and newline escaped
    (a host or model name is outside text: it must not end the label or the line)."""
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _value(field: Any) -> Any:
    """A static NVML fact (``{"value": ...}`` or ``{"error": ...}``) as its value, else None."""
    return field.get("value") if isinstance(field, Mapping) else None


def gpu_labels(static: Mapping[str, Any] | None, index: int, hostname: str) -> list[tuple[str, str]]:
    """dcgm-exporter's labels for GPU ``index``, from the static NVML facts read at start. A fact
    NVML did not give leaves its label out (Prometheus reads an empty label as absent anyway)."""
    dev: Mapping[str, Any] = {}
    for d in (static or {}).get("devices") or []:
        if isinstance(d, Mapping) and d.get("index") == index:
            dev = d
    minor = _value(dev.get("minor_number"))
    values = {"gpu": str(index), "UUID": _value(dev.get("uuid")), "pci_bus_id": _value(dev.get("pci_bus_id")),
              "device": f"nvidia{minor}" if isinstance(minor, int) and not isinstance(minor, bool) else None,
              "modelName": _value(dev.get("name")), "Hostname": hostname}
    return [(k, values[k]) for k in LABELS if isinstance(values[k], str) and values[k]]


def _number(v: Any, as_int: bool) -> str | None:
    if not is_number(v):
        return None
    return str(int(round(v))) if as_int else repr(float(v))


def text(sample: Mapping[str, Any] | None, static: Mapping[str, Any] | None, hostname: str) -> str:
    """The dcgm-exporter series of one telemetry sample, in the text exposition format. Empty when
    there is no sample or NVML gave none of the fields (a family with no series is left out whole)."""
    gpus: Iterable[Any] = (sample or {}).get("gpus") or []
    rows = [(g, gpu_labels(static, g.get("index", 0), hostname)) for g in gpus
            if isinstance(g, Mapping) and isinstance(g.get("index", 0), int)]
    out: list[str] = []
    for name, kind, help_, key, as_int in FIELDS:
        lines = []
        for g, labels in rows:
            v = _number(g.get(key), as_int)
            if v is not None:
                inner = ",".join(f'{k}="{escape(val)}"' for k, val in labels)
                lines.append(f"{name}{{{inner}}} {v}")
        if lines:
            out += [f"# HELP {name} {help_}", f"# TYPE {name} {kind}", *lines]
    return "\n".join(out) + "\n" if out else ""
