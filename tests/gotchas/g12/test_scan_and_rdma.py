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
from tests.gotchas.builders import PEER
from tests.gotchas.builders import HALVES, spark

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


# ------------------------------------------------------------------ 2. RDMA traffic as telemetry


def _set_words(root: Path, rdma: str, xmit: int, rcv: int) -> None:
    c = root / "sys" / "class" / "infiniband" / rdma / "ports" / "1" / "counters"
    (c / "port_xmit_data").write_text(f"{xmit}\n")
    (c / "port_rcv_data").write_text(f"{rcv}\n")


def test_rdma_reader_two_readings_give_bytes_per_second_summed_over_ports(tmp_path):
    root = spark(tmp_path, words=(1_000, 2_000))  # 4 RDMA ports, 1000 words out and 2000 in each
    r = link.RdmaReader(str(root))
    first, err = r.read(now=100.0)
    assert err is None and first["ports"] == 4
    assert first["rx_Bps"] is None and first["tx_Bps"] is None  # one reading is no rate, never 0
    assert first["tx_bytes"] == 4 * 1_000 * 4
    # 2 s later, the cabled half moved 5 GB out and 2.5 GB in (words are 4 bytes)
    _set_words(root, HALVES[0][2], 1_000 + 1_250_000_000, 2_000 + 625_000_000)
    second, err = r.read(now=102.0)
    assert err is None
    assert second["tx_Bps"] == 2.5e9 and second["rx_Bps"] == 1.25e9


def test_rdma_reader_counter_reset_is_none_then_recovers(tmp_path):
    root = spark(tmp_path, words=(10_000, 10_000))
    r = link.RdmaReader(str(root))
    r.read(now=0.0)
    _set_words(root, HALVES[0][2], 0, 0)
    d, _ = r.read(now=1.0)
    assert d["rx_Bps"] is None and d["tx_Bps"] is None
    _set_words(root, HALVES[0][2], 250, 0)
    d, _ = r.read(now=2.0)
    assert d["tx_Bps"] == 1000.0 and d["rx_Bps"] == 0.0


def test_rdma_reader_no_device_is_hidden_and_looked_for_again_later(tmp_path):
    (tmp_path / "sys" / "class" / "net").mkdir(parents=True)
    r = link.RdmaReader(str(tmp_path))
    assert r.read(now=0.0) == (None, None)
    spark(tmp_path / "later")  # a driver loaded later: found after REDISCOVER_S, not before
    (tmp_path / "sys" / "class" / "infiniband").symlink_to(tmp_path / "later" / "sys" / "class" / "infiniband")
    assert r.read(now=1.0) == (None, None)
    d, err = r.read(now=link.RdmaReader.REDISCOVER_S + 1)
    assert err is None and d["ports"] == 4


def test_rdma_reader_garbage_and_vanished_counters_give_a_reason(tmp_path):
    root = spark(tmp_path)
    r = link.RdmaReader(str(root))
    r.read(now=0.0)
    c = root / "sys" / "class" / "infiniband" / HALVES[0][2] / "ports" / "1" / "counters"
    (c / "port_rcv_data").write_text("garbage\n")
    d, err = r.read(now=1.0)
    assert d is None and "unreadable" in err
    (c / "port_rcv_data").unlink()
    d, err = r.read(now=2.0)
    assert d is None and "vanished" in err


def test_sampler_sample_carries_rdma_only_where_there_is_a_device(tmp_path):
    from sparktui.probes.sampler import Sampler

    meminfo = _w(tmp_path / "meminfo", "MemTotal: 1000 kB\nMemAvailable: 500 kB\n")
    root = spark(tmp_path / "spark", words=(0, 0))
    s = Sampler(meminfo_path=str(meminfo), sys_root=str(root))
    first = s.take()
    assert first["rdma"]["ports"] == 4 and first["rdma"]["rx_Bps"] is None
    assert "rdma" not in (first.get("errors") or {})
    none = Sampler(meminfo_path=str(meminfo), sys_root=str(tmp_path / "nothing")).take()
    assert "rdma" not in none and "rdma" not in (none.get("errors") or {})


def test_rdma_line_in_the_telemetry_panel():
    from sparktui.ui.panels.telemetry import rdma_line

    assert rdma_line({"t": 1.0}) is None  # no RDMA device: hidden
    assert rdma_line({"rdma": {"rx_Bps": 1.25e9, "tx_Bps": 23.7e9, "ports": 4}}) == "RDMA in/out 1.25 / 23.70 GB/s"
    assert rdma_line({"rdma": {"rx_Bps": None, "tx_Bps": None}}) == "RDMA in/out: n/a (rates from the next sample)"
    assert rdma_line({"rdma": {"rx_Bps": None, "tx_Bps": 0.0}}) == "RDMA in/out n/a / 0.00 GB/s"
    line = rdma_line({"errors": {"rdma": "RDMA port counters under /sys/class/infiniband unreadable: Permission denied"}})
    assert line is not None and line.startswith("RDMA in/out: n/a (RDMA port counters under")


async def test_telemetry_panel_shows_rdma_only_with_a_device():
    from textual.app import App

    from sparktui.core.telemetry import History
    from sparktui.ui.panels.telemetry import TelemetryPanel

    class One(App):
        def compose(self):
            yield TelemetryPanel(id="tp")

    def hist(**extra) -> History:
        h = History(10)
        h.append({"t": 1.0, "gpus": [{"index": 0, "temp_c": 50, "power_w": 30.0, "sm_mhz": 2400}],
                  "mem": {"MemTotal": 100, "MemAvailable": 60}, **extra})
        return h

    app = One()
    async with app.run_test(size=(100, 30)) as pilot:
        panel = app.query_one(TelemetryPanel)
        panel.show(hist(), Config(), 1.0, 3000.0)
        await pilot.pause()
        assert panel.rdma.display is False
        panel.show(hist(rdma={"rx_Bps": 2.0e9, "tx_Bps": 2.37e10, "ports": 4}), Config(), 1.0, 3000.0)
        await pilot.pause()
        assert panel.rdma.display is True
        assert "RDMA in/out 2.00 / 23.70 GB/s" in str(panel.rdma.render())
        panel.show(hist(errors={"rdma": "RDMA counters vanished under /sys/class/infiniband"}), Config(), 1.0, 3000.0)
        await pilot.pause()
        assert panel.rdma.display is True and "n/a (RDMA counters vanished" in str(panel.rdma.render())
