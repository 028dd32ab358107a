"""G12 judged on plain link readings (no fake /sys tree): every threshold held just inside and just
outside, the evidence of every verdict path (what, source, value), and the fix lines a user copies,
filled from what was read. The numbers are the public two-Spark reports of docs/reference/FIELD-FACTS.md: ~3 GB/s on
NCCL's defaults, 23.7 GB/s with both NIC halves and MTU 9000, 19-21 GB/s at MTU 1500, 200 GbE ports."""

from __future__ import annotations


import pytest

from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.core.verdict import Status
from sparktui.gotchas import g12_two_spark_link as g12
from tests.conftest import readings_of
from tests.gotchas.builders import GIDS, LL, PEER, V4, sourced as ev

ALONE = Config()
A, B = "enp1s0f1np1", "enP2p1s0f1np1"  # the two PCIe halves of the cabled port
RA, RB = "rocep1s0f1", "roceP2p1s0f1"


def port(dev: str, *, state: object = "4: ACTIVE", gids=GIDS, num: object = 1) -> dict:
    return {"device": dev, "port": num, "state": state, "rate": "200 Gb/sec (4X HDR)", "link_layer": "Ethernet",
            "gids": [{"index": i, "gid": g, "type": t} for i, g, t in gids]}


def iface(name: str, dev: str | None, *, mtu: object = 9000, speed: object = 200_000, oper: str = "up", **pkw) -> dict:
    return {"name": name, "operstate": oper, "mtu": mtu, "speed_mbps": speed,
            "rdma": [port(dev, **pkw)] if dev else []}


def nccl(**env: str) -> dict:
    return {k: [{"value": v, "source": "environment"}] for k, v in env.items()}


BOTH = {"NCCL_IB_HCA": f"{RA},{RB}", "NCCL_SOCKET_IFNAME": A, "NCCL_IB_GID_INDEX": "3"}


def link(*ifaces: dict, env: dict | None = None, **more) -> dict:
    return {"interfaces": list(ifaces), "nccl": nccl(**(BOTH if env is None else env)), **more}


def two(**kw) -> list[dict]:
    return [iface(A, RA, **kw), iface(B, RB, **kw)]


def judge(data, cfg: Config = PEER, **more):
    return g12.judge(readings_of(link=data, **more), cfg)


def fix_lines(v) -> list[str]:
    return [ln for ln in v.fix.splitlines() if not ln.startswith("```")]


# ------------------------------------------------------------------ thresholds


def test_the_thresholds_are_the_public_numbers():
    assert g12.JUMBO_MTU == 9000 and g12.MIN_SPEED_MBPS == 200_000 and g12.MIN_MTU == 68
    assert g12.REACHABLE_BUSBW_GBS == 23.7 and g12.DEFAULT_BUSBW_GBS == 3.0
    assert g12.OK_BUSBW_GBS == 22.0 and g12.DEFAULT_LIKE_BUSBW_GBS == 6.0 and g12.MAX_BUSBW_GBS == 50.0


@pytest.mark.parametrize("mtu, status", [(67, Status.UNKNOWN), (68, Status.WARN), (1500, Status.WARN),
                                         (8999, Status.WARN), (9000, Status.OK), (9216, Status.OK)])
def test_mtu_below_ipv4_minimum_is_a_misread_and_from_68_up_a_setting(mtu, status):
    v = judge(link(*two(mtu=mtu)))
    assert v.status is status, v.summary
    if status is Status.UNKNOWN:
        assert v.summary == f"cannot confirm the link: {A}: MTU unreadable (67); {B}: MTU unreadable (67)"
        assert v.details == (f"{A}: MTU unreadable (67)", f"{B}: MTU unreadable (67)")
        assert fix_lines(v) == [f"ip link show {A}", f"ip link show {B}"]
    elif status is Status.WARN:
        assert v.summary.startswith(f"{A}: MTU {mtu} < 9000") and "(+1 more)" in v.summary
        assert "23.7 with jumbo frames" in v.summary
        assert fix_lines(v)[:3] == [f"sudo ip link set dev {A} mtu 9000", f"sudo ip link set dev {B} mtu 9000",
                                    "# the same on the other Spark; persist it in the netplan file (mtu: 9000)"]


