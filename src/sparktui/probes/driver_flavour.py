"""G13's reading: the NVIDIA kernel module flavour (open or proprietary), the driver version and
branch, the kernel release and flavour, firmware and architecture, and the known-bad table.

Everything is read from files under a root folder (default ``/``) so tests build fake trees; no
root needed. A field that cannot be read is None and ``errors[field]`` says why; ``sources[field]``
says where a value came from. One subprocess, on the live system only: ``modinfo nvidia`` (the
module installed for the running kernel, which the next boot loads), with a short timeout; when it
fails, the installed module's facts are None with the reason (tests pass its text instead).

A pending reboot is read from what is installed against what runs: the installed module's version
(``modinfo``) against the loaded one, the kernel releases under ``/lib/modules`` (with a ``kernel/``
folder: a leftover folder of a removed kernel has none) against the running one, and Ubuntu's
``/var/run/reboot-required`` flag with the packages that asked for it.

The flavour comes from ``/proc/driver/nvidia/version`` ("NVIDIA UNIX Open Kernel Module for
aarch64 580.95.05 ..." for the open one, "NVIDIA UNIX aarch64 Kernel Module 580.95.05 ..." for
the proprietary one); when that file is missing, from ``/sys/module/nvidia/taint``: the
proprietary module taints the kernel with ``P``, the open one (Dual MIT/GPL) does not.

The known-bad table is ``sparktui/data/known_bad.toml`` (see the file's header for the fields), or
the user's own file named by ``[driver] known_bad`` (used instead of the shipped one, never merged
and never silently replaced by it); ``load_known_bad`` validates it: a missing or malformed file is
an error naming the file with the reason, never a crash.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
import shutil
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sparktui.core import shapes
from sparktui.core.config import Config

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib
from sparktui.core.readings import Reading
from sparktui.core.shapes import DriverFlavourData, KnownBadData, KnownBadEntry
from sparktui.core.validate import KERNEL_RELEASE_MAX, pattern_problem
from sparktui.probes.declared import Probe

SHIPPED_KNOWN_BAD = Path(__file__).resolve().parent.parent / "data" / "known_bad.toml"
MAX_FILE_BYTES = 64 * 1024  # every file read here is a few lines; more is not what we expect
MAX_KNOWN_BAD_BYTES = 1024 * 1024

# "NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  580.95.05  Release Build ..."
# "NVRM version: NVIDIA UNIX aarch64 Kernel Module  580.95.05  Tue Sep 23 ..."
_NVRM_OPEN = re.compile(r"NVRM version:.*\bOpen Kernel Module\b.*?\s(\d+\.\d+(?:\.\d+)?)\s")
_NVRM_PROP = re.compile(r"NVRM version:.*\bKernel Module\s+(\d+\.\d+(?:\.\d+)?)\s")
NVRM_LINE_MAX = 1024  # characters of the NVRM line matched (the kernel writes about 150)
_VERSION = re.compile(r"^\d+\.\d+(?:\.\d+)?$")
# Ubuntu kernel releases: 6.17.0-1008-nvidia, 6.8.0-87-generic, 6.11.0-1016-nvidia-64k
_UBUNTU_RELEASE = re.compile(r"^\d+\.\d+(?:\.\d+)?-\d+-(?P<flavour>[a-z][a-z0-9-]*)$")

# `modinfo nvidia` (kmod): "license:        Dual MIT/GPL" is the open module, "NVIDIA" the proprietary
# one (NVIDIA's README, "kernel_open"); other keys are read as printed, the first line of each kept
MODINFO_TIMEOUT_S = 3.0
MODINFO_KEYS = ("filename", "version", "license", "vermagic", "srcversion")
LICENSE_FLAVOUR = {"Dual MIT/GPL": "open", "NVIDIA": "proprietary"}
_MODINFO_LINE = re.compile(r"^([a-z_]+):[ \t]*(.*)$")
MAX_KERNELS = 64  # kernel trees listed under /lib/modules (a machine keeps a few)
MAX_REBOOT_PKGS = 100  # package names kept from /var/run/reboot-required.pkgs
_PKG_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]{0,127}$")  # a Debian package name
_RELEASE_KEY = re.compile(r"^(\d+)\.(\d+)(?:\.(\d+))?-(\d+)")

ModinfoRunner = Callable[[], tuple[str | None, str | None]]

MATCH_FIELDS = ("module_flavour", "driver_branch", "driver_min", "driver_below", "kernel_release",
                "kernel_flavour", "architecture", "gpu")
STATUSES = ("warn", "fail")
FLAVOURS = ("open", "proprietary")


def _read_small(path: Path) -> tuple[str | None, str | None]:
    """(text, None) or (None, why)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        return None, f"{path}: absent"
    except PermissionError:
        return None, f"{path}: permission denied (readable by root)"
    except IsADirectoryError:
        return None, f"{path}: is a folder"
    except OSError as e:
        return None, f"{path}: cannot read: {e.strerror or e}"
    if len(raw) > MAX_FILE_BYTES:
        return None, f"{path}: larger than {MAX_FILE_BYTES} bytes, not the expected few lines"
    text = raw.decode("utf-8", errors="replace").strip()
    if "\x00" in text:
        return None, f"{path}: binary content, not text"
    return text, None


