"""What the checks' tests share: verdicts read back, and the readings, inputs and fake trees more than
one test file builds or uses (the evidence readers were copied into up to seven test files; G6's
process rows and G12's fake /sys trees were imported from one test module by four others). One
module, so a builder is written once; what one file alone uses stays in that file.

Readings are built as the probes return them (plain dicts) and judged through ``readings_of``
(tests/conftest.py); the numbers are GB10's and the public reports' of docs/reference/FACTS.md and
docs/reference/FIELD-FACTS.md.
"""

from __future__ import annotations

import json
import os
import re
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.verdict import Verdict
from sparktui.gotchas import g02_flash_attn as g2
from sparktui.gotchas import g06_contention as g6
from sparktui.gotchas import g08_stale_playbooks as g8
from sparktui.gotchas import g09_container_drift as g9
from sparktui.gotchas import g11_kernel_log as g11
from sparktui.gotchas import g12_two_spark_link as g12
from sparktui.gotchas import g13_driver_flavour as g13
from sparktui.gotchas import REGISTRY
from sparktui.playbooks.github import ClientSettings
from sparktui.probes import link as link_probe
from sparktui.probes import tpscan
from sparktui.runner import judge as judge_one
from tests.conftest import readings_of

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "src" / "sparktui" / "data" / "gb10-demo.jsonl"  # the shipped GB10 recording
GIB = 1024 ** 3
CFG = Config()
NS = "NOT_SUPPORTED (Not Supported)"  # what NVML answers for a field GB10 does not report
T0 = 1_764_000_000.0  # 2025-11-24 16:00:00 UTC


# --- a verdict read back ------------------------------------------------------------------------------

def rows(v: Verdict) -> list[tuple]:
    """Every evidence row, in order: (what, source, value)."""
    return [(e.what, e.source, e.value) for e in v.evidence]


def values(v: Verdict) -> dict[str, Any]:
    """Evidence by what it is: what -> value."""
    return {e.what: e.value for e in v.evidence}


def sourced(v: Verdict) -> dict[str, tuple[str, Any]]:
    """Evidence by what it is, with where it was read: what -> (source, value)."""
    return {e.what: (e.source, e.value) for e in v.evidence}


def value_of(v: Verdict, what: str) -> Any:
    """The value of the first evidence row whose what starts with ``what``."""
    return next(e.value for e in v.evidence if e.what.startswith(what))


# --- G1 and G7: the training interpreter, the CUDA runtime libraries ldconfig lists -------------------

INTERP = "/home/spark/venvs/train/bin/python"

CUDA13 = {"soname": "libcudart.so.13", "major": "13", "path": "/usr/local/cuda-13.0/targets/sbsa-linux/lib/libcudart.so.13"}
CUDA12 = {"soname": "libcudart.so.12", "major": "12", "path": "/usr/local/cuda-12.8/targets/sbsa-linux/lib/libcudart.so.12"}
BLIND = {"available": False, "arch_list": []}  # torch.cuda as a container without --gpus reports it


# --- G1: NVML and the target interpreter's torch ------------------------------------------------------

def g1_nvml(name: str | None, cap: list[int] | None, driver_cuda: str | None = "13.0") -> dict:
    dev: dict = {"index": 0}
    if name is not None:
        dev["name"] = {"value": name}
    if cap is not None:
        dev["compute_capability"] = {"value": cap}
    return {"driver_version": {"value": "580.95.05"}, "cuda_driver_version": {"value": driver_cuda}, "devices": [dev]}


def g1_target(cuda: str | None = "13.0", version: str = "2.9.0+cu130", imp: dict | None = None, wheel: str | None = None,
              **extra) -> dict:
    t = {"interpreter": INTERP, "selected_by": "configured (--python or [target] python)",
         "stages": {"import torch": imp or {"status": "done"}}, "torch": {"version": version, "cuda": cuda},
         "packages": {"torch": wheel if wheel is not None else version}, "python": {"version": "3.12.3", "env": {}}}
    for k, v in extra.items():
        if k == "smoke":
            t["stages"]["first .cuda()"] = v
        else:
            t[k] = v
    return t


# --- G2: flash-attn in the target interpreter ---------------------------------------------------------

