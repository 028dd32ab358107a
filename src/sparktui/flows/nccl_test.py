"""G12's opt-in measurement: nccl-tests' all_reduce_perf across two Sparks (intrusive like G5).

Never automatic: ``plan`` builds the exact command from what the link probe read; ``run`` executes
it only when asked and only when the binary (and the launcher) exist, else it returns the command
to run by hand. ``parse`` reads all_reduce_perf's table and its "# Avg bus bandwidth" line, and the
busbw is judged against public reports (g12_two_spark_link.judge_busbw: ~23.7 GB/s reachable, ~3 GB/s
with default settings).
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import threading
from typing import Any, Mapping, Sequence

from sparktui.core import children
from sparktui.gotchas.g12_two_spark_link import judge_busbw, roce_v2_index

DEFAULT_BINARY = "all_reduce_perf"


def _first_words(stderr: str) -> str:
    """The first line of stderr that says something: MPI frames its refusals in lines of dashes
    ("mpirun has detected an attempt to run as root" sits under one)."""
    return next((line.strip() for line in stderr.splitlines() if any(c.isalpha() for c in line)), "no stderr")
DEFAULT_BYTES = "16G"  # one large message: the busbw reports quote (dgx-spark-playbooks #102)
TIMEOUT_S = 600.0
COLUMNS = ("size", "count", "type", "redop", "root", "time_us", "algbw_gbs", "busbw_gbs", "wrong")
_AVG = re.compile(r"^#\s*Avg bus bandwidth\s*:\s*(?P<v>[-+0-9.eE]+|nan|inf)", re.I | re.M)
NCCL_EXPORTS = ("NCCL_SOCKET_IFNAME", "NCCL_IB_HCA", "NCCL_IB_GID_INDEX", "NCCL_IB_MERGE_NICS")


def plan(hosts: Sequence[str], settings: Mapping[str, str] | None = None, *, binary: str = DEFAULT_BINARY,
         mpirun: str = "mpirun", min_bytes: str = DEFAULT_BYTES, max_bytes: str = DEFAULT_BYTES,
         iters: int = 20) -> list[str]:
    """argv for one rank per Spark: mpirun -np 2 -H a:1,b:1 ... -x NCCL_... all_reduce_perf -b -e -f 2 -g 1.

    ``settings`` are the NCCL values to pass (what the link probe read, or what G12's fix suggests);
    NCCL_SOCKET_IFNAME also pins Open MPI's own TCP traffic to that interface."""
    if len(hosts) < 2:
        raise ValueError("all_reduce_perf across Sparks needs two hosts (this one and a peer)")
    for h in hosts:
        if not h or h.startswith("-") or any(c in h for c in " ,:\n"):
            raise ValueError(f"not a host name: {h!r}")
    settings = dict(settings or {})
    argv = [mpirun, "-np", str(len(hosts)), "-H", ",".join(f"{h}:1" for h in hosts),
            "--mca", "plm_rsh_agent", "ssh"]
    ifname = settings.get("NCCL_SOCKET_IFNAME")
    if ifname and not ifname.startswith("^"):
        argv += ["--mca", "btl_tcp_if_include", ifname.split(",")[0], "--mca", "oob_tcp_if_include", ifname.split(",")[0]]
    for k in NCCL_EXPORTS:
        if settings.get(k):
            argv += ["-x", f"{k}={settings[k]}"]
    argv += ["-x", "LD_LIBRARY_PATH"]
    argv += [binary, "-b", min_bytes, "-e", max_bytes, "-f", "2", "-g", "1", "-n", str(iters)]
    return argv


def command_line(argv: Sequence[str]) -> str:
    return " ".join(shlex.quote(a) for a in argv)


def _num(s: str) -> float | None:
    try:
        return float(s)
    except ValueError:
        return None


def parse(text: str) -> dict[str, Any]:
    """all_reduce_perf's output -> {"rows": [...], "avg_busbw_gbs": float | None, "errors": [...]}.

    A row is size, count, type, redop, root, then out-of-place time/algbw/busbw/#wrong and the
    same in place; "N/A" in #wrong (newer nccl-tests) is None. Lines that do not parse are ignored."""
    rows: list[dict[str, Any]] = []
    for line in text.splitlines():
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        f = s.split()
        if len(f) < 9 or not f[0].isdigit() or not f[1].isdigit():
            continue
        row: dict[str, Any] = {"size": int(f[0]), "count": int(f[1]), "type": f[2], "redop": f[3],
                               "root": int(f[4]) if f[4].lstrip("-").isdigit() else None,
                               "time_us": _num(f[5]), "algbw_gbs": _num(f[6]), "busbw_gbs": _num(f[7]),
                               "wrong": int(f[8]) if f[8].isdigit() else None}
        if len(f) >= 13:
            row.update({"in_place_time_us": _num(f[9]), "in_place_algbw_gbs": _num(f[10]),
                        "in_place_busbw_gbs": _num(f[11]), "in_place_wrong": int(f[12]) if f[12].isdigit() else None})
        rows.append(row)
    m = _AVG.search(text)
    avg = _num(m.group("v")) if m else None
    errors = []
    if any((r.get("wrong") or 0) > 0 or (r.get("in_place_wrong") or 0) > 0 for r in rows):
        errors.append("all_reduce_perf reported wrong results (#wrong > 0): the numbers are not trustworthy")
    return {"rows": rows, "avg_busbw_gbs": avg, "errors": errors}


def _exists(prog: str) -> bool:
    if os.sep in prog:
        return os.path.isfile(prog) and os.access(prog, os.X_OK)
    return shutil.which(prog) is not None


def run(argv: Sequence[str], *, binary: str | None = None, timeout_s: float = TIMEOUT_S,
        cancel: threading.Event | None = None) -> dict[str, Any]:
    """Run the planned command (only when asked: the caller asked first). Returns
    {"status": ok|warn|unknown|not run, "summary", "command", ...parse()}; never raises."""
    argv = list(argv)
    cmd = command_line(argv)
    if not argv:
        return {"status": "not run", "summary": "no command", "command": cmd}
    binary = binary or next((a for a in argv if os.path.basename(a) == DEFAULT_BINARY), argv[-1])
    missing = [p for p in dict.fromkeys([argv[0], binary]) if not _exists(p)]
    if missing:
        return {"status": "not run", "command": cmd,
                "summary": f"{', '.join(missing)} not found here: build nccl-tests (make MPI=1) and run on this Spark:\n{cmd}"}
    if cancel is not None and cancel.is_set():
        return {"status": "not run", "command": cmd, "summary": "cancelled before it started"}
    try:  # tracked, so its MPI ranks die with it and with sparktui (core/children.py)
        proc = children.spawn(argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True, errors="replace")
    except OSError as e:
        return {"status": "unknown", "command": cmd, "summary": f"could not start: {e}"}
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        return {"status": "unknown", "command": cmd, "summary": f"all_reduce_perf ran past {timeout_s:g} s and was stopped"}
    finally:
        children.reap(proc)
    result = parse(stdout)
    result["command"] = cmd
    result["returncode"] = proc.returncode
    result["stderr_tail"] = stderr[-2000:]
    if proc.returncode != 0:
        result.update(status="unknown", summary=f"all_reduce_perf exited {proc.returncode}: "
                      f"{_first_words(stderr)[:300]}")
        return result
    if result["errors"]:
        result.update(status="unknown", summary=result["errors"][0])
        return result
    busbw = result["avg_busbw_gbs"]
    if busbw is None and result["rows"]:
        busbw = result["rows"][-1].get("busbw_gbs")
    status, words = judge_busbw(busbw)
    result.update(status=status.value, summary=words, busbw_gbs=busbw)
    return result


def suggested_settings(link_data: Mapping[str, Any] | None) -> dict[str, str]:
    """The NCCL settings to pass to ``plan``: what the link reading says is in effect, else what G12's
    fix would set (the up RDMA devices, the first up interface, the RoCE v2 GID index)."""
    out: dict[str, str] = {}
    if not isinstance(link_data, Mapping):
        return out
    nccl = link_data.get("nccl") if isinstance(link_data.get("nccl"), Mapping) else {}
    for k in NCCL_EXPORTS:
        rows = nccl.get(k) if isinstance(nccl, Mapping) else None
        if isinstance(rows, list) and rows and isinstance(rows[0], Mapping) and isinstance(rows[0].get("value"), str):
            out[k] = rows[0]["value"]
    ifaces = [i for i in link_data.get("interfaces") or [] if isinstance(i, Mapping) and i.get("operstate") == "up"]
    ports = [p for i in ifaces for p in (i.get("rdma") or []) if isinstance(p, Mapping) and p.get("device")]
    if "NCCL_IB_HCA" not in out and ports:
        out["NCCL_IB_HCA"] = ",".join(sorted({str(p["device"]) for p in ports}))
    if "NCCL_SOCKET_IFNAME" not in out and ifaces:
        out["NCCL_SOCKET_IFNAME"] = str(ifaces[0].get("name"))
    if "NCCL_IB_GID_INDEX" not in out:
        v2 = roce_v2_index(ports)
        if v2 is not None:
            out["NCCL_IB_GID_INDEX"] = str(v2)
    return out