def version_tuple(v: str) -> tuple[int, ...] | None:
    """(580, 95, 5) from "580.95.05"; None when it is not dotted numbers."""
    if not isinstance(v, str) or not re.fullmatch(r"\d+(?:\.\d+)*", v.strip()):
        return None
    return tuple(int(p) for p in v.strip().split("."))


def parse_nvrm(text: str) -> tuple[str | None, str | None]:
    """(flavour, version) from /proc/driver/nvidia/version's NVRM line, each None when absent."""
    line = next((ln for ln in text.splitlines() if ln.startswith("NVRM version:")), "")
    if not line:
        return None, None
    line = line[:NVRM_LINE_MAX] + " "  # matched from its start, cut first: linear (issue 22)
    m = _NVRM_OPEN.match(line)
    if m:
        return "open", m.group(1)
    m = _NVRM_PROP.match(line)
    if m:
        return "proprietary", m.group(1)
    return None, None


def parse_modinfo(text: str) -> dict[str, str]:
    """``modinfo nvidia``'s ``key: value`` lines -> {key: value} for MODINFO_KEYS, the first line of
    each (``alias:`` and ``parm:`` repeat; they are not kept). Lines are cut before matching."""
    out: dict[str, str] = {}
    for line in text.splitlines()[:2000]:
        m = _MODINFO_LINE.match(line[:NVRM_LINE_MAX])
        if m and m.group(1) in MODINFO_KEYS and m.group(1) not in out:
            out[m.group(1)] = m.group(2).strip()
    return out


def flavour_of_license(lic: str | None) -> str | None:
    """"open" for "Dual MIT/GPL", "proprietary" for "NVIDIA", None for anything else."""
    return LICENSE_FLAVOUR.get((lic or "").strip())


def run_modinfo() -> tuple[str | None, str | None]:
    """(stdout, None) of ``modinfo nvidia``, or (None, why): not installed, not found, timed out."""
    exe = shutil.which("modinfo") or next((p for p in ("/sbin/modinfo", "/usr/sbin/modinfo") if os.path.exists(p)), None)
    if exe is None:
        return None, "modinfo not found (kmod not installed?)"
    try:
        proc = subprocess.run([exe, "nvidia"], capture_output=True, timeout=MODINFO_TIMEOUT_S, stdin=subprocess.DEVNULL,
                              env={**os.environ, "LC_ALL": "C"})
    except subprocess.TimeoutExpired:
        return None, f"modinfo nvidia: no answer within {MODINFO_TIMEOUT_S:g} s"
    except OSError as e:
        return None, f"modinfo nvidia: cannot run: {e.strerror or e}"
    out = proc.stdout[:MAX_FILE_BYTES].decode("utf-8", "replace")
    if proc.returncode != 0:
        err = proc.stderr[:300].decode("utf-8", "replace").strip().splitlines()
        return None, f"modinfo nvidia exited {proc.returncode}: {err[0] if err else 'no message'}"
    return out, None