@pytest.mark.parametrize("speed, status", [(None, Status.UNKNOWN), (0, Status.UNKNOWN), (-1, Status.UNKNOWN),
                                           (1, Status.WARN), (100_000, Status.WARN), (199_999, Status.WARN),
                                           (200_000, Status.OK), (400_000, Status.OK)])
def test_speed_from_1_mbps_up_is_judged_and_at_or_below_0_is_unreadable(speed, status):
    v = judge(link(iface(A, RA, speed=speed), iface(B, RB)))
    assert v.status is status, v.summary
    if status is Status.UNKNOWN:
        assert v.summary == f"cannot confirm the link: {A}: link speed unreadable ({speed!r})"
        assert fix_lines(v) == [f"ip link show {A}", f"ip link show {B}"]
    elif status is Status.WARN:
        gbs = speed // 1000
        assert v.summary == f"{A}: link speed {gbs} Gb/s < 200 Gb/s (cable or port negotiated down)"
        assert fix_lines(v) == [f"# {A} negotiated {gbs} Gb/s: reseat or replace the QSFP cable, then check",
                                f"ethtool {A}"]


@pytest.mark.parametrize("gbs, status, words", [
    (23.74, Status.OK, "23.74 GB/s bus bandwidth: at the ~23.7 GB/s reported reachable"),
    (22.0, Status.OK, "22.00 GB/s"),
    (21.99, Status.WARN, "below the ~23.7 GB/s reachable"),
    (20.1, Status.WARN, "MTU 1500 gives 19-21 GB/s"),
    (6.31, Status.WARN, "below the ~23.7 GB/s"),
    (6.01, Status.WARN, "below the ~23.7 GB/s"),
    (6.0, Status.WARN, "6.00 GB/s bus bandwidth: NCCL's default settings (~3 GB/s)"),
    (5.69, Status.WARN, "default settings (~3 GB/s)"),
    (3.02, Status.WARN, "MTU 9000 (23.7 GB/s reachable)"),
    (50.0, Status.OK, "50.00 GB/s"),
    (50.01, Status.UNKNOWN, "50.01 GB/s is outside what two Sparks' link can carry (0..50 GB/s)"),
    (-1.0, Status.UNKNOWN, "measurement error"),
])
def test_busbw_bands_with_hard_numbers(gbs, status, words):
    s, text = g12.judge_busbw(gbs)
    assert s is status and words in text, text
    if 6.0 < gbs < 22.0:
        assert "default settings" not in text
    if gbs <= 6.0:
        assert "below the" not in text


# ------------------------------------------------------------------ when G12 applies


@pytest.mark.parametrize("ctx, shown", [
    ({"node_count": 2}, "/w/run.sh (2 nodes)"),
    ({"node_count": 8, "nodes": "single"}, "/w/run.sh (8 nodes)"),
    ({"nodes": "multi"}, "/w/run.sh"),
    ({"nodes": "multi", "node_count": 1}, "/w/run.sh (1 nodes)"),
])
def test_a_multi_node_launch_makes_g12_apply(ctx, shown):
    v = judge(None, ALONE, tpscan={"files": {"/w/run.sh": ctx}})
    assert v.status is Status.UNKNOWN
    assert ev(v)["multi-node launches"] == ("G10 scan (tpscan)", [shown])


@pytest.mark.parametrize("ctx", [{"node_count": 1}, {"node_count": 1, "nodes": "single"}, {"node_count": True},
                                 {"nodes": "MULTI"}, {}, "junk"])
def test_a_single_node_launch_does_not(ctx):
    v = judge(None, ALONE, tpscan={"files": {"/w/run.sh": ctx}})
    assert v.status is Status.SKIP and v.id == "G12"
    assert ev(v)["multi-node launches"] == ("G10 scan (tpscan)", "none seen")
    assert ev(v)["peers"] == ("config [fleet] peers", "none")


# ------------------------------------------------------------------ failed or empty readings


