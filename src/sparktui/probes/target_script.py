"""Runs INSIDE the target (training) interpreter, as a short-lived subprocess of sparktui.

Standard library only, and syntax old Pythons accept: it must run in whatever environment the
training uses. It reports in stages, one JSON line per event, on the file descriptor given by
``--fd``. A "begin" line goes out before each stage, so if the process dies (SIGSEGV in
``import torch``, a hang in the first ``.cuda()``), sparktui knows which stage killed it and keeps
everything reported before.

Two modes run as separate processes, so they cannot disturb each other:
  env    python facts, package versions, and ctypes loads of the system's libcudart
  torch  import torch, CUDA facts, flash_attn import, first .cuda()
"""

import json
import os
import platform
import sys
import time
import warnings

ENV_KEYS = (
    "TORCH_CUDA_ARCH_LIST", "CUDA_VISIBLE_DEVICES", "CUDA_HOME", "CUDA_VERSION", "LD_LIBRARY_PATH",
    "VIRTUAL_ENV", "CONDA_PREFIX", "NVIDIA_PYTORCH_VERSION", "PYTORCH_VERSION", "PYTORCH_BUILD_VERSION",
    "NVIDIA_BUILD_ID", "NVIDIA_REQUIRE_CUDA", "NV_LIBCUDNN_VERSION", "NCCL_VERSION", "CUDNN_VERSION",
    "NVIDIA_VISIBLE_DEVICES", "UNSLOTH_VERSION",
)

_out = None


def emit(kind, stage, **fields):
    rec = {"event": kind, "stage": stage, "t": time.time()}
    rec.update(fields)
    out = _out
    assert out is not None, "open_channel() first"
    out.write(json.dumps(rec, default=str) + "\n")
    out.flush()


def run_stage(name, fn, skip):
    if name in skip:
        emit("skipped", name)
        return None
    emit("begin", name)
    t0 = time.time()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            data = fn()
        warns = [str(w.message)[:500] for w in caught][:20]
        emit("done", name, seconds=time.time() - t0, data=data, warnings=warns)
        return data
    except BaseException as e:  # an ImportError naming an undefined symbol is evidence
        emit("error", name, seconds=time.time() - t0, error_type=type(e).__name__, error=str(e)[:2000])
        return None


def stage_python():
    return {
        "executable": sys.executable,
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "prefix": sys.prefix,
        "base_prefix": getattr(sys, "base_prefix", sys.prefix),
        "machine": platform.machine(),
        "system": platform.system(),
        "env": dict((k, os.environ[k]) for k in ENV_KEYS if k in os.environ),
    }


def stage_packages(names):
    """{"versions": name -> version or None (not installed), "unread": name -> why its metadata
    could not be read}. Only PackageNotFoundError means "not installed": any other failure (torn
    metadata, a dist-info without a Version) is a read that failed, never absence."""
    try:
        from importlib import metadata
    except ImportError:  # Python < 3.8: the stage fails, so the list reads as unknown
        raise RuntimeError("importlib.metadata unavailable (Python < 3.8): installed versions cannot be read") from None
    versions = {}  # type: dict
    unread = {}  # type: dict
    for name in names:
        try:
            v = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
            continue
        except Exception as e:
            unread[name] = (type(e).__name__ + ": " + str(e))[:300]
            continue
        if isinstance(v, str) and v:
            versions[name] = v
        else:
            unread[name] = "metadata has no Version"
    return {"versions": versions, "unread": unread}


def _loaded_paths(fragment):
    try:
        with open("/proc/self/maps") as f:
            return sorted(set(line.split()[-1] for line in f if fragment in line and "/" in line))
    except OSError:
        return []


