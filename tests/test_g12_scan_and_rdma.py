"""G12 fed by G10's scan paths (the link probe walks them for launch files), and RDMA traffic as
live telemetry (probes/link.py RdmaReader on a fake /sys tree, shown by the telemetry panel)."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from sparktui.core.config import Config
from sparktui.core.verdict import Status
from sparktui.gotchas import g12_two_spark_link as g12
from sparktui.probes import link
from tests.conftest import readings_of
from tests.test_g12_link import HALVES, PEER, spark

RUN_SH = """#!/usr/bin/env bash
# two-Spark vLLM launch (one NIC half only: the mistake G12 looks for)
export NCCL_SOCKET_IFNAME=enp1s0f1np1
export NCCL_IB_HCA=rocep1s0f1
export NCCL_IB_GID_INDEX=3
vllm serve Qwen/Qwen3-30B --tensor-parallel-size 2
"""


def _cfg(*paths: Path, base: Config = PEER, max_file_bytes: int | None = None) -> Config:
    scan = replace(base.scan, paths=[str(p) for p in paths])
    if max_file_bytes is not None:
        scan = replace(scan, max_file_bytes=max_file_bytes)
    return replace(base, scan=scan)


def _w(p: Path, text: str) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(text)
    return p


# ------------------------------------------------------------------ 1. launch files under the scan paths


def test_launch_script_under_a_scan_path_naming_one_half_warns_naming_that_file(tmp_path):
    root = spark(tmp_path / "root")
    script = _w(tmp_path / "proj" / "launch" / "run.sh", RUN_SH)
    cfg = _cfg(tmp_path / "proj")
    r = link.read(cfg, root=str(root), env={})
    assert r.ok, r.error
    assert r.data["nccl_files"] == [str(script)]
    assert r.data["nccl"]["NCCL_IB_HCA"] == [{"value": "rocep1s0f1", "source": str(script), "line": 4}]
    assert r.data["nccl_scan"] == {"paths": [str(tmp_path / "proj")], "files": 1, "stopped": None}
    v = g12.judge(readings_of(link=r), cfg)
    assert v.status is Status.WARN
    assert f"NCCL_IB_HCA=rocep1s0f1 ({script}:4)" in v.summary
    assert "one NIC half" in v.summary


def test_launch_script_naming_both_halves_is_ok(tmp_path):
    root = spark(tmp_path / "root")
    _w(tmp_path / "proj" / "run.sh", RUN_SH.replace("NCCL_IB_HCA=rocep1s0f1", "NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1"))
    cfg = _cfg(tmp_path / "proj")
    v = g12.judge(readings_of(link=link.read(cfg, root=str(root), env={})), cfg)
    assert v.status is Status.OK, v.summary


def test_the_environment_wins_over_the_launch_file(tmp_path):
    root = spark(tmp_path / "root")
    _w(tmp_path / "proj" / "run.sh", RUN_SH)
    cfg = _cfg(tmp_path / "proj")
    r = link.read(cfg, root=str(root), env={"NCCL_IB_HCA": "rocep1s0f1,roceP2p1s0f1"})
    assert [s["source"] for s in r.data["nccl"]["NCCL_IB_HCA"]][0] == "environment"
    assert g12.judge(readings_of(link=r), cfg).status is Status.OK


def test_walk_reads_launch_kinds_and_skips_what_g10_skips(tmp_path):
    proj = tmp_path / "proj"
    keep = [_w(proj / "a.env", "NCCL_IB_HCA=rocep1s0f1\n"),
            _w(proj / "cfg" / "two.yaml", "env:\n  NCCL_IB_HCA: rocep1s0f1\n"),
            _w(proj / "Dockerfile", "ENV NCCL_IB_HCA=rocep1s0f1\n"),
            _w(proj / "launch", "#!/bin/sh\nexport NCCL_IB_HCA=rocep1s0f1\n")]
    _w(proj / "launcher", "export NCCL_IB_HCA=x\n")  # extensionless without a shell shebang
    _w(proj / "train.py", "os.environ['NCCL_IB_HCA'] = 'x'\n")  # Python is not read
    _w(proj / "notes.md", "export NCCL_IB_HCA=x\n")
    _w(proj / ".git" / "hooks" / "x.sh", "export NCCL_IB_HCA=x\n")
    _w(proj / "node_modules" / "p" / "x.sh", "export NCCL_IB_HCA=x\n")
    _w(proj / "venv" / "pyvenv.cfg", "home = /usr\n")
    _w(proj / "venv" / "bin" / "x.sh", "export NCCL_IB_HCA=x\n")
    _w(proj / "other.sh", "echo no nccl here\n")
    files, stopped = link.launch_files([str(proj)])
    assert stopped is None
    assert sorted(p for p, _ in files) == sorted(str(p) for p in keep)


def test_walk_size_bound_and_single_file_path(tmp_path):
    big = _w(tmp_path / "big.sh", "export NCCL_IB_HCA=rocep1s0f1\n" + "#" * 5000)
    files, _ = link.launch_files([str(tmp_path)], max_file_bytes=4096)
    assert files == []
    files, _ = link.launch_files([str(big)], max_file_bytes=10_000)
    assert [p for p, _ in files] == [str(big)]


def test_walk_entry_and_time_bounds_say_so(tmp_path):
    for i in range(30):
        _w(tmp_path / f"d{i:02}" / "x.sh", "export NCCL_IB_HCA=rocep1s0f1\n")
    files, stopped = link.launch_files([str(tmp_path)], max_files=10)
    assert stopped == "launch-file walk stopped at 10 entries" and len(files) < 10
    files, stopped = link.launch_files([str(tmp_path)], deadline_s=-1.0)
    assert files == [] and stopped is not None and "stopped after" in stopped


def test_missing_garbage_and_unreadable_scan_paths_cost_nothing(tmp_path):
    root = spark(tmp_path / "root")
    locked = tmp_path / "locked"
    _w(locked / "run.sh", RUN_SH)
    _w(tmp_path / "bin.sh", "")
    (tmp_path / "bin.sh").write_bytes(b"\xff\xfeNCCL_IB_HCA=\xff\x00")
    os.chmod(locked, 0)
    try:
        cfg = _cfg(tmp_path / "nope", locked, tmp_path / "bin.sh")
        r = link.read(cfg, root=str(root), env={})
    finally:
        os.chmod(locked, 0o755)
    assert r.ok and r.data["nccl_scan"]["stopped"] is None
    if os.geteuid() != 0:
        assert str(locked / "run.sh") not in r.data["nccl_files"]
    assert str(tmp_path / "bin.sh") in r.data["nccl_files"]


def test_files_given_are_used_as_given_without_a_walk(tmp_path):
    root = spark(tmp_path / "root")
    _w(tmp_path / "proj" / "run.sh", RUN_SH)
    r = link.read(_cfg(tmp_path / "proj"), root=str(root), env={}, files=[("given.env", "NCCL_IB_HCA=roceP2p1s0f1")])
    assert r.data["nccl_files"] == ["given.env"] and "nccl_scan" not in r.data


def test_unquoted_comma_lists_after_equals_keep_both_devices_and_yaml_flow_maps_stop_at_the_comma():
    s = link.nccl_settings({}, [("a.env", "NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1\n"),
                                ("b.sh", "mpirun -x NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 ./t\n"),
                                ("c.yaml", "env: {NCCL_IB_HCA: rocep1s0f1, NCCL_IB_GID_INDEX: 3}\n")])
    assert [r["value"] for r in s["NCCL_IB_HCA"]] == ["rocep1s0f1,roceP2p1s0f1", "rocep1s0f1,roceP2p1s0f1", "rocep1s0f1"]
    assert s["NCCL_IB_GID_INDEX"][0]["value"] == "3"
