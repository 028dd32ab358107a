"""G12: the two-Spark ConnectX-7 link: the link probe on fake /sys trees, counter rates, NCCL settings
from env files, the judge, and the opt-in all_reduce_perf flow with a stand-in binary."""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.flows import nccl_test
from sparktui.gotchas import g12_two_spark_link as g12
from sparktui.probes import link
from tests.conftest import readings_of
from tests.gotchas.builders import PEER
from tests.gotchas.builders import (BOTH, HALVES, OTHER_PORT, REAL_TABLE, g12_judged as judged, link_scan as scan,
                                    make_nic, spark)


# ------------------------------------------------------------------ probe


def test_probe_reads_the_cx7_halves_and_leaves_other_nics_out(tmp_path):
    d = scan(spark(tmp_path, words=(81_250_000_000, 1_000)))
    names = [i["name"] for i in d["interfaces"]]
    assert names == sorted(n for n, _, _ in HALVES + OTHER_PORT)
    up = {i["name"]: i for i in d["interfaces"]}["enp1s0f1np1"]
    assert up["mtu"] == 9000 and up["operstate"] == "up" and up["speed_mbps"] == 200000
    assert up["driver"] == "mlx5_core" and up["pci"] == "0000:01:00.1" and up["device_id"] == "0x1021"
    (port,) = up["rdma"]
    assert port["device"] == "rocep1s0f1" and port["port"] == 1 and port["link_layer"] == "Ethernet"
    assert port["state"] == "4: ACTIVE"
    assert [(g["index"], g["type"]) for g in port["gids"]] == [(0, "IB/RoCE v1"), (1, "RoCE v2"), (2, "IB/RoCE v1"), (3, "RoCE v2")]
    # port_xmit_data counts 4-byte words: 81.25 G words are 325 GB (the sparktop figure)
    assert port["counters"]["port_xmit_data"] == 81_250_000_000
    assert port["port_xmit_data_bytes"] == 325_000_000_000
    assert port["hw_counters"]["rx_write_requests"] == 777
    down = {i["name"]: i for i in d["interfaces"]}["enp1s0f0np0"]
    assert down["speed_mbps"] is None and down["operstate"] == "down"  # -1 while down: N/A, never 0
    assert "reason" not in d


def test_probe_data_holds_its_declared_shape(tmp_path):
    from sparktui.core import shapes
    from tests.test_types import problems

    files = [("run.sh", "export NCCL_IB_HCA=rocep1s0f1\n")]
    d = scan(spark(tmp_path, words=(4, 8)), env={"NCCL_IB_GID_INDEX": "3"}, files=files)
    assert shapes.SHAPES["link"] is shapes.LinkData
    assert problems(d, shapes.LinkData) == []
    assert problems({**d, "interfaces": [{"name": 3}]}, shapes.LinkData)  # the check can fail
    empty = tmp_path / "empty"
    (empty / "sys" / "class" / "net" / "lo").mkdir(parents=True)
    assert problems(scan(empty), shapes.LinkData) == []


def test_probe_one_nic(tmp_path):
    make_nic(tmp_path, *HALVES[0])
    d = scan(tmp_path)
    assert [i["name"] for i in d["interfaces"]] == ["enp1s0f1np1"]


def test_probe_no_cx7_at_all_is_a_reading_with_a_reason(tmp_path):
    make_nic(tmp_path, "enP7s7", "0007:01:00.0", None, mtu=1500, driver="r8169")
    d = scan(tmp_path)
    assert d["interfaces"] == []
    assert "no ConnectX-7" in d["reason"] and "infiniband" in d["reason"]


def test_probe_no_rdma_driver(tmp_path):
    for name, pci, _ in HALVES:
        make_nic(tmp_path, name, pci, None)
    d = scan(tmp_path)
    assert len(d["interfaces"]) == 2 and all(i["rdma"] == [] for i in d["interfaces"])
    assert "mlx5_ib" in d["reason"] and d["rdma_seen"] is False


def test_probe_missing_sys_is_a_failed_reading(tmp_path):
    r = link.read(Config(), root=str(tmp_path / "nope"), env={})
    assert r.data is None and "does not exist" in (r.error or "")


