"""G12: the two-Spark link (ConnectX-7, NCCL): MTU, both NIC halves in NCCL_IB_HCA, link speed, RoCE v2 GID."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, TypeGuard

from sparktui.core.config import Config
from sparktui.core.readings import Readings
from sparktui.core.shapes import LINK, TPSCAN
from sparktui.core.verdict import EvidenceList, Status, Verdict
from sparktui.gotchas._fix import block, comment, sh
from sparktui.gotchas.base import Gotcha

ID = "G12"

# Public two-Spark reports (dgx-spark-playbooks #102, #103, #25; tonyd2wild #35): MTU 9000 + both NIC halves in NCCL_IB_HCA reached 23.74 GB/s
# busbw (dgx-spark-playbooks #102, #103); MTU 1500 gave 19-21 GB/s (#25); default settings ~3 GB/s.
JUMBO_MTU = 9000
MIN_SPEED_MBPS = 200_000  # the Spark's ConnectX-7 ports are 200 GbE; below that the cable or port negotiated down
MIN_MTU = 68  # the smallest MTU IPv4 allows (RFC 791): a lower one is a misread, not a setting
# The largest MTU the hardware takes: `ip -d link` on mlx5 (ConnectX) ports reports "minmtu 68 maxmtu 9978"
# (the port's 10000-byte frame less Ethernet header, VLAN tag and FCS); 9216 is the usual Ethernet jumbo
# ceiling for any other NIC. A larger MTU in a reading (70000, 1e23) is a misread or an edited snapshot.
CX7_MAX_MTU = 9978
ETHERNET_MAX_MTU = 9216
# operstate values the kernel reports (Documentation/ABI/testing/sysfs-class-net, RFC 2863) that say
# whether the link is up; "unknown" (and anything else) says nothing either way.
OPERSTATES = ("up", "down", "lowerlayerdown", "notpresent", "dormant", "testing")
REACHABLE_BUSBW_GBS = 23.7
DEFAULT_BUSBW_GBS = 3.0
ROCE_V2 = "RoCE v2"

FIX = """\
Use jumbo frames on the cabled ConnectX-7 interface (both Sparks), name both NIC halves in
NCCL_IB_HCA, and pin the RoCE v2 GID index:

""" + block([
    "sudo ip link set dev enp1s0f1np1 mtu 9000        # and the other half, on both Sparks",
    "export NCCL_SOCKET_IFNAME=enp1s0f1np1",
    "export NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1      # both halves of the cabled port",
    "export NCCL_IB_GID_INDEX=3                       # the index whose gid_attrs/types entry is RoCE v2",
]) + """
Measure with nccl-tests' all_reduce_perf across the two hosts (sparktui's opt-in NCCL test builds the
command): ~23.7 GB/s bus bandwidth is reachable; ~3 GB/s means NCCL is on default settings.
"""


def _multi_node(r: Readings) -> list[str]:
    """Files of G10's scan that launch on more than one node (tolerant of any shape)."""
    data: Any = r.data(TPSCAN)
    out: list[str] = []
    if not isinstance(data, Mapping):
        return out
    files = data.get("files")
    if not isinstance(files, Mapping):
        return out
    for path, ctx in files.items():
        if not isinstance(ctx, Mapping):
            continue
        n = ctx.get("node_count")
        if (isinstance(n, int) and not isinstance(n, bool) and n > 1) or ctx.get("nodes") == "multi":
            out.append(f"{path} ({n} nodes)" if isinstance(n, int) else str(path))
    return out


def _effective(nccl: Mapping[str, Any], name: str) -> tuple[str | None, str]:
    """The value in effect (the environment first, else the first launch file) and where it came from."""
    rows = nccl.get(name) or []
    for row in rows:
        if isinstance(row, Mapping) and isinstance(row.get("value"), str):
            src = str(row.get("source", "?")) + (f":{row['line']}" if row.get("line") else "")
            return row["value"], src
    return None, ""


