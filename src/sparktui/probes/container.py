"""Is sparktui running inside a container, and which one? (G9)

Checks run in a fixed order and each records what it looked at and what it saw: Docker's
``/.dockerenv``, Podman's ``/run/.containerenv`` (its ``name``/``image`` fields), the
``container`` and Kubernetes environment variables, ``/proc/1/cgroup`` runtime names,
``/proc/self/mountinfo`` (runtime storage paths behind bind mounts; an overlay root is only a
hint), and NGC's image variables (``NVIDIA_PYTORCH_VERSION``, ``NVIDIA_BUILD_ID``, ...).

A failed match is "unknown", never "bare host": cgroup v2 namespaces and some runtimes hide
every one of these traces. ``in_container`` is therefore ``True`` or ``None``, never ``False``.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import time
from pathlib import Path
from typing import Callable, Mapping

from sparktui.core import shapes
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.shapes import (
    CdiSpecs,
    ContainerCheck,
    ContainerData,
    ContainerEngine,
    DaemonJson,
    HostRuntime,
    NgcInfo,
)
from sparktui.probes.declared import Probe

# (substring of a /proc/1/cgroup line, runtime); kubepods first: its lines also name the engine.
CGROUP_HINTS = (
    ("kubepods", "kubernetes"), ("libpod", "podman"), ("docker", "docker"), ("containerd", "containerd"),
    ("crio", "cri-o"), ("lxc", "lxc"), ("buildkit", "buildkit"), ("actions_job", "github-actions"),
)
# (substring of a mount's source path, runtime): where engines keep the files they bind-mount
# over /etc/hostname and /etc/resolv.conf.
MOUNT_HINTS = (
    ("/var/lib/kubelet/pods/", "kubernetes"), ("/var/lib/docker/", "docker"),
    ("/docker/containers/", "docker"), ("/var/lib/containers/storage/", "podman"),
    ("/run/containerd/", "containerd"), ("/var/lib/containerd/", "containerd"),
)
NGC_KEYS = ("NVIDIA_PRODUCT_NAME", "NVIDIA_BUILD_ID", "PYTORCH_BUILD_VERSION", "PYTORCH_VERSION", "CUDA_VERSION")
_NGC_VERSION_VAR = re.compile(r"^NVIDIA_([A-Z0-9_]+)_VERSION$")
_NOT_PRODUCTS = {"DRIVER", "REQUIRE", "VISIBLE", "CUDA", "DRIVER_CAPABILITIES"}
MAX_FILE_BYTES = 1 << 20


def _read_text(path: Path) -> tuple[str | None, str]:
    """(text, what was seen): text None when absent or unreadable. A FIFO or device in a marker's
    place is seen as there but never read (it could block, or never end)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None, "absent"
    except PermissionError:
        return None, "unreadable: permission denied"
    except OSError as e:
        return None, f"unreadable: {e.strerror or e}"
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            return None, "a folder, not a file"
        if not stat.S_ISREG(mode):
            return "", "present (not a regular file: not read)"
        with os.fdopen(os.dup(fd), "rb") as f:  # read() loops over short reads (procfs pages)
            raw = f.read(MAX_FILE_BYTES)
    except OSError as e:
        return None, f"unreadable: {e.strerror or e}"
    finally:
        os.close(fd)
    return raw.decode("utf-8", "replace"), "present"


def parse_containerenv(text: str) -> dict[str, str]:
    """``key="value"`` lines of Podman's /run/.containerenv (empty for rootless defaults)."""
    out = {}
    for line in text.splitlines():
        m = re.match(r'^\s*([A-Za-z_]+)\s*=\s*"?(.*?)"?\s*$', line)
        if m and m.group(2):
            out[m.group(1)] = m.group(2)
    return out


def ngc_info(env: Mapping[str, str]) -> NgcInfo | None:
    """What NGC image variables say: product, release (``25.11``), build id. None if none set."""
    seen = {k: env[k] for k in NGC_KEYS if env.get(k)}
    releases = {}
    for k, v in env.items():
        m = _NGC_VERSION_VAR.match(k)
        if m and v and m.group(1) not in _NOT_PRODUCTS:
            releases[m.group(1).lower()] = v
            seen[k] = v
    if not releases and "NVIDIA_BUILD_ID" not in seen:
        return None
    product = env.get("NVIDIA_PRODUCT_NAME")
    release = None
    if product and product.upper().replace("-", "_") in {p.upper() for p in releases}:
        release = releases[product.lower().replace("-", "_")]
    elif "pytorch" in releases:
        product, release = product or "PyTorch", releases["pytorch"]
    elif releases:
        key = sorted(releases)[0]
        product, release = product or key, releases[key]
    return {"product": product, "release": release, "build_id": env.get("NVIDIA_BUILD_ID"),
            "pytorch_build_version": env.get("PYTORCH_BUILD_VERSION"), "cuda_version": env.get("CUDA_VERSION"),
            "env": seen}