def test_failed_reading_evidence_and_reason():
    r = Reading("link", None, error="/sys/class/net does not exist", source="t", started_at=1.0)
    v = judge(r)
    assert v.id == "G12" and v.status is Status.UNKNOWN
    assert "(/sys/class/net does not exist)" in v.summary and "/sys/class/infiniband are readable" in v.summary
    e = ev(v)
    assert e["peers"] == ("config [fleet] peers", ["spark-2"])
    assert e["multi-node launches"] == ("G10 scan (tpscan)", "none seen")
    assert e["ConnectX-7 interfaces"] == ("/sys/class/net", "unavailable: /sys/class/net does not exist")
    s = judge(r, ALONE)
    assert s.id == "G12" and s.status is Status.SKIP
    assert s.summary == "no peer or multi-node launch, and the link could not be read (/sys/class/net does not exist)"
    assert ev(s)["ConnectX-7 interfaces"] == ("/sys/class/net", "unavailable: /sys/class/net does not exist")


@pytest.mark.parametrize("data", [None, ["not", "a", "mapping"]])
def test_a_reading_without_data_or_error_says_the_probe_returned_nothing(data):
    r = Reading("link", data, error=None, source="t", started_at=1.0)
    v = judge(r)
    assert v.status is Status.UNKNOWN and "(link probe returned nothing)" in v.summary
    assert ev(v)["ConnectX-7 interfaces"] == ("/sys/class/net", "unavailable: link probe returned nothing")


def test_no_cx7_interface_evidence_with_and_without_a_reason():
    v = judge({"interfaces": [], "reason": "no mlx5_core netdev"})
    assert v.id == "G12" and v.status is Status.UNKNOWN and v.summary.endswith(": no mlx5_core netdev")
    assert ev(v)["ConnectX-7 interfaces"] == ("/sys/class/net", "none: no mlx5_core netdev")
    v = judge({"interfaces": ["junk"]})
    assert v.status is Status.UNKNOWN and v.summary.endswith(": no ConnectX-7 interface found")
    assert ev(v)["ConnectX-7 interfaces"] == ("/sys/class/net", "none: no ConnectX-7 interface found")
    s = judge({"interfaces": []}, ALONE)
    assert s.id == "G12" and s.status is Status.SKIP
    assert s.summary == "no peer, no multi-node launch and no ConnectX-7 interface (no ConnectX-7 interface found)"
    assert ev(s)["ConnectX-7 interfaces"] == ("/sys/class/net", "none: no ConnectX-7 interface found")


# ------------------------------------------------------------------ evidence of a link that is read


def test_ok_summary_and_every_evidence_item():
    data = link(*two(), iface("enp1s0f0np0", "rocep1s0f0", oper="down", mtu=1500, speed=None),
                env={**BOTH, "NCCL_IB_MERGE_NICS": "1", "NCCL_NET_GDR_LEVEL": "LOC"})
    data["nccl"]["NCCL_IB_HCA"] = [{"value": f"{RA},{RB}", "source": "/w/run.sh", "line": 4}]
    v = judge(data)
    assert v.status is Status.OK and v.id == "G12"
    assert v.summary == f"{A}, {B} up at MTU 9000/9000, NCCL_IB_HCA={RA},{RB}"
    e = ev(v)
    assert e["ConnectX-7 interfaces"] == ("/sys/class/net", [f"{A}: up, MTU 9000, 200 Gb/s", f"{B}: up, MTU 9000, 200 Gb/s",
                                                             "enp1s0f0np0: down, MTU 1500, speed n/a"])
    assert e["NCCL_IB_HCA"] == ("/w/run.sh:4", f"{RA},{RB}")
    assert e["NCCL_SOCKET_IFNAME"] == ("environment", A)
    assert e["NCCL_IB_GID_INDEX"] == ("environment", "3")
    assert e["NCCL_IB_MERGE_NICS"] == ("environment", "1")
    assert e["NCCL_NET_GDR_LEVEL"] == ("environment", "LOC")
    assert e["RDMA devices on links that are up"] == (
        "/sys/class/infiniband", [f"{RA}/1: 4: ACTIVE, 200 Gb/sec (4X HDR), Ethernet",
                                  f"{RB}/1: 4: ACTIVE, 200 Gb/sec (4X HDR), Ethernet"])
    assert e["GID 3 type"] == ("gid_attrs/types", {RA: "RoCE v2", RB: "RoCE v2"})
    assert "RoCE v2 GID index" not in e
    assert e["peers"] == ("config [fleet] peers", ["spark-2"])