def test_probe_unreadable_sys_is_a_failed_reading(tmp_path, monkeypatch):
    net = tmp_path / "sys" / "class" / "net"
    net.mkdir(parents=True)
    real = Path.iterdir

    def denied(self):
        if self == net:
            raise PermissionError(13, "Permission denied")
        return real(self)

    monkeypatch.setattr(Path, "iterdir", denied)  # chmod 0 does not stop root, who runs these tests here
    r = link.read(Config(), root=str(tmp_path), env={})
    assert r.data is None and "unreadable: Permission denied" in (r.error or "")


def test_probe_garbage_sysfs_values_are_none_not_a_crash(tmp_path):
    make_nic(tmp_path, *HALVES[0])
    net = tmp_path / "sys" / "class" / "net" / "enp1s0f1np1"
    (net / "mtu").write_text("garbage\n")
    (net / "speed").unlink()
    port = tmp_path / "sys" / "class" / "infiniband" / "rocep1s0f1" / "ports" / "1"
    (port / "counters" / "port_rcv_data").write_bytes(b"\xff\xfe\n")
    d = scan(tmp_path)
    i = d["interfaces"][0]
    assert i["mtu"] is None and i["speed_mbps"] is None
    assert "port_rcv_data_bytes" not in i["rdma"][0]


def test_registered_probe_runs_on_this_machine_without_raising():
    from sparktui.probes import names, safe_read

    assert "link" in names()
    r = safe_read("link", Config())
    assert r.probe == "link" and "probe crashed" not in (r.error or "")
    assert isinstance(r.data["interfaces"], list) if r.data is not None else bool(r.error)


# ------------------------------------------------------------------ rates


def test_rates_bytes_per_second_per_port(tmp_path):
    before = scan(spark(tmp_path / "a", words=(1_000_000, 2_000_000)))
    after = scan(spark(tmp_path / "b", words=(1_000_000 + 2_500_000_000, 2_000_000 + 250_000_000)))
    rates = link.rates(before, after, dt_s=0.5)
    # 2.5 G words = 10 GB out in 0.5 s = 20 GB/s; 250 M words = 1 GB in = 2 GB/s
    assert rates["rocep1s0f1/1"] == {"tx_Bps": 20e9, "rx_Bps": 2e9}


def test_rates_counter_reset_and_missing_port_are_none(tmp_path):
    before = scan(spark(tmp_path / "a", words=(5_000, 5_000)))
    after = scan(spark(tmp_path / "b", words=(10, 6_000)))
    after["read_at"] = before["read_at"] + 2.0
    rates = link.rates(before, after)
    assert rates["rocep1s0f1/1"] == {"tx_Bps": None, "rx_Bps": 2000.0}
    before["interfaces"] = []
    assert link.rates(before, after)["rocep1s0f1/1"] == {"rx_Bps": None, "tx_Bps": None}
    assert link.rates(None, after) == {}


# ------------------------------------------------------------------ NCCL settings


def test_nccl_settings_from_env_files_and_configs():
    files = [
        ("run.sh", textwrap.dedent("""\
            #!/bin/bash
            # export NCCL_IB_HCA=commented_out
            export NCCL_SOCKET_IFNAME=enp1s0f1np1
            export NCCL_IB_HCA="rocep1s0f1,roceP2p1s0f1"
            mpirun -x NCCL_IB_GID_INDEX=3 -x NCCL_NET_GDR_LEVEL=LOC ./train
            """)),
        ("compose.yaml", "services:\n  t:\n    environment:\n      NCCL_IB_MERGE_NICS: '1'\n      - NCCL_IB_HCA=rocep1s0f1\n"),
        ("Dockerfile", "ENV NCCL_IB_GID_INDEX 5\n"),
        ("cfg.json", '{"env": {"NCCL_SOCKET_IFNAME": "enP2p1s0f1np1"}}'),
    ]
    s = link.nccl_settings({"NCCL_IB_HCA": "rocep1s0f1", "PATH": "/bin"}, files)
    assert s["NCCL_IB_HCA"][0] == {"value": "rocep1s0f1", "source": "environment"}
    assert s["NCCL_IB_HCA"][1] == {"value": "rocep1s0f1,roceP2p1s0f1", "source": "run.sh", "line": 4}
    assert s["NCCL_IB_HCA"][2]["source"] == "compose.yaml"
    assert all(r["value"] != "commented_out" for r in s["NCCL_IB_HCA"])
    assert [r["value"] for r in s["NCCL_IB_GID_INDEX"]] == ["3", "5"]
    assert s["NCCL_NET_GDR_LEVEL"][0]["value"] == "LOC"
    assert s["NCCL_IB_MERGE_NICS"][0]["value"] == "1"
    assert [r["value"] for r in s["NCCL_SOCKET_IFNAME"]] == ["enp1s0f1np1", "enP2p1s0f1np1"]