def release_key(release: str) -> tuple[int, int, int, int] | None:
    """(6, 17, 0, 1008) from "6.17.0-1008-nvidia": the order Ubuntu's kernels are versioned in."""
    m = _RELEASE_KEY.match(release or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3) or 0), int(m.group(4))) if m else None


def kernel_flavour_of(release: str) -> str | None:
    m = _UBUNTU_RELEASE.match(release)
    return m.group("flavour") if m else None


def _date_str(v: Any) -> str | None:
    if isinstance(v, _dt.date) and not isinstance(v, _dt.datetime):
        return v.isoformat()
    if isinstance(v, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", v):
        try:
            return _dt.date.fromisoformat(v).isoformat()
        except ValueError:
            return None
    return None


def _check_match(where: str, m: Any) -> tuple[dict[str, Any], list[str]]:
    errs: list[str] = []
    if not isinstance(m, dict) or not m:
        return {}, [f"{where}: [entry.match] is missing or empty (an entry must say what it matches)"]
    out: dict[str, Any] = {}
    for k, v in m.items():
        w = f"{where}: match.{k}"
        if k not in MATCH_FIELDS:
            errs.append(f"{w}: unknown match field (known: {', '.join(MATCH_FIELDS)})")
        elif k == "module_flavour":
            if v not in FLAVOURS:
                errs.append(f"{w}: must be \"open\" or \"proprietary\", not {v!r}")
            else:
                out[k] = v
        elif k == "driver_branch":
            vals = v if isinstance(v, list) else [v]
            if not vals or not all(isinstance(x, int) and not isinstance(x, bool) and 0 < x < 10000 for x in vals):
                errs.append(f"{w}: must be a branch number or a list of them (e.g. 590), not {v!r}")
            else:
                out[k] = [int(x) for x in vals]
        elif k in ("driver_min", "driver_below"):
            if not isinstance(v, str) or version_tuple(v) is None:
                errs.append(f"{w}: must be a quoted dotted version like \"590.44\", not {v!r}")
            else:
                out[k] = v
        elif k == "kernel_release":
            # a user's pattern is outside text: only what Python's re matches in bounded time on a
            # release (at most 64 characters) is taken; `(.*.*)*Z` took 19 s per check before
            problem = pattern_problem(v)
            if problem:
                errs.append(f"{w}: {_shown(v)}: {problem}")
            else:
                out[k] = v
        elif not isinstance(v, str) or not v:  # kernel_flavour, architecture, gpu
            errs.append(f"{w}: must be a non-empty string, not {v!r}")
        else:
            out[k] = v
    lo, hi = out.get("driver_min"), out.get("driver_below")
    if lo and hi and (version_tuple(lo) or ()) >= (version_tuple(hi) or ()):
        errs.append(f"{where}: driver_min {lo} is not below driver_below {hi}: the range is empty")
    return out, errs


def _shown(v: Any) -> str:
    r = repr(v)
    return r if len(r) <= 80 else r[:77] + "..."


def parse_known_bad(text: str, where: str) -> tuple[KnownBadData | None, list[str]]:
    """Validate the table; (data, []) or (None, [reasons, each naming ``where`` and the entry])."""
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        return None, [f"{where}: not valid TOML: {exc}"]
    errs: list[str] = []
    if doc.get("schema") != 1:
        errs.append(f"{where}: schema = {doc.get('schema')!r}; this sparktui reads schema = 1")
    updated = _date_str(doc.get("updated"))
    if updated is None:
        errs.append(f"{where}: updated must be a date (updated = 2026-12-04), not {doc.get('updated')!r}")
    for k in doc:
        if k not in ("schema", "updated", "entry"):
            errs.append(f"{where}: unknown top-level key {k!r} (known: schema, updated, entry)")
    raw_entries = doc.get("entry", [])
    if not isinstance(raw_entries, list):
        return None, errs + [f"{where}: entry must be an array of tables ([[entry]])"]
    entries: list[KnownBadEntry] = []
    seen: set[str] = set()
    for i, item in enumerate(raw_entries, 1):
        w = f"{where}: entry {i}"
        before = len(errs)
        if not isinstance(item, dict):
            errs.append(f"{w}: not a table")
            continue
        e = item
        eid = e.get("id")
        if isinstance(eid, str) and eid:
            w = f"{where}: entry {i} ({eid})"
            if eid in seen:
                errs.append(f"{w}: duplicate id")
            seen.add(eid)
        else:
            errs.append(f"{w}: id must be a non-empty string")
        status = e.get("status")
        if status not in STATUSES:
            errs.append(f"{w}: status must be \"warn\" or \"fail\", not {status!r}")
        for key in ("what", "source"):
            if not isinstance(e.get(key), str) or not e.get(key, "").strip():
                errs.append(f"{w}: {key} must be a non-empty string")
        added = _date_str(e.get("added"))
        if added is None:
            errs.append(f"{w}: added must be a date (added = 2026-12-04), not {e.get('added')!r}")
        confirmed = e.get("confirmed", True)
        if not isinstance(confirmed, bool):
            errs.append(f"{w}: confirmed must be true or false, not {confirmed!r}")
        fix = e.get("fix", "")
        if not isinstance(fix, str):
            errs.append(f"{w}: fix must be a string, not {fix!r}")
        for k in e:
            if k not in ("id", "status", "what", "source", "added", "confirmed", "fix", "match"):
                errs.append(f"{w}: unknown key {k!r}")
        match, merrs = _check_match(w, e.get("match"))
        errs.extend(merrs)
        if len(errs) == before and isinstance(eid, str) and isinstance(status, str) and added is not None:
            entries.append({"id": eid, "status": status, "what": str(e["what"]), "source": str(e["source"]),
                            "added": added, "confirmed": bool(confirmed), "fix": fix if isinstance(fix, str) else "",
                            "match": match})
    if errs:
        return None, errs
    if not entries:  # "0 entries checked, none matches" would be an ok on no evidence at all
        return None, [f"{where}: no [[entry]] in it: a table of 0 entries is not evidence that nothing is known "
                      "bad (copy the shipped sparktui/data/known_bad.toml and add your entries to it)"]
    return {"path": where, "updated": updated, "entries": entries, "error": None}, []


def load_known_bad(path: Path | None = None) -> KnownBadData:
    """The table at ``path`` (default: the shipped one); a problem is ``error`` with no entries."""
    p = path or SHIPPED_KNOWN_BAD
    try:
        st = p.stat()
        size = st.st_size
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("is a folder, not a TOML file" if stat.S_ISDIR(st.st_mode)
                             else "not a regular file (a pipe or a device?)")
        if size > MAX_KNOWN_BAD_BYTES:
            raise ValueError(f"{size} bytes, larger than a known-bad table can be ({MAX_KNOWN_BAD_BYTES} bytes)")
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {"path": str(p), "updated": None, "entries": [], "error": f"{p}: no such file"}
    except UnicodeDecodeError:
        return {"path": str(p), "updated": None, "entries": [], "error": f"{p}: not UTF-8 text"}
    except (OSError, ValueError) as e:
        why = e.strerror if isinstance(e, OSError) and e.strerror else str(e)
        return {"path": str(p), "updated": None, "entries": [], "error": f"{p}: cannot read: {why}"}
    data, errs = parse_known_bad(text, str(p))
    if data is None:
        shown = errs[:5]
        more = f" (+{len(errs) - 5} more)" if len(errs) > 5 else ""
        return {"path": str(p), "updated": None, "entries": [], "error": "known-bad table unusable: " + "; ".join(shown) + more}
    return data


def read_tree(root: str | os.PathLike[str] = "/", known_bad: Path | None = None,
              modinfo: ModinfoRunner | None = None) -> DriverFlavourData:
    """Everything G13 needs, from the files under ``root``; ``modinfo`` gives ``modinfo nvidia``'s
    output (default: run it on the live system; a tree other than / has none to run)."""
    base = Path(root)
    live = str(Path(root).resolve()) == "/"
    errors: dict[str, str] = {}
    sources: dict[str, str] = {}
    d: DriverFlavourData = {
        "root": str(base), "module_loaded": None, "flavour": None, "nvrm_line": None,
        "driver_version": None, "driver_branch": None, "module_taint": None, "gpu_name": None,
        "kernel_release": None, "kernel_flavour": None, "architecture": None,
        "bios_version": None, "bios_date": None, "errors": errors, "sources": sources,
        "known_bad": load_known_bad(known_bad),
        "installed_version": None, "installed_flavour": None, "installed_license": None,
        "kernels_installed": None, "reboot_required": None, "reboot_required_pkgs": None,
    }
    _read_module(d, base)
    _read_kernel(d, base, live)
    _read_installed(d, base, modinfo if modinfo is not None else (run_modinfo if live else None))
    for key in ("bios_version", "bios_date"):
        p = base / "sys/class/dmi/id" / key
        v, why = _read_small(p)
        if v:
            d[key], sources[key] = v, str(p)
        else:
            errors[key] = why or f"{p}: empty"
    return d


def _read_module(d: DriverFlavourData, base: Path) -> None:
    """The kernel module: loaded or not, its flavour (open or proprietary), version and taint, and
    the GPU's name; what cannot be read goes to ``d["errors"]`` with why."""
    errors, sources = d["errors"], d["sources"]
    proc_version = base / "proc/driver/nvidia/version"
    sys_module = base / "sys/module/nvidia"
    text, why_proc = _read_small(proc_version)
    try:
        module_dir = sys_module.is_dir()
    except OSError:
        module_dir = False
    d["module_loaded"] = bool(module_dir or text is not None)
    if not d["module_loaded"]:
        no_drv = f"no NVIDIA kernel module loaded ({proc_version} and {sys_module} absent)"
        for k in ("flavour", "driver_version", "driver_branch", "module_taint", "gpu_name"):
            errors[k] = no_drv
    else:
        sources["module_loaded"] = str(sys_module) if module_dir else str(proc_version)
        flavour = version = None
        if text is not None:
            d["nvrm_line"] = next((ln for ln in text.splitlines() if ln.startswith("NVRM version:")), None)
            flavour, version = parse_nvrm(text)
            if flavour is None:
                why_proc = f"{proc_version}: no recognisable 'NVRM version:' line"
        taint, why_taint = _read_small(sys_module / "taint")
        if taint is not None:
            d["module_taint"] = taint
            sources["module_taint"] = str(sys_module / "taint")
        elif module_dir and why_taint and why_taint.endswith("absent"):
            d["module_taint"] = ""  # sysfs has no taint file for a module that taints nothing
            sources["module_taint"] = f"{sys_module}/taint absent (the module taints nothing)"
        else:
            errors["module_taint"] = why_taint or "unread"
        if flavour is not None:
            d["flavour"], sources["flavour"] = flavour, str(proc_version)
        elif d["module_taint"] is not None:
            d["flavour"] = "proprietary" if "P" in d["module_taint"] else "open"
            sources["flavour"] = f"{sys_module}/taint ({'P: proprietary licence' if d['flavour'] == 'proprietary' else 'no P taint: open licence'})"
        else:
            errors["flavour"] = f"{why_proc}; {errors.get('module_taint')}"
        if version is not None:
            d["driver_version"], sources["driver_version"] = version, str(proc_version)
        else:
            sv, why_sv = _read_small(sys_module / "version")
            if sv is not None and _VERSION.match(sv):
                d["driver_version"], sources["driver_version"] = sv, str(sys_module / "version")
            else:
                errors["driver_version"] = f"{why_proc}; {why_sv or f'{sys_module}/version: not a version: {sv!r}'}"
        if d["driver_version"] is not None:
            d["driver_branch"] = int(d["driver_version"].split(".")[0])
        else:
            errors["driver_branch"] = "driver version unread"
        gpus = base / "proc/driver/nvidia/gpus"
        try:
            infos = sorted(gpus.glob("*/information"))
        except OSError:
            infos = []
        for info in infos:
            itext, _ = _read_small(info)
            m = re.search(r"^Model:\s*(.+)$", itext or "", re.MULTILINE)
            if m:
                d["gpu_name"], sources["gpu_name"] = m.group(1).strip(), str(info)
                break
        else:
            errors["gpu_name"] = f"{gpus}/*/information: no 'Model:' line read"


def _read_kernel(d: DriverFlavourData, base: Path, live: bool) -> None:
    """The kernel's release, its flavour suffix and the architecture (os.uname() on this machine
    when /proc does not say)."""
    errors, sources = d["errors"], d["sources"]
    rel, why_rel = _read_small(base / "proc/sys/kernel/osrelease")
    if rel and len(rel.splitlines()[0].strip()) > KERNEL_RELEASE_MAX:
        why_rel = (f"{base / 'proc/sys/kernel/osrelease'}: {len(rel.splitlines()[0].strip())} characters, longer than "
                   f"a kernel release can be ({KERNEL_RELEASE_MAX})")
        rel = None
    if rel:
        d["kernel_release"], sources["kernel_release"] = rel.splitlines()[0].strip(), str(base / "proc/sys/kernel/osrelease")
    elif live:
        d["kernel_release"], sources["kernel_release"] = os.uname().release, "os.uname()"
    else:
        errors["kernel_release"] = why_rel or "empty"
    if d["kernel_release"]:
        kf = kernel_flavour_of(d["kernel_release"])
        if kf:
            d["kernel_flavour"] = kf
        else:
            errors["kernel_flavour"] = f"release {d['kernel_release']!r} has no Ubuntu-style flavour suffix (e.g. -nvidia)"
    else:
        errors["kernel_flavour"] = "kernel release unread"
    arch, why_arch = _read_small(base / "proc/sys/kernel/arch")
    if arch:
        d["architecture"], sources["architecture"] = arch.strip(), str(base / "proc/sys/kernel/arch")
    elif live:
        d["architecture"], sources["architecture"] = os.uname().machine, "os.uname()"
    else:
        errors["architecture"] = why_arch or "empty"


def _read_installed(d: DriverFlavourData, base: Path, modinfo: ModinfoRunner | None) -> None:
    """What the next boot loads: the installed module (``modinfo``), the kernels under /lib/modules,
    and Ubuntu's reboot-required flag with its packages. Also the module flavour from modinfo's
    licence where /proc and the taint could not tell."""
    errors, sources = d["errors"], d["sources"]
    text: str | None = None
    why: str | None = f"modinfo not run for {base} (it reads the running system only)"
    if modinfo is not None:
        text, why = modinfo()
    info = parse_modinfo(text) if text is not None else {}
    if text is not None and not info:
        why = "modinfo nvidia printed no 'version:' or 'license:' line"
    src = f"modinfo nvidia ({info['filename']})" if info.get("filename") else "modinfo nvidia"
    for key, field in (("version", "installed_version"), ("license", "installed_license")):
        v = info.get(key)
        if key == "version" and v is not None and not _VERSION.match(v):
            errors[field] = f"{src}: version {v[:40]!r} is not a driver version"
        elif v:
            d[field], sources[field] = v, src  # type: ignore[literal-required]
        else:
            errors[field] = why or f"{src}: no '{key}:' line"
    lic = d["installed_license"]
    if lic is not None:
        d["installed_flavour"] = flavour_of_license(lic)
        if d["installed_flavour"] is None:
            errors["installed_flavour"] = f"{src}: licence {lic[:40]!r} is neither 'Dual MIT/GPL' (open) nor 'NVIDIA' (proprietary)"
        else:
            sources["installed_flavour"] = f"{src}: license {lic}"
    else:
        errors["installed_flavour"] = errors["installed_license"]
    if d["flavour"] is None and d["module_loaded"] and d["installed_flavour"] is not None \
            and d["installed_version"] in (None, d["driver_version"]):
        d["flavour"] = d["installed_flavour"]
        sources["flavour"] = (f"{src}: license {lic} (the installed module"
                              + (f", {d['installed_version']} as loaded)" if d["installed_version"] else ")"))
        errors.pop("flavour", None)
    _read_kernels(d, base)
    _read_reboot_flag(d, base)


def _read_kernels(d: DriverFlavourData, base: Path) -> None:
    """Kernel releases with a tree of their own modules under /lib/modules, oldest first."""
    mods = base / "lib/modules"
    try:
        with os.scandir(mods) as it:
            names = [e.name for e in it if e.is_dir(follow_symlinks=False)][:1000]
    except OSError as e:
        d["errors"]["kernels_installed"] = f"{mods}: {e.strerror or e}"
        return
    found = [n for n in names if release_key(n) is not None and len(n) <= KERNEL_RELEASE_MAX
             and (mods / n / "kernel").is_dir()]
    found.sort(key=lambda n: (release_key(n), n))
    d["kernels_installed"] = found[-MAX_KERNELS:]
    d["sources"]["kernels_installed"] = f"{mods}/*/kernel"


def _read_reboot_flag(d: DriverFlavourData, base: Path) -> None:
    """/var/run/reboot-required (Ubuntu's update-notifier writes it when a package asks for a reboot)
    and the package names in reboot-required.pkgs."""
    for run in ("var/run", "run"):
        flag = base / run / "reboot-required"
        if flag.exists() or (base / run).is_dir():
            break
    else:
        d["errors"]["reboot_required"] = f"{base / 'var/run'} and {base / 'run'} absent"
        return
    d["reboot_required"] = flag.exists()
    d["sources"]["reboot_required"] = str(flag)
    if not d["reboot_required"]:
        return
    text, why = _read_small(flag.with_name("reboot-required.pkgs"))
    if text is None:
        d["errors"]["reboot_required_pkgs"] = why or "unread"
        return
    names = [ln.strip() for ln in text.splitlines() if _PKG_NAME.match(ln.strip())]
    d["reboot_required_pkgs"] = list(dict.fromkeys(names))[:MAX_REBOOT_PKGS]
    d["sources"]["reboot_required_pkgs"] = str(flag.with_name("reboot-required.pkgs"))


def known_bad_path(cfg: Config) -> Path | None:
    """The user's table from ``[driver] known_bad`` (``~`` expanded), or None for the shipped one."""
    driver = getattr(cfg, "driver", None)
    name = getattr(driver, "known_bad", None)
    return Path(os.path.expanduser(name)) if name else None


def read(cfg: Config, root: str = "/", known_bad: Path | None = None) -> Reading[DriverFlavourData]:
    """Never raises; what could not be read is None in the data with ``errors[field]``.

    The table: ``known_bad`` if given, else ``[driver] known_bad``, else the shipped one. A user
    file that cannot be used is an error naming it (the judge's unknown), not the shipped table."""
    started = time.time()
    user = known_bad_path(cfg) if known_bad is None else None
    data = read_tree(root, known_bad if known_bad is not None else user)
    kb = data["known_bad"]
    if user is not None and kb.get("error"):
        kb["error"] = f"{kb['error']} (the file named by [driver] known_bad{' in ' + cfg.source if cfg.source else ''})"
    base = Path(root)
    return Reading("driver_flavour", data, source=f"{base / 'proc/driver/nvidia'}, {base / 'sys/module/nvidia'}",
                   started_at=started)


PROBES = (Probe(shapes.DRIVER_FLAVOUR, read),)