def g2_target(fa_stage: dict, packages: dict, fa_data: dict | None = None, torch_warnings: list[str] | None = None) -> dict:
    return {
        "interpreter": "/usr/bin/python3",
        "selected_by": "configured (--python or [target] python)",
        "packages": packages,
        "flash_attn": fa_data,
        "stages": {
            "packages": {"status": "done"},
            "import torch": {"status": "done", "warnings": []},
            "torch.cuda": {"status": "done", "warnings": torch_warnings or []},
            "import flash_attn": fa_stage,
        },
    }


def g2_judge(t):
    return g2.judge(readings_of(target=t), Config())


# --- G3: /proc/meminfo and NVML on GB10 ---------------------------------------------------------------

NVML_GB10 = {"devices": [{"index": 0, "name": {"value": "NVIDIA GB10"},
                          "memory": {"value": None, "error": "NOT_SUPPORTED (Not Supported)"}}]}
DROP = "/proc/sys/vm/drop_caches"  # the command, offered only for reclaimable cache
SWAP_KB = 16777212


# --- G6: processes on the GPU, as the process scan reports them ---------------------------------------

MIB = 1024 ** 2
MEMTOTAL = 127_611_700 * 1024  # MemTotal on a GB10: 121.7 GiB usable
ENGINE_CORE = 89093 * MIB  # `VLLM::EngineCore 89093MiB` (docs/reference/FACTS.md)
LORA = int(3.5 * GIB)  # the <4 GB LoRA that ran cleanly beside vLLM at 0.5


def vllm_cap(fraction: float | None, state: str = "set") -> dict[str, Any]:
    return {"state": state, "fraction": fraction, "source": f"--gpu-memory-utilization {fraction}" if state == "set"
            else "no --gpu-memory-utilization: vLLM's default", "detail": ""}


def vllm(pid: int, fraction: float | None, held: int | None, state: str = "set", listed: bool = True) -> list[dict]:
    """A `vllm serve` launcher (not on the GPU) and its VLLM::EngineCore holding ``held``."""
    c = vllm_cap(fraction, state)
    launcher = {"pid": pid, "ppid": 1877, "kind": "server", "server": "vllm", "name": "vllm serve",
                "command": f"/home/spark/.venv/bin/python3 /home/spark/.venv/bin/vllm serve m --gpu-memory-utilization {fraction}",
                "gpu_mem_bytes": None, "rss_bytes": 2 * GIB, "cap": c, "group": pid}
    core = {"pid": pid + 1, "ppid": pid, "kind": "server", "server": "vllm", "name": "VLLM::EngineCore",
            "command": "VLLM::EngineCore", "gpu_mem_bytes": held, "rss_bytes": 4 * GIB, "cap": c, "group": pid}
    if listed:
        core.update(on_gpu=True, gpu_list="compute")
    return [launcher, core]


def server(pid: int, kind: str, held: int | None, listed: bool = True, name: str = "", state: str = "none",
           fraction: float | None = None) -> dict:
    row = {"pid": pid, "ppid": 1, "kind": "server", "server": kind, "name": name or kind, "command": name or kind,
           "gpu_mem_bytes": held if listed else None, "rss_bytes": 300 * MIB, "group": pid,
           "cap": {"state": state, "fraction": fraction, "source": f"{kind}'s cap", "detail": ""}}
    if listed:
        row.update(on_gpu=True, gpu_list="compute")
    return row


def ollama(pid: int, runner_held: int | None = None, loaded: bool = False) -> list[dict]:
    """`ollama serve` (never on the GPU) and, once a model is loaded, its `ollama runner`."""
    serve = server(pid, "ollama", None, listed=False, name="ollama serve")
    if not loaded:
        return [serve]
    runner = server(pid + 1, "ollama", runner_held, name="ollama runner")
    runner.update(ppid=pid, group=pid)
    return [serve, runner]


def job(pid: int, held: int | None, listed: bool = True, kind: str = "training", name: str = "torchrun",
        gpu_list: str = "compute", rss: int = 7 * GIB) -> dict:
    row = {"pid": pid, "ppid": 3002, "kind": kind, "server": None, "name": name, "command": f"python3 {name}",
           "gpu_mem_bytes": held if listed else None, "rss_bytes": rss, "cap": None, "group": pid}
    if listed:
        row.update(on_gpu=True, gpu_list=gpu_list)
    return row


