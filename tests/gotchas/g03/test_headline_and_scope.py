"""G3 (issue 24): the copyable fix answers the headline's cause (Seen 6), and a machine without a
unified CPU-GPU pool is skip with the reason, not ok (Seen 12).

Seen 6: on the shipped demo recording the headline blamed driver/GPU allocations and processes
(98.2 + 16.3 GiB) while `c` (the card's first code block) copied `echo 3 | sudo tee
/proc/sys/vm/drop_caches`, offered because the recording had another low-MemFree moment, where the
page-cache rule did not even fire. A rule that fired at another moment now says when, in the evidence
(`check --replay FILE G3 -v` and the card) and in its fix block, which comes after the headline's.

Seen 12: on an x86 VM without a GPU, and on a discrete GPU whose memory NVML reports (the lent H200:
tests/data/h200/load-matmul-counters.jsonl, 150754820096 bytes), G3 said ok. GB10 answers
NOT_SUPPORTED for device memory (FACTS.md: nvitop PR #208, leptonai/gpud PR #1170).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sparktui.cli.main import main
from sparktui.core.config import Config
from sparktui.core.readings import Reading, Readings
from sparktui.core.recording import read_recording, readings_from_recording
from sparktui.core.verdict import Status
from sparktui.gotchas import g03_unified_memory as g3
from tests.gotchas.builders import DROP, GIB, NVML_GB10, value_of as ev

ROOT = Path(__file__).resolve().parents[3]
DEMO = ROOT / "src" / "sparktui" / "data" / "gb10-demo.jsonl"
H200 = ROOT / "tests" / "data" / "h200" / "load-matmul-counters.jsonl"
_FENCE = re.compile(r"```[a-z]*\n(.*?)```", re.S)
KB = 1024
TOTAL_KB = 127611680  # GB10 MemTotal
T0 = 1_764_000_000.0  # 16:00:00 UTC


def blocks(fix: str) -> list[str]:
    """The fix's code blocks, as the card copies them (`c` the first)."""
    return [b.strip() for b in _FENCE.findall(fix) if b.strip()]


def gb10(**kb) -> dict:
    m = {"MemTotal": TOTAL_KB, "MemFree": 62914560, "MemAvailable": 104857600, "Buffers": 314572,
         "Cached": 20971520, "AnonPages": 18874368, "Shmem": 524288, "KReclaimable": 1048576,
         "SReclaimable": 1048576, "SwapTotal": 0, "SwapFree": 0, "HugePages_Total": 0, "HugePages_Free": 0,
         "Hugepagesize": 2048}
    m.update(kb)
    return {k: v if k.startswith("HugePages_") else v * KB for k, v in m.items()}


def judged(mem: dict, nvml=NVML_GB10, nvml_error: str | None = None, machine: str | None = "aarch64"):
    r = Readings()
    r.add(Reading("meminfo", mem, source="/proc/meminfo"))
    r.add(Reading("nvml", nvml, error=nvml_error, source="NVML"))
    if machine is not None:
        r.add(Reading("host", {"hostname": "h", "system": "Linux", "kernel": "6.8", "machine": machine},
                      source="uname"))
    return g3.judge(r, Config())


# -- Seen 6: the fix answers the headline -----------------------------------------------------------

def test_demo_headline_blames_holders_and_the_first_block_finds_them_not_a_cache_drop():
    """Fails on 5e064fb: the first block was `sync; echo 3 | sudo tee /proc/sys/vm/drop_caches`."""
    v = g3.judge(readings_from_recording(read_recording(DEMO)), Config())
    assert v.status is Status.WARN
    assert "kernel and driver (GPU allocations among them) 98.2 GiB" in v.summary
    first = blocks(v.fix)[0]
    assert first.startswith("nvidia-smi --query-compute-apps=pid,process_name,used_memory")
    assert DROP not in v.fix  # the page-cache rule fired at no moment of the demo (8% of memory at lowest MemFree)


def test_check_replay_of_the_demo_offers_no_cache_drop(capsys):
    main(["check", "--replay", str(DEMO), "G3", "-v"])
    out = capsys.readouterr().out
    assert "drop_caches" not in out and "nvidia-smi --query-compute-apps" in out


def review(mem: dict, **extra) -> dict:
    return {**mem, "review": True, "t": T0 + 1390, "t0": T0, **extra}


def test_a_cache_rule_at_another_moment_says_when_and_comes_after_the_headlines_block():
    low = {**gb10(MemFree=5242880, MemAvailable=62914560, Cached=60000000), "t": T0 + 600}
    v = judged(review(gb10(MemAvailable=5242880, MemFree=2097152, AnonPages=50000000), low_free=low))
    assert v.status is Status.WARN and v.summary.startswith("lowest MemAvailable 5.0 GiB")
    other = ev(v, "page-cache rule, at another moment")
    assert other.endswith("at 16:10:00 UTC (+00:10:00) (MemAvailable 60.0 GiB)")
    assert ev(v, "worst moment (lowest MemFree)") == "16:10:00 UTC (+00:10:00)"
    got = blocks(v.fix)
    assert got[0].startswith("nvidia-smi --query-compute-apps") and DROP in got[-1]
    assert "**At 16:10:00 UTC (+00:10:00), another moment than the headline's**" in v.fix