def test_nccl_settings_ignore_lookalikes_and_garbage():
    s = link.nccl_settings({}, [("x.sh", "echo $NCCL_IB_HCA\nMY_NCCL_IB_HCA=x\n"), ("bin", "\x00\xff" * 50)])
    assert s == {}


def test_read_files_skips_unreadable(tmp_path):
    (tmp_path / "a.env").write_text("NCCL_IB_HCA=rocep1s0f1\n")
    got = link.read_files([str(tmp_path / "a.env"), str(tmp_path / "missing.env")])
    assert got == [(str(tmp_path / "a.env"), "NCCL_IB_HCA=rocep1s0f1\n")]


# ------------------------------------------------------------------ judge


def test_ok_with_both_halves_jumbo_and_roce_v2(tmp_path):
    v = judged(spark(tmp_path), env=BOTH)
    assert v.status is Status.OK, v.details
    assert "enp1s0f1np1" in v.summary and "9000" in v.summary
    ev = {e.what: e.value for e in v.evidence}
    assert ev["NCCL_IB_HCA"] == "rocep1s0f1,roceP2p1s0f1"
    assert ev["GID 3 type"] == {"rocep1s0f1": "RoCE v2", "roceP2p1s0f1": "RoCE v2"}


def test_mtu_1500_warns_with_the_ip_link_command(tmp_path):
    v = judged(spark(tmp_path, mtu=1500), env=BOTH)
    assert v.status is Status.WARN and "MTU 1500" in v.summary
    assert "sudo ip link set dev enp1s0f1np1 mtu 9000" in v.fix


@pytest.mark.parametrize("mtu, status", [(8999, Status.WARN), (9000, Status.OK)])
def test_mtu_threshold(tmp_path, mtu, status):
    assert judged(spark(tmp_path, mtu=mtu), env=BOTH).status is status


@pytest.mark.parametrize("speed, status", [(199_999, Status.WARN), (200_000, Status.OK)])
def test_speed_threshold(tmp_path, speed, status):
    v = judged(spark(tmp_path, speed=speed), env=BOTH)
    assert v.status is status
    if status is Status.WARN:
        assert "199 Gb/s < 200 Gb/s" in v.summary


def test_hca_unset_warns_default_3gbs_with_export_line(tmp_path):
    v = judged(spark(tmp_path), env={"NCCL_SOCKET_IFNAME": "enp1s0f1np1"})
    assert v.status is Status.WARN and "NCCL_IB_HCA is not set" in v.summary and "~3 GB/s" in v.summary
    assert "export NCCL_IB_HCA=roceP2p1s0f1,rocep1s0f1" in v.fix


def test_hca_naming_one_half_when_both_are_up(tmp_path):
    v = judged(spark(tmp_path), env={**BOTH, "NCCL_IB_HCA": "rocep1s0f1"})
    assert v.status is Status.WARN and "one NIC half" in v.summary
    assert "export NCCL_IB_HCA=roceP2p1s0f1,rocep1s0f1" in v.fix


def test_hca_one_named_is_fine_when_one_half_is_up(tmp_path):
    v = judged(spark(tmp_path, cabled=HALVES[:1]), env={**BOTH, "NCCL_IB_HCA": "=rocep1s0f1:1"})
    assert v.status is Status.OK, v.details


