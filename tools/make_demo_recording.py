"""Generate src/sparktui/data/gb10-demo.jsonl: a synthetic 25-minute DGX Spark recording.

Modelled on public GB10 reports (docs/reference/FACTS.md), NOT a measurement: idle at ~5 W,
a vLLM server capped at 0.5 loads, a LoRA training job ramps the GPU to ~95 W, the temperature
climbs to 83-85 °C, SW thermal slowdown sets in (NVML field 269's counter grows, clocks and power drop to a
plateau well under the 140 W rating while the temperature sits high), page cache fills what the
processes leave, then the capped server is replaced by an uncapped one and MemAvailable falls
under the 8 GiB floor. Device memory and the power limit read NOT_SUPPORTED, as on real GB10.

The header also carries the probe readings the other checks judge (`readings`), so a replay shows
the whole G1-G10 checklist: the training venv on this Spark got a pip-resolved CUDA 12.8 torch when
Unsloth was installed (G1 fails: the classic Spark mistake), flash-attn is absent (G2 fine), the
vLLM playbook it follows has open issues (G8), a two-Spark launch script sets tensor parallelism
across both boxes (G10). Readings that come from files are produced by the real probes on a
temporary tree and then given the demo host's paths; the rest follow the probes' own shapes.

Deterministic (seeded): `python tools/make_demo_recording.py [OUT]` rewrites the same bytes.
"""

from __future__ import annotations

import math
import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sparktui.core.recording import RecordingWriter, header  # noqa: E402
from sparktui.core.telemetry import decode_reasons  # noqa: E402

GIB = 1024 ** 3
T0 = 1764000000.0  # 2025-11-24 16:00 UTC
INTERVAL = 5.0
DURATION = 25 * 60
PROCESS_EVERY = 60.0
NS = "NOT_SUPPORTED (Not Supported)"
TOTAL_GIB = 121.7
SW_THERMAL = 0x20
IDLE = 0x01

STATIC = {
    "driver_version": {"value": "580.95.05"},
    "cuda_driver_version": {"value": "13.0"},
    "nvml_version": {"value": "13.580.95.05"},
    "devices": [{
        "index": 0,
        "name": {"value": "NVIDIA GB10"},
        "uuid": {"value": "GPU-5b7f3c1e-demo-4000-8000-000000000b10"},
        "compute_capability": {"value": [12, 1]},
        "memory": {"value": None, "error": NS},
        "power_limit_w": {"value": None, "error": NS},
        "power_default_limit_w": {"value": None, "error": NS},
    }],
}
HOST = {"hostname": "spark-demo", "system": "Linux", "kernel": "6.11.0-1016-nvidia", "machine": "aarch64",
        "cpu_count": 20, "os_release": "Ubuntu 24.04.3 LTS", "dmi_product": "NVIDIA DGX Spark",
        "mem_total_bytes": int(TOTAL_GIB * GIB)}

# Timeline (seconds from the start)
VLLM1_START, VLLM1_STOP = 60, 1020
TRAIN_START = 180
VLLM2_START = 1050


def ramp(t: float, start: float, length: float) -> float:
    return 0.0 if t < start else min(1.0, (t - start) / length)