def test_a_big_cache_at_the_headlines_moment_is_said_there_not_as_another_moment():
    low = {**gb10(MemFree=5242880, MemAvailable=62914560, Cached=60000000), "t": T0 + 600}
    v = judged(review(gb10(MemAvailable=5242880, MemFree=2097152, Cached=60000000, AnonPages=30000000), low_free=low))
    assert v.status is Status.WARN and "; reclaimable page cache holds" in v.summary
    assert not any(e.what == "page-cache rule, at another moment" for e in v.evidence)
    assert "another moment than the headline's" not in v.fix and DROP in v.fix


def test_a_cache_headline_puts_the_cache_drop_first():
    v = judged(gb10(MemFree=3145728, MemAvailable=89128960, Cached=83886080))
    assert v.status is Status.WARN and v.summary.startswith("reclaimable page cache holds")
    assert DROP in blocks(v.fix)[0]


def test_a_shmem_headline_puts_the_shmem_block_first():
    v = judged(gb10(MemAvailable=5242880, MemFree=2097152, Cached=70000000, Shmem=65011712, AnonPages=20000000))
    assert v.status is Status.WARN and "shmem/tmpfs (/dev/shm)" in v.summary.split(";")[1]
    assert blocks(v.fix)[0].startswith("df -h /dev/shm")


# -- Seen 12: off unified memory, skip with the reason ------------------------------------------------

NO_DRIVER = "NVML unavailable: NVML Shared Library Not Found"


def test_an_x86_vm_without_a_gpu_is_skip_not_ok():
    """Fails on 5e064fb: ok ("MemAvailable ... (floor 8 GiB)")."""
    v = judged(gb10(), nvml=None, nvml_error=NO_DRIVER, machine="x86_64")
    assert v.status is Status.SKIP and v.id == "G3"
    assert v.summary == (f"does not apply: this x86_64 host has no NVIDIA GPU that NVML sees ({NO_DRIVER}): "
                         "no unified CPU-GPU pool")
    assert ev(v, "machine") == "x86_64"


def test_a_discrete_gpu_with_its_own_memory_is_skip_naming_it():
    nvml = {"devices": [{"index": 0, "name": {"value": "NVIDIA H200"},
                         "memory": {"value": {"total": 150754820096, "free": 150000000000, "used": 754820096}}}]}
    v = judged(gb10(), nvml=nvml, machine="x86_64")
    assert v.status is Status.SKIP
    assert "discrete GPU with its own memory (NVML reports GPU 0 (NVIDIA H200) 140.4 GiB)" in v.summary


def test_the_real_h200_recording_is_skip():
    v = g3.judge(readings_from_recording(read_recording(H200)), Config())
    assert v.status is Status.SKIP and "NVIDIA H200" in v.summary


@pytest.mark.parametrize("nvml,err,machine", [
    (NVML_GB10, None, "aarch64"),  # GB10: NOT_SUPPORTED for device memory
    (None, NO_DRIVER, "aarch64"),  # a Spark's container without the driver: proves nothing
    (NVML_GB10, None, "x86_64"),  # an x86 host with a GPU that answers NOT_SUPPORTED: not known discrete
])
def test_unified_or_unknown_is_judged(nvml, err, machine):
    v = judged(gb10(MemAvailable=5242880, MemFree=2097152), nvml=nvml, nvml_error=err, machine=machine)
    assert v.status is Status.WARN


def test_nvml_seeing_no_gpu_with_the_host_unread_is_unknown_not_ok():
    """The dashboard's samples carry no host facts: no GPU seen there could be an x86 VM or a Spark's
    container without the driver."""
    v = judged(gb10(), nvml=None, nvml_error=NO_DRIVER, machine=None)
    assert v.status is Status.UNKNOWN
    nv = next(e for e in v.evidence if e.what == "NVML devices")
    assert (nv.source, nv.value) == ("NVML", f"none: {NO_DRIVER}")
    assert v.summary.startswith("cannot tell whether this machine has a unified CPU-GPU pool: NVML sees no GPU")


def test_nvml_not_asked_is_judged_as_before():
    r = Readings()
    r.add(Reading("meminfo", gb10(), source="/proc/meminfo"))
    assert g3.judge(r, Config()).status is Status.OK


@pytest.mark.parametrize("total", [0, -1, "N/A"])
def test_a_memory_answer_that_is_no_size_is_unknown(total):
    nvml = {"devices": [{"index": 0, "memory": {"value": {"total": total, "free": 0, "used": 0}}}]}
    v = judged(gb10(), nvml=nvml, machine="x86_64")
    assert v.status is Status.UNKNOWN and "neither a size nor an error" in v.summary


def test_one_gpu_of_several_without_a_memory_figure_is_not_called_discrete():
    nvml = {"devices": [{"index": 0, "memory": {"value": {"total": 80 * GIB, "free": 0, "used": 0}}},
                        {"index": 1, "memory": {"value": None, "error": "NOT_SUPPORTED (Not Supported)"}}]}
    assert judged(gb10(), nvml=nvml).status is Status.OK