def snap(*rows: Any, nv_ok: bool = True, inside: bool | None = False, t: float | None = None,
         count: int | None = None, **extra: Any) -> dict:
    flat: list[dict] = []
    for r in rows:
        flat.extend(r if isinstance(r, list) else [r])
    listed = sum(1 for r in flat if r.get("on_gpu"))
    d = {"rows": flat, "nvml": {"ok": nv_ok, "error": None if nv_ok else "NVML_ERROR_LIBRARY_NOT_FOUND",
                                "count": listed if count is None else count},
         "container": {"inside": inside}, "skipped": {"vanished": 0, "denied": 0}}
    if t is not None:
        d["t"] = t
    d.update(extra)
    return d


def g6_readings(data: dict | None, total: Any = MEMTOTAL, available: Any = 100 * GIB, meminfo: bool = True,
                **mem: Any) -> Readings:
    r = Readings()
    r.add(Reading("processes", data, error=None if data is not None else "scan failed", source="test scan"))
    if meminfo:
        m = {k: v for k, v in (("MemTotal", total), ("MemAvailable", available)) if v is not None}
        m.update(mem)
        r.add(Reading("meminfo", m, source="/proc/meminfo"))
    return r


def g6v(data: dict | None, cfg: Config | None = None, **kw: Any) -> Verdict:
    return g6.judge(g6_readings(data, **kw), cfg or Config())


def g6_history(*snaps: dict) -> dict:
    return dict(snaps[-1], history=list(snaps), review=True)


# --- G7: the arch list of a pip cu128 wheel -----------------------------------------------------------