def test_unset_settings_are_not_set_and_a_source_less_row_is_question_mark():
    data = link(*two(), env={})
    data["nccl"] = {"NCCL_IB_HCA": [{"value": f"{RA},{RB}"}], "NCCL_SOCKET_IFNAME": [{"value": A, "source": "a.env"}]}
    v = judge(data)
    e = ev(v)
    assert e["NCCL_IB_HCA"] == ("?", f"{RA},{RB}")
    assert e["NCCL_SOCKET_IFNAME"] == ("a.env", A)
    for k in ("NCCL_IB_GID_INDEX", "NCCL_IB_MERGE_NICS", "NCCL_NET_GDR_LEVEL"):
        assert e[k] == ("environment and launch files", "not set")
    # no GID index set: the RoCE v2 index on the IPv4-mapped address is shown, and nothing is wrong
    assert e["RoCE v2 GID index"] == ("gid_attrs/types", 3)
    assert v.status is Status.OK


def test_no_roce_v2_gid_at_all_shows_no_index():
    v = judge(link(*two(gids=[(0, LL, "IB/RoCE v1")]), env={k: x for k, x in BOTH.items() if k != "NCCL_IB_GID_INDEX"}))
    assert v.status is Status.OK and "RoCE v2 GID index" not in ev(v)


def test_roce_v2_index_prefers_ipv4_mapped_then_any_v2():
    ports = [port(RA)]
    assert g12.roce_v2_index(ports) == 3
    assert g12.roce_v2_index([port(RA, gids=[(0, LL, "IB/RoCE v1"), (1, LL, "RoCE v2"), (2, LL, "RoCE v2")])]) == 1
    assert g12.roce_v2_index([port(RA, gids=[(0, LL, "IB/RoCE v1"), (4, V4, "IB/RoCE v1")])]) is None
    assert g12.roce_v2_index([port(RA, gids=[(0, V4, "IB/RoCE v1"), (5, V4, "RoCE v2"), (7, V4, "RoCE v2")])]) == 5
    assert g12.roce_v2_index([{"device": RA, "gids": "x"}, {"device": RB}]) is None


# ------------------------------------------------------------------ link down


def test_link_down_fix_brings_up_the_first_two_and_keeps_evidence():
    data = link(iface(A, RA, oper="down"), iface(B, RB, oper="down"), iface("enp1s0f0np0", None, oper="down"))
    v = judge(data)
    assert v.id == "G12" and v.status is Status.WARN
    assert v.summary.startswith("link down: no ConnectX-7 link is up") and "ip link" in v.summary
    assert v.details == (v.summary.removeprefix("link down: "),)
    assert fix_lines(v) == ["# every ConnectX-7 interface is down: check the QSFP cable, then bring the cabled one up",
                            f"sudo ip link set dev {A} up", f"sudo ip link set dev {B} up"]
    assert ev(v)["ConnectX-7 interfaces"][1][0] == f"{A}: down, MTU 9000, 200 Gb/s"
    assert ev(v)["NCCL_IB_HCA"] == ("environment", f"{RA},{RB}")


# ------------------------------------------------------------------ which link is in use


def test_socket_ifname_with_equals_narrows_the_link_in_use():
    data = link(iface(A, RA, mtu=1500), iface(B, RB), env={"NCCL_SOCKET_IFNAME": f"={B}", "NCCL_IB_GID_INDEX": "3"})
    v = judge(data)
    assert v.status is Status.WARN and v.summary.startswith("NCCL_IB_HCA is not set")
    assert not any("MTU" in d for d in v.details)


def test_socket_ifname_list_narrows_the_link_in_use():
    data = link(iface(A, RA, mtu=1500), iface(B, RB), env={**BOTH, "NCCL_SOCKET_IFNAME": f"{B},eth9",
                                                           "NCCL_IB_HCA": f"^{RA}"})
    v = judge(data)
    assert not any("MTU" in d for d in v.details), v.details
    assert v.status is Status.WARN and "one NIC half" in v.summary


