"""Which CUDA runtimes the dynamic linker knows: ``ldconfig -p`` lines for libcudart (G1).

Run only when a check asks (not per sample). The ctypes load itself happens in the target
interpreter (see target_script.py), where it cannot disturb sparktui.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time

from sparktui.core import shapes
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.shapes import CudalibsData, LdconfigEntry
from sparktui.probes.declared import Probe

_LINE = re.compile(r"^\s*(libcudart\.so(?:\.[\d.]+)?)\s+\(([^)]*)\)\s+=>\s+(\S+)")


def parse_ldconfig(text: str) -> list[LdconfigEntry]:
    out: list[LdconfigEntry] = []
    for line in text.splitlines():
        m = _LINE.match(line)
        if m:
            soname, flags, path = m.groups()
            major = soname.split(".so.")[1].split(".")[0] if ".so." in soname else None
            out.append({"soname": soname, "major": major, "flags": flags, "path": path})
    return out


def find_ldconfig() -> str | None:
    return shutil.which("ldconfig") or next((p for p in ("/sbin/ldconfig", "/usr/sbin/ldconfig") if os.path.exists(p)), None)


def read(cfg: Config) -> Reading[CudalibsData]:
    started = time.time()
    exe = find_ldconfig()
    if exe is None:
        return Reading("cudalibs", None, error="ldconfig not found", source="ldconfig -p", started_at=started)
    try:
        proc = subprocess.run([exe, "-p"], capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired) as e:
        return Reading("cudalibs", None, error=f"ldconfig -p failed: {e}", source="ldconfig -p", started_at=started)
    if proc.returncode != 0:
        err = proc.stderr.decode("utf-8", "replace").strip()[:300]
        return Reading("cudalibs", None, error=f"ldconfig -p exited {proc.returncode}: {err}", source="ldconfig -p", started_at=started)
    entries = parse_ldconfig(proc.stdout.decode("utf-8", "replace"))
    return Reading("cudalibs", {"libcudart": entries}, source=f"{exe} -p", started_at=started)


PROBES = (Probe(shapes.CUDALIBS, read),)
