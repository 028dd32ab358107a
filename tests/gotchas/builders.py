"""What the checks' tests share: verdicts read back, and the readings and inputs more than one test
file builds the same way. One module, so a builder is written once (they were copied into up to
seven test files each); what one file alone uses stays in that file.

Readings are built as the probes return them (plain dicts) and judged through ``readings_of``
(tests/conftest.py); the numbers are GB10's and the public reports' of docs/reference/FACTS.md and
docs/reference/FIELD-FACTS.md.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from sparktui.core.config import Config
from sparktui.core.verdict import Verdict
from sparktui.gotchas import g08_stale_playbooks as g8
from sparktui.gotchas import g09_container_drift as g9
from sparktui.gotchas import g11_kernel_log as g11
from sparktui.gotchas import g13_driver_flavour as g13
from tests.conftest import readings_of

ROOT = Path(__file__).resolve().parents[2]
DEMO = ROOT / "src" / "sparktui" / "data" / "gb10-demo.jsonl"  # the shipped GB10 recording
GIB = 1024 ** 3
CFG = Config()
NS = "NOT_SUPPORTED (Not Supported)"  # what NVML answers for a field GB10 does not report
T0 = 1_764_000_000.0  # 2025-11-24 16:00:00 UTC


# --- a verdict read back ----------------------------------------------------------------------------

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


# --- G1 and G7: the training interpreter, the CUDA runtime libraries ldconfig lists ----------------------

INTERP = "/home/spark/venvs/train/bin/python"

CUDA13 = {"soname": "libcudart.so.13", "major": "13", "path": "/usr/local/cuda-13.0/targets/sbsa-linux/lib/libcudart.so.13"}
CUDA12 = {"soname": "libcudart.so.12", "major": "12", "path": "/usr/local/cuda-12.8/targets/sbsa-linux/lib/libcudart.so.12"}
BLIND = {"available": False, "arch_list": []}  # torch.cuda as a container without --gpus reports it


# --- G3: /proc/meminfo and NVML on GB10 -----------------------------------------------------------------

NVML_GB10 = {"devices": [{"index": 0, "name": {"value": "NVIDIA GB10"},
                          "memory": {"value": None, "error": "NOT_SUPPORTED (Not Supported)"}}]}
DROP = "/proc/sys/vm/drop_caches"  # the command, offered only for reclaimable cache
SWAP_KB = 16777212


# --- G7: the arch list of a pip cu128 wheel -------------------------------------------------------------

PIP_CU128 = ["sm_80", "sm_86", "sm_90", "sm_100", "sm_120", "compute_120"]


# --- G8: the playbooks' open issues ---------------------------------------------------------------------

NOW = 1_780_000_000.0  # 2026-05-28
DAY = 86400.0


def g8_verdict(d: dict) -> Verdict:
    return g8.judge(readings_of(playbook_issues=d), Config())


# --- G9: the NGC container's packages -------------------------------------------------------------------

NGC_TORCH = "2.10.0a0+b558c986e8.nv25.11"


def g9_judge(**readings: Any) -> Verdict:
    return g9.judge(readings_of(**readings), Config())


# --- G11: kernel-log lines as real kernels print them ----------------------------------------------------

XID79 = "NVRM: Xid (PCI:000f:01:00): 79, pid=4242, name=python3, GPU has fallen off the bus."
OOM_SUMMARY = ("oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0,global_oom,"
               "task_memcg=/user.slice/user-1000.slice/session-3.scope,task=python3,pid=4242,uid=1000")
OOM_KILLED = ("Out of memory: Killed process 4242 (python3) total-vm:131234567kB, anon-rss:104857600kB, "
              "file-rss:2048kB, shmem-rss:1024kB, UID:1000 pgtables:210000kB oom_score_adj:0")
AER_CORR = "pcieport 0009:00:00.0: AER: Corrected error received: 0009:01:00.0"  # the 4.x-5.x wording
LOCKUP = "watchdog: BUG: soft lockup - CPU#3 stuck for 22s! [python3:4242]"


def g11_verdict(d: dict) -> Verdict:
    return g11.judge(readings_of(kernel_log=d), Config())


# --- G12: a two-Spark link ------------------------------------------------------------------------------

PEER = replace(Config(), fleet=replace(Config().fleet, peers=["spark-2"]))  # a second Spark is named
V4 = "0000:0000:0000:0000:0000:ffff:c0a8:640a"  # ::ffff:192.168.100.10
LL = "fe80:0000:0000:0000:0ec4:7aff:fe12:3456"
GIDS = [(0, LL, "IB/RoCE v1"), (1, LL, "RoCE v2"), (2, V4, "IB/RoCE v1"), (3, V4, "RoCE v2")]


# --- G13: the driver as NVML names it -------------------------------------------------------------------

GB10_NVML = {"driver_version": {"value": "580.95.05"},
             "devices": [{"name": {"value": "NVIDIA GB10"}, "compute_capability": {"value": [12, 1]}}]}
H100_NVML = {"driver_version": {"value": "580.95.05"},
             "devices": [{"name": {"value": "NVIDIA H100 80GB HBM3"}, "compute_capability": {"value": [9, 0]}}]}


def g13_verdict(data: dict, nvml: dict = GB10_NVML) -> Verdict:
    return g13.judge(readings_of(driver_flavour=data, nvml=nvml), CFG)
