"""Host facts and /proc/meminfo: cheap reads, no subprocesses."""

from __future__ import annotations

import os
import platform
import socket
import time

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.telemetry import MEM_FIELDS

MEMINFO = "/proc/meminfo"
MEMINFO_KEYS = MEM_FIELDS  # the same fields as every sample, so a live check and a replay judge the same


def parse_meminfo(text: str) -> dict[str, int]:
    """/proc/meminfo text -> {key: bytes}; a line without "kB" (HugePages_Total, HugePages_Free: counts)
    keeps its number as it is. Lines it cannot parse are ignored."""
    out: dict[str, int] = {}
    for line in text.splitlines():
        key, _, rest = line.partition(":")
        parts = rest.split()
        if not parts:
            continue
        try:
            value = int(parts[0])
        except ValueError:
            continue
        unit = parts[1].lower() if len(parts) > 1 else ""
        out[key.strip()] = value * 1024 if unit == "kb" else value
    return out


def read_meminfo_bytes(path: str = MEMINFO) -> dict[str, int]:
    with open(path, "rb") as f:
        return parse_meminfo(f.read().decode("ascii", "replace"))


def read_meminfo(cfg: Config, path: str = MEMINFO) -> Reading:
    started = time.time()
    try:
        mi = read_meminfo_bytes(path)
    except OSError as e:
        return Reading("meminfo", None, error=f"cannot read {path}: {e.strerror or e}", source=path, started_at=started)
    data = {k: mi[k] for k in MEMINFO_KEYS if k in mi}
    if "MemAvailable" not in data:
        return Reading("meminfo", data, error="MemAvailable missing (kernel older than 3.14?)", source=path, started_at=started)
    return Reading("meminfo", data, source=path, started_at=started)


def _read_first(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.read().strip() or None
    except OSError:
        return None


def read(cfg: Config) -> Reading:
    uname = platform.uname()
    data = {
        "hostname": socket.gethostname(),
        "system": uname.system,
        "kernel": uname.release,
        "machine": uname.machine,
        "cpu_count": os.cpu_count(),
        "os_release": _os_pretty_name(),
        "dmi_product": _read_first("/sys/class/dmi/id/product_name"),
    }
    try:
        data["mem_total_bytes"] = read_meminfo_bytes().get("MemTotal")
    except OSError:
        data["mem_total_bytes"] = None
    return Reading("host", data, source="uname, /etc/os-release, /proc/meminfo")


def _os_pretty_name() -> str | None:
    text = _read_first("/etc/os-release") or ""
    for line in text.splitlines():
        if line.startswith("PRETTY_NAME="):
            return line.split("=", 1)[1].strip().strip('"')
    return None