@dataclass(frozen=True)
class NcclList:
    """NCCL_IB_HCA or NCCL_SOCKET_IFNAME as NCCL reads it. NCCL's documented syntax
    (https://docs.nvidia.com/deeplearning/nccl/user-guide/docs/env.html):

    * NCCL_SOCKET_IFNAME: "a list of prefixes ... separated by the , symbol. Using the ^ symbol, NCCL
      will exclude interfaces starting with any prefix in that list. To match (or not) an exact
      interface name, begin the prefix string with the = character" (`eth`, `=eth0`, `^docker`, `^=docker0`);
    * NCCL_IB_HCA: "The list is comma-separated; port numbers can be specified using the : symbol. An
      optional prefix ^ indicates the list is an exclude list. A second optional prefix = indicates that
      the tokens are exact names, otherwise by default NCCL would treat each token as a prefix"
      (`mlx5`, `=mlx5_0:1,mlx5_1:1`, `^=mlx5_1,mlx5_4`; `mlx5_1` alone also selects mlx5_10 ..);
      newer releases add `<hca>[:<port>[:<rail>[:<plane>]]]`, an empty port meaning all ports.
    """

    exclude: bool
    exact: bool
    tokens: tuple[tuple[str, str | None], ...]  # (name or prefix, port as written or None: every port)

    def matches(self, token: str, name: str) -> bool:
        return name == token if self.exact else name.startswith(token)

    def selects_netdev(self, name: str) -> bool:
        return any(self.matches(t, name) for t, _ in self.tokens) != self.exclude

    def selects_port(self, device: str, port: Any) -> bool:
        hit = any(self.matches(t, device) and (p is None or p == str(port)) for t, p in self.tokens)
        return hit != self.exclude


def parse_nccl_list(value: str, ports: bool = False) -> NcclList:
    """`^` first, then `=` (NCCL strips them in that order: `=^x` is a name starting with ^)."""
    v = value.strip()
    exclude = v.startswith("^")
    v = v[1:] if exclude else v
    exact = v.startswith("=")
    v = v[1:] if exact else v
    tokens: list[tuple[str, str | None]] = []
    for part in v.split(","):
        part = part.strip()
        if not part:
            continue
        if ports:
            name, _, rest = part.partition(":")
            port = rest.split(":")[0].strip() if rest else ""
            tokens.append((name.strip(), port or None))
        else:
            tokens.append((part, None))
    return NcclList(exclude, exact, tuple(tokens))


def _operstate(i: Mapping[str, Any]) -> str:
    return str(i.get("operstate") or "").strip().lower()


def _max_mtu(i: Mapping[str, Any]) -> tuple[int, str]:
    """The hardware's largest MTU: ConnectX (mlx5_core, the Spark's) or any other Ethernet NIC."""
    if i.get("driver") in (None, "mlx5_core"):
        return CX7_MAX_MTU, "ConnectX-7 maximum"
    return ETHERNET_MAX_MTU, "Ethernet jumbo maximum"


def _rdma_ports_known(data: Mapping[str, Any], ifaces: list[Mapping[str, Any]]) -> dict[str, set[str]]:
    """RDMA device -> its port numbers as text: the probe's ``rdma_devices`` (every
    /sys/class/infiniband/<hca>/ports/<n>), else (an older reading) the ports listed with the interfaces."""
    known: dict[str, set[str]] = {}
    devs = data.get("rdma_devices")
    if isinstance(devs, Mapping):
        for d, ports in devs.items():
            known[str(d)] = {str(p) for p in ports} if isinstance(ports, list) else set()
        return known
    rows = [p for i in ifaces for p in _rdma(i)]
    extra = data.get("unattached_rdma")
    rows += [p for p in extra if isinstance(p, Mapping)] if isinstance(extra, list) else []
    for p in rows:
        if p.get("device"):
            known.setdefault(str(p["device"]), set())
            if p.get("port") is not None:
                known[str(p["device"])].add(str(p["port"]))
    return known


def _up(i: Mapping[str, Any]) -> bool:
    """The kernel's operstate (RFC 2863) already folds in the carrier: "up" means a carrier and the
    interface enabled. A carrier file that disagrees is a torn read, not a second opinion."""
    return str(i.get("operstate")).lower() == "up"  # None reads "none"


def _netdev(i: Mapping[str, Any]) -> str:
    """An interface's name as NCCL_SOCKET_IFNAME is matched against ("" for one read without a name)."""
    return str(i.get("name", ""))


def _port_active(p: Mapping[str, Any]) -> bool:
    return "ACTIVE" in str(p.get("state")).upper()  # None reads "NONE": not active


def _count(v: Any) -> TypeGuard[int]:
    return isinstance(v, int) and not isinstance(v, bool)