def _root_mount(mountinfo: str) -> tuple[str | None, list[str]]:
    """(filesystem type of '/', runtime names found in mount sources)."""
    fstype, runtimes = None, []
    for line in mountinfo.splitlines():
        parts = line.split(" - ", 1)
        left = parts[0].split()
        if len(left) >= 5 and left[4] == "/" and len(parts) == 2:
            fstype = parts[1].split()[0] if parts[1].split() else None
        src = left[3] if len(left) >= 4 else ""
        for needle, runtime in MOUNT_HINTS:
            if needle in src and runtime not in runtimes:
                runtimes.append(runtime)
    return fstype, runtimes


def inspect(root: Path | str = "/", environ: Mapping[str, str] | None = None) -> ContainerData:
    """Run every check under ``root`` (tests point it at a fake tree) with ``environ``."""
    root = Path(root)
    env = dict(os.environ if environ is None else environ)
    checks: list[ContainerCheck] = []
    runtime: str | None = None
    extra: dict[str, str] = {}
    hints: list[str] = []

    def found(rt: str | None) -> None:
        nonlocal runtime
        if runtime is None and rt:
            runtime = rt

    text, seen = _read_text(root / ".dockerenv")
    checks.append({"check": "/.dockerenv (Docker marker)", "seen": seen, "matched": text is not None})
    if text is not None:
        found("docker")

    text, seen = _read_text(root / "run" / ".containerenv")
    fields = parse_containerenv(text) if text else {}
    if text is not None:
        found("podman")
        extra.update({k: v for k, v in fields.items() if k in ("name", "image", "engine", "id")})
        if fields:
            seen += ": " + ", ".join(f"{k}={v}" for k, v in fields.items() if k in ("engine", "name", "image"))
    checks.append({"check": "/run/.containerenv (Podman marker)", "seen": seen, "matched": text is not None})

    cvar = env.get("container")
    checks.append({"check": "$container (set by podman, systemd-nspawn, lxc)", "seen": cvar or "unset",
                   "matched": bool(cvar)})
    if cvar:
        found(cvar)
    k8s = env.get("KUBERNETES_SERVICE_HOST")
    checks.append({"check": "$KUBERNETES_SERVICE_HOST", "seen": k8s or "unset", "matched": bool(k8s)})
    if k8s:
        found("kubernetes")

    text, seen = _read_text(root / "proc" / "1" / "cgroup")
    hit = None
    if text is not None:
        for needle, rt in CGROUP_HINTS:
            if needle in text:
                hit = rt
                break
        lines = [ln for ln in text.splitlines() if ln.strip()]
        seen = f"{len(lines)} line(s): " + " | ".join(lines[:3])[:300] if lines else "empty"
        if hit is None and lines and all(ln.endswith("::/") or ln.endswith(":/") for ln in lines):
            seen += " (root cgroup only: a cgroup namespace hides the runtime, or a bare host)"
    checks.append({"check": "/proc/1/cgroup runtime names", "seen": seen, "matched": hit is not None})
    found(hit)

    text, seen = _read_text(root / "proc" / "self" / "mountinfo")
    mount_rts: list[str] = []
    if text is not None:
        fstype, mount_rts = _root_mount(text)
        seen = f"root filesystem {fstype or 'not listed'}"
        if mount_rts:
            seen += "; runtime storage in mount sources: " + ", ".join(mount_rts)
        if fstype == "overlay" and not mount_rts:
            hints.append("root filesystem is overlay (usual in containers, also seen on live systems)")
    checks.append({"check": "/proc/self/mountinfo", "seen": seen, "matched": bool(mount_rts)})
    if mount_rts:
        found(mount_rts[0])

    ngc = ngc_info(env)
    checks.append({"check": "NGC image variables (NVIDIA_<PRODUCT>_VERSION, NVIDIA_BUILD_ID)",
                   "seen": ", ".join(f"{k}={v}" for k, v in ngc["env"].items()) if ngc else "unset",
                   "matched": ngc is not None})

    in_container = True if (runtime is not None or ngc is not None) else None
    return {
        "in_container": in_container,
        "runtime": runtime if runtime else ("unknown runtime (NGC image variables)" if ngc else None),
        "name": extra.get("name"),
        "image": extra.get("image"),
        "ngc": ngc,
        "hints": hints,
        "checks": checks,
    }