def stage_cudart():
    import ctypes

    out = {}
    for soname in ("libcudart.so.13", "libcudart.so.12"):
        entry = {"loaded": False}  # type: dict
        try:
            lib = ctypes.CDLL(soname)
            entry["loaded"] = True
            entry["paths"] = [p for p in _loaded_paths("libcudart") if soname in p or p.endswith(soname)] or _loaded_paths("libcudart")
            try:
                v = ctypes.c_int(0)
                rc = lib.cudaRuntimeGetVersion(ctypes.byref(v))
                entry["runtime_version"] = v.value if rc == 0 else None
            except Exception as e:
                entry["runtime_version_error"] = str(e)
        except OSError as e:
            entry["error"] = str(e)
        out[soname] = entry
    return out


def stage_import_torch():
    import torch

    info = {
        "version": getattr(torch, "__version__", None),
        "cuda": getattr(torch.version, "cuda", None),
        "hip": getattr(torch.version, "hip", None),
        "git_version": getattr(torch.version, "git_version", None),
        "file": getattr(torch, "__file__", None),
    }
    try:
        info["cudnn"] = torch.backends.cudnn.version()
    except Exception as e:
        info["cudnn_error"] = str(e)
    try:  # the NCCL torch links (multi-machine jobs need the same one); no CUDA context
        v = torch.cuda.nccl.version()
        info["nccl"] = ".".join(str(x) for x in v) if isinstance(v, tuple) else str(v)
    except Exception as e:  # CPU-only builds have no NCCL
        info["nccl_error"] = str(e)[:300]
    return info


def stage_torch_cuda():
    import torch

    info = {"available": bool(torch.cuda.is_available())}  # type: dict
    try:
        info["arch_list"] = list(torch.cuda.get_arch_list())
    except Exception as e:
        info["arch_list_error"] = str(e)
    if info["available"]:
        n = torch.cuda.device_count()
        info["device_count"] = n
        devs = []
        for i in range(n):
            cap = torch.cuda.get_device_capability(i)
            devs.append({"index": i, "name": torch.cuda.get_device_name(i), "capability": [cap[0], cap[1]]})
        info["devices"] = devs
    return info


def stage_flash_attn():
    import flash_attn

    return {"version": getattr(flash_attn, "__version__", None), "file": getattr(flash_attn, "__file__", None)}


def stage_cuda_smoke():
    import torch

    if not torch.cuda.is_available():
        return {"ran": False, "reason": "torch.cuda.is_available() is False"}
    t0 = time.time()
    x = torch.zeros(1).cuda()
    torch.cuda.synchronize()
    return {"ran": True, "value": float(x.item()), "seconds": time.time() - t0}


def parse_args(argv, defaults):
    """Tiny ``--key value`` parser (no argparse: keep start-up minimal in the target)."""
    args = dict(defaults)
    it = iter(argv)
    for a in it:
        if a in args:
            args[a] = next(it, "")
    return args


def read_names(path):
    """The distribution names to look up, one a line (a file: a long list overflows argv)."""
    if not path:
        return []
    with open(path, encoding="utf-8") as f:
        return [n for n in f.read().splitlines() if n]


def open_channel(fd):
    global _out
    _out = os.fdopen(int(fd), "w")


def main(argv):
    args = parse_args(argv, {"--fd": "1", "--mode": "env", "--skip": "", "--packages-file": ""})
    open_channel(args["--fd"])
    skip = set(s for s in args["--skip"].split(",") if s)
    if args["--mode"] == "env":
        run_stage("python", stage_python, skip)
        run_stage("packages", lambda: stage_packages(read_names(args["--packages-file"])), skip)
        run_stage("cudart", stage_cudart, skip)
    else:
        torch_info = run_stage("import torch", stage_import_torch, skip)
        if torch_info is not None:
            run_stage("torch.cuda", stage_torch_cuda, skip)
        run_stage("import flash_attn", stage_flash_attn, skip)
        if torch_info is not None:
            run_stage("first .cuda()", stage_cuda_smoke, skip)
    emit("end", "")


if __name__ == "__main__":
    main(sys.argv[1:])
