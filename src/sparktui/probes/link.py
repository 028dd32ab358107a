"""Probe "link": the two-Spark ConnectX-7 link (G12), read from sysfs and the NCCL settings in effect.

Reads, under a root folder (default "/", so tests build fake /sys trees; `sparktui check --sys-root DIR`
sets it for a post-mortem of a copied /sys, see ``sys_root``):

* /sys/class/net/*: the interfaces whose ``device/driver`` is mlx5_core (ConnectX-7 on a Spark; also
  any netdev listed in /sys/class/infiniband/*/device/net/*): MTU, operstate, carrier, speed (Mb/s);
* every name in /sys/class/net (``netdevs``: lo, docker0 ...) and every RDMA device's port numbers
  (``rdma_devices``), so G12 can check that what NCCL_SOCKET_IFNAME / NCCL_IB_HCA name exists;
* /sys/class/infiniband/<dev>/ports/<n>/: state, rate, link_layer, the GID table (gids/N with
  gid_attrs/types/N, to find the RoCE v2 index), counters (port_xmit_data / port_rcv_data are in
  4-byte words: kept raw and as bytes) and hw_counters;
* the NCCL settings (NCCL_IB_HCA, NCCL_IB_MERGE_NICS, NCCL_SOCKET_IFNAME, NCCL_IB_GID_INDEX,
  NCCL_NET_GDR_LEVEL) from the environment given and from (path, text) pairs of launch configs and
  env files (the integrator passes what G10's scan found).

RDMA traffic never shows in /proc/net/dev (5.6 MB there against 325 GB in the RDMA counters, as sparktop reported),
so live link telemetry comes from the port counters: ``rates(before, after)``.

No ConnectX-7 at all is a reading (``interfaces == []`` with ``reason``); a /sys that cannot be
read is a failed reading (``data is None`` with ``error``). Never raises.
"""

from __future__ import annotations

import contextlib
import os
import re
import time
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

from sparktui.core import shapes
from sparktui.core.config import Config
from sparktui.core.readings import Reading
from sparktui.probes.declared import Probe

NCCL_VARS = ("NCCL_IB_HCA", "NCCL_IB_MERGE_NICS", "NCCL_SOCKET_IFNAME", "NCCL_IB_GID_INDEX", "NCCL_NET_GDR_LEVEL")
MLX5_DRIVER = "mlx5_core"
# port_xmit_data / port_rcv_data count 4-byte words (IB spec "PortXmitData ... divided by 4").
COUNTER_WORD_BYTES = 4
WORD_COUNTERS = ("port_xmit_data", "port_rcv_data")
MAX_GIDS = 256  # a ConnectX-7 port's GID table has 255 entries; never walk more
MAX_HW_COUNTERS = 200
ZERO_GID = "0000:0000:0000:0000:0000:0000:0000:0000"
MAX_FILE_BYTES = 4 * 1024 * 1024  # a launch config or env file larger than this is not read

# `export NCCL_IB_HCA=a,b`, `NCCL_IB_HCA="a"`, `-e NCCL_IB_HCA=a`, `--env NCCL_IB_HCA=a`,
# YAML `NCCL_IB_HCA: a`, JSON `"NCCL_IB_HCA": "a"`, Dockerfile `ENV NCCL_IB_HCA a` / `ENV NCCL_IB_HCA=a`.
_NAMES = "|".join(NCCL_VARS)
# An unquoted value after "=" (shell, env file, -e/-x) keeps its commas (`NCCL_IB_HCA=a,b` names two
# devices); after ":" (YAML/JSON flow maps) a comma ends it.
_ASSIGN = re.compile(r"""(?<![\w$])["']?(?P<k>""" + _NAMES + r""")["']?\s*(?:=\s*(?P<v>"[^"\n]*"|'[^'\n]*'|[^\s"'}#;\]]*)"""
                     r"""|:(?!=)\s*(?P<v2>"[^"\n]*"|'[^'\n]*'|[^\s"',}#;\]]*))""")
