"""The DGX Spark's own power readings (SPBM), where the `spark_hwmon` DKMS module exposes them.

NVIDIA has said there is no other way to read the GB10's CPU or whole-system power. The module
(github.com/antheas/spark_hwmon, spbm.c; the fork jaim12005/spark_hwmon at 352c76e is the same
driver) binds to the ACPI device NVDA8800 and registers one hwmon device named ``spbm``:

- ``power{1..14}_input`` (µW, the firmware's mW × 1000) labelled, in this order: sys_total,
  soc_pkg, cpu_gpu, cpu_p, cpu_e, vcore, dc_input, gpu, prereg, dla, pl1, pl2, syspl1, syspl2. The
  last four are the EWMA power each power-limit controller sees; they also have ``power*_cap``
  (the effective limit), ``power*_max`` and ``power*_min`` (the firmware's ceiling and floor), µW.
- ``energy{1..4}_input`` (µJ, cumulative; the firmware counts mJ in 32 bits) labelled pkg, cpu_e,
  cpu_p, gpu.
- ``temp{1..8}_input`` (m°C) labelled tj_max, cpu_e_clu0, cpu_p_clu0, cpu_e_clu1, cpu_p_clu1, gpu,
  soc, dla.
- plain attributes ``prochot`` (0 = normal), ``pl_level`` (the active power-limit level) and
  ``tj_max_c`` (rise above ambient, in tenths of a °C), in the same hwmon folder (spbm.c registers
  them as the hwmon device's extra groups); a reader that finds them in ``device/`` takes them there.

A channel whose register the firmware did not name is hidden by the driver: a file that is absent
is unread, never 0. Channels are found by their labels, not their numbers. Everything is read under
``root`` (``/`` on a machine; a stand-in tree in tests), and nothing here raises.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any, Callable

HWMON_NAME = "spbm"
STATUS = ("prochot", "pl_level", "tj_max_c")
LIMITS = ("pl1", "pl2", "syspl1", "syspl2")  # the channels with a cap (µW)
# What the sampler reads each sample (G4): whole-system, DC-input and GPU power, the two limits the
# firmware enforces on the package and the system, PROCHOT and the power-limit level. 13 small files.
SAMPLED_POWER = ("sys_total", "dc_input", "gpu")
SAMPLED_LIMITS = ("pl1", "syspl1")
NOT_LOADED = "spark_hwmon not loaded (no hwmon device named spbm)"


def _int(path: str) -> int:
    """One sysfs value; ValueError when it is not an integer."""
    with open(path, "rb") as f:
        return int(f.read(64).split()[0])


def find(root: str = "/") -> Path | None:
    """The hwmon folder of the spbm device under ``root``, or None."""
    base = Path(root) / "sys" / "class" / "hwmon"
    try:
        entries = sorted(base.iterdir())
    except OSError:
        return None
    for d in entries:
        try:
            if (d / "name").read_text(errors="replace").strip() == HWMON_NAME:
                return d
        except OSError:
            continue
    return None


def _channels(hw: Path, kind: str) -> dict[str, str]:
    """label -> the channel's path prefix ("…/power7"), from its ``*_label`` file."""
    out: dict[str, str] = {}
    try:
        names = sorted(os.listdir(hw))
    except OSError:
        return out
    for n in names:
        if n.startswith(kind) and n.endswith("_label"):
            try:
                label = (hw / n).read_text(errors="replace").strip()
            except OSError:
                continue
            if label and label not in out:
                out[label] = str(hw / n[: -len("_label")])
    return out


def _status_path(hw: Path, name: str) -> str | None:
    for p in (hw / name, hw / "device" / name):
        if p.exists():
            return str(p)
    return None