def memory_at(t: float, rnd: random.Random) -> dict[str, int]:
    base = 5.5
    anon = 0.0
    if VLLM1_START <= t < VLLM1_STOP:
        anon += 60.9 * ramp(t, VLLM1_START, 60)  # --gpu-memory-utilization 0.5 of 121.7 GiB
    anon += 16.0 * ramp(t, TRAIN_START, 90)  # LoRA fine-tune: weights, optimizer, activations
    if t >= VLLM2_START:
        anon += 88.0 * ramp(t, VLLM2_START, 150)  # uncapped: grabs what is left
        if 1240 <= t < 1290:
            anon += 5.0  # CUDA graph capture spike
        elif t >= 1290:
            anon += 2.5
    cache_target = 9.0 + 14.0 * ramp(t, VLLM1_START, 60) + 18.0 * ramp(t, TRAIN_START + 30, 240) \
        + 6.0 * ramp(t, 600, 30) + 6.0 * ramp(t, 900, 30) + 12.0 * ramp(t, VLLM2_START, 90)
    shmem, buffers, sreclaim, min_free = 0.8, 0.3, 1.2, 2.4 + rnd.uniform(-0.3, 0.3)
    cache = max(1.5, min(cache_target, TOTAL_GIB - base - anon - buffers - sreclaim - min_free))
    free = TOTAL_GIB - base - anon - cache - buffers - sreclaim
    avail = free + (cache - shmem) * 0.97 + buffers + sreclaim * 0.6
    kb = lambda g: int(g * 1024 * 1024) * 1024  # noqa: E731 - whole kB, as /proc/meminfo has them
    # AnonPages is what processes hold in their own pages (their RSS); on unified memory the GPU
    # allocations (model weights, KV cache) are the driver's and show in none of these fields.
    rss = sum(r["rss_bytes"] for r in processes_at(t)["rows"]) / GIB
    return {"MemTotal": kb(TOTAL_GIB), "MemFree": kb(free), "MemAvailable": kb(avail), "Buffers": kb(buffers),
            "Cached": kb(cache), "SReclaimable": kb(sreclaim), "Shmem": kb(shmem), "SwapTotal": 0, "SwapFree": 0,
            "KReclaimable": kb(sreclaim), "AnonPages": kb(2.9 + rss), "Unevictable": kb(0.03), "Mlocked": kb(0.03),
            "CmaTotal": 0, "CmaFree": 0, "SwapCached": 0, "HugePages_Total": 0, "HugePages_Free": 0,
            "Hugepagesize": 2048 * 1024, "Dirty": kb(0.01), "Mapped": kb(1.1 + 0.2 * ramp(t, TRAIN_START, 60))}


def gpu_at(t: float, state: dict, rnd: random.Random) -> dict:
    train = ramp(t, TRAIN_START, 60)
    loading = (VLLM1_START <= t < VLLM1_START + 45) or (VLLM2_START <= t < VLLM2_START + 60)
    # Temperature: first-order approach to ~84.5 °C under load, ~42 °C idle.
    target = 42.0 + 42.5 * train + (6.0 if loading and not train else 0.0)
    state["temp"] += (target - state["temp"]) * (1 - math.exp(-INTERVAL / 220.0))
    temp = state["temp"] + rnd.uniform(-0.4, 0.4)
    reasons = 0
    if train < 0.05:
        power = rnd.uniform(3.5, 7.5) + (14.0 if loading else 0.0)
        sm = 208 if not loading else rnd.choice((1800, 2100, 2405))
        util = 0 if not loading else rnd.randint(5, 30)
        reasons = IDLE if not loading else 0
    else:
        util = int(min(100, 99 * train + rnd.uniform(-2, 1)))
        power = 4.0 + 92.0 * train + rnd.uniform(-3.5, 3.5)
        sm = 2405 + rnd.choice((0, 0, 13, -13))
        if temp >= 83.0 and t > 700:  # SW thermal slowdown holds the temperature at its ceiling
            if rnd.random() < 0.7:
                reasons = SW_THERMAL
                throttled_s = rnd.uniform(2.0, INTERVAL)
                state["thermal_ns"] += int(throttled_s * 1e9)
                sm = rnd.randint(1880, 2110)
                power = rnd.uniform(69.0, 76.0)
                temp = min(temp, 85.0)
            else:
                power = rnd.uniform(74.0, 79.0)
                sm = rnd.randint(2150, 2300)
    return {
        "index": 0, "temp_c": int(round(temp)), "power_w": round(power, 2), "power_limit_w": None, "sm_mhz": sm,
        "gr_mhz": sm, "mem_mhz": None, "util_gpu": util, "util_mem": 0, "reasons_mask": reasons,
        "reasons": decode_reasons(reasons), "sw_power_cap_ns": 165_687_000, "sync_boost_ns": 0,
        "sw_thermal_ns": state["thermal_ns"], "hw_thermal_ns": 0, "hw_power_brake_ns": 0,
        "mem_used": None, "mem_total": None,
        "errors": {"power_limit_w": NS, "mem_mhz": NS, "mem_used": NS, "mem_total": NS},
    }


def row(pid, ppid, kind, server, name, command, gpu_gib, rss_gib, age, cap=None, group=None, user="spark"):
    r = {"pid": pid, "ppid": ppid, "user": user, "kind": kind, "server": server, "name": name,
         "process_name": name[:15], "command": command, "gpu_mem_bytes": int(gpu_gib * GIB) if gpu_gib is not None else None,
         "rss_bytes": int(rss_gib * GIB), "age_s": round(age, 1), "cap": cap, "group": group or pid}
    if gpu_gib is not None:
        r["on_gpu"], r["gpu_list"] = True, "compute"
    if server:
        r["env"] = {}
    return r