# torch.cuda.get_arch_list() of a pip cu128 wheel (the gb10-demo recording has the same one)
PIP_CU128 = ["sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]


# --- G7: a GPU's capability and the torch build's arch list -------------------------------------------

G7_GOTCHA = REGISTRY["G7"]


def g7_nvml(name: str, cap: list[int]) -> dict:
    na = {"value": None, "error": "NOT_SUPPORTED (Not Supported)"}
    return {"driver_version": {"value": "580.95.05"}, "cuda_driver_version": {"value": "13.0"},
            "devices": [{"index": 0, "name": {"value": name}, "compute_capability": {"value": cap},
                         "memory": na, "power_limit_w": na}]}


G7_GB10 = g7_nvml("NVIDIA GB10", [12, 1])


def g7_target(arch: list[str] | None, env: dict | None = None, available: bool = True, cuda: str | None = "13.0",
              version: str = "2.9.0+cu130") -> dict:
    tc = {"available": available, "arch_list": arch if arch is not None else []}
    if available:
        tc.update(device_count=1, devices=[{"index": 0, "name": "NVIDIA GB10", "capability": [12, 1]}])
    return {"interpreter": "/home/spark/venvs/train/bin/python", "selected_by": "configured",
            "python": {"version": "3.12.3", "env": env or {}},
            "torch": {"version": version, "cuda": cuda},
            "torch_cuda": tc,
            "stages": {"import torch": {"status": "done"}, "torch.cuda": {"status": "done"}}}


def g7_judged(**readings):
    return judge_one(G7_GOTCHA, readings_of(**readings), Config())


# --- G8: the playbooks' open issues -------------------------------------------------------------------

NOW = 1_780_000_000.0  # 2026-05-28
DAY = 86400.0


def g8_verdict(d: dict) -> Verdict:
    return g8.judge(readings_of(playbook_issues=d), Config())


# --- G8: the GitHub client's settings and the probe against a local server ----------------------------

PLAYBOOKS_REPO = "NVIDIA/dgx-spark-playbooks"


class Clock:
    def __init__(self, t: float = 1_800_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def client_settings(url: str, tmp_path, clock=None, **kw) -> ClientSettings:
    base = dict(api_url=url, repo=PLAYBOOKS_REPO, ttl_s=600, timeout_s=2.0, retries=2, backoff_s=0.01,
                cache_dir=tmp_path / "gh-cache", clock=clock or Clock())
    base.update(kw)
    return ClientSettings(**base)


def g8_judged_live(url: str, tmp_path, slugs=("vllm",)):
    """The probe and G8's judge end to end against the loopback server."""
    from sparktui.core.config import Config
    from sparktui.core.readings import Readings
    from sparktui.gotchas.g08_stale_playbooks import judge
    from sparktui.probes import playbooks as probe

    cfg = Config().with_overrides(playbooks={"slugs": list(slugs), "api_url": url})
    reading = probe.read(cfg, settings=client_settings(url, tmp_path), token=None)
    r = Readings()
    r.add(reading)
    return judge(r, cfg)


# --- G8: a playbook_issues reading --------------------------------------------------------------------

def g8_data(**kw):
    d = {
        "configured": True, "repo": "NVIDIA/dgx-spark-playbooks", "api_url": "https://api.github.com",
        "api_host": "api.github.com", "slugs": ["vllm"], "commands": [], "unknown_slugs": [],
        "issues_checked": 87, "pull_requests_skipped": 4, "truncated": False, "matches": [], "matches_total": 0,
        "source": "network", "fetched_at": NOW, "checked_at": NOW, "age_s": 0.0, "error": None,
        "rate_limit": {"limit": 60, "remaining": 57, "reset_at": NOW + 3000, "limited": False},
        "requests": 1, "auth": "anonymous: 60 requests/hour", "folders": {},
    }
    d.update(kw)
    return d


# --- G9: the NGC container's packages -----------------------------------------------------------------

NGC_TORCH = "2.10.0a0+b558c986e8.nv25.11"


def g9_judge(**readings: Any) -> Verdict:
    return g9.judge(readings_of(**readings), Config())


# --- G10: launch files written into a folder and scanned ----------------------------------------------

MB = 1024 * 1024


def tp_put(root: Path, rel: str, text: str | bytes, mode: int | None = None) -> Path:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        p.write_bytes(text.replace(b"@", b""))
    else:
        p.write_text(text.replace("@", ""))
    if mode is not None:
        p.chmod(mode)
    return p


def tp_put_hydra(root: Path, rel: str, text: str) -> Path:
    """``tp_put`` for configs that use Hydra's ``group@pkg``: only an ``@`` before a digit is dropped."""
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(re.sub(r"@(?=\d)", "", text))  # `@2` -> `2`; Hydra's `group@pkg` stays
    return p


RECIPES = ROOT / "tests" / "data" / "recipes"  # real recipes, each with its source in MANIFEST.toml


def tp_scan(*paths, max_bytes: int = 4 * MB, **kw) -> dict:
    data = tpscan.scan([str(p) for p in paths], max_bytes, **kw)
    json.loads(json.dumps(data))  # plain JSON, as snapshots need
    return data


def scan_as_nobody(root: Path) -> dict:
    """Run the scan in a forked child that dropped root (uid 65534), so permissions apply."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        code = 0
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            out = json.dumps(tpscan.scan([str(root)], 4 * MB)).encode()
            while out:
                out = out[os.write(w, out):]
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    os.close(w)
    chunks = []
    while True:
        b = os.read(r, 65536)
        if not b:
            break
        chunks.append(b)
    os.close(r)
    _, status = os.waitpid(pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        pytest.skip("cannot drop root privileges here to test permission errors")
    return json.loads(b"".join(chunks))


def best_of(runs: int, fn) -> float:
    """CPU seconds of this thread (other work on a shared machine does not count), best run."""
    best = float("inf")
    for _ in range(runs):
        t0 = time.thread_time()
        fn()
        best = min(best, time.thread_time() - t0)
    return best


# --- G11: kernel-log lines as real kernels print them -------------------------------------------------

KMSG_T0 = 1_764_870_000.0  # 2025-12-04, a time the kmsg reader computes (boot epoch + usec since boot)
XID79 = "NVRM: Xid (PCI:000f:01:00): 79, pid=4242, name=python3, GPU has fallen off the bus."
OOM_SUMMARY = ("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
               "task_memcg=/user.slice/user-1000.slice/session-3.scope,task=python3,pid=4242,uid=1000")
OOM_KILLED = ("Out of memory: Killed process 4242 (python3) total-vm:131234567kB, anon-rss:104857600kB, "
              "file-rss:2048kB, shmem-rss:1024kB, UID:1000 pgtables:210000kB oom_score_adj:0")
AER_CORR = "pcieport 0009:00:00.0: AER: Corrected error received: 0009:01:00.0"  # the 4.x-5.x wording
LOCKUP = "watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [python3:4242]"


def g11_verdict(d: dict) -> Verdict:
    return g11.judge(readings_of(kernel_log=d), Config())


# --- G12: a two-Spark link ----------------------------------------------------------------------------

PEER = replace(Config(), fleet=replace(Config().fleet, peers=["spark-2"]))  # a second Spark is named
V4 = "0000:0000:0000:0000:0000:ffff:c0a8:640a"  # ::ffff:192.168.100.10
LL = "fe80:0000:0000:0000:0ec4:7aff:fe12:3456"
GIDS = [(0, LL, "IB/RoCE v1"), (1, LL, "RoCE v2"), (2, V4, "IB/RoCE v1"), (3, V4, "RoCE v2")]


# --- G12: a Spark's ConnectX-7 netdevs and RDMA ports as fake /sys trees ------------------------------

# A DGX Spark's ConnectX-7: each QSFP port appears as two PCIe halves (domains 0000 and 0002),
# netdevs enp1s0f{0,1}np{0,1} / enP2p1s0f{0,1}np{0,1}, RDMA devices rocep1s0f{0,1} / roceP2p1s0f{0,1}.
HALVES = [("enp1s0f1np1", "0000:01:00.1", "rocep1s0f1"), ("enP2p1s0f1np1", "0002:01:00.1", "roceP2p1s0f1")]
OTHER_PORT = [("enp1s0f0np0", "0000:01:00.0", "rocep1s0f0"), ("enP2p1s0f0np0", "0002:01:00.0", "roceP2p1s0f0")]


def write_line_file(p: Path, text: str) -> None:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text + "\n")


def make_nic(root: Path, name: str, pci: str, rdma: str | None, *, mtu: int = 9000, oper: str = "up",
             speed: int = 200000, driver: str = "mlx5_core", gids=GIDS, words=(0, 0), port_state="4: ACTIVE") -> None:
    dev = root / "sys" / "devices" / "platform" / pci
    drv = root / "sys" / "bus" / "pci" / "drivers" / driver
    drv.mkdir(parents=True, exist_ok=True)
    dev.mkdir(parents=True, exist_ok=True)
    if not (dev / "driver").exists():
        os.symlink(drv, dev / "driver")
    write_line_file(dev / "vendor", "0x15b3" if driver == "mlx5_core" else "0x10ec")
    write_line_file(dev / "device", "0x1021" if driver == "mlx5_core" else "0x8127")
    net = root / "sys" / "class" / "net" / name
    net.mkdir(parents=True)
    os.symlink(dev, net / "device")
    (dev / "net" / name).mkdir(parents=True)
    write_line_file(net / "mtu", str(mtu))
    write_line_file(net / "operstate", oper)
    write_line_file(net / "carrier", "1" if oper == "up" else "0")
    write_line_file(net / "speed", str(speed if oper == "up" else -1))
    if rdma:
        ib = root / "sys" / "class" / "infiniband" / rdma
        ib.mkdir(parents=True)
        os.symlink(dev, ib / "device")
        port = ib / "ports" / "1"
        write_line_file(port / "state", port_state if oper == "up" else "1: DOWN")
        write_line_file(port / "phys_state", "5: LinkUp" if oper == "up" else "3: Disabled")
        write_line_file(port / "rate", "200 Gb/sec (4X HDR)" if oper == "up" else "10 Gb/sec (4X SDR)")
        write_line_file(port / "link_layer", "Ethernet")
        for i, gid, typ in gids:
            write_line_file(port / "gids" / str(i), gid)
            write_line_file(port / "gid_attrs" / "types" / str(i), typ)
            write_line_file(port / "gid_attrs" / "ndevs" / str(i), name)
        for i in range(len(gids), len(gids) + 3):  # empty slots
            write_line_file(port / "gids" / str(i), link_probe.ZERO_GID)
        write_line_file(port / "counters" / "port_xmit_data", str(words[0]))
        write_line_file(port / "counters" / "port_rcv_data", str(words[1]))
        write_line_file(port / "counters" / "port_xmit_packets", "12345")
        write_line_file(port / "hw_counters" / "out_of_sequence", "0")
        write_line_file(port / "hw_counters" / "rx_write_requests", "777")


def spark(root: Path, *, mtu: int = 9000, cabled: list = HALVES, **kw) -> Path:
    """A Spark with both ports' halves present, the cabled ones up, plus the Realtek 10 GbE."""
    for name, pci, rdma in HALVES + OTHER_PORT:
        up = (name, pci, rdma) in cabled
        make_nic(root, name, pci, rdma, mtu=mtu if up else 1500, oper="up" if up else "down", **kw)
    make_nic(root, "enP7s7", "0007:01:00.0", None, mtu=1500, driver="r8169")
    (root / "sys" / "class" / "net" / "lo").mkdir(parents=True)
    return root


def link_scan(root: Path, env=None, files=()):
    data, err = link_probe.scan(str(root), env or {}, files)
    assert err is None, err
    assert data is not None
    return data


BOTH = {"NCCL_IB_HCA": "rocep1s0f1,roceP2p1s0f1", "NCCL_SOCKET_IFNAME": "enp1s0f1np1", "NCCL_IB_GID_INDEX": "3"}


def g12_judged(root: Path, env=None, files=(), cfg: Config = PEER, **more):
    data, err = link_probe.scan(str(root), env if env is not None else {}, files)
    r = Reading("link", data, error=err, source="test", started_at=1.0)
    return g12.judge(readings_of(link=r, **more), cfg)


REAL_TABLE = """\
# nThread 1 nGpus 1 minBytes 17179869184 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0
#
# Using devices
#  Rank  0 Group  0 Pid 412345 on    spark-1 device  0 [0x01] NVIDIA GB10
#  Rank  1 Group  0 Pid 398765 on    spark-2 device  0 [0x01] NVIDIA GB10
#
#                                                              out-of-place                       in-place
#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong
#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)
 17179869184    4294967296     float     sum      -1   724155   23.72   23.72      0   724087   23.73   23.73      0
# Out of bounds values : 0 OK
# Avg bus bandwidth    : 23.7236
#
"""


# --- G13: the driver as NVML names it -----------------------------------------------------------------

GB10_NVML = {"driver_version": {"value": "580.95.05"},
             "devices": [{"name": {"value": "NVIDIA GB10"}, "compute_capability": {"value": [12, 1]}}]}
H100_NVML = {"driver_version": {"value": "580.95.05"},
             "devices": [{"name": {"value": "NVIDIA H100 80GB HBM3"}, "compute_capability": {"value": [9, 0]}}]}


def g13_verdict(data: dict, nvml: dict = GB10_NVML) -> Verdict:
    return g13.judge(readings_of(driver_flavour=data, nvml=nvml), CFG)


# --- G13: /proc and /sys as the NVIDIA driver lays them out -------------------------------------------

OPEN_NVRM = ("NVRM version: NVIDIA UNIX Open Kernel Module for aarch64  {v}  Release Build  "
             "(dvs-builder@U22-I3-AE18-23-3)  Tue Sep 23 09:55:41 UTC 2025\n"
             "GCC version:  gcc version 13.3.0 (Ubuntu 13.3.0-6ubuntu2~24.04) \n")
GPU_INFO = ("Model: \t\t NVIDIA GB10\nIRQ:   \t\t 98\nGPU UUID: \t GPU-5c2e0a8e-0000-0000-0000-000000000000\n"
            "Video BIOS: \t ??.??.??.??.??\nBus Type: \t PCIe\nDMA Size: \t 40 bits\n")


def write_tree_file(root: Path, rel: str, text: str) -> None:
    p = root / rel
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)


def driver_tree(root: Path, *, nvrm: str | None = OPEN_NVRM, version: str | None = "580.95.05",
                sys_version: str | None = None, module_dir: bool = True, taint: str | None = None,
                release: str | None = "6.11.0-1016-nvidia", arch: str | None = "aarch64",
                gpu_info: str | None = GPU_INFO, bios: bool = True) -> Path:
    if nvrm is not None:
        write_tree_file(root, "proc/driver/nvidia/version", nvrm.format(v=version))
    if module_dir:
        (root / "sys/module/nvidia").mkdir(parents=True, exist_ok=True)
        if sys_version is not None:
            write_tree_file(root, "sys/module/nvidia/version", sys_version + "\n")
        if taint is not None:
            write_tree_file(root, "sys/module/nvidia/taint", taint + "\n")
    if gpu_info is not None:
        write_tree_file(root, "proc/driver/nvidia/gpus/000f:01:00.0/information", gpu_info)
    if release is not None:
        write_tree_file(root, "proc/sys/kernel/osrelease", release + "\n")
    if arch is not None:
        write_tree_file(root, "proc/sys/kernel/arch", arch + "\n")
    if bios:
        write_tree_file(root, "sys/class/dmi/id/bios_version", "5.36_0ACUM018\n")
        write_tree_file(root, "sys/class/dmi/id/bios_date", "10/24/2025\n")
    return root


def unread(gpu: dict, errors: dict | None) -> dict:
    """A telemetry sample's GPU with the fields in ``errors`` not read: None, with the driver's
    reason in its ``errors`` (a reasons mask not read takes its decoded reasons with it)."""
    for k, why in (errors or {}).items():
        gpu[k] = None
        if k == "reasons_mask":
            gpu["reasons"] = None
        gpu["errors"][k] = why
    return gpu