def test_socket_ifname_prefix_narrows_the_link_in_use():
    v = judge(link(iface(A, RA, mtu=1500), iface(B, RB), env={**BOTH, "NCCL_SOCKET_IFNAME": "enP2", "NCCL_IB_HCA": f"^{RA}"}))
    assert not any("MTU" in d for d in v.details), v.details


def test_an_excluding_socket_ifname_does_not_narrow():
    data = link(iface(A, RA), iface(B, RB, mtu=1500), env={**BOTH, "NCCL_SOCKET_IFNAME": f"^{A}"})
    v = judge(data)
    assert v.status is Status.WARN and v.summary == (f"{B}: MTU 1500 < 9000 (MTU 1500 gives 19-21 GB/s busbw vs 23.7 "
                                                     "with jumbo frames)")
    assert fix_lines(v) == [f"sudo ip link set dev {B} mtu 9000",
                            "# the same on the other Spark; persist it in the netplan file (mtu: 9000)"]


# ------------------------------------------------------------------ RDMA ports


def test_rdma_ports_down_are_listed_with_their_state():
    v = judge(link(*two(state="1: DOWN")))
    assert v.status is Status.WARN
    assert v.summary == f"RDMA ports of the links that are up are not ACTIVE: {RA}/1: 1: DOWN, {RB}/1: 1: DOWN"
    assert v.fix == g12.FIX  # nothing to fill in: the generic advice
    assert ev(v)["RDMA devices on links that are up"][1] == [f"{RA}/1: 1: DOWN, 200 Gb/sec (4X HDR), Ethernet",
                                                           f"{RB}/1: 1: DOWN, 200 Gb/sec (4X HDR), Ethernet"]


@pytest.mark.parametrize("state", ["", None, 4])
def test_rdma_port_state_unreadable_is_unknown_not_down(state):
    v = judge(link(*two(state=state)))
    assert v.status is Status.UNKNOWN, v.summary
    assert v.summary == f"cannot confirm the link: state of the RDMA ports unreadable: {RA}, {RB}"


def test_no_rdma_device_socket_fallback_with_and_without_reason():
    v = judge(link(iface(A, None), iface(B, None), env={"NCCL_SOCKET_IFNAME": A}))
    assert v.status is Status.WARN
    assert v.summary == ("no RDMA device on the links that are up: no /sys/class/infiniband device lists these "
                         "interfaces; NCCL falls back to sockets (~3 GB/s)")
    assert ev(v)["RDMA devices on links that are up"] == ("/sys/class/infiniband", "none")
    v = judge(link(iface(A, None), env={"NCCL_SOCKET_IFNAME": A}, reason="mlx5_ib is not loaded"))
    assert "up: mlx5_ib is not loaded; NCCL" in v.summary


def test_an_interface_without_an_rdma_list_is_no_rdma_device():
    for rdma in (None, "rocep1s0f1", {"device": RA}):
        i = iface(A, None)
        if rdma is None:
            del i["rdma"]
        else:
            i["rdma"] = rdma
        v = judge(link(i, env={"NCCL_SOCKET_IFNAME": A}))
        assert v.status is Status.WARN and v.summary.startswith("no RDMA device on the links that are up"), rdma


# ------------------------------------------------------------------ NCCL_IB_HCA and the export lines


def test_hca_unset_exports_both_devices_and_the_socket_ifname():
    v = judge(link(*two(), env={"NCCL_IB_GID_INDEX": "3"}))
    assert v.status is Status.WARN
    assert v.summary == ("NCCL_IB_HCA is not set: NCCL's default settings gave ~3 GB/s between two Sparks "
                         "(vs 23.7 GB/s naming both halves)")
    lines = fix_lines(v)
    assert lines[0].startswith("# in the launch environment of both ranks")
    assert lines[1:] == [f"export NCCL_IB_HCA={RB},{RA}", f"export NCCL_SOCKET_IFNAME={A}"]