def processes_at(t: float) -> dict:
    rows = []
    if VLLM1_START <= t < VLLM1_STOP:
        cap = {"state": "set", "fraction": 0.5, "source": "--gpu-memory-utilization 0.5", "detail": ""}
        rows.append(row(2141, 1877, "server", "vllm", "vllm serve",
                        "/home/spark/.venv/bin/python3 /home/spark/.venv/bin/vllm serve Qwen/Qwen3-8B "
                        "--gpu-memory-utilization 0.5 --max-model-len 16384 --port 8000",
                        None, 2.1, t - VLLM1_START, cap))
        rows.append(row(2290, 2141, "server", "vllm", "VLLM::EngineCore", "VLLM::EngineCore",
                        56.8 * ramp(t, VLLM1_START, 60), 3.4, t - VLLM1_START - 8,
                        dict(cap, source="--gpu-memory-utilization 0.5 (launcher pid 2141)"), group=2141))
    if t >= TRAIN_START:
        rows.append(row(3310, 3002, "training", None, "torchrun",
                        "/home/spark/ft/.venv/bin/python3 /home/spark/ft/.venv/bin/torchrun --nproc-per-node 1 "
                        "train_lora.py --config configs/qwen3-8b-lora.yaml", None, 0.4, t - TRAIN_START))
        rows.append(row(3325, 3310, "training", None, "train_lora.py",
                        "/home/spark/ft/.venv/bin/python3 -u train_lora.py --config configs/qwen3-8b-lora.yaml",
                        15.2 * ramp(t, TRAIN_START, 90), 6.8, t - TRAIN_START - 3, group=3310))
    if t >= VLLM2_START:
        cap = {"state": "default", "fraction": 0.9, "source": "no --gpu-memory-utilization: vLLM's default", "detail": ""}
        rows.append(row(5120, 1877, "server", "vllm", "vllm serve",
                        "/home/spark/.venv/bin/python3 /home/spark/.venv/bin/vllm serve "
                        "nvidia/Llama-3.3-70B-Instruct-FP8 --max-model-len 32768 --port 8001", None, 2.3,
                        t - VLLM2_START, cap))
        rows.append(row(5188, 5120, "server", "vllm", "VLLM::EngineCore", "VLLM::EngineCore",
                        86.0 * ramp(t, VLLM2_START, 150), 3.9, t - VLLM2_START - 9, cap, group=5120))
    rows.sort(key=lambda r: (-(r.get("gpu_mem_bytes") or 0), r["pid"]))
    on_gpu = sum(1 for r in rows if r.get("on_gpu"))
    return {"rows": rows, "nvml": {"ok": True, "error": None, "count": on_gpu},
            "container": {"inside": False, "markers": [], "cgroup_words": [], "pid1": "systemd"},
            "skipped": {"vanished": 0, "denied": 0}, "scanned": 412, "t": round(T0 + t, 3)}


