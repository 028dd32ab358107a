"""The memory G1's torch-side probe costs the training interpreter, stage by stage (issue 27, item 2).

Runs the real probe script (probes/target_script.py, mode torch: import torch, CUDA facts, the
flash_attn import, the first ``.cuda()``) under the training interpreter, and reads, every few
milliseconds while it runs: its RSS and peak RSS (/proc/PID/status VmRSS, VmHWM), the GPU memory NVML
lists for its pid, and the device's used memory. Each reading is put in the stage the script had
begun at that moment (its begin/end events). Prints one line a stage and the whole run's peaks.

    python benchmarks/probe_memory.py [--python PATH] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

SCRIPT = Path(__file__).resolve().parent.parent / "src" / "sparktui" / "probes" / "target_script.py"
MB = 1e6


def status_kb(pid: int) -> dict[str, int]:
    out = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                k, _, v = line.partition(":")
                if k in ("VmRSS", "VmHWM"):
                    out[k] = int(v.split()[0])
    except OSError:
        pass
    return out


def one_run(python: str, nv, h) -> None:
    rfd, wfd = os.pipe()
    base_used = nv.nvmlDeviceGetMemoryInfo(h).used
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}  # the training interpreter's own packages
    proc = subprocess.Popen([python, str(SCRIPT), "--fd", str(wfd), "--mode", "torch"], pass_fds=(wfd,),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    os.close(wfd)
    stage = ["(start)"]
    stats: dict[str, dict[str, float]] = {}
    times: dict[str, float] = {}
    done = threading.Event()

    def events() -> None:
        with os.fdopen(rfd) as f:
            for line in f:
                try:
                    ev = json.loads(line)
                except ValueError:
                    continue
                if ev.get("event") == "begin":
                    stage[0] = ev["stage"]
                    times[ev["stage"]] = time.monotonic()
                elif ev.get("event") in ("end", "done", "error", "skip"):
                    if ev.get("stage") in times:
                        times[ev["stage"]] = time.monotonic() - times[ev["stage"]]
        done.set()

    threading.Thread(target=events, daemon=True).start()
    while proc.poll() is None:
        s = status_kb(proc.pid)
        gpu = None
        try:
            for p in nv.nvmlDeviceGetComputeRunningProcesses(h):
                if p.pid == proc.pid and p.usedGpuMemory is not None:
                    gpu = p.usedGpuMemory
        except nv.NVMLError:
            pass
        dev = nv.nvmlDeviceGetMemoryInfo(h).used - base_used
        st = stats.setdefault(stage[0], {"rss": 0, "hwm": 0, "gpu": 0, "dev": 0, "n": 0, "rss_sum": 0})
        if s:
            st["rss"] = max(st["rss"], s.get("VmRSS", 0) * 1024)
            st["hwm"] = max(st["hwm"], s.get("VmHWM", 0) * 1024)
            st["rss_sum"] += s.get("VmRSS", 0) * 1024
            st["n"] += 1
        st["gpu"] = max(st["gpu"], gpu or 0)
        st["dev"] = max(st["dev"], dev)
        time.sleep(0.005)
    done.wait(5)
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    print(f"exit {proc.returncode}; device memory used before {base_used / MB:.0f} MB")
    for name, st in stats.items():
        took = times.get(name)
        mean = st["rss_sum"] / st["n"] if st["n"] else 0
        print(f"  stage {name!r:22} {'' if not isinstance(took, float) or took > 1e6 else f'{took:6.2f} s'}"
              f"  RSS peak {st['rss'] / MB:7.1f} MB (mean {mean / MB:7.1f}, VmHWM {st['hwm'] / MB:7.1f})"
              f"  GPU (NVML, its pid) peak {st['gpu'] / MB:6.0f} MB  device used +{st['dev'] / MB:6.0f} MB  ({st['n']} reads)")
    if proc.returncode:
        print("stderr tail:", err[-800:])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", default=sys.executable, help="the training interpreter (default: this one)")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    import pynvml as nv
    nv.nvmlInit()
    h = nv.nvmlDeviceGetHandleByIndex(0)
    print(f"probe memory: {a.python} {SCRIPT.name} --mode torch; GPU {nv.nvmlDeviceGetName(h)}; "
          f"driver {nv.nvmlSystemGetDriverVersion()}")
    for i in range(a.repeat):
        print(f"run {i + 1} ({'cold' if i == 0 else 'warm'} page cache)")
        one_run(a.python, nv, h)
    return 0


if __name__ == "__main__":
    sys.exit(main())