def test_hca_from_a_launch_file_names_the_file(tmp_path):
    files = [("launch.sh", "export NCCL_IB_HCA=rocep1s0f1\nexport NCCL_IB_GID_INDEX=3\n")]
    v = judged(spark(tmp_path), env={"NCCL_SOCKET_IFNAME": "enp1s0f1np1"}, files=files)
    assert v.status is Status.WARN and "launch.sh:1" in v.summary


def test_hca_exclusion_keeping_both_is_ok(tmp_path):
    v = judged(spark(tmp_path), env={**BOTH, "NCCL_IB_HCA": "^rocep1s0f0,roceP2p1s0f0"})
    assert v.status is Status.OK, v.details


def test_gid_index_not_roce_v2_warns_and_names_the_v2_index(tmp_path):
    v = judged(spark(tmp_path), env={**BOTH, "NCCL_IB_GID_INDEX": "2"})
    assert v.status is Status.WARN and "not RoCE v2" in v.summary and "RoCE v2 is index 3" in v.summary
    assert "export NCCL_IB_GID_INDEX=3" in v.fix


def test_gid_index_on_an_empty_slot_warns(tmp_path):
    v = judged(spark(tmp_path), env={**BOTH, "NCCL_IB_GID_INDEX": "5"})
    assert v.status is Status.WARN and "empty slot" in v.summary


def test_gid_index_garbage_warns(tmp_path):
    v = judged(spark(tmp_path), env={**BOTH, "NCCL_IB_GID_INDEX": "three"})
    assert v.status is Status.WARN and "not a number" in v.summary


def test_link_down_with_a_peer_warns(tmp_path):
    v = judged(spark(tmp_path, cabled=[]), env=BOTH)
    assert v.status is Status.WARN and v.summary.startswith("link down")


def test_link_down_without_peer_or_multinode_skips(tmp_path):
    v = judged(spark(tmp_path, cabled=[]), env=BOTH, cfg=Config())
    assert v.status is Status.SKIP and "no cabled ConnectX-7 link is up" in v.summary


def test_cabled_link_up_is_judged_even_without_peer(tmp_path):
    v = judged(spark(tmp_path, mtu=1500), env=BOTH, cfg=Config())
    assert v.status is Status.WARN


def test_multinode_launch_from_tpscan_applies(tmp_path):
    tp = {"files": {"/w/train.sh": {"nodes": "multi", "node_count": 2}, "junk": "not a dict"}}
    v = judged(spark(tmp_path, cabled=[]), env=BOTH, cfg=Config(), tpscan=tp)
    assert v.status is Status.WARN
    assert {e.what: e.value for e in v.evidence}["multi-node launches"] == ["/w/train.sh (2 nodes)"]


def test_tpscan_garbage_is_tolerated(tmp_path):
    v = judged(spark(tmp_path, cabled=[]), env=BOTH, cfg=Config(), tpscan={"files": ["x"]})
    assert v.status is Status.SKIP


def test_no_cx7_with_peer_is_unknown_and_without_is_skip(tmp_path):
    make_nic(tmp_path, "enP7s7", "0007:01:00.0", None, mtu=1500, driver="r8169")
    v = judged(tmp_path)
    assert v.status is Status.UNKNOWN and "no ConnectX-7" in v.summary
    assert judged(tmp_path, cfg=Config()).status is Status.SKIP


def test_no_rdma_driver_warns_socket_fallback(tmp_path):
    for name, pci, _ in HALVES:
        make_nic(tmp_path, name, pci, None)
    v = judged(tmp_path, env=BOTH)
    assert v.status is Status.WARN and "no RDMA device" in v.summary and "mlx5_ib" in v.summary


def test_failed_reading_is_unknown_with_a_peer(tmp_path):
    v = g12.judge(readings_of(link=None), PEER)
    assert v.status is Status.UNKNOWN and "could not be read" in v.summary
    assert g12.judge(readings_of(link=None), Config()).status is Status.SKIP
    assert g12.judge(readings_of(), PEER).status is Status.UNKNOWN  # probe never ran


