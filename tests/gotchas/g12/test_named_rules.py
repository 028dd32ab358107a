"""G12's named rules (issue 23: the judge is rules over one _Link), each held to its exact words: which
interfaces NCCL is told to use, the link in use, the RDMA ports known, and what NCCL_SOCKET_IFNAME and
NCCL_IB_HCA select. Every expected text is what sparktui.gotchas.g12_two_spark_link said before the split."""

from __future__ import annotations

from sparktui.core.verdict import Status
from sparktui.gotchas import g12_two_spark_link as g12
from tests.gotchas.g12.test_judge import A, B, BOTH, RA, RB, fix_lines, iface, judge, link, two

C, D = "enp1s0f0np0", "enP2p1s0f0np0"  # the uncabled port's halves
ODD = "operstate 'unknown' (carrier unread): cannot tell whether this link is up"


def test_no_link_up_and_two_in_an_unknown_state_names_both_and_how_to_look():
    v = judge(link(iface(A, RA, oper="unknown"), iface(B, RB, oper="unknown")))
    assert v.status is Status.UNKNOWN
    assert v.summary == f"cannot tell whether the link is up: {A}: {ODD}; {B}: {ODD}"
    assert v.details == (f"{A}: {ODD}", f"{B}: {ODD}")
    assert fix_lines(v) == [f"ip link show {A}", f"ip link show {B}"]


def test_an_interface_nccl_socket_ifname_names_is_told_even_when_nccl_ib_hca_is_elsewhere():
    told = judge(link(iface(A, RA, oper="unknown"), env={"NCCL_IB_HCA": "=rocep9", "NCCL_SOCKET_IFNAME": A}))
    assert told.status is Status.UNKNOWN and told.summary == f"cannot tell whether the link is up: {A}: {ODD}"
    excluded = judge(link(iface(A, RA, oper="unknown"), env={"NCCL_IB_HCA": "=rocep9", "NCCL_SOCKET_IFNAME": "^" + A}))
    assert excluded.status is Status.WARN and excluded.summary.startswith("link down: no ConnectX-7 link is up")


def test_the_link_in_use_is_the_port_nccl_ib_hca_names_by_number():
    v = judge(link(iface(A, RA), iface(B, RB, mtu=1500), env={"NCCL_IB_HCA": f"={RA}:1", "NCCL_IB_GID_INDEX": "3"}))
    said = (f"NCCL_IB_HCA=={RA}:1 (environment) uses {RA} of the up RDMA devices {RB}, {RA}: one NIC half "
            "(98 Gb/s) instead of both (161 Gb/s merged)")
    assert v.status is Status.WARN and v.summary == said and v.details == (said,)  # B's MTU 1500 is not in use
    assert fix_lines(v) == ["# in the launch environment of both ranks (or -x NAME with mpirun)",
                            f"export NCCL_IB_HCA={RB},{RA}", f"export NCCL_SOCKET_IFNAME={A}"]


def test_rdma_devices_not_on_an_interface_are_known_from_the_probe_or_an_older_reading():
    env = {**BOTH, "NCCL_IB_HCA": f"={RA},{RB},rocep1s0f0"}
    for more in ({"rdma_devices": {RA: [1], RB: [1], "rocep1s0f0": [1]}},
                 {"unattached_rdma": [{"device": "rocep1s0f0", "port": 1}]}):
        assert judge(link(*two(), env=env, **more)).status is Status.OK
    v = judge(link(*two(), env=env))
    assert v.status is Status.WARN and v.summary == (
        f"NCCL_IB_HCA=={RA},{RB},rocep1s0f0 (environment) names what is not there: rocep1s0f0: no RDMA device "
        f"named 'rocep1s0f0' in /sys/class/infiniband (there: {RB}, {RA}); NCCL skips it")


def _socket_problem(sock: str, *ifaces: dict, **more) -> str:
    v = judge(link(*(ifaces or two()), env={**BOTH, "NCCL_SOCKET_IFNAME": sock}, **more))
    assert v.status is Status.WARN and v.details == (v.summary,)
    assert fix_lines(v) == ["# in the launch environment of both ranks (or -x NAME with mpirun)",
                            f"export NCCL_SOCKET_IFNAME={A}"]
    return v.summary


def test_nccl_socket_ifname_that_misses_every_link_up_says_what_it_selects_instead():
    netdevs = [A, B, C, D, "lo"] + [f"docker{i}" for i in range(7)]
    up = f"selects no ConnectX-7 link that is up ({A}, {B})"
    assert _socket_problem("docker", netdevs=netdevs) == (
        f"NCCL_SOCKET_IFNAME=docker (environment) {up}: it selects docker0, docker1, docker2, docker3, docker4 ..., "
        "not a ConnectX-7 interface")
    assert _socket_problem("lo", netdevs=netdevs) == (
        f"NCCL_SOCKET_IFNAME=lo (environment) {up}: it selects lo, not a ConnectX-7 interface (lo is loopback: the "
        "other Spark is not reachable over it)")
    assert _socket_problem("=wlan9") == (
        f"NCCL_SOCKET_IFNAME==wlan9 (environment) {up}: 'wlan9': no such interface in the ConnectX-7 interfaces read")
    assert _socket_problem("^enp,enP") == (
        f"NCCL_SOCKET_IFNAME=^enp,enP (environment) excludes every ConnectX-7 link that is up ({A}, {B}): NCCL's "
        "bootstrap and socket traffic go elsewhere")
    assert _socket_problem(f"={C},{D}", *two(), iface(C, None, oper="down"), iface(D, None, oper="down")) == (
        f"NCCL_SOCKET_IFNAME=={C},{D} (environment) {up}: {C}, {D} are not up")