def _rdma(i: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    ports = i.get("rdma")
    return [p for p in ports if isinstance(p, Mapping)] if isinstance(ports, list) else []


def _gids(p: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    gids = p.get("gids")
    return [g for g in gids if isinstance(g, Mapping)] if isinstance(gids, list) else []


def roce_v2_index(ports: list[Mapping[str, Any]]) -> int | None:
    """The lowest GID index that is RoCE v2 on an IPv4-mapped address (::ffff:a.b.c.d) on every port, else any v2."""
    best: int | None = None
    for p in ports:
        for g in _gids(p):
            if g.get("type") == ROCE_V2:
                ipv4 = str(g.get("gid")).startswith("0000:0000:0000:0000:0000:ffff:")
                idx = g.get("index")
                if isinstance(idx, int) and ipv4 and (best is None or idx < best):
                    best = idx
    if best is None:
        for p in ports:
            for g in _gids(p):
                if g.get("type") == ROCE_V2 and isinstance(g.get("index"), int):
                    return int(g["index"])
    return best


def _check_hca(lst: NcclList, hca: str, src: str, data: Mapping[str, Any], ifaces: list[Mapping[str, Any]],
               already: set[int], problems: list[str], unread: list[str], ev: EvidenceList,
               flagged: bool, notes: list[str]) -> None:
    """What NCCL_IB_HCA names exists (/sys/class/infiniband/<hca>/ports/<n>), and each port it names
    outright is usable (port ACTIVE, its interface up): NCCL skips a port that is not, silently."""
    if lst.exclude:
        return  # excluding what does not exist, or a port that is down, harms nothing
    known = _rdma_ports_known(data, ifaces)
    missing: list[str] = []
    if known:
        for name, port in lst.tokens:
            devs = sorted(d for d in known if lst.matches(name, d))
            shown = f"{name}:{port}" if port is not None else name
            if not devs:
                missing.append(f"{shown}: no RDMA device {'named' if lst.exact else 'starting with'} {name!r} in "
                               f"/sys/class/infiniband (there: {', '.join(sorted(known))})")
            elif port is not None and not (port.isascii() and port.isdigit()):
                missing.append(f"{shown}: {port!r} is not a port number")
            elif port is not None and not any(str(int(port)) in known[d] for d in devs):
                d = devs[0]
                missing.append(f"{shown}: /sys/class/infiniband/{d}/ports/{int(port)} does not exist "
                               f"({d} has port {', '.join(sorted(known[d], key=lambda x: (len(x), x))) or 'none'})")
    if missing and flagged:  # the devices it selects are already the problem: this is why, beside it
        ev.add("NCCL_IB_HCA names not found", "/sys/class/infiniband", missing)
        notes.append(f"NCCL_IB_HCA names what is not there: {'; '.join(missing)}")
    elif missing:
        problems.append(f"NCCL_IB_HCA={hca} ({src}) names what is not there: {'; '.join(missing)}; NCCL skips it")
    named: list[tuple[Mapping[str, Any], Mapping[str, Any]]] = []
    for i in ifaces:
        for p in _rdma(i):
            dev = str(p.get("device") or "")
            if dev and any(t == dev and (q is None or q == str(p.get("port"))) for t, q in lst.tokens):
                named.append((i, p))  # only a port NCCL_IB_HCA names outright: a prefix may cover the uncabled port too
    usable = sum(1 for i, p in named if _port_active(p) and _up(i))
    cost = ("NCCL skips a port that is not ACTIVE, so that NIC half carries nothing" if usable < 2 else
            f"NCCL skips a port that is not ACTIVE ({usable} named ports are up, so it costs nothing now: "
            "name only the cabled port's halves)")
    for i, p in named:
        if id(p) in already:
            continue
        state = p.get("state")
        where = f"{p.get('device')}/{p.get('port')}"
        if not isinstance(state, str) or not state.strip():
            unread.append(f"{where} (named in NCCL_IB_HCA): port state unreadable")
        elif not _port_active(p):
            problems.append(f"NCCL_IB_HCA={hca} ({src}) names {where}, which is {state.split(':')[-1].strip()} "
                            f"(phys_state {p.get('phys_state') or 'unread'}, {i.get('name')} {i.get('operstate')}): "
                            + cost)
        elif _operstate(i) in OPERSTATES and not _up(i):
            problems.append(f"NCCL_IB_HCA={hca} ({src}) names {where}, whose interface {i.get('name')} is "
                            f"{i.get('operstate')}")


def _check_socket_ifname(lst: NcclList, sock: str, src: str, data: Mapping[str, Any],
                         ifaces: list[Mapping[str, Any]], up: list[Mapping[str, Any]]) -> str | None:
    """NCCL_SOCKET_IFNAME must leave NCCL a ConnectX-7 link that is up (not lo, not a name that is not
    there, not only the 10 GbE port); a problem in words, or None."""
    if any(lst.selects_netdev(_netdev(i)) for i in up):
        return None
    netdevs = data.get("netdevs")
    cx = [_netdev(i) for i in ifaces]
    every = [str(n) for n in netdevs] if isinstance(netdevs, list) else cx
    up_names = ", ".join(str(i.get("name")) for i in up)  # a link is up: the judge asks only then
    if lst.exclude:
        return (f"NCCL_SOCKET_IFNAME={sock} ({src}) excludes every ConnectX-7 link that is up ({up_names}): "
                "NCCL's bootstrap and socket traffic go elsewhere")
    chosen = [n for n in every if lst.selects_netdev(n)]
    parts: list[str] = []
    other = [n for n in chosen if n not in cx]
    if other:
        parts.append(f"it selects {', '.join(other[:5])}{' ...' if len(other) > 5 else ''}, not a ConnectX-7 interface"
                     + (" (lo is loopback: the other Spark is not reachable over it)" if "lo" in other else ""))
    down = [n for n in chosen if n in cx]
    if down:
        parts.append(f"{', '.join(down)} {'is' if len(down) == 1 else 'are'} not up")
    nothing = [t for t, _ in lst.tokens if not any(lst.matches(t, n) for n in every)]
    if nothing:
        where = "/sys/class/net" if isinstance(netdevs, list) else "the ConnectX-7 interfaces read"
        parts.append(f"{', '.join(repr(t) for t in nothing)}: no such interface in {where}")
    return (f"NCCL_SOCKET_IFNAME={sock} ({src}) selects no ConnectX-7 link that is up ({up_names}): "
            + "; ".join(parts or ["nothing selected"]))


def _told(i: Mapping[str, Any], hca_list: NcclList | None, sock_list: NcclList | None) -> bool:
    """NCCL is told to use this interface: NCCL_IB_HCA selects one of its ports (unset: all of them),
    or NCCL_SOCKET_IFNAME picks it."""
    by_hca = hca_list is None or any(hca_list.selects_port(str(p.get("device")), p.get("port"))
                                     for p in _rdma(i) if p.get("device"))
    by_sock = sock_list is not None and not sock_list.exclude and sock_list.selects_netdev(_netdev(i))
    return by_hca or by_sock


def _not_readable(data: Any, why: str | None, applies: bool, ev: EvidenceList) -> Verdict | None:
    """skip or unknown when the link reading is missing or lists no ConnectX-7 interface; None otherwise."""
    if not isinstance(data, Mapping):
        why = why or "link probe returned nothing"
        ev.add("ConnectX-7 interfaces", "/sys/class/net", f"unavailable: {why}")
        if not applies:
            return Verdict(ID, Status.SKIP, f"no peer or multi-node launch, and the link could not be read ({why})",
                           evidence=ev.tuple())
        return Verdict(ID, Status.UNKNOWN, f"cannot tell: the ConnectX-7 link could not be read ({why}); "
                       "run sparktui where /sys/class/net and /sys/class/infiniband are readable", evidence=ev.tuple())
    if not [i for i in data.get("interfaces") or [] if isinstance(i, Mapping)]:
        why = data.get("reason") or "no ConnectX-7 interface found"
        ev.add("ConnectX-7 interfaces", "/sys/class/net", f"none: {why}")
        if not applies:
            return Verdict(ID, Status.SKIP, f"no peer, no multi-node launch and no ConnectX-7 interface ({why})",
                           evidence=ev.tuple())
        return Verdict(ID, Status.UNKNOWN, f"a peer or multi-node launch is configured, but there is no ConnectX-7 "
                       f"interface to judge: {why}", evidence=ev.tuple())
    return None


@dataclass
class _Link:
    """What the link rules read (the reading, the NCCL settings, the interfaces up and in use) and what
    they add to: problems (warn), parts unread (unknown when nothing else is wrong), notes (why a problem
    is one), fix lines and export lines, in the order the rules run."""

    data: Mapping[str, Any]
    ev: EvidenceList
    ifaces: list[Mapping[str, Any]]
    up: list[Mapping[str, Any]]
    settings: dict[str, tuple[str | None, str]]
    hca_list: NcclList | None
    sock_list: NcclList | None
    in_use: list[Mapping[str, Any]] = field(default_factory=list)
    up_ports: list[Mapping[str, Any]] = field(default_factory=list)
    active: list[Mapping[str, Any]] = field(default_factory=list)
    reported_down: bool = False
    problems: list[str] = field(default_factory=list)
    unread: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    fix_lines: list[str] = field(default_factory=list)
    export_lines: list[str] = field(default_factory=list)


def _link_of(data: Mapping[str, Any], ev: EvidenceList) -> _Link:
    ifaces = [i for i in data.get("interfaces") or [] if isinstance(i, Mapping)]
    nccl: Mapping[str, Any] = data.get("nccl") or {}
    settings = {k: _effective(nccl, k) for k in ("NCCL_IB_HCA", "NCCL_SOCKET_IFNAME", "NCCL_IB_GID_INDEX",
                                                   "NCCL_IB_MERGE_NICS", "NCCL_NET_GDR_LEVEL")}
    sock, hca_now = settings["NCCL_SOCKET_IFNAME"][0], settings["NCCL_IB_HCA"][0]
    return _Link(data, ev, ifaces, [i for i in ifaces if _up(i)], settings,
                 parse_nccl_list(hca_now, ports=True) if hca_now is not None else None,
                 parse_nccl_list(sock) if sock is not None else None)


def _in_use(k: _Link) -> list[Mapping[str, Any]]:
    """The link in use: the netdevs of the RDMA devices NCCL_IB_HCA selects (RoCE takes its MTU from
    them) plus what NCCL_SOCKET_IFNAME names; every link that is up when neither narrows it down."""
    hca_sel: set[str] = set()
    if k.hca_list is not None:
        hca_sel = {str(p.get("device")) for i in k.up for p in _rdma(i)
                   if p.get("device") and k.hca_list.selects_port(str(p.get("device")), p.get("port"))}

    def _selected(i: Mapping[str, Any]) -> bool:
        by_sock = (k.sock_list is not None and not k.sock_list.exclude
                   and k.sock_list.selects_netdev(_netdev(i)))
        by_hca = any(str(p.get("device")) in hca_sel for p in _rdma(i))
        return by_sock or by_hca

    return [i for i in k.up if _selected(i)] or k.up


def rule_mtu(k: _Link) -> None:
    """Jumbo frames on the link in use: under 9000 warns; an MTU no NIC takes is unread."""
    for i in k.in_use:
        mtu = i.get("mtu")
        top, top_words = _max_mtu(i)
        if not _count(mtu) or mtu < MIN_MTU:
            k.unread.append(f"{i.get('name')}: MTU unreadable ({mtu!r})")
        elif mtu > top:
            k.unread.append(f"{i.get('name')}: MTU {mtu} is above the {top_words} {top}: a misread or an edited "
                            "reading, not a setting")
        elif mtu < JUMBO_MTU:
            k.problems.append(f"{i.get('name')}: MTU {mtu} < {JUMBO_MTU} (MTU 1500 gives 19-21 GB/s busbw vs 23.7 with jumbo frames)")
            k.fix_lines.append(sh("sudo", "ip", "link", "set", "dev", str(i.get("name")), "mtu", str(JUMBO_MTU)))
    if k.fix_lines:
        k.fix_lines.append(comment("the same on the other Spark; persist it in the netplan file (mtu: 9000)"))


def rule_speed(k: _Link) -> None:
    """The link in use at 200 Gb/s: slower is a cable or port that negotiated down."""
    for i in k.in_use:
        sp = i.get("speed_mbps")
        if not _count(sp) or sp <= 0:
            k.unread.append(f"{i.get('name')}: link speed unreadable ({sp!r})")
        elif sp < MIN_SPEED_MBPS:
            k.problems.append(f"{i.get('name')}: link speed {sp // 1000} Gb/s < {MIN_SPEED_MBPS // 1000} Gb/s (cable or port negotiated down)")
            k.fix_lines += [comment(f"{i.get('name')} negotiated {sp // 1000} Gb/s: reseat or replace the QSFP cable, then check"),
                            sh("ethtool", str(i.get("name")))]


def rule_rdma_ports_active(k: _Link) -> None:
    """The RDMA ports of the links that are up are ACTIVE (all down warns; states unread is unread)."""
    k.up_ports = [p for i in k.up for p in _rdma(i) if isinstance(p, Mapping) and p.get("device")]
    k.active = [p for p in k.up_ports if _port_active(p)]
    k.reported_down = bool(k.up_ports and not k.active)
    if k.up_ports and not k.active:
        down = [p for p in k.up_ports if isinstance(p.get("state"), str) and p.get("state")]
        if down:
            k.problems.append("RDMA ports of the links that are up are not ACTIVE: "
                              + ", ".join(f"{p.get('device')}/{p.get('port')}: {p.get('state')}" for p in down))
        else:
            k.unread.append("state of the RDMA ports unreadable: " + ", ".join(str(p.get("device")) for p in k.up_ports))
        k.active = k.up_ports
    k.ev.add("RDMA devices on links that are up", "/sys/class/infiniband",
             [f"{p.get('device')}/{p.get('port')}: {p.get('state')}, {p.get('rate')}, {p.get('link_layer')}"
              for p in k.active] or "none")


def rule_both_halves(k: _Link) -> None:
    """NCCL_IB_HCA set, naming both NIC halves that are up; no RDMA device at all falls back to sockets."""
    up_devs = sorted({str(p["device"]) for p in k.active})
    hca, hca_src = k.settings["NCCL_IB_HCA"]
    sel = k.hca_list  # parsed from ``hca``: None exactly when it is not set
    if up_devs:
        if sel is None:
            k.problems.append(f"NCCL_IB_HCA is not set: NCCL's default settings gave ~{DEFAULT_BUSBW_GBS:g} GB/s between two Sparks "
                              f"(vs {REACHABLE_BUSBW_GBS} GB/s naming both halves)")
            k.export_lines.append(f"export NCCL_IB_HCA={','.join(up_devs)}")
        else:
            used = [d for d in up_devs if any(sel.selects_port(d, p.get("port")) for p in k.active if str(p.get("device")) == d)]
            if len(up_devs) >= 2 and len(used) < 2:
                k.problems.append(f"NCCL_IB_HCA={hca} ({hca_src}) uses {', '.join(used) or 'none'} of the up RDMA devices "
                                  f"{', '.join(up_devs)}: one NIC half (98 Gb/s) instead of both (161 Gb/s merged)")
                k.export_lines.append(f"export NCCL_IB_HCA={','.join(up_devs)}")
            elif not used:
                k.problems.append(f"NCCL_IB_HCA={hca} ({hca_src}) names none of the up RDMA devices {', '.join(up_devs)}")
                k.export_lines.append(f"export NCCL_IB_HCA={','.join(up_devs)}")
    else:
        why = k.data.get("reason") or "no /sys/class/infiniband device lists these interfaces"
        k.problems.append(f"no RDMA device on the links that are up: {why}; NCCL falls back to sockets (~{DEFAULT_BUSBW_GBS:g} GB/s)")
    if k.settings["NCCL_SOCKET_IFNAME"][0] is None and k.in_use:
        k.export_lines.append(f"export NCCL_SOCKET_IFNAME={k.in_use[0].get('name')}")


def rule_hca_names_exist(k: _Link) -> None:
    """What NCCL_IB_HCA names is there, and usable (see _check_hca)."""
    if k.hca_list is None:  # NCCL_IB_HCA is not set (rule_both_halves said so)
        return
    hca, hca_src = k.settings["NCCL_IB_HCA"]
    flagged = any(x.startswith(f"NCCL_IB_HCA={hca} ") for x in k.problems)  # already said: wrong devices
    _check_hca(k.hca_list, str(hca), hca_src, k.data, k.ifaces, {id(p) for p in k.up_ports} if k.reported_down else set(),
               k.problems, k.unread, k.ev, flagged, k.notes)


def rule_socket_ifname(k: _Link) -> None:
    """NCCL_SOCKET_IFNAME leaves NCCL a ConnectX-7 link that is up (see _check_socket_ifname)."""
    sock, sock_src = k.settings["NCCL_SOCKET_IFNAME"]
    if k.sock_list is not None and k.sock_list.tokens:  # parsed from ``sock``: None exactly when it is not set
        bad_sock = _check_socket_ifname(k.sock_list, str(sock), sock_src, k.data, k.ifaces, k.up)
        if bad_sock:
            k.problems.append(bad_sock)
            if k.in_use:
                k.export_lines.append(f"export NCCL_SOCKET_IFNAME={k.in_use[0].get('name')}")


def rule_gid_is_roce_v2(k: _Link) -> None:
    """NCCL_IB_GID_INDEX, when set, is a number whose GID slot is RoCE v2 on every active port."""
    gid, gid_src = k.settings["NCCL_IB_GID_INDEX"]
    v2 = roce_v2_index(k.active)
    if gid is None:
        if v2 is not None:
            k.ev.add("RoCE v2 GID index", "gid_attrs/types", v2)
        return
    try:
        gidx: int | None = int(gid)
    except ValueError:
        gidx = None
    if gidx is None:
        k.problems.append(f"NCCL_IB_GID_INDEX={gid!r} ({gid_src}) is not a number")
        return
    types: dict[str, str | None] = {}
    for p in k.active:
        slot = next((g for g in _gids(p) if g.get("index") == gidx), None)
        if slot is None:
            types[str(p.get("device"))] = "empty slot"
        elif isinstance(slot.get("type"), str):
            types[str(p.get("device"))] = slot["type"]
        else:
            types[str(p.get("device"))] = None
            k.unread.append(f"{p.get('device')}: type of GID {gidx} unreadable")
    k.ev.add(f"GID {gidx} type", "gid_attrs/types", types or "no RDMA port read")
    bad = [f"{d}: {t}" for d, t in types.items() if t is not None and t != ROCE_V2]
    if bad:
        k.problems.append(f"NCCL_IB_GID_INDEX={gidx} ({gid_src}) is not RoCE v2 on {', '.join(bad)}"
                          + (f"; RoCE v2 is index {v2}" if v2 is not None else ""))
        if v2 is not None:
            k.export_lines.append(f"export NCCL_IB_GID_INDEX={v2}")


# the rules for a link that is up, in the order their problems are said (the first is the summary)
LINK_RULES: tuple[Callable[[_Link], None], ...] = (
    rule_mtu, rule_speed, rule_rdma_ports_active, rule_both_halves, rule_hca_names_exist, rule_socket_ifname,
    rule_gid_is_roce_v2,
)


def _link_verdict(k: _Link) -> Verdict:
    """warn on any problem (the first is the summary), unknown when only some parts were unread, else ok."""
    if k.export_lines:
        k.fix_lines += [comment("in the launch environment of both ranks (or -x NAME with mpirun)"), *k.export_lines]
    hca = k.settings["NCCL_IB_HCA"][0]
    summary_ok = (f"{', '.join(str(i.get('name')) for i in k.in_use)} up at MTU "
                  f"{'/'.join(str(i.get('mtu')) for i in k.in_use)}, NCCL_IB_HCA={hca}")
    problems, unread = k.problems, k.unread
    if problems:
        return Verdict(ID, Status.WARN, problems[0] + (f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""),
                       evidence=k.ev.tuple(), details=tuple(problems + k.notes + [f"not checked: {u}" for u in unread]),
                       fix=block(k.fix_lines) if k.fix_lines else FIX)
    if unread:
        return Verdict(ID, Status.UNKNOWN, "cannot confirm the link: " + "; ".join(unread), evidence=k.ev.tuple(),
                       details=tuple(unread),
                       fix=block([*k.fix_lines, *(sh("ip", "link", "show", str(i.get("name"))) for i in k.in_use)]))
    return Verdict(ID, Status.OK, summary_ok, evidence=k.ev.tuple())


def _not_up(k: _Link, applies: bool, odd: list[Mapping[str, Any]], odd_words: list[str]) -> Verdict | None:
    """skip (nothing needs the link and none is up), unknown (no link up, some in an unknown state) or
    warn (every link down); None when a link is up."""
    if not applies and not k.up and not odd:
        return Verdict(ID, Status.SKIP, "no peer, no multi-node launch, and no cabled ConnectX-7 link is up",
                       evidence=k.ev.tuple())
    for name, (v, src) in k.settings.items():
        k.ev.add(name, src or "environment and launch files", v if v is not None else "not set")
    if not k.up and odd:
        return Verdict(ID, Status.UNKNOWN, "cannot tell whether the link is up: " + "; ".join(odd_words),
                       evidence=k.ev.tuple(), details=tuple(odd_words),
                       fix=block([sh("ip", "link", "show", str(i.get("name"))) for i in odd]))
    if not k.up:
        problem = "no ConnectX-7 link is up: check the cable between the two Sparks and `ip link`"
        fix_lines = [comment("every ConnectX-7 interface is down: check the QSFP cable, then bring the cabled one up"),
                     *[sh("sudo", "ip", "link", "set", "dev", str(i.get("name")), "up") for i in k.ifaces[:2]]]
        return Verdict(ID, Status.WARN, "link down: " + problem, evidence=k.ev.tuple(),
                       details=(problem,), fix=block(fix_lines))
    return None


def judge(r: Readings, cfg: Config) -> Verdict:
    """skip when there is no peer, no multi-node launch and no cabled CX-7 link up; unknown when the
    link cannot be read or there is no ConnectX-7 to judge while a peer or multi-node launch needs one;
    warn for MTU < 9000 on the link in use, NCCL_IB_HCA unset or naming one half while both are up,
    link down or below 200 Gb/s, an NCCL_IB_GID_INDEX that is not RoCE v2; ok with the evidence."""
    ev = EvidenceList()
    peers = [str(p) for p in (cfg.fleet.peers or [])]
    multi = _multi_node(r)
    ev.add("peers", "config [fleet] peers", peers or "none")
    ev.add("multi-node launches", "G10 scan (tpscan)", multi or "none seen")
    applies = bool(peers or multi)
    reading = r.get_reading(LINK)
    data: Any = reading.data
    unreadable = _not_readable(data, reading.error, applies, ev)
    if unreadable is not None:
        return unreadable
    k = _link_of(data, ev)
    # "unknown" (or an unreadable operstate) says neither up nor down: never silently dropped
    odd = [i for i in k.ifaces if _operstate(i) not in OPERSTATES and _told(i, k.hca_list, k.sock_list)]
    odd_words = [f"{i.get('name')}: operstate {i.get('operstate')!r} (carrier "
                 f"{i.get('carrier') if i.get('carrier') is not None else 'unread'}): cannot tell whether this link is up"
                 for i in odd]
    ev.add("ConnectX-7 interfaces", "/sys/class/net",
           [f"{i.get('name')}: {i.get('operstate')}, MTU {i.get('mtu')}, "
            f"{str(i['speed_mbps'] // 1000) + ' Gb/s' if isinstance(i.get('speed_mbps'), int) else 'speed n/a'}"
            for i in k.ifaces])
    stop = _not_up(k, applies, odd, odd_words)
    if stop is not None:
        return stop
    k.unread.extend(odd_words)
    k.in_use = _in_use(k)
    for rule in LINK_RULES:
        rule(k)
    return _link_verdict(k)


GOTCHA = Gotcha(
    id=ID,
    slug="two-spark-link",
    title="Two-Spark link (ConnectX-7, NCCL)",
    symptom="Two Sparks cabled back to back train or serve far slower than expected: NCCL all-reduce "
            "bus bandwidth ~3 GB/s instead of ~23.7 GB/s, or 19-21 GB/s.",
    cause="NCCL's defaults use one half of the ConnectX-7 (the GB10 sees each port as two PCIe halves) "
          "or falls back to sockets; MTU 1500 on the link costs ~15%; a GID index that is not RoCE v2, "
          "a link that negotiated below 200 Gb/s or is down do the rest. GPUDirect RDMA is absent on GB10.",
    check="Reads the mlx5_core interfaces under /sys/class/net (MTU, operstate, speed) and their RDMA "
          "ports under /sys/class/infiniband (state, rate, GID table with its RoCE types, counters), and "
          "the NCCL_* settings from the environment and the launch files G10 found. What NCCL_SOCKET_IFNAME "
          "and NCCL_IB_HCA name (NCCL's prefix, ^ and = syntax) must exist and leave a ConnectX-7 link "
          "that is up; an MTU above the hardware's maximum or an operstate 'unknown' is not ok. Applies "
          "when a peer is configured, a launch names more than one node, or a ConnectX-7 link is up. "
          "`check --sys-root DIR` judges a copied /sys.",
    fix=FIX,
    intrusive=False,
    cadence_s=300.0,
    probes=("link",),
    judge=judge,
    references=("Default NCCL settings ~3 GB/s; both halves in NCCL_IB_HCA + MTU 9000: 23.74 GB/s "
                "(dgx-spark-playbooks #102, #103); MTU 1500: 19-21 GB/s (#25)",
                "One NIC half 98 Gb/s; both with NCCL_IB_MERGE_NICS=1: 161 Gb/s (tonyd2wild #35)"),
)


# Opt-in measurement (flows/nccl_test.py): judging all_reduce_perf's "# Avg bus bandwidth".
OK_BUSBW_GBS = 22.0  # ~93% of the 23.7 reached; MTU 1500's 19-21 GB/s falls below it
DEFAULT_LIKE_BUSBW_GBS = 6.0  # at most twice the ~3 GB/s default: NCCL is on default settings or sockets
MAX_BUSBW_GBS = 50.0  # two 200 Gb/s ports carry at most 50 GB/s: more is a measurement error


def judge_busbw(busbw_gbs: float | None) -> tuple[Status, str]:
    """(status, words) for a two-Spark all_reduce_perf bus bandwidth against public reports."""
    if busbw_gbs is None or busbw_gbs != busbw_gbs:
        return Status.UNKNOWN, "no bus bandwidth in the all_reduce_perf output"
    if busbw_gbs <= 0 or busbw_gbs > MAX_BUSBW_GBS:
        return Status.UNKNOWN, (f"measurement error: {busbw_gbs:g} GB/s is outside what two Sparks' link can carry "
                                f"(0..{MAX_BUSBW_GBS:g} GB/s); was it one host only?")
    if busbw_gbs >= OK_BUSBW_GBS:
        return Status.OK, f"{busbw_gbs:.2f} GB/s bus bandwidth: at the ~{REACHABLE_BUSBW_GBS} GB/s reported reachable"
    if busbw_gbs <= DEFAULT_LIKE_BUSBW_GBS:
        return Status.WARN, (f"{busbw_gbs:.2f} GB/s bus bandwidth: NCCL's default settings (~{DEFAULT_BUSBW_GBS:g} GB/s); "
                             f"name both NIC halves in NCCL_IB_HCA and use MTU 9000 ({REACHABLE_BUSBW_GBS} GB/s reachable)")
    return Status.WARN, (f"{busbw_gbs:.2f} GB/s bus bandwidth: below the ~{REACHABLE_BUSBW_GBS} GB/s reachable "
                         f"(MTU 1500 gives 19-21 GB/s; one NIC half ~12 GB/s)")