VENV = "/home/spark/venvs/train"
TORCH_CU128 = "2.9.0+cu128"
TARGET = {
    "crashes": [],
    "cuda_smoke": {"ran": True, "value": 0.0, "seconds": 0.41},
    "cudart": {
        "libcudart.so.12": {"loaded": True, "paths": [f"{VENV}/lib/python3.12/site-packages/nvidia/cuda_runtime/lib/libcudart.so.12"],
                            "runtime_version": 12080},
        "libcudart.so.13": {"loaded": True, "paths": ["/usr/local/cuda-13.0/targets/sbsa-linux/lib/libcudart.so.13"],
                            "runtime_version": 13000},
    },
    "flash_attn": None,
    "interpreter": f"{VENV}/bin/python",
    "packages": {
        "accelerate": "1.11.0", "apex": None, "bitsandbytes": "0.48.2", "datasets": "4.4.1", "deepspeed": None,
        "flash-attn": None, "flash_attn": None, "numpy": "2.3.5", "nvidia-cuda-runtime": None,
        "nvidia-cuda-runtime-cu12": "12.8.90", "nvidia-cuda-runtime-cu13": None, "nvidia-nccl-cu12": "2.27.5",
        "nvidia-nccl-cu13": None, "peft": "0.18.0", "safetensors": "0.7.0", "tokenizers": "0.22.1",
        "torch": TORCH_CU128, "torchaudio": None, "torchvision": "0.24.0+cu128", "transformer-engine": None,
        "transformers": "4.57.1", "triton": "3.5.0", "trl": "0.24.0", "unsloth": "2025.11.3",
        "unsloth_zoo": "2025.11.4", "vllm": None, "xformers": None,
    },
    "python": {"base_prefix": "/usr", "env": {}, "executable": f"{VENV}/bin/python", "implementation": "CPython",
               "machine": "aarch64", "prefix": VENV, "system": "Linux", "version": "3.12.3"},
    "selected_by": "configured (--python or [target] python)",
    "stages": {name: {"seconds": secs, "status": "done", "warnings": []} for name, secs in (
        ("python", 0.0002), ("packages", 0.21), ("import torch", 3.84), ("torch.cuda", 0.62),
        ("cudart", 0.004), ("first .cuda()", 0.41))} | {
        "import flash_attn": {"error": "No module named 'flash_attn'", "error_type": "ModuleNotFoundError",
                              "seconds": 0.0002, "status": "error"}},
    "torch": {"cuda": "12.8", "cudnn": 91002, "file": f"{VENV}/lib/python3.12/site-packages/torch/__init__.py",
              "git_version": "0fabc3ba44823f257e70ce397d989c8de5e362c1", "hip": None, "nccl": "2.27.5",
              "version": TORCH_CU128},
    "torch_cuda": {"arch_list": ["sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"], "available": True,
                   "device_count": 1, "devices": [{"index": 0, "name": "NVIDIA GB10", "capability": [12, 1]}]},
}
CUDALIBS = {"libcudart": [
    {"flags": "libc6,AArch64", "major": "13", "path": "/usr/local/cuda-13.0/targets/sbsa-linux/lib/libcudart.so.13",
     "soname": "libcudart.so.13"},
    {"flags": "libc6,AArch64", "major": "12", "path": "/usr/local/cuda-12.8/targets/sbsa-linux/lib/libcudart.so.12",
     "soname": "libcudart.so.12"},
]}
BANDWIDTH = {  # a kept G5 result from two days before the run, in the GB10 range (FACTS.md)
    "status": "ok", "python": f"{VENV}/bin/python", "measured_at": T0 - 2 * 86400 + 3600, "seconds": 21.7,
    "source": f"{VENV}/bin/python (subprocess)", "device": "NVIDIA GB10", "capability": [12, 1],
    "buffer_bytes": 4 * GIB, "iterations": 40, "repeats": 5, "copy_gbs": 221.4,
    "copy_gbs_all": [221.4, 220.9, 221.8, 221.1, 221.6], "read_gbs": 243.0,
    "read_gbs_all": [242.6, 243.0, 243.3, 242.8, 243.1], "spread_pct": 0.4,
    "convention": "copy: bytes read + written per second; read: bytes read per second (GB = 1e9 bytes)",
}
LAUNCH_FILES = {  # what G10 scans in the user's project folder (two Sparks, one model split across both)
    "serve-70b.sh": "#!/bin/bash\n# Llama 3.1 70B across both Sparks\nvllm serve meta-llama/Llama-3.1-70B-Instruct \\\n"
                    "  --tensor-parallel-size 2 --pipeline-parallel-size 1 \\\n  --distributed-executor-backend ray\n",
    "train/lora.yaml": "model: unsloth/Llama-3.1-8B-Instruct\nlora_r: 16\nper_device_train_batch_size: 2\n",
}
PLAYBOOK_ISSUES = [  # modelled on real issues of NVIDIA/dgx-spark-playbooks (see shared/reference)
    (109, "nvidia/vllm is wrong missing Ray", "https://github.com/NVIDIA/dgx-spark-playbooks/tree/main/nvidia/vllm", 4),
    (88, "vLLM container: tensor-parallel across two Sparks hangs at NCCL init", "nvidia/vllm", 7),
    (68, "SGLang: Mismatch between build.nvidia.com and GitHub playbook container image", "nvidia/sglang", 2),
]


def _reading(probe: str, data, source: str, took_s: float = 0.01, error: str | None = None) -> dict:
    from sparktui.core.readings import Reading

    return Reading(probe, data, error=error, source=source, started_at=T0 - 5.0, took_s=took_s).to_dict()


def _relocate(obj, old: str, new: str):
    """Replace a temporary path by the demo host's, everywhere in a probe's data."""
    if isinstance(obj, str):
        return obj.replace(old, new)
    if isinstance(obj, list):
        return [_relocate(x, old, new) for x in obj]
    if isinstance(obj, dict):
        return {_relocate(k, old, new): _relocate(v, old, new) for k, v in obj.items()}
    return obj