def test_socket_ifname_set_means_no_export_of_it():
    v = judge(link(*two(), env={"NCCL_SOCKET_IFNAME": B, "NCCL_IB_GID_INDEX": "3"}))
    assert fix_lines(v)[1:] == [f"export NCCL_IB_HCA={RB},{RA}"]


def test_hca_naming_none_of_two_up_devices():
    v = judge(link(*two(), env={**BOTH, "NCCL_IB_HCA": "mlx5_0"}))
    assert v.status is Status.WARN
    assert v.summary.startswith(f"NCCL_IB_HCA=mlx5_0 (environment) uses none of the up RDMA devices {RB}, {RA}: one NIC half")
    assert fix_lines(v)[1:] == [f"export NCCL_IB_HCA={RB},{RA}"]


def test_hca_naming_one_of_two():
    v = judge(link(*two(), env={**BOTH, "NCCL_IB_HCA": RB}))
    assert v.summary.startswith(f"NCCL_IB_HCA={RB} (environment) uses {RB} of the up RDMA devices {RB}, {RA}")
    assert "98 Gb/s" in v.summary and "161 Gb/s" in v.summary


def test_hca_naming_the_wrong_device_when_one_is_up():
    v = judge(link(iface(A, RA), env={**BOTH, "NCCL_IB_HCA": RB}))
    assert v.status is Status.WARN
    assert v.summary == f"NCCL_IB_HCA={RB} (environment) names none of the up RDMA devices {RA}"
    assert fix_lines(v)[1:] == [f"export NCCL_IB_HCA={RA}"]


def test_two_problems_count_the_rest():
    v = judge(link(*two(mtu=1500), env={**BOTH, "NCCL_IB_HCA": RA, "NCCL_SOCKET_IFNAME": f"{A},{B}"}))
    assert v.status is Status.WARN and v.summary.endswith("(+2 more)")
    assert len(v.details) == 3
    v = judge(link(iface(A, RA, mtu=1500), iface(B, RB), env={**BOTH, "NCCL_IB_HCA": RA, "NCCL_SOCKET_IFNAME": A}))
    # the HCA names one half; its link is in use and at MTU 1500: two problems
    assert v.summary.endswith("(+1 more)") and len(v.details) == 2
    v = judge(link(*two(), env={**BOTH, "NCCL_IB_HCA": RA}))
    assert "more)" not in v.summary and len(v.details) == 1
    assert ev(v)["NCCL_IB_HCA"] == ("environment", RA)


def test_unread_beside_a_problem_is_listed_as_not_checked():
    v = judge(link(iface(A, RA, mtu=None), iface(B, RB), env={**BOTH, "NCCL_IB_HCA": RA}))
    assert v.status is Status.WARN and v.details[-1] == f"not checked: {A}: MTU unreadable (None)"
    assert ev(v)["peers"] == ("config [fleet] peers", ["spark-2"])


# ------------------------------------------------------------------ GID index


def test_gid_index_not_v2_exports_the_v2_index_found():
    gids = [(0, LL, "IB/RoCE v1"), (2, V4, "IB/RoCE v1"), (5, V4, "RoCE v2")]
    v = judge(link(*two(gids=gids), env={**BOTH, "NCCL_IB_GID_INDEX": "2"}))
    assert v.status is Status.WARN
    assert v.summary == (f"NCCL_IB_GID_INDEX=2 (environment) is not RoCE v2 on {RA}: IB/RoCE v1, {RB}: IB/RoCE v1; "
                         "RoCE v2 is index 5")
    assert fix_lines(v)[1:] == ["export NCCL_IB_GID_INDEX=5"]
    assert ev(v)["GID 2 type"] == ("gid_attrs/types", {RA: "IB/RoCE v1", RB: "IB/RoCE v1"})


def test_gid_index_not_v2_and_no_v2_anywhere_has_no_export():
    v = judge(link(*two(gids=[(0, LL, "IB/RoCE v1")]), env={**BOTH, "NCCL_IB_GID_INDEX": "0"}))
    assert v.status is Status.WARN and "RoCE v2 is index" not in v.summary
    assert v.fix == g12.FIX


