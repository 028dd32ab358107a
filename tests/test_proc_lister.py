"""The /proc process lister behind the G6 scan: what it rereads and what it trusts.

A fake /proc tree (stat and cmdline files as the kernel writes them) makes every case exact;
the last test compares it with psutil on this machine's real processes."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from sparktui.probes import processes
from sparktui.probes.processes import ProcLister

BOOT = 1_000_000.0
TICK = 100  # SC_CLK_TCK on Linux


class FakeProc:
    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "self").mkdir(parents=True)
        (root / "self" / "stat").write_text("1 (self) S 0")
        (root / "stat").write_text(f"cpu 1 2 3\nbtime {BOOT:.0f}\n")

    def add(self, pid: int, comm: str, argv: list[str], *, started: float, ppid: int = 1, kthread: bool = False) -> None:
        d = self.root / str(pid)
        d.mkdir(exist_ok=True)
        flags = 0x00200000 if kthread else 0x00400000
        ticks = int((started - BOOT) * TICK)
        rest = ["S", str(ppid), "1", "1", "0", "-1", str(flags)] + ["0"] * 12 + [str(ticks)] + ["0"] * 30
        (d / "stat").write_text(f"{pid} ({comm}) " + " ".join(rest))
        (d / "cmdline").write_bytes(b"".join(a.encode() + b"\0" for a in argv))

    def remove(self, pid: int) -> None:
        for f in (self.root / str(pid)).iterdir():
            f.unlink()
        (self.root / str(pid)).rmdir()


@pytest.fixture
def proc(tmp_path, monkeypatch):
    monkeypatch.setattr("os.sysconf", lambda name: TICK)
    return FakeProc(tmp_path / "proc")


def rows(lister: ProcLister) -> dict[int, dict]:
    return {r["pid"]: r for r in lister.list()[0]}


def test_lists_and_classifies_from_stat_and_cmdline(proc):
    now = time.time()
    proc.add(100, "python3", ["python3", "-m", "vllm.entrypoints.openai.api_server", "--model", "m"], started=now - 3600)
    proc.add(101, "VLLM::EngineCor", ["VLLM::EngineCore"], started=now - 3600, ppid=100)
    proc.add(2, "kthreadd", [], started=now - 9000, ppid=0, kthread=True)
    got = rows(ProcLister(str(proc.root)))
    assert got[100]["kind"] == "server" and got[100]["server"] == "vllm" and got[100]["ppid"] == 1
    assert got[101]["kind"] == "server" and got[101]["ppid"] == 100
    assert got[2]["cmdline"] == [] and got[2]["kind"] == ""


def test_a_settled_process_is_not_reread_until_the_full_scan(proc):
    now = time.time()
    proc.add(200, "python", ["python", "serve.py"], started=now - 3600)
    lister = ProcLister(str(proc.root), full_every=3)
    assert rows(lister)[200]["kind"] == ""
    # the same pid now reads as a trainer: a cheap scan keeps what it knew
    proc.add(200, "torchrun", ["torchrun", "train.py"], started=now - 3600)
    assert rows(lister)[200]["name"] == "python"
    assert rows(lister)[200]["name"] == "python"
    got = rows(lister)[200]  # third scan after the first: full
    assert got["name"] == "torchrun" and got["kind"] == "training"


def test_a_young_process_is_reread_every_scan_to_catch_its_rename(proc):
    now = time.time()
    proc.add(300, "python3", ["python3", "-c", "from multiprocessing.spawn import spawn_main"], started=now - 2)
    lister = ProcLister(str(proc.root), full_every=1000)
    assert rows(lister)[300]["kind"] == ""
    proc.add(300, "VLLM::EngineCor", ["VLLM::EngineCore"], started=now - 2)
    assert rows(lister)[300]["kind"] == "server"


def test_a_vanished_pid_is_forgotten_and_its_reuse_read_afresh(proc):
    now = time.time()
    proc.add(400, "python", ["python", "notebook.py"], started=now - 3600)
    lister = ProcLister(str(proc.root), full_every=1000)
    rows(lister)
    proc.remove(400)
    assert 400 not in rows(lister)
    proc.add(400, "torchrun", ["torchrun", "train.py"], started=now - 60)
    assert rows(lister)[400]["kind"] == "training"


def test_after_a_long_gap_the_scan_is_full(proc, monkeypatch):
    now = time.time()
    proc.add(500, "python", ["python", "notebook.py"], started=now - 3600)
    lister = ProcLister(str(proc.root), full_every=1000, max_gap_s=15.0)
    rows(lister)
    proc.add(500, "torchrun", ["torchrun", "train.py"], started=now - 100)  # a new process on the same pid
    lister.last_scan -= 60  # the caller came back a minute later
    assert rows(lister)[500]["kind"] == "training"


def test_a_truncated_kernel_name_takes_the_full_one_from_argv(proc):
    now = time.time()
    proc.add(600, "text-generation", ["/usr/bin/text-generation-launcher", "--model-id", "m"], started=now - 3600)
    got = rows(ProcLister(str(proc.root)))[600]
    assert got["name"] == "text-generation-launcher" and got["server"] == "tgi"


def test_a_process_gone_between_listing_and_reading_is_counted(proc, monkeypatch):
    now = time.time()
    proc.add(700, "python", ["python", "x.py"], started=now - 3600)
    (proc.root / "700" / "stat").unlink()
    found, skipped = ProcLister(str(proc.root)).list()
    assert [r["pid"] for r in found] == [] and skipped["vanished"] == 1


def test_agrees_with_psutil_on_this_machine():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "lister-marker", "x"])
    try:
        time.sleep(0.2)
        before = {r["pid"]: r for r in processes._psutil_candidates()[0]}
        ours = {r["pid"]: r for r in ProcLister().list()[0]}
        after = {r["pid"]: r for r in processes._psutil_candidates()[0]}
        # processes that did not start, exit or exec while we looked (tests run beside this one)
        stable = {p for p in before.keys() & after.keys() if before[p] == after[p]}
        assert child.pid in ours and ours[child.pid]["cmdline"][-2:] == ["lister-marker", "x"]
        assert len(stable) >= 3 and stable <= ours.keys()
        assert [ours[p] for p in sorted(stable)] == [before[p] for p in sorted(stable)]
    finally:
        child.kill()
        child.wait()


# -- sparktui's own processes (issue 12, class 9) -----------------------------------------------

def _cand(pid: int, ppid: int, *argv: str) -> dict:
    return {"pid": pid, "ppid": ppid, "name": argv[0] if argv else "", "cmdline": list(argv)}


def test_own_pids_are_this_process_its_descendants_and_any_sparktui_probe_script():
    cands = [
        _cand(101, 100, "ssh", "-o", "BatchMode=yes", "spark-2", "sparktui", "snapshot"),  # a peer, started by us
        _cand(102, 101, "ssh-askpass"),  # and its child
        _cand(200, 1, "python3", "/venv/bin/vllm", "serve", "m"),  # the user's server
        _cand(300, 1, "/venv/bin/python3", "/venv/lib/python3.12/site-packages/sparktui/probes/bandwidth_script.py",
              "--fd", "9"),  # another sparktui's G5 probe
        _cand(301, 300, "python3", "-c", "pass"),  # a process it started
        _cand(400, 1, "python3", "train.py", "--note", "sparktui/probes/target_script.py"),  # the user's, naming it
    ]
    assert processes.own_pids(cands, 100) == {100, 101, 102, 300, 301}
    assert processes.own_pids(cands, None) == {300, 301}  # exclude_own=False: the scripts still are sparktui's


def test_a_real_child_of_this_process_is_its_own():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "own-marker"])
    try:
        time.sleep(0.2)
        import os

        cands = ProcLister().list()[0]
        assert child.pid in processes.own_pids(cands, os.getpid())
        assert child.pid not in processes.own_pids(cands, None)
    finally:
        child.kill()
        child.wait()


# -- NVML's per-process memory: N/A stays N/A (class 1) -------------------------------------------

def test_nvml_na_is_none_never_zero_and_a_known_figure_wins_across_lists():
    from sparktui.probes.nvml import NvmlSession
    from sparktui.testing import fake_nvml

    gib = 1024 ** 3
    with fake_nvml.installed(fake_nvml.gb10()) as f:
        f.set_processes([(10, None), (11, None), (12, 0xFFFFFFFFFFFFFFFF), (13, 77 * gib)],
                        graphics=[(11, 2 * gib)])
        s = NvmlSession()
        try:
            nv = processes.nvml_processes(s)
        finally:
            s.close()
    assert nv["ok"] and nv["pids"] == {10: None, 11: 2 * gib, 12: None, 13: 77 * gib}
    assert nv["compute"] == {10, 11, 12, 13}