# -- can a container with the GPU run here (issue 14) ----------------------------------------------
ENGINES = ("docker", "podman")
NVIDIA_TOOLS = ("nvidia-ctk", "nvidia-container-runtime", "nvidia-container-runtime-hook")
DAEMON_JSON = "etc/docker/daemon.json"
CDI_DIRS = ("etc/cdi", "var/run/cdi")
VERSION_TIMEOUT_S = 3.0


def engine_version(path: str, timeout_s: float = VERSION_TIMEOUT_S) -> tuple[str | None, str | None]:
    """(first line of `<engine> --version`, None) or (None, why not). Never raises."""
    try:
        p = subprocess.run([path, "--version"], capture_output=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return None, f"`{path} --version` did not answer within {timeout_s:g} s"
    except OSError as e:
        return None, f"cannot run {path}: {e.strerror or e}"
    out = p.stdout.decode("utf-8", "replace").strip().splitlines()
    if p.returncode != 0 or not out:
        err = p.stderr.decode("utf-8", "replace").strip().splitlines()
        return None, f"`{path} --version` exited {p.returncode}" + (f": {err[-1][:200]}" if err else "")
    return out[0][:200], None


def read_daemon_json(root: Path) -> DaemonJson:
    path = root / DAEMON_JSON
    shown = "/" + DAEMON_JSON
    text, seen = _read_text(path)
    if text is None:
        if seen == "absent":  # docker then runs with its built-in runtimes only: no nvidia runtime configured
            return {"path": shown, "state": "absent", "error": None, "nvidia_runtime": False, "default_runtime": None}
        return {"path": shown, "state": "unreadable", "error": seen, "nvidia_runtime": None, "default_runtime": None}
    try:
        doc = json.loads(text) if text.strip() else {}
    except ValueError as e:
        return {"path": shown, "state": "malformed", "error": f"not JSON: {e}", "nvidia_runtime": None,
                "default_runtime": None}
    if not isinstance(doc, dict):
        return {"path": shown, "state": "malformed", "error": f"a JSON {type(doc).__name__}, not an object",
                "nvidia_runtime": None, "default_runtime": None}
    runtimes = doc.get("runtimes")
    if runtimes is not None and not isinstance(runtimes, dict):
        return {"path": shown, "state": "malformed", "error": '"runtimes" is not an object', "nvidia_runtime": None,
                "default_runtime": None}
    default = doc.get("default-runtime")
    return {"path": shown, "state": "read", "error": None, "nvidia_runtime": "nvidia" in (runtimes or {}),
            "default_runtime": default if isinstance(default, str) else None}


def find_cdi_specs(root: Path) -> CdiSpecs:
    specs: list[str] = []
    errors: list[str] = []
    for rel in CDI_DIRS:
        d = root / rel
        try:
            names = sorted(os.listdir(d))
        except FileNotFoundError:
            continue
        except OSError as e:
            errors.append(f"/{rel}: {e.strerror or e}")
            continue
        specs += [f"/{rel}/{n}" for n in names
                  if n.startswith("nvidia") and n.endswith((".yaml", ".yml", ".json")) and (d / n).is_file()]
    return {"specs": specs, "errors": errors}


def host_runtime(root: Path | str = "/", path_env: str | None = None,
                 version: Callable[[str], tuple[str | None, str | None]] | None = engine_version) -> HostRuntime:
    """docker/podman on ``path_env`` (with their versions unless ``version`` is None), the NVIDIA
    container tools, /etc/docker/daemon.json and the CDI specs under ``root``."""
    root = Path(root)
    path_env = os.environ.get("PATH", "") if path_env is None else path_env
    engines: list[ContainerEngine] = []
    for name in ENGINES:
        where = shutil.which(name, path=path_env)
        ver, err = (version(where) if version is not None else (None, "version not asked")) if where else (None, None)
        engines.append({"name": name, "path": where, "version": ver, "error": err})
    tools = {t: shutil.which(t, path=path_env) for t in NVIDIA_TOOLS}
    return {"root": str(root), "engines": engines, "tools": tools, "daemon_json": read_daemon_json(root),
            "cdi": find_cdi_specs(root)}


def read(cfg: Config) -> Reading[ContainerData]:
    started = time.time()
    data = inspect("/")
    data["host_runtime"] = host_runtime("/")
    return Reading("container", data, source="/.dockerenv, /run/.containerenv, /proc/1/cgroup, "
                   "/proc/self/mountinfo, environment; docker/podman/nvidia-ctk on PATH, /etc/docker/daemon.json, "
                   "/etc/cdi, /var/run/cdi", started_at=started)


PROBES = (Probe(shapes.CONTAINER, read),)