def test_nccl_ib_hca_naming_what_is_not_there_is_noted_beside_the_wrong_devices():
    v = judge(link(*two(), env={**BOTH, "NCCL_IB_HCA": "=rocep9,rocep8"}))
    there = f"in /sys/class/infiniband (there: {RB}, {RA})"
    assert v.details == (
        f"NCCL_IB_HCA==rocep9,rocep8 (environment) uses none of the up RDMA devices {RB}, {RA}: one NIC half "
        "(98 Gb/s) instead of both (161 Gb/s merged)",
        f"NCCL_IB_HCA names what is not there: rocep9: no RDMA device named 'rocep9' {there}; "
        f"rocep8: no RDMA device named 'rocep8' {there}")


def test_nccl_ib_hca_naming_a_port_down_or_an_interface_down_says_which():
    v = judge(link(iface(A, RA), iface(B, RB, state="1: DOWN"), env=BOTH))
    assert v.summary == (f"NCCL_IB_HCA={RA},{RB} (environment) names {RB}/1, which is DOWN (phys_state unread, {B} up): "
                         "NCCL skips a port that is not ACTIVE, so that NIC half carries nothing")
    v = judge(link(*two(), iface(C, "rocep1s0f0", oper="down"), env={**BOTH, "NCCL_IB_HCA": f"={RA},{RB},rocep1s0f0"}))
    assert v.summary == (f"NCCL_IB_HCA=={RA},{RB},rocep1s0f0 (environment) names rocep1s0f0/1, whose interface {C} "
                         "is down")


def test_no_bus_bandwidth_is_said_so():
    assert g12.judge_busbw(None) == (Status.UNKNOWN, "no bus bandwidth in the all_reduce_perf output")
    assert g12.judge_busbw(float("nan")) == (Status.UNKNOWN, "no bus bandwidth in the all_reduce_perf output")


def test_names_not_there_beside_both_halves_are_each_said():
    v = judge(link(*two(), env={**BOTH, "NCCL_IB_HCA": f"={RA},{RB},rocep9,rocep8"}))
    there = f"in /sys/class/infiniband (there: {RB}, {RA})"
    assert v.status is Status.WARN and v.summary == (
        f"NCCL_IB_HCA=={RA},{RB},rocep9,rocep8 (environment) names what is not there: rocep9: no RDMA device named "
        f"'rocep9' {there}; rocep8: no RDMA device named 'rocep8' {there}; NCCL skips it")


def test_a_gid_index_that_is_not_roce_v2_where_no_slot_is():
    v1 = [(0, "fe80::1", "IB/RoCE v1"), (1, "fe80::2", "IB/RoCE v1")]
    v = judge(link(*two(gids=v1), env={**BOTH, "NCCL_IB_GID_INDEX": "1"}))
    assert v.summary == f"NCCL_IB_GID_INDEX=1 (environment) is not RoCE v2 on {RA}: IB/RoCE v1, {RB}: IB/RoCE v1"


def test_an_interface_read_without_a_name_matches_as_the_empty_name():
    assert g12._netdev({}) == "" and g12._netdev({"name": A}) == A


def test_an_interface_nccl_ib_hca_names_by_port_is_told():
    v = judge(link(iface(A, RA, oper="unknown"), env={"NCCL_IB_HCA": f"={RA}:1"}))
    assert v.status is Status.UNKNOWN and v.summary == f"cannot tell whether the link is up: {A}: {ODD}"
    v = judge(link(iface(A, RA, oper="unknown"), env={"NCCL_IB_HCA": f"={RA}:2"}))
    assert v.status is Status.WARN and v.summary.startswith("link down: ")


def test_every_reason_nccl_socket_ifname_misses_is_said():
    assert _socket_problem("docker,wlan9", netdevs=[A, B, "docker0"]) == (
        f"NCCL_SOCKET_IFNAME=docker,wlan9 (environment) selects no ConnectX-7 link that is up ({A}, {B}): it selects "
        "docker0, not a ConnectX-7 interface; 'wlan9': no such interface in /sys/class/net")


def test_a_port_state_not_read_is_not_active():
    assert not g12._port_active({}) and not g12._port_active({"state": None})
    assert g12._port_active({"state": "4: ACTIVE"}) and g12._port_active({"state": "4: active"})


def test_a_bus_bandwidth_under_one_gb_s_is_default_settings_not_a_misreading():
    status, words = g12.judge_busbw(0.5)
    assert status is Status.WARN and words.startswith("0.50 GB/s bus bandwidth: NCCL's default settings")
    assert g12.judge_busbw(0.0)[1].startswith("measurement error: 0 GB/s")


def test_empty_entries_of_an_nccl_list_are_skipped_not_the_end():
    assert g12.parse_nccl_list("a,,b").tokens == (("a", None), ("b", None))
    assert g12.parse_nccl_list("^=x:1, ,y", ports=True) == g12.NcclList(True, True, (("x", "1"), ("y", None)))


def test_an_interface_state_not_read_is_not_up():
    assert not g12._up({}) and not g12._up({"operstate": None}) and g12._up({"operstate": "UP"})