_DOCKER_ENV = re.compile(r"""^\s*ENV\s+(?P<k>""" + _NAMES + r""")\s+(?P<v>"[^"\n]*"|'[^'\n]*'|\S+)""")


SYSFS_BYTES = 4096  # a sysfs attribute is one page at most
MAX_NETDEVS = 4096  # interface names kept (a host with more is not a Spark; the ConnectX-7 ones are read whole)
MAX_RDMA_DEVICES = 256


def _text(p: Path) -> str | None:
    """A sysfs attribute's text (one page at most; a FIFO or device in its place is never waited on)."""
    try:
        fd = os.open(p, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except (OSError, ValueError):
        return None
    try:
        return os.read(fd, SYSFS_BYTES).decode("utf-8", "replace").strip()
    except OSError:
        return None
    finally:
        os.close(fd)


def _int(p: Path) -> int | None:
    """A count, size or speed; None when absent or not a non-negative number (a counter, an MTU or a
    speed is never negative: the -1 of a link that is down means 'no speed')."""
    t = _text(p)
    if not t:
        return None
    try:
        v = int(t.split()[0], 0)
    except ValueError:
        return None
    return v if v >= 0 else None


def _decimal(name: str) -> bool:
    """An index in a file name: ASCII digits only (str.isdigit takes '²', which int() refuses)."""
    return name.isascii() and name.isdigit()


def _link_name(p: Path) -> str | None:
    try:
        return os.path.basename(os.readlink(p))
    except OSError:
        return None


def _rdma_ports(ib: Path) -> dict[str, list[dict[str, Any]]]:
    """netdev name -> the RDMA ports whose device lists it (device/net/<if>); also '' for none."""
    out: dict[str, list[dict[str, Any]]] = {}
    try:
        devs = sorted(ib.iterdir())
    except OSError:
        return out
    for dev in devs:
        try:
            nets = sorted(x.name for x in (dev / "device" / "net").iterdir())
        except OSError:
            nets = []
        ports: list[dict[str, Any]] = []
        try:
            port_dirs = sorted((dev / "ports").iterdir(), key=lambda d: (len(d.name), d.name))
        except OSError:
            port_dirs = []
        for pd in port_dirs:
            ports.append(_port(dev.name, pd))
        for n in nets or [""]:
            out.setdefault(n, []).extend(ports if ports else [{"device": dev.name, "port": None,
                                                               "error": f"no ports under {dev / 'ports'}"}])
    return out


def _rdma_device_ports(ib: Path) -> dict[str, list[int | str]]:
    """Every RDMA device under ``ib`` -> its port numbers (/sys/class/infiniband/<hca>/ports/<n>), so
    G12 can tell whether NCCL_IB_HCA's ``<hca>:<port>`` exists; {} when there is no such folder."""
    out: dict[str, list[int | str]] = {}
    try:
        devs = sorted(d.name for d in ib.iterdir())[:MAX_RDMA_DEVICES]
    except OSError:
        return out
    for dev in devs:
        try:
            ports = sorted((p.name for p in (ib / dev / "ports").iterdir()), key=lambda n: (len(n), n))[:MAX_GIDS]
        except OSError:
            ports = []
        out[dev] = [int(n) if _decimal(n) else n for n in ports]
    return out


def _port(dev: str, pd: Path) -> dict[str, Any]:
    port: dict[str, Any] = {"device": dev, "port": int(pd.name) if _decimal(pd.name) else pd.name,
                            "state": _text(pd / "state"), "phys_state": _text(pd / "phys_state"),
                            "rate": _text(pd / "rate"), "link_layer": _text(pd / "link_layer")}
    gids: list[dict[str, Any]] = []
    try:
        idx = sorted((int(g.name) for g in (pd / "gids").iterdir() if _decimal(g.name)))[:MAX_GIDS]
    except OSError:
        idx = []
        port["gids_error"] = f"{pd / 'gids'} unreadable"
    for i in idx:
        gid = _text(pd / "gids" / str(i))
        if not gid or gid == ZERO_GID:
            continue  # an empty slot (its type file answers EINVAL)
        gids.append({"index": i, "gid": gid, "type": _text(pd / "gid_attrs" / "types" / str(i)),
                     "ndev": _text(pd / "gid_attrs" / "ndevs" / str(i))})
    port["gids"] = gids
    counters: dict[str, int] = {}
    for sub, dest in (("counters", counters),):
        try:
            names = sorted(c.name for c in (pd / sub).iterdir())
        except OSError:
            names = []
        for name in names:
            v = _int(pd / sub / name)
            if v is not None:
                dest[name] = v
    port["counters"] = counters
    for name in WORD_COUNTERS:
        if name in counters:
            port[name + "_bytes"] = counters[name] * COUNTER_WORD_BYTES
    hw: dict[str, int] = {}
    try:
        hw_names = sorted(c.name for c in (pd / "hw_counters").iterdir())[:MAX_HW_COUNTERS]
    except OSError:
        hw_names = []
    for name in hw_names:
        v = _int(pd / "hw_counters" / name)
        if v is not None:
            hw[name] = v
    port["hw_counters"] = hw
    return port


def _unquote(v: str) -> str:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "\"'":
        return v[1:-1]
    return v


def nccl_settings(env: Mapping[str, str] | None, files: Iterable[tuple[str, str]] = ()) -> dict[str, list[dict[str, Any]]]:
    """NCCL variable -> where it is set: [{"value", "source", "line"?}], the environment first."""
    out: dict[str, list[dict[str, Any]]] = {}
    for k in NCCL_VARS:
        if env is not None and k in env:
            out.setdefault(k, []).append({"value": str(env[k]), "source": "environment"})
    for path, text in files:
        if not isinstance(text, str):
            continue
        for n, line in enumerate(text.splitlines(), 1):
            if "NCCL_" not in line:
                continue
            s = line.lstrip()
            if s.startswith("#") or s.startswith("//"):
                continue
            hits = [m for m in _ASSIGN.finditer(line)] or [m for m in [_DOCKER_ENV.match(line)] if m]
            for m in hits:
                v = m.group("v")
                if v is None:
                    v = m.groupdict().get("v2") or ""
                out.setdefault(m.group("k"), []).append({"value": _unquote(v), "source": str(path), "line": n})
    return out


def read_files(paths: Iterable[str]) -> list[tuple[str, str]]:
    """(path, text) for launch configs named by path; unreadable or oversized ones are left out."""
    out = []
    for p in paths:
        try:
            if os.path.getsize(p) > MAX_FILE_BYTES:
                continue
            with open(p, errors="replace") as fh:
                out.append((p, fh.read()))
        except OSError:
            continue
    return out


# The NCCL settings of launch scripts: the same paths and file kinds as G10's scan (probes/tpscan.py),
# walked again here but cheaply (names and sizes, then only files holding b"NCCL_" are decoded), within
# the bounds of G10's default scan, so the link probe never waits on the scan or stalls on a big tree.
LAUNCH_DEADLINE_S = 3.0
LAUNCH_MAX_DEPTH = 6
LAUNCH_MAX_FILES = 5000  # entries looked at, files and folders alike
_LAUNCH_KINDS = frozenset({"yaml", "json", "toml", "shell", "env", "dockerfile"})  # no Python: os.environ[...] = is not read


def launch_files(paths: Iterable[str], max_file_bytes: int = MAX_FILE_BYTES, *,
                 deadline_s: float = LAUNCH_DEADLINE_S, max_depth: int = LAUNCH_MAX_DEPTH,
                 max_files: int = LAUNCH_MAX_FILES) -> tuple[list[tuple[str, str]], str | None]:
    """(path, text) of the launch configs under ``paths`` that mention NCCL_, and why the walk stopped
    early (None: it saw everything). Unreadable folders and files are passed over; never raises."""
    from sparktui.probes import tpscan  # its file kinds and skipped folders, so both scans see the same files

    out: list[tuple[str, str]] = []
    end = time.monotonic() + deadline_s
    seen = 0
    stack: list[tuple[str, int]] = [(str(p), 0) for p in reversed(list(paths))]
    visited: set[tuple[int, int]] = set()
    while stack:
        if time.monotonic() > end:
            return out, f"launch-file walk stopped after {deadline_s:g} s ({len(stack)} folders not read)"
        path, depth = stack.pop()
        try:
            st = os.stat(path)
        except OSError:
            continue
        if not os.path.isdir(path):
            entries: list[tuple[str, str, bool]] = [(os.path.dirname(path), os.path.basename(path), False)]
        else:
            if (st.st_dev, st.st_ino) in visited or depth > max_depth:
                continue
            visited.add((st.st_dev, st.st_ino))
            try:
                with os.scandir(path) as it:
                    entries = [(path, e.name, e.is_dir(follow_symlinks=False)) for e in it]
            except OSError:
                continue
            entries.sort(key=lambda e: e[1])
            names = {e[1] for e in entries}
            if depth > 0 and (names & tpscan._ENV_ENTRIES):
                continue  # a virtual environment or conda prefix
        for folder, name, is_dir in entries:
            seen += 1
            if seen > max_files:
                return out, f"launch-file walk stopped at {max_files} entries"
            full = os.path.join(folder, name)
            if is_dir:
                if name in tpscan._SKIP_DIRS or (depth == 0 and name in tpscan._SYSTEM_DIRS and folder == "/"):
                    continue
                stack.append((full, depth + 1))
                continue
            kind = tpscan._kind_of(name)
            if kind is None or (kind and kind not in _LAUNCH_KINDS):
                continue
            try:
                if not os.path.isfile(full) or os.path.getsize(full) > max_file_bytes:
                    continue
                with open(full, "rb") as fh:
                    data = fh.read(max_file_bytes + 1)
            except OSError:
                continue
            if b"NCCL_" not in data or (kind == "" and not tpscan._SHEBANG.match(data)):
                continue
            out.append((full, data.decode("utf-8", errors="replace")))
    return out, None


def scan(root: str = "/", env: Mapping[str, str] | None = None,
         files: Iterable[tuple[str, str]] = ()) -> tuple[dict[str, Any] | None, str | None]:
    """(data, None) or (None, error). ``data`` follows core/shapes.py ``LinkData``."""
    base = Path(root)
    net = base / "sys" / "class" / "net"
    ib = base / "sys" / "class" / "infiniband"
    try:
        names = sorted(x.name for x in net.iterdir())
    except FileNotFoundError:
        return None, f"{net} does not exist (not Linux, or /sys is not mounted)"
    except OSError as e:
        return None, f"{net} unreadable: {e.strerror or e}; run where /sys is readable"
    rdma = _rdma_ports(ib)
    ib_seen = ib.is_dir()
    netdevs = names[:MAX_NETDEVS]  # every interface, so G12 can tell "lo" or a missing name from the link
    interfaces: list[dict[str, Any]] = []
    for name in names:
        d = net / name
        driver = _link_name(d / "device" / "driver")
        if driver != MLX5_DRIVER and name not in rdma:
            continue
        speed = _int(d / "speed")  # -1 (or EINVAL) while down: not a speed
        interfaces.append({
            "name": name,
            "driver": driver,
            "pci": _link_name(d / "device"),
            "vendor": _text(d / "device" / "vendor"),
            "device_id": _text(d / "device" / "device"),
            "mtu": _int(d / "mtu"),
            "operstate": _text(d / "operstate"),
            "carrier": _int(d / "carrier"),
            "speed_mbps": speed if speed is not None and speed > 0 else None,
            "rdma": rdma.get(name, []),
        })
    data: dict[str, Any] = {
        "root": str(base),
        "interfaces": interfaces,
        "rdma_seen": ib_seen,
        "unattached_rdma": rdma.get("", []),
        "netdevs": netdevs,
        "rdma_devices": _rdma_device_ports(ib),
        "nccl": nccl_settings(env, files),
        "nccl_files": [str(p) for p, _ in files],
        "read_at": time.time(),
    }
    if not interfaces:
        data["reason"] = (f"no ConnectX-7 (mlx5_core) network interface in {net}"
                          + ("" if ib_seen else f", and no {ib}"))
    elif not ib_seen:
        data["reason"] = f"{ib} is missing: the RDMA driver (mlx5_ib / rdma-core) is not loaded"
    return data, None


_SYS_ROOT: list[str] = []  # set by ``sys_root`` (`sparktui check --sys-root DIR`); empty: "/"


@contextlib.contextmanager
def sys_root(root: str | None) -> Iterator[None]:
    """Within the block, ``read`` looks for sys/class/net and sys/class/infiniband under ``root``
    instead of / (a copied /sys for a post-mortem, a fake tree in a test). None changes nothing.
    Process-wide (the probes run in worker threads), restored on exit."""
    if root is None:
        yield
        return
    _SYS_ROOT.append(str(root))
    try:
        yield
    finally:
        _SYS_ROOT.pop()


def read(cfg: Config, root: str | None = None, env: Mapping[str, str] | None = None,
         files: Iterable[tuple[str, str]] | None = None) -> Reading[Any]:
    """``files`` None: the launch configs under G10's scan paths (``[scan] paths``) that mention NCCL_.
    ``root`` None: the folder ``sys_root`` set, else "/"."""
    root = root if root is not None else (_SYS_ROOT[-1] if _SYS_ROOT else "/")
    env = os.environ if env is None else env
    t0 = time.perf_counter()
    walk_note: str | None = None
    walked: list[str] = []
    try:
        if files is None:
            walked = [str(p) for p in (cfg.scan.paths or ["."])]
            files, walk_note = launch_files(walked, min(cfg.scan.max_file_bytes, MAX_FILE_BYTES))
        files = list(files)
        data, err = scan(root, env, files)
        if data is not None and walked:
            data["nccl_scan"] = {"paths": walked, "files": len(files), "stopped": walk_note}
    except Exception as e:  # sysfs surprises must cost this reading only
        files, data, err = [], None, f"link probe failed: {type(e).__name__}: {e}"
    return Reading("link", data, error=err, source=f"{os.path.join(root, 'sys/class/net')}, "
                   f"{os.path.join(root, 'sys/class/infiniband')}, environment" + (", launch files" if files else ""),
                   took_s=time.perf_counter() - t0)


def rates(before: Mapping[str, Any] | None, after: Mapping[str, Any] | None,
          dt_s: float | None = None) -> dict[str, dict[str, float | None]]:
    """Bytes/s in and out per RDMA port ("rocep1s0f1/1") between two link readings' data.

    ``dt_s`` defaults to the difference of their ``read_at``. A counter that went backwards (reset,
    driver reload) or a port missing from either reading gives None, never 0."""
    if not before or not after:
        return {}
    if dt_s is None:
        a, b = before.get("read_at"), after.get("read_at")
        dt_s = (b - a) if isinstance(a, (int, float)) and isinstance(b, (int, float)) else None
    out: dict[str, dict[str, float | None]] = {}

    def ports(d: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
        res = {}
        for i in d.get("interfaces") or []:
            for p in i.get("rdma") or []:
                res[f"{p.get('device')}/{p.get('port')}"] = p
        return res

    pb, pa = ports(before), ports(after)
    for key, p in pa.items():
        q = pb.get(key)
        row: dict[str, float | None] = {"rx_Bps": None, "tx_Bps": None}
        for name, col in (("port_rcv_data_bytes", "rx_Bps"), ("port_xmit_data_bytes", "tx_Bps")):
            if q is None or not dt_s or dt_s <= 0:
                continue
            x0, x1 = q.get(name), p.get(name)
            if isinstance(x0, int) and isinstance(x1, int) and x1 >= x0:
                row[col] = (x1 - x0) / dt_s
        out[key] = row
    return out


class RdmaReader:
    """RDMA traffic for the telemetry sampler: the summed port_rcv_data / port_xmit_data of every RDMA
    port under ``root``/sys/class/infiniband, as bytes/s between two reads. Cheap: the counter files are
    found once (again every REDISCOVER_S while there are none, or after a port vanished) and then only
    2 small sysfs files a port are read per sample.

    ``read(now)`` -> (None, None): no RDMA device (the panel hides the line); (None, reason): the
    counters could not be read; ({"rx_Bps", "tx_Bps", "ports"}, None) with rates None on the first read
    or after a counter went backwards (a reset), never 0 for "not known"."""

    REDISCOVER_S = 60.0

    def __init__(self, root: str = "/") -> None:
        self.ib = Path(root) / "sys" / "class" / "infiniband"
        self.files: list[tuple[str, str]] | None = None  # (rcv, xmit) paths per port; None: not looked yet
        self._looked_at: float | None = None
        self._last: tuple[float, int, int] | None = None  # (time, rx bytes, tx bytes)

    def _discover(self, now: float) -> None:
        self._looked_at = now
        self.files = []
        try:
            devs = sorted(self.ib.iterdir())
        except OSError:
            return
        for dev in devs:
            try:
                ports = sorted((dev / "ports").iterdir())
            except OSError:
                continue
            for p in ports:
                c = p / "counters"
                if (c / "port_rcv_data").exists() or (c / "port_xmit_data").exists():
                    self.files.append((str(c / "port_rcv_data"), str(c / "port_xmit_data")))

    @staticmethod
    def _word(path: str) -> int:
        """One counter; ValueError when it is not a non-negative number."""
        with open(path, "rb") as f:
            v = int(f.read(64).split()[0])
        if v < 0:
            raise ValueError(f"negative counter {v}")
        return v

    def read(self, now: float | None = None) -> tuple[dict[str, Any] | None, str | None]:
        now = time.monotonic() if now is None else now
        if self.files is None or (not self.files and (self._looked_at is None or now - self._looked_at >= self.REDISCOVER_S)):
            self._discover(now)
        if not self.files:
            self._last = None
            return None, None
        rx = tx = 0
        try:
            for rcv, xmit in self.files:
                rx += self._word(rcv) * COUNTER_WORD_BYTES
                tx += self._word(xmit) * COUNTER_WORD_BYTES
        except FileNotFoundError:  # a port went away (driver unloaded): look again next time
            self.files, self._last = None, None
            return None, f"RDMA counters vanished under {self.ib}"
        except (OSError, ValueError, IndexError) as e:
            self._last = None
            why = e.strerror if isinstance(e, OSError) and e.strerror else "not a number"
            return None, f"RDMA port counters under {self.ib} unreadable: {why}"
        out: dict[str, Any] = {"rx_Bps": None, "tx_Bps": None, "ports": len(self.files),
                               "rx_bytes": rx, "tx_bytes": tx}
        if self._last is not None:
            t0, rx0, tx0 = self._last
            dt = now - t0
            if dt > 0:
                out["rx_Bps"] = (rx - rx0) / dt if rx >= rx0 else None
                out["tx_Bps"] = (tx - tx0) / dt if tx >= tx0 else None
        self._last = (now, rx, tx)
        return out, None


PROBES = (Probe(shapes.LINK, read),)