def test_garbage_link_data_does_not_crash(tmp_path):
    data = {"interfaces": [{"name": "x", "operstate": "up", "mtu": "big", "speed_mbps": "fast",
                            "rdma": [{"device": "mlx5_0", "gids": [{"index": "a"}]}]}, "junk"],
            "nccl": {"NCCL_IB_HCA": [{"value": 3}], "NCCL_IB_GID_INDEX": [{"value": "1", "source": "environment"}]}}
    v = g12.judge(readings_of(link=data), PEER)
    # "big"/"fast" are not numbers: no MTU or speed claim; a non-text NCCL_IB_HCA counts as unset
    assert v.status is Status.WARN and v.summary.startswith("NCCL_IB_HCA is not set")
    assert "not checked: x: MTU unreadable ('big')" in v.details
    assert "not checked: x: link speed unreadable ('fast')" in v.details
    assert "not checked: state of the RDMA ports unreadable: mlx5_0" in v.details


def test_gotcha_object():
    assert g12.GOTCHA.id == "G12" and g12.GOTCHA.title == "Two-Spark link (ConnectX-7, NCCL)"
    assert g12.GOTCHA.probes == ("link",) and not g12.GOTCHA.intrusive
    assert "G12" in g12.GOTCHA.explain()


# ------------------------------------------------------------------ busbw and the opt-in flow


def test_parse_real_table():
    p = nccl_test.parse(REAL_TABLE)
    (row,) = p["rows"]
    assert row == {"size": 17179869184, "count": 4294967296, "type": "float", "redop": "sum", "root": -1,
                   "time_us": 724155.0, "algbw_gbs": 23.72, "busbw_gbs": 23.72, "wrong": 0,
                   "in_place_time_us": 724087.0, "in_place_algbw_gbs": 23.73, "in_place_busbw_gbs": 23.73,
                   "in_place_wrong": 0}
    assert p["avg_busbw_gbs"] == 23.7236 and p["errors"] == []


def test_parse_na_wrong_and_garbage():
    p = nccl_test.parse("  1024  256  float  sum  -1  30.1  0.03  0.03  N/A  29.9  0.03  0.03  N/A\nnonsense 1 2\n")
    assert p["rows"][0]["wrong"] is None and p["avg_busbw_gbs"] is None
    assert nccl_test.parse("") == {"rows": [], "avg_busbw_gbs": None, "errors": []}
    bad = nccl_test.parse(REAL_TABLE.replace("23.72      0   724087", "23.72      4   724087"))
    assert bad["errors"]


@pytest.mark.parametrize("gbs, status", [
    (23.74, Status.OK), (22.0, Status.OK), (21.99, Status.WARN), (20.1, Status.WARN), (6.01, Status.WARN),
    (6.0, Status.WARN), (3.1, Status.WARN), (50.0, Status.OK), (50.1, Status.UNKNOWN), (0.0, Status.UNKNOWN),
    (None, Status.UNKNOWN), (float("nan"), Status.UNKNOWN)])
def test_judge_busbw_thresholds(gbs, status):
    s, words = g12.judge_busbw(gbs)
    assert s is status
    if gbs is not None and 0 < gbs <= g12.DEFAULT_LIKE_BUSBW_GBS:
        assert "default settings" in words
    if gbs is not None and g12.DEFAULT_LIKE_BUSBW_GBS < gbs < g12.OK_BUSBW_GBS:
        assert "MTU 1500" in words


def test_plan_builds_the_mpirun_command():
    argv = nccl_test.plan(["spark-1", "spark-2"], BOTH)
    line = nccl_test.command_line(argv)
    assert line.startswith("mpirun -np 2 -H spark-1:1,spark-2:1 --mca plm_rsh_agent ssh --mca btl_tcp_if_include enp1s0f1np1")
    assert "-x NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1" in line and "-x NCCL_IB_GID_INDEX=3" in line
    assert line.endswith("all_reduce_perf -b 16G -e 16G -f 2 -g 1 -n 20")
    with pytest.raises(ValueError):
        nccl_test.plan(["spark-1"])
    with pytest.raises(ValueError):
        nccl_test.plan(["spark-1", "-oProxyCommand=x"])