def _playbook_reading(tmp: Path) -> dict:
    """The real G8 probe against a local GitHub-like server holding the issues above."""
    import os

    from sparktui.core.config import Config, PlaybooksConfig
    from sparktui.probes import playbooks
    from sparktui.testing.github_server import make_issue, serve_issues

    issues = [make_issue(n, title, url if url.startswith("http") else
                         f"https://github.com/NVIDIA/dgx-spark-playbooks/tree/main/{url}", comments=c,
                         created_at=f"2025-11-{10 + i:02d}T09:00:00Z")  # fixed: the demo must not drift
              for i, (n, title, url, c) in enumerate(PLAYBOOK_ISSUES)]
    old = {k: os.environ.get(k) for k in ("XDG_CACHE_HOME", "GITHUB_TOKEN", "GH_TOKEN")}
    os.environ["XDG_CACHE_HOME"] = str(tmp / "cache")
    for k in ("GITHUB_TOKEN", "GH_TOKEN"):
        os.environ.pop(k, None)
    try:
        server, _ = serve_issues(issues, commit_dates={"vllm": "2025-10-20T00:00:00Z"})
        with server:
            cfg = Config(playbooks=PlaybooksConfig(slugs=["vllm"], api_url=server.url))
            r = playbooks.read(cfg).to_dict()
            r = _relocate(r, server.url, "https://api.github.com")
            r = _relocate(r, server.url.split("//", 1)[1].rstrip("/"), "api.github.com")
    finally:
        for k, v in old.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
    r["data"]["api_host"] = "api.github.com"
    for k in ("fetched_at", "checked_at"):
        if r["data"].get(k):
            r["data"][k] = T0 - 60.0
    r["data"]["age_s"] = 60.0
    if r["data"].get("rate_limit"):
        r["data"]["rate_limit"]["reset_at"] = T0 + 3000.0
    r["data"]["suggestions"] = []
    r["started_at"], r["took_s"] = T0 - 5.0, 0.38
    return r


def demo_readings() -> dict[str, dict]:
    """Probe readings for the checks the samples cannot judge (the recording header's ``readings``)."""
    import tempfile

    from sparktui.core.config import Config
    from sparktui.probes import container, pins, tpscan

    with tempfile.TemporaryDirectory(prefix="sparktui-demo-") as tmp_s:
        tmp = Path(tmp_s)
        proj = tmp / "project"
        for rel, text in LAUNCH_FILES.items():
            (proj / rel).parent.mkdir(parents=True, exist_ok=True)
            (proj / rel).write_text(text)
        scan = _relocate(tpscan.scan([str(proj)], max_file_bytes=4 * 1024 * 1024), str(proj), "/home/spark/project")
        scan.update(scan_s=0.012, cwd="/home/spark/project")
        root = tmp / "root"
        (root / "proc" / "1").mkdir(parents=True)
        (root / "proc" / "self").mkdir(parents=True)
        (root / "proc" / "1" / "cgroup").write_text("0::/init.scope\n")
        (root / "proc" / "self" / "mountinfo").write_text("24 1 259:2 / / rw,relatime shared:1 - ext4 /dev/nvme0n1p2 rw\n")
        host_env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/home/spark", "VIRTUAL_ENV": VENV}
        cont = container.inspect(root, host_env)
        pin = pins.read(Config()).to_dict()
        shipped = str(Path(pins.SHIPPED_DIR))
        pin = _relocate(pin, shipped, "/home/spark/venvs/tools/lib/python3.12/site-packages/sparktui/data/pins")
        pin["started_at"], pin["took_s"] = T0 - 5.0, 0.002
        playbook = _playbook_reading(tmp)
    return {
        "host": _reading("host", HOST, "uname, /etc/os-release, /proc/meminfo"),
        "nvml": _reading("nvml", STATIC, "NVML (nvidia-ml-py)", 0.06),
        "target": _reading("target", TARGET, f"{VENV}/bin/python (subprocess)", 5.2),
        "cudalibs": _reading("cudalibs", CUDALIBS, "/usr/sbin/ldconfig -p", 0.02),
        "container": _reading("container", cont, "/.dockerenv, /run/.containerenv, /proc/1/cgroup, "
                              "/proc/self/mountinfo, environment", 0.001),
        "pins": pin,
        "tpscan": _reading("tpscan", scan, "scan of /home/spark/project", 0.012),
        "bandwidth_last": _reading("bandwidth_last", BANDWIDTH, "~/.local/state/sparktui/bandwidth-last.json", 0.0002),
        "playbook_issues": playbook,
    }