def read(root: str = "/") -> dict[str, Any]:
    """Every SPBM channel once, in plain units (W, J, °C): ``{"loaded": False, "why": ...}`` without
    the module; else ``{"loaded": True, "hwmon": path, "power_w": {label: W}, "cap_w", "max_w",
    "min_w": {limit: W}, "energy_j": {label: J}, "temp_c": {label: °C}, "prochot", "pl_level",
    "tj_rise_c", "errors": {file: why}}``."""
    hw = find(root)
    if hw is None:
        return {"loaded": False, "why": NOT_LOADED}
    errors: dict[str, str] = {}

    def val(path: str, scale: float) -> float | None:
        try:
            return round(_int(path) * scale, 6)
        except (OSError, ValueError, IndexError) as e:
            errors[os.path.basename(path)] = f"{type(e).__name__}: {e}"[:120]
            return None

    def group(kind: str, suffix: str, scale: float, only: tuple[str, ...] | None = None) -> dict[str, float | None]:
        got = {}
        for label, prefix in _channels(hw, kind).items():
            if (only is None or label in only) and os.path.exists(f"{prefix}_{suffix}"):
                got[label] = val(f"{prefix}_{suffix}", scale)
        return got

    out: dict[str, Any] = {
        "loaded": True, "hwmon": str(hw),
        "power_w": group("power", "input", 1e-6),
        "cap_w": group("power", "cap", 1e-6, LIMITS),
        "max_w": group("power", "max", 1e-6, LIMITS),
        "min_w": group("power", "min", 1e-6, LIMITS),
        "energy_j": group("energy", "input", 1e-6),
        "temp_c": group("temp", "input", 1e-3),
    }
    for name, scale in (("prochot", 1), ("pl_level", 1), ("tj_max_c", 0.1)):
        p = _status_path(hw, name)
        v = val(p, scale) if p else None
        out["tj_rise_c" if name == "tj_max_c" else name] = int(v) if v is not None and scale == 1 else v
    out["errors"] = errors
    return out


class SpbmReader:
    """SPBM readings for the telemetry sampler, cheaply: the files are found once (again every
    REDISCOVER_S while the module is not loaded: it may be loaded later) and then only
    ``SAMPLED_*`` and two status files are read per sample.

    ``read()`` -> (None, None): no spbm device (the sample carries no "spbm"); else ({"sys_w",
    "dc_input_w", "gpu_w", "pl1_w", "pl1_cap_w", "pl1_max_w", "syspl1_w", ..., "prochot",
    "pl_level"}, None), a value None where its file could not be read, or (None, reason) when
    none could."""

    REDISCOVER_S = 60.0

    def __init__(self, root: str = "/", clock: Callable[[], float] = time.monotonic) -> None:
        self.root, self.clock = root, clock
        self.files: dict[str, tuple[str, float]] | None = None  # key -> (path, scale); None: not looked yet
        self._looked_at: float | None = None

    def _discover(self) -> None:
        self._looked_at = self.clock()
        self.files = {}
        hw = find(self.root)
        if hw is None:
            return
        power = _channels(hw, "power")
        for label in SAMPLED_POWER + SAMPLED_LIMITS:
            if label in power:
                self.files[f"{label}_w"] = (f"{power[label]}_input", 1e-6)
        for label in SAMPLED_LIMITS:
            if label in power:
                for suffix in ("cap", "max"):
                    if os.path.exists(f"{power[label]}_{suffix}"):
                        self.files[f"{label}_{suffix}_w"] = (f"{power[label]}_{suffix}", 1e-6)
        for name in ("prochot", "pl_level"):
            p = _status_path(hw, name)
            if p:
                self.files[name] = (p, 1)
        if "sys_total_w" in self.files:  # the sample's key for whole-system power
            self.files["sys_w"] = self.files.pop("sys_total_w")

    def read(self) -> tuple[dict[str, Any] | None, str | None]:
        if self.files is None or (not self.files and self.clock() - (self._looked_at or 0.0) >= self.REDISCOVER_S):
            self._discover()
        if not self.files:
            return None, None
        out: dict[str, Any] = {}
        failed = 0
        for key, (path, scale) in self.files.items():
            try:
                raw = _int(path)
                out[key] = raw if scale == 1 else round(raw * scale, 3)
            except (OSError, ValueError, IndexError):
                out[key] = None
                failed += 1
        if failed == len(self.files):
            self.files = None  # the module went away (unloaded): look again next time
            return None, "spark_hwmon files unreadable"
        return out, None
