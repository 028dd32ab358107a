"""G12 bounds and consistency (issue 22, Seen 9): what NCCL is told to use must exist, carry the
ConnectX-7 link and be up; an MTU the hardware cannot take is a misread; operstate `unknown` is never
dropped silently. Judged on fake /sys trees laid out as a Spark's (tests/gotchas/g12/test_link.py `spark`:
netdevs enp1s0f{0,1}np{0,1} / enP2p1s0f{0,1}np{0,1}, RDMA devices rocep1s0f{0,1} / roceP2p1s0f{0,1},
port 1 each, `4: ACTIVE` / `5: LinkUp`, the Realtek enP7s7 and lo beside them), and through
`sparktui check --sys-root DIR`.

NCCL's syntax (docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html): NCCL_SOCKET_IFNAME and
NCCL_IB_HCA are comma-separated prefixes, `^` first excludes, `=` makes names exact, `<hca>:<port>`
names a port. The ConnectX maximum MTU is what `ip -d link` shows on mlx5 ports: `maxmtu 9978`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from sparktui.cli.main import main
from sparktui.core.verdict import Status
from sparktui.gotchas import g12_two_spark_link as g12
from tests.gotchas.builders import BOTH, HALVES, OTHER_PORT, g12_judged as judged, make_nic, spark

A, B = "enp1s0f1np1", "enP2p1s0f1np1"
RA, RB = "rocep1s0f1", "roceP2p1s0f1"


def _set(root: Path, rel: str, text: str) -> None:
    (root / rel).write_text(text + "\n")


# ------------------------------------------------------------------ NCCL_SOCKET_IFNAME


@pytest.mark.parametrize("value", ["lo", "=lo", "enP7s7", "enp1s0f1np9", "eth0", "^enp1s0f1np1,enP2p1s0f1np1", "^en"])
def test_socket_ifname_that_leaves_no_connectx7_link_is_a_warning(tmp_path, value):
    v = judged(spark(tmp_path), env={**BOTH, "NCCL_SOCKET_IFNAME": value})
    assert v.status is Status.WARN, v.summary
    problem = next(d for d in v.details if d.startswith("NCCL_SOCKET_IFNAME="))
    assert problem.startswith(f"NCCL_SOCKET_IFNAME={value} (environment) ")
    assert f"export NCCL_SOCKET_IFNAME={B}" in v.fix  # the first up half, in the probe's (sorted) order


def test_the_reason_names_loopback_a_missing_name_and_the_10gbe_port(tmp_path):
    root = spark(tmp_path)
    lo = judged(root, env={**BOTH, "NCCL_SOCKET_IFNAME": "lo"})
    assert lo.summary == (f"NCCL_SOCKET_IFNAME=lo (environment) selects no ConnectX-7 link that is up ({B}, {A}): "
                          "it selects lo, not a ConnectX-7 interface (lo is loopback: the other Spark is not "
                          "reachable over it)")
    gone = judged(root, env={**BOTH, "NCCL_SOCKET_IFNAME": "enp1s0f1np9"})
    assert gone.summary.endswith("'enp1s0f1np9': no such interface in /sys/class/net")
    realtek = judged(root, env={**BOTH, "NCCL_SOCKET_IFNAME": "=enP7s7"})
    assert "it selects enP7s7, not a ConnectX-7 interface" in realtek.summary
    down = judged(root, env={**BOTH, "NCCL_SOCKET_IFNAME": "=enp1s0f0np0"})  # the uncabled port
    assert "enp1s0f0np0 is not up" in down.summary


@pytest.mark.parametrize("value", [A, f"={A}", "enp1s0f1", "enP2", f"{A},lo", "^lo", "^=docker0", f"^{A}", "en"])
def test_socket_ifname_that_keeps_a_connectx7_link_up_is_ok(tmp_path, value):
    v = judged(spark(tmp_path), env={**BOTH, "NCCL_SOCKET_IFNAME": value})
    assert v.status is Status.OK, (value, v.summary, v.details)


def test_exact_match_is_exact_and_a_prefix_is_a_prefix(tmp_path):
    root = spark(tmp_path)
    assert judged(root, env={**BOTH, "NCCL_SOCKET_IFNAME": "=enp1s0f1"}).status is Status.WARN  # no such exact name
    assert judged(root, env={**BOTH, "NCCL_SOCKET_IFNAME": "enp1s0f1"}).status is Status.OK  # prefix of enp1s0f1np1


# ------------------------------------------------------------------ NCCL_IB_HCA: names and ports that exist


@pytest.mark.parametrize("value, missing", [
    (f"{RA}:9,{RB}:9", f"{RA}:9: /sys/class/infiniband/{RA}/ports/9 does not exist ({RA} has port 1)"),
    (f"={RA}:1,{RB}:2", f"{RB}:2: /sys/class/infiniband/{RB}/ports/2 does not exist ({RB} has port 1)"),
    (f"{RA}:1,{RB}:x", f"{RB}:x: 'x' is not a port number"),
    (f"{RA},{RB},mlx5_0", "mlx5_0: no RDMA device starting with 'mlx5_0' in /sys/class/infiniband"),
    (f"={RA},{RB},roceP2p1s0", "roceP2p1s0: no RDMA device named 'roceP2p1s0'"),
])
def test_hca_naming_a_port_or_device_that_is_not_there_is_a_warning(tmp_path, value, missing):
    v = judged(spark(tmp_path), env={**BOTH, "NCCL_IB_HCA": value})
    assert v.status is Status.WARN, v.summary
    if v.summary.startswith(f"NCCL_IB_HCA={value} (environment) names what is not there: "):
        assert missing in v.summary and v.summary.endswith("; NCCL skips it")  # the halves are covered otherwise
    else:  # a half is left out because of it: that is the summary, and this is why, beside it
        assert v.summary.startswith(f"NCCL_IB_HCA={value} (environment) uses ")
        assert any(d.startswith("NCCL_IB_HCA names what is not there: ") and missing in d for d in v.details)
        assert missing in {e.what: e.value for e in v.evidence}["NCCL_IB_HCA names not found"]


@pytest.mark.parametrize("value", [f"{RA}:1,{RB}:1", f"={RA}:1,{RB}:1", f"{RA},{RB}", "roce", "rocep1s0f1,roceP2",
                                   f"{RA}::0:0,{RB}", "^rocep1s0f0,roceP2p1s0f0", "^=mlx5_9:1"])
def test_hca_naming_ports_that_exist_is_ok(tmp_path, value):
    v = judged(spark(tmp_path), env={**BOTH, "NCCL_IB_HCA": value})
    assert v.status is Status.OK, (value, v.summary, v.details)


# ------------------------------------------------------------------ the selected ports are up


def test_a_named_rdma_port_that_is_down_while_the_other_is_active_is_a_warning(tmp_path):
    for name, pci, rdma in HALVES:
        make_nic(tmp_path, name, pci, rdma, port_state="1: DOWN" if rdma == RB else "4: ACTIVE")
    v = judged(tmp_path, env=BOTH)
    assert v.status is Status.WARN
    assert v.summary == (f"NCCL_IB_HCA={RA},{RB} (environment) names {RB}/1, which is DOWN (phys_state 5: LinkUp, "
                         f"{B} up): NCCL skips a port that is not ACTIVE, so that NIC half carries nothing")


def test_a_named_half_whose_interface_is_down_is_a_warning(tmp_path):
    v = judged(spark(tmp_path, cabled=HALVES[:1]), env=BOTH)  # B is down, its port "1: DOWN" / "3: Disabled"
    assert v.status is Status.WARN
    assert v.summary == (f"NCCL_IB_HCA={RA},{RB} (environment) names {RB}/1, which is DOWN (phys_state 3: Disabled, "
                         f"{B} down): NCCL skips a port that is not ACTIVE, so that NIC half carries nothing")


def test_naming_the_uncabled_port_beside_both_cabled_halves_says_it_costs_nothing_now(tmp_path):
    v = judged(spark(tmp_path), env={**BOTH, "NCCL_IB_HCA": f"{RA},{RB},rocep1s0f0"})
    assert v.status is Status.WARN
    assert v.summary == (f"NCCL_IB_HCA={RA},{RB},rocep1s0f0 (environment) names rocep1s0f0/1, which is DOWN "
                         "(phys_state 3: Disabled, enp1s0f0np0 down): NCCL skips a port that is not ACTIVE (2 named "
                         "ports are up, so it costs nothing now: name only the cabled port's halves)")


def test_a_prefix_covering_the_uncabled_port_is_not_blamed_for_it(tmp_path):
    v = judged(spark(tmp_path), env={**BOTH, "NCCL_IB_HCA": "roce"})  # selects the down f0 halves too
    assert v.status is Status.OK, v.details


def test_a_named_port_with_an_unreadable_state_is_unknown(tmp_path):
    for name, pci, rdma in HALVES:
        make_nic(tmp_path, name, pci, rdma)
    (tmp_path / "sys/class/infiniband" / RB / "ports/1/state").unlink()
    v = judged(tmp_path, env=BOTH)
    assert v.status is Status.UNKNOWN and f"{RB}/1 (named in NCCL_IB_HCA): port state unreadable" in v.details


# ------------------------------------------------------------------ MTU bounds


@pytest.mark.parametrize("mtu, status", [(8999, Status.WARN), (9000, Status.OK), (9216, Status.OK),
                                         (9978, Status.OK), (9979, Status.UNKNOWN), (70_000, Status.UNKNOWN),
                                         (10**23, Status.UNKNOWN)])
def test_mtu_above_the_connectx7_maximum_is_a_misread_not_ok(tmp_path, mtu, status):
    root = spark(tmp_path)
    for name in (A, B):
        _set(root, f"sys/class/net/{name}/mtu", str(mtu))
    v = judged(root, env=BOTH)
    assert v.status is status, v.summary
    if status is Status.UNKNOWN:
        assert v.summary.startswith(f"cannot confirm the link: {B}: MTU {mtu} is above the ConnectX-7 maximum 9978: "
                                    "a misread or an edited reading, not a setting")


def test_another_nics_netdev_is_bounded_at_9216():
    base = {"name": "eth5", "driver": "r8169", "operstate": "up", "speed_mbps": 200_000,
            "rdma": [{"device": "rxe0", "port": 1, "state": "4: ACTIVE", "gids": []}]}
    from tests.conftest import readings_of
    from tests.gotchas.builders import PEER

    def judge(mtu):
        data = {"interfaces": [{**base, "mtu": mtu}], "rdma_devices": {"rxe0": [1]},
                "nccl": {"NCCL_IB_HCA": [{"value": "rxe0", "source": "environment"}],
                         "NCCL_SOCKET_IFNAME": [{"value": "eth5", "source": "environment"}]}}
        return g12.judge(readings_of(link=data), PEER)
    assert judge(9216).status is Status.OK
    assert judge(9217).status is Status.UNKNOWN and "Ethernet jumbo maximum 9216" in judge(9217).summary


# ------------------------------------------------------------------ operstate unknown


def test_a_named_half_in_operstate_unknown_is_not_dropped(tmp_path):
    root = spark(tmp_path)
    _set(root, f"sys/class/net/{B}/operstate", "unknown")
    v = judged(root, env=BOTH)
    assert v.status is Status.UNKNOWN
    assert v.summary == (f"cannot confirm the link: {B}: operstate 'unknown' (carrier 1): cannot tell whether this "
                         "link is up")


def test_every_link_unknown_or_down_is_unknown_not_link_down(tmp_path):
    root = spark(tmp_path, cabled=HALVES[:1])
    _set(root, f"sys/class/net/{A}/operstate", "unknown")
    v = judged(root, env=BOTH)
    assert v.status is Status.UNKNOWN and v.summary.startswith("cannot tell whether the link is up: ")
    assert f"{A}: operstate 'unknown'" in v.summary


def test_an_unnamed_interface_in_operstate_unknown_is_left_out(tmp_path):
    root = spark(tmp_path)
    _set(root, "sys/class/net/enp1s0f0np0/operstate", "unknown")  # the uncabled port, not in NCCL_IB_HCA
    assert judged(root, env=BOTH).status is Status.OK


# ------------------------------------------------------------------ the probe and --sys-root


def test_the_probe_lists_every_netdev_and_every_rdma_port(tmp_path):
    from tests.gotchas.builders import link_scan as scan

    d = scan(spark(tmp_path))
    assert {"lo", "enP7s7", A, B} <= set(d["netdevs"])
    assert d["rdma_devices"] == {RA: [1], RB: [1], "rocep1s0f0": [1], "roceP2p1s0f0": [1]}


def _check_json(capsys, *argv: str) -> tuple[int, dict]:
    code = main(["check", "G12", "--json", *argv])
    doc = json.loads(capsys.readouterr().out)
    (g,) = [v for v in doc["checks"] if v["id"] == "G12"]
    assert doc["source"].startswith("live, /sys under ")
    return code, g


def test_check_sys_root_judges_the_tree_given(tmp_path, monkeypatch, capsys):
    root = spark(tmp_path / "copied")
    (tmp_path / "empty").mkdir()
    for k in list(os.environ):
        if k.startswith("NCCL_"):
            monkeypatch.delenv(k)
    common = ("--sys-root", str(root), "--peer", "spark-2", "--path", str(tmp_path / "empty"))
    for k, val in BOTH.items():
        monkeypatch.setenv(k, val)
    code, g = _check_json(capsys, *common)
    assert code == 0 and g["status"] == "ok", g["summary"]
    assert g["summary"] == f"{B}, {A} up at MTU 9000/9000, NCCL_IB_HCA={RA},{RB}"
    monkeypatch.setenv("NCCL_SOCKET_IFNAME", "lo")
    code, g = _check_json(capsys, *common)
    assert code == 1 and g["summary"].startswith("NCCL_SOCKET_IFNAME=lo (environment) selects no ConnectX-7 link")
    monkeypatch.setenv("NCCL_SOCKET_IFNAME", A)
    _set(root, f"sys/class/net/{B}/mtu", "70000")
    code, g = _check_json(capsys, *common)
    assert code == 3 and g["status"] == "unknown" and "MTU 70000 is above the ConnectX-7 maximum 9978" in g["summary"]


def test_check_sys_root_refuses_a_missing_folder_and_a_snapshot(tmp_path, capsys):
    assert main(["check", "G12", "--sys-root", str(tmp_path / "nope")]) == 64
    assert "no such folder" in capsys.readouterr().err
    (tmp_path / "s.json").write_text("{}")
    assert main(["check", "G12", "--sys-root", str(tmp_path), "--snapshot", str(tmp_path / "s.json")]) == 64
    assert "--snapshot and --sys-root are alternatives" in capsys.readouterr().err


def test_the_parser_follows_ncclss_documented_examples():
    p = g12.parse_nccl_list
    assert p("=mlx5_0:1,mlx5_1:1", ports=True) == g12.NcclList(False, True, (("mlx5_0", "1"), ("mlx5_1", "1")))
    assert p("^=mlx5_1,mlx5_4", ports=True) == g12.NcclList(True, True, (("mlx5_1", None), ("mlx5_4", None)))
    assert p("mlx5_0::0:0", ports=True).tokens == (("mlx5_0", None),)  # empty port: every port
    mlx = p("mlx5_1", ports=True)
    assert mlx.selects_port("mlx5_10", 1) and not p("=mlx5_1", ports=True).selects_port("mlx5_10", 1)
    assert p("^docker").selects_netdev("eth0") and not p("^docker").selects_netdev("docker0")
    assert p("^=docker0").selects_netdev("docker01") and not p("^=docker0").selects_netdev("docker0")


def test_snapshot_sys_root_keeps_the_link_reading_of_the_tree_given(tmp_path, monkeypatch, capsys):
    from sparktui import probes

    root = spark(tmp_path / "copied")
    monkeypatch.setattr(probes, "names", lambda: ["host", "link"])  # the other probes read this machine anyway
    assert main(["snapshot", "--json", "--sys-root", str(root), "--path", str(tmp_path)]) == 0
    doc = json.loads(capsys.readouterr().out)
    reading = doc["readings"]["link"]
    assert reading["data"]["root"] == str(root)
    assert sorted(i["name"] for i in reading["data"]["interfaces"]) == sorted(n for n, _, _ in HALVES + OTHER_PORT)
    assert str(root / "sys/class/net") in reading["source"]
