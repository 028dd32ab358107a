"""What else draws on the unified pool than /proc/meminfo names line by line: tmpfs mounts
(/dev/shm, a container's ``--shm-size``, any tmpfs whose size may take a large share of memory),
hugepages of every size (reserved, free, promised), swap devices and zram. Cheap reads, no
subprocess; the probe reads, G3 judges.

Reading "pool" data (core/shapes.py ``PoolData``)::

    {"tmpfs": [{"mountpoint", "fstype", "size_bytes", "used_bytes", "size_option_bytes", "error"?}],
     "shm": the /dev/shm entry of "tmpfs" or None, "inside_container": True|False|None,
     "hugepages": [{"size_bytes", "total", "free", "reserved", "surplus"}],
     "swaps": [{"name", "type", "size_bytes", "used_bytes", "priority", "zram"}],
     "zram": [{"name", "disksize_bytes", "orig_data_bytes", "compr_data_bytes", "mem_used_bytes"}],
     "errors": {"mounts"|"hugepages"|"swaps"|"zram": why}, "read_at": unix time}

A part that could not be read is absent from its list and named in ``errors``, never an empty list
that would read as "none". Outside text (/proc/mounts, /proc/swaps) is parsed line by line in linear
time, at most MAX_LINES lines.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any

from sparktui.core import shapes
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.probes.declared import Probe

MOUNTS = "/proc/mounts"
SWAPS = "/proc/swaps"
HUGEPAGES = "/sys/kernel/mm/hugepages"
BLOCK = "/sys/block"
MEMORY_FS = ("tmpfs", "ramfs")  # file systems whose files live in memory (ramfs has no size limit)
MAX_LINES = 4096  # a machine with more mounts than this is cut (counted in errors)
MAX_TMPFS = 64  # tmpfs mounts measured (statvfs) at most: /run/user/N of many users, containers
MAX_READ = 1 << 20

_SIZE = re.compile(r"^(\d{1,20})([kmgt]?)$", re.I)
_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
_OCTAL = re.compile(r"\\([0-7]{3})")
_HUGE_DIR = re.compile(r"^hugepages-(\d{1,12})kB$")


def unescape(field: str) -> str:
    """A /proc/mounts or /proc/swaps field as the kernel escapes it (space, tab, newline, backslash
    as ``\\040`` ...)."""
    return _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), field)


def size_option(options: str) -> int | None:
    """The ``size=`` option of a tmpfs in bytes (the kernel prints ``size=65536k``), or None when
    absent (the default: half of memory) or not a size."""
    for opt in options.split(","):
        if opt.startswith("size="):
            m = _SIZE.match(opt[5:])
            return int(m.group(1)) * _UNITS[m.group(2).lower()] if m else None
    return None


def parse_mounts(text: str) -> list[dict[str, Any]]:
    """The memory-backed mounts (tmpfs, ramfs) of /proc/mounts text: ``device mountpoint fstype
    options dump pass`` per line. Other lines, and lines that are not six fields, are left out. A
    mount stacked over another at the same point hides it (what statvfs measures): the last one is kept."""
    out: dict[str, dict[str, Any]] = {}
    for line in text.splitlines()[:MAX_LINES]:
        fields = line.split()
        if len(fields) != 6 or fields[2] not in MEMORY_FS:
            continue
        point = unescape(fields[1])
        out.pop(point, None)
        out[point] = {"mountpoint": point, "fstype": fields[2], "size_option_bytes": size_option(fields[3])}
    return list(out.values())


def parse_swaps(text: str) -> list[dict[str, Any]]:
    """/proc/swaps text (``Filename Type Size Used Priority``, sizes in KiB) -> one dict per device;
    the header and lines that do not parse are left out."""
    out = []
    for line in text.splitlines()[1:MAX_LINES]:
        fields = line.split()
        if len(fields) != 5:
            continue
        name, kind, size, used, prio = fields
        try:
            size_b, used_b, priority = int(size) * 1024, int(used) * 1024, int(prio)
        except ValueError:
            continue
        if size_b < 0 or not 0 <= used_b <= size_b:
            continue
        name = unescape(name)
        out.append({"name": name, "type": kind, "size_bytes": size_b, "used_bytes": used_b, "priority": priority,
                    "zram": os.path.basename(name).startswith("zram")})
    return out


def parse_mm_stat(text: str) -> dict[str, int] | None:
    """/sys/block/zramN/mm_stat (Documentation/admin-guide/blockdev/zram.rst): orig_data_size,
    compr_data_size, mem_used_total, ... in bytes. None when it does not start with three numbers."""
    fields = text.split()
    try:
        orig, compr, used = (int(f) for f in fields[:3])
    except ValueError:
        return None
    if len(fields) < 3 or min(orig, compr, used) < 0:
        return None
    return {"orig_data_bytes": orig, "compr_data_bytes": compr, "mem_used_bytes": used}


def _read(path: str) -> str:
    with open(path, "rb") as f:
        return f.read(MAX_READ).decode("utf-8", "replace")


def _why(e: OSError) -> str:
    return e.strerror or type(e).__name__


def measure(mount: dict[str, Any]) -> dict[str, Any]:
    """A tmpfs mount with its size and use from statvfs (the kernel's own figures)."""
    try:
        st = os.statvfs(mount["mountpoint"])
    except OSError as e:
        return {**mount, "size_bytes": None, "used_bytes": None, "error": f"statvfs: {_why(e)}"}
    size = st.f_blocks * st.f_frsize
    return {**mount, "size_bytes": size or None, "used_bytes": (st.f_blocks - st.f_bfree) * st.f_frsize}


def read_hugepages(root: str = HUGEPAGES) -> list[dict[str, Any]]:
    """Every hugepage size the kernel offers, with its pages (Documentation/admin-guide/mm/hugetlbpage.rst)."""
    out = []
    for name in sorted(os.listdir(root)):
        m = _HUGE_DIR.match(name)
        if not m:
            continue
        row: dict[str, Any] = {"size_bytes": int(m.group(1)) * 1024}
        for key, file in (("total", "nr_hugepages"), ("free", "free_hugepages"), ("reserved", "resv_hugepages"),
                          ("surplus", "surplus_hugepages")):
            try:
                row[key] = int(_read(os.path.join(root, name, file)).strip())
            except (OSError, ValueError):
                row[key] = None
        out.append(row)
    return out


def read_zram(block: str = BLOCK) -> list[dict[str, Any]]:
    out = []
    for name in sorted(os.listdir(block)):
        if not name.startswith("zram"):
            continue
        row: dict[str, Any] = {"name": name, "disksize_bytes": None}
        try:
            row["disksize_bytes"] = int(_read(os.path.join(block, name, "disksize")).strip())
        except (OSError, ValueError):
            pass
        try:
            row.update(parse_mm_stat(_read(os.path.join(block, name, "mm_stat"))) or {})
        except OSError:
            pass
        out.append(row)
    return out


def _inside_container() -> bool | None:
    from sparktui.probes.processes import detect_container  # the one container test (G6's too)

    inside = detect_container().get("inside")
    return inside if isinstance(inside, bool) else None


def read(cfg: Config, mounts: str = MOUNTS, swaps: str = SWAPS, hugepages: str = HUGEPAGES,
         block: str = BLOCK) -> Reading[Any]:
    started = time.time()
    data: dict[str, Any] = {"errors": {}, "read_at": started}
    try:
        found = parse_mounts(_read(mounts))
        data["tmpfs"] = [measure(m) for m in found[:MAX_TMPFS]]
        if len(found) > MAX_TMPFS:
            data["errors"]["mounts"] = f"{len(found) - MAX_TMPFS} more memory-backed mounts not measured"
        data["shm"] = next((m for m in data["tmpfs"] if m["mountpoint"] == "/dev/shm"), None)
    except OSError as e:
        data["errors"]["mounts"] = f"cannot read {mounts}: {_why(e)}"
    try:
        data["swaps"] = parse_swaps(_read(swaps))
    except OSError as e:
        data["errors"]["swaps"] = f"cannot read {swaps}: {_why(e)}"
    try:
        data["hugepages"] = read_hugepages(hugepages)
    except OSError as e:
        data["errors"]["hugepages"] = f"cannot list {hugepages}: {_why(e)}"
    try:
        data["zram"] = read_zram(block)
    except OSError as e:
        data["errors"]["zram"] = f"cannot list {block}: {_why(e)}"
    data["inside_container"] = _inside_container()
    parts = ("tmpfs", "swaps", "hugepages", "zram")
    error = "; ".join(data["errors"].values()) if not any(k in data for k in parts) else None
    return Reading("pool", None if error else data, error=error, source=f"{mounts}, {swaps}, {hugepages}, {block}",
                   started_at=started, took_s=time.time() - started)


PROBES = (Probe(shapes.POOL, read),)