def test_run_without_binary_returns_the_command(tmp_path):
    argv = nccl_test.plan(["spark-1", "spark-2"], BOTH, binary=str(tmp_path / "all_reduce_perf"),
                          mpirun=str(tmp_path / "mpirun"))
    res = nccl_test.run(argv)
    assert res["status"] == "not run" and res["command"] in res["summary"] and "not found" in res["summary"]


def _stand_in(tmp_path: Path, table: str, rc: int = 0) -> list[str]:
    """A stand-in all_reduce_perf printing a real table, and an mpirun that execs the binary's argv."""
    binary = tmp_path / "all_reduce_perf"
    binary.write_text(f"#!{sys.executable}\nimport sys\nsys.stdout.write({table!r})\nsys.stderr.write('NCCL WARN x\\n')\nsys.exit({rc})\n")
    mpirun = tmp_path / "mpirun"
    mpirun.write_text(f"#!{sys.executable}\nimport os, sys\na = sys.argv[1:]\ni = a.index({str(binary)!r})\n"
                      "os.execv(a[i], a[i:])\n")
    for f in (binary, mpirun):
        f.chmod(0o755)
    return nccl_test.plan(["spark-1", "spark-2"], BOTH, binary=str(binary), mpirun=str(mpirun))


def test_run_stand_in_ok(tmp_path):
    res = nccl_test.run(_stand_in(tmp_path, REAL_TABLE))
    assert res["status"] == "ok" and res["busbw_gbs"] == 23.7236 and len(res["rows"]) == 1


def test_run_stand_in_default_settings_warns(tmp_path):
    slow = REAL_TABLE.replace("23.72   23.72", "3.02    3.02").replace("23.7236", "3.0100")
    res = nccl_test.run(_stand_in(tmp_path, slow))
    assert res["status"] == "warn" and "default settings" in res["summary"]


def test_run_stand_in_failure_is_unknown(tmp_path):
    res = nccl_test.run(_stand_in(tmp_path, "", rc=3))
    assert res["status"] == "unknown" and "exited 3" in res["summary"] and "NCCL WARN x" in res["summary"]


def test_mtu_of_the_second_half_named_in_hca_counts(tmp_path):
    """NCCL_SOCKET_IFNAME names one half, NCCL_IB_HCA both: the other half's MTU 1500 still slows RoCE."""
    spark(tmp_path)
    (tmp_path / "sys" / "class" / "net" / "enP2p1s0f1np1" / "mtu").write_text("1500\n")
    v = judged(tmp_path, env=BOTH)
    assert v.status is Status.WARN and v.summary.startswith("enP2p1s0f1np1: MTU 1500")
    assert "sudo ip link set dev enP2p1s0f1np1 mtu 9000" in v.fix
    assert "enp1s0f1np1 mtu" not in v.fix


def test_mtu_of_a_half_nccl_does_not_use_is_not_judged(tmp_path):
    spark(tmp_path)
    (tmp_path / "sys" / "class" / "net" / "enP2p1s0f1np1" / "mtu").write_text("1500\n")
    v = judged(tmp_path, env={**BOTH, "NCCL_IB_HCA": "=rocep1s0f1", "NCCL_SOCKET_IFNAME": "enp1s0f1np1"})
    assert v.status is Status.WARN and "one NIC half" in v.summary  # warned for the HCA, not the MTU
    assert not any("MTU" in d for d in v.details)


def test_slow_link_fix_names_ethtool(tmp_path):
    v = judged(spark(tmp_path, speed=100_000), env=BOTH)
    assert "ethtool enp1s0f1np1" in v.fix and "100 Gb/s" in v.summary


def test_doc_section_has_every_part_and_every_threshold_with_its_value():
    """The checks tests/test_gotcha_doc.py makes for registered gotchas, for G12 before it is registered."""
    from tests.test_gotcha_doc import DOC, literal, numeric_constants, rows, sections

    text = sections(DOC.read_text(encoding="utf-8"))["G12"]
    assert text.startswith(f"## G12: {g12.GOTCHA.title}\n")
    for part in ("**What it judges.**", "**Readings used**", "**Verdicts", "**Unknown when**", "**Thresholds", "**Review mode.**"):
        assert part in text
    assert "| `link`" in text
    documented = rows(text)
    for name, value in numeric_constants(g12).items():
        assert name in documented and literal("G12", name, documented[name]) == value, name
    assert literal("G12", "fleet.peers", documented["fleet.peers"]) == Config().fleet.peers