def test_gid_index_on_an_empty_slot_names_each_device():
    v = judge(link(*two(), env={**BOTH, "NCCL_IB_GID_INDEX": "9"}))
    assert ev(v)["GID 9 type"] == ("gid_attrs/types", {RA: "empty slot", RB: "empty slot"})
    assert f"{RA}: empty slot, {RB}: empty slot" in v.summary
    assert fix_lines(v)[1:] == ["export NCCL_IB_GID_INDEX=3"]


def test_gid_type_unreadable_names_each_device_and_is_unknown():
    gids = [(0, LL, "IB/RoCE v1"), (3, V4, None)]
    v = judge(link(*two(gids=gids)))
    assert v.status is Status.UNKNOWN
    assert v.summary == f"cannot confirm the link: {RA}: type of GID 3 unreadable; {RB}: type of GID 3 unreadable"
    assert ev(v)["GID 3 type"] == ("gid_attrs/types", {RA: None, RB: None})
    assert fix_lines(v) == [f"ip link show {A}", f"ip link show {B}"]


def test_gid_index_not_a_number_keeps_the_generic_fix():
    v = judge(link(*two(), env={**BOTH, "NCCL_IB_GID_INDEX": "three"}))
    assert v.status is Status.WARN and v.summary == "NCCL_IB_GID_INDEX='three' (environment) is not a number"
    assert v.fix == g12.FIX
    assert ev(v)["NCCL_IB_GID_INDEX"] == ("environment", "three")


# ------------------------------------------------------------------ second pass: what the first run left


def test_a_junk_scan_entry_does_not_hide_a_later_multi_node_launch():
    v = judge(None, ALONE, tpscan={"files": {"/w/notes.txt": "junk", "/w/run.sh": {"node_count": 2}}})
    assert v.status is Status.UNKNOWN
    assert ev(v)["multi-node launches"] == ("G10 scan (tpscan)", ["/w/run.sh (2 nodes)"])
    assert v.summary.endswith("run sparktui where /sys/class/net and /sys/class/infiniband are readable")


def test_links_down_and_nothing_configured_skip_with_the_interfaces_as_evidence():
    v = judge(link(iface(A, RA, oper="down", speed=None)), ALONE)
    assert v.id == "G12" and v.status is Status.SKIP
    assert v.summary == "no peer, no multi-node launch, and no cabled ConnectX-7 link is up"
    assert ev(v)["ConnectX-7 interfaces"] == ("/sys/class/net", [f"{A}: down, MTU 9000, speed n/a"])
    assert ev(v)["peers"] == ("config [fleet] peers", "none")


def test_an_excluding_socket_ifname_leaves_every_up_link_in_use():
    """NCCL_SOCKET_IFNAME=^A excludes A from sockets, it does not pick the RoCE link: both halves stay judged."""
    v = judge(link(iface(A, RA), iface(B, RB, mtu=1500), env={"NCCL_SOCKET_IFNAME": f"^{A}", "NCCL_IB_GID_INDEX": "3"}))
    assert v.id == "G12" and v.status is Status.WARN
    assert v.summary.startswith(f"{B}: MTU 1500 < 9000") and v.summary.endswith("(+1 more)")
    assert f"sudo ip link set dev {B} mtu 9000" in fix_lines(v)


def test_a_slow_link_at_mtu_1500_gets_both_fixes():
    v = judge(link(iface(A, RA, mtu=1500, speed=100_000), env={**BOTH, "NCCL_IB_HCA": RA}))
    assert v.status is Status.WARN and v.summary.endswith("(+1 more)")
    assert fix_lines(v) == [f"sudo ip link set dev {A} mtu 9000",
                            "# the same on the other Spark; persist it in the netplan file (mtu: 9000)",
                            f"# {A} negotiated 100 Gb/s: reseat or replace the QSFP cable, then check",
                            f"ethtool {A}"]


def test_an_rdma_port_without_a_device_name_is_no_rdma_device():
    i = iface(A, RA)
    del i["rdma"][0]["device"]
    v = judge(link(i, env={**BOTH, "NCCL_IB_GID_INDEX": "3"}))
    assert v.status is Status.WARN and v.summary.startswith("no RDMA device on the links that are up")
    assert ev(v)["GID 3 type"] == ("gid_attrs/types", "no RDMA port read")