RUN_TOTAL = 3000  # the LoRA run's optimizer steps (tqdm's total)
RUN_LINES_EVERY = 30.0  # the dashboard writes the run's progress every 30 s (live/run.py RECORD_EVERY_S)


def run_point(t: float, step: int) -> dict:
    """One tqdm update of the LoRA run, as the parser reads it (probes/run_progress.py RunPoint)."""
    return {"t": round(T0 + t, 3), "step": step, "total": RUN_TOTAL, "epoch": None, "rate": None, "rate_unit": "it/s",
            "step_s": None, "elapsed_s": round(t - TRAIN_START - 40, 1), "loss": None, "grad_norm": None,
            "format": "tqdm"}


def run_reading(t: float, points: list[dict], seen: int, last_loss: float) -> dict:
    """The run as the dashboard records it: the progress since the last run line (a delta), the rest whole."""
    from sparktui.core.readings import Reading

    log = {"kind": "fd", "path": "/home/spark/ft/runs/qwen3-8b-lora/train.log", "pane": None, "error": None,
           "size": None, "mtime": None}
    data = {"found": True, "why": None, "pids": [3310, 3325], "alive": True, "started_at": round(T0 + TRAIN_START, 3),
            "command": "/home/spark/ft/.venv/bin/torchrun --nproc_per_node 1 train_lora.py --config "
                       "configs/qwen3-8b-lora.yaml", "log": log, "progress": points, "first": None,
            "points_seen": seen, "events": [], "error": None, "finished": None, "lines_read": seen + 40,
            "cut_lines": 0, "formats": {"tqdm": seen}, "last_line_t": round(T0 + t, 3), "read_at": round(T0 + t, 3)}
    for p in points:
        p["loss"] = last_loss
    return {"run": Reading("run", data, source=log["path"], started_at=round(T0 + t, 3)).to_dict()}


class DemoRun:
    """The LoRA run's steps: 0.9 s a step at 2405 MHz, slower as the SM clock drops (SW thermal
    slowdown), after 40 s of loading; its loss falls from 2.1 with noise."""

    def __init__(self) -> None:
        self.step, self.done, self.pending, self.seen, self.loss = 0, 0.0, [], 0, 2.1
        self.next_line = TRAIN_START + RUN_LINES_EVERY

    def sample(self, t: float, sm_mhz: int, rnd: random.Random) -> None:
        if t < TRAIN_START + 40:
            return
        self.done += INTERVAL / (0.9 * 2405 / max(sm_mhz, 1))
        self.step = min(RUN_TOTAL, int(self.done))
        self.loss = max(0.4, self.loss - 0.0015 + rnd.uniform(-0.01, 0.01))
        self.pending.append(run_point(t, self.step))
        self.seen += 1

    def lines(self, t: float) -> dict | None:
        if t < self.next_line:
            return None
        self.next_line += RUN_LINES_EVERY
        out, self.pending = run_reading(t, self.pending, self.seen, round(self.loss, 4)), []
        return out


def main(out: Path) -> None:
    rnd = random.Random(20251124)
    if out.exists():
        out.unlink()
    head = header(interval_s=INTERVAL, host=HOST, static=STATIC, version="0.1.0", started_at=T0,
                  processes_every_s=PROCESS_EVERY, demo=True, readings=demo_readings(),
                  note="synthetic GB10 recording modelled on public reports (docs/gotchas.md); not a measurement")
    state = {"temp": 42.0, "thermal_ns": 903_158_000}
    run, run_rnd = DemoRun(), random.Random(3325)  # its own stream: the samples stay as they were
    n = 0
    next_proc = 0.0
    with RecordingWriter(out, head) as w:
        t = 0.0
        while t <= DURATION + 1e-9:
            gpu = gpu_at(t, state, rnd)
            w.sample({"t": round(T0 + t, 3), "gpus": [gpu], "mem": memory_at(t, rnd)})
            n += 1
            run.sample(t, gpu["sm_mhz"], run_rnd)
            lines = run.lines(t)
            if lines is not None:
                w.readings(lines, round(T0 + t, 3))
            if t >= next_proc:
                w.processes(processes_at(t))
                next_proc += PROCESS_EVERY
            t += INTERVAL
    print(f"wrote {out}: {n} samples, {out.stat().st_size / 1024:.0f} KiB")


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else ROOT / "src" / "sparktui" / "data" / "gb10-demo.jsonl")