@pytest.mark.parametrize("mtu", ["garbage", "0", "-1"])
def test_unreadable_mtu_on_the_link_in_use_is_unknown_never_ok(tmp_path, mtu):
    spark(tmp_path)
    (tmp_path / "sys" / "class" / "net" / "enp1s0f1np1" / "mtu").write_text(mtu + "\n")
    v = judged(tmp_path, env=BOTH)
    assert v.status is Status.UNKNOWN and "enp1s0f1np1: MTU unreadable" in v.summary


def test_unreadable_mtu_is_listed_as_not_checked_beside_a_problem(tmp_path):
    spark(tmp_path)
    (tmp_path / "sys" / "class" / "net" / "enp1s0f1np1" / "mtu").unlink()
    v = judged(tmp_path, env={"NCCL_SOCKET_IFNAME": "enp1s0f1np1"})
    assert v.status is Status.WARN and "not checked: enp1s0f1np1: MTU unreadable (None)" in v.details


def test_unreadable_gid_type_is_unknown(tmp_path):
    spark(tmp_path)
    for _, _, dev in HALVES:
        (tmp_path / "sys" / "class" / "infiniband" / dev / "ports" / "1" / "gid_attrs" / "types" / "3").unlink()
    v = judged(tmp_path, env=BOTH)
    assert v.status is Status.UNKNOWN and "type of GID 3 unreadable" in v.summary


def test_rdma_port_down_while_netdev_up_warns(tmp_path):
    v = judged(spark(tmp_path, port_state="1: DOWN"), env=BOTH)
    assert v.status is Status.WARN and "not ACTIVE" in v.summary


def _spoilt_verdicts(data, env_cfg=PEER):
    from tests.test_verdicts_never_lie import _variants

    base = Reading("link", data, source="test", started_at=1.0)
    for kind, what, variant in _variants(base):
        yield kind, what, g12.judge(readings_of(link=variant), env_cfg)


@pytest.mark.parametrize("mtu, env", [(9000, BOTH), (1500, BOTH), (9000, {"NCCL_IB_HCA": "rocep1s0f1"})])
def test_spoilt_evidence_never_improves_a_verdict_to_ok_nor_crashes(tmp_path, mtu, env):
    """The never-lie walk of tests/test_verdicts_never_lie.py on link readings (no recording holds one yet):
    every field removed, every number N/A, 0, 1e15, -1 or a string, and the reading failed both ways."""
    data = scan(spark(tmp_path, mtu=mtu), env=env)
    base = g12.judge(readings_of(link=data), PEER)
    assert base.status is (Status.OK if (mtu, env) == (9000, BOTH) else Status.WARN)
    lies, n = [], 0
    for kind, what, v in _spoilt_verdicts(data):
        n += 1
        if v.status is Status.OK and (base.status is not Status.OK or kind == "failed"):
            lies.append(f"{what}: {v.summary}")
    assert n > 100 and not lies, lies[:20]


def test_suggested_settings_from_a_link_reading(tmp_path):
    d = scan(spark(tmp_path), env={"NCCL_IB_MERGE_NICS": "1"})
    assert nccl_test.suggested_settings(d) == {"NCCL_IB_MERGE_NICS": "1", "NCCL_IB_HCA": "roceP2p1s0f1,rocep1s0f1",
                                               "NCCL_SOCKET_IFNAME": "enP2p1s0f1np1", "NCCL_IB_GID_INDEX": "3"}
    d2 = scan(tmp_path, env=BOTH)
    assert nccl_test.suggested_settings(d2) == {k: v for k, v in BOTH.items()}
    assert nccl_test.suggested_settings(None) == {} and nccl_test.suggested_settings({"interfaces": "x"}) == {}
