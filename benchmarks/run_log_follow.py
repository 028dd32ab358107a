"""G14 follower cost: the run-log follower against the kernel-log follower, and its memory on a giant log.

    PYTHONPATH=src python benchmarks/run_log_follow.py [--seconds 10] [--rate 1000] [--rounds 3] [--giant-mb 1024] [--line-mb 200]

CPU: the same writer process appends ``--rate`` lines a second for ``--seconds`` to a regular file,
followed in turn, ``--rounds`` rounds in alternating order on the same machine, by
  kernel-follow  the kernel-log follower (probes/kernel_log.py ``KernelLogFollower`` on a regular
                 file), its parser replaced by a line count: what its following costs;
  follow         the run-log follower (probes/run_log.py ``LogFollower``), its lines counted only;
  kernel         the kernel-log follower as it runs, each line through its ``Parser``;
  follow+parse   the run-log follower, each line fed to the parser's ``RunLog``
                 (probes/run_progress.py): what the live run watch costs in all.
Each gets its own kind of line (a training run's: nine tqdm updates written with ``\\r`` as tqdm
does to a file, then an HF Trainer dict line; the kernel's: kmsg records, 1 in 10 an Xid, as
benchmarks/kernel_log_follow.py writes). The figure is the process's CPU (time.process_time: every
thread; the main thread only waits) over the wall time from the writer's start to the last line
delivered, in % of a core at that rate. Targets: follow's median at most 1.25 x kernel-follow's + 0.2
points of a core (the noise floor of a shared 2-CPU machine), and follow+parse's at most 1.25 x
kernel's + 0.2 points.

Memory: a ``--giant-mb`` log (written sparse: holes of NUL bytes ended by a progress line, so it
takes seconds and little disk) holding a ``--line-mb`` line with no newline, followed from its
start in a process of its own, every line through ``RunLog``; then the same line appended live
(1 MiB writes) to a followed file. The figure is the growth of the process's peak RSS
(ru_maxrss) over its value once everything was imported. Target: under 64 MB each. A control run
with the cut turned off (a 20 MiB line on a 64 MiB log) shows the measure sees a line held whole.
Exits 1 on a miss.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from sparktui.probes import kernel_log as kl
from sparktui.probes import run_log as rl
from sparktui.probes.run_progress import RunLog

TOLERANCE = 1.25
FLOOR_PCT = 0.2
RSS_BOUND_MB = 64

RECORD = r'''
def record(kind, i):
    if kind == "kernel":
        text = ("NVRM: Xid (PCI:000f:01:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address"
                if i % 10 == 0 else "usb 1-1: new high-speed USB device number 2 using xhci_hcd")
        return f"3,{i},{i * 1000},-;{text}\n".encode()
    if i % 10 == 9:
        return (f"\n{{'loss': {2.5 - i / 100000:.4f}, 'grad_norm': 0.8132, 'learning_rate': 1.9e-05, "
                f"'epoch': {i / 20000:.2f}}}\n").encode()
    return (f"\r{100 * i // 20000:3d}%|\u2588\u2588\u2588\u258b      | {i}/20000 [01:23<04:56, 11.99it/s, "
            f"loss={2.5 - i / 100000:.4f}]").encode()
'''
WRITER = RECORD + r'''
import os, sys, time
path, kind, n, seconds = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4])
w = os.open(path, os.O_WRONLY | os.O_APPEND)
t0 = time.monotonic()
for i in range(n):
    os.write(w, record(kind, i))
    if seconds > 0:
        lag = t0 + (i + 1) * seconds / n - time.monotonic()
        if lag > 0:
            time.sleep(lag)
os.close(w)
'''
_ns: dict = {}
exec(RECORD, _ns)
record = _ns["record"]


def follow_once(kind: str, folder: str, n: int, seconds: float) -> dict:
    path = os.path.join(folder, f"{kind}-{time.monotonic_ns()}.log")
    Path(path).write_bytes(b"")
    content = "kernel" if kind.startswith("kernel") else "run"
    total = sum(len(record(content, i)) for i in range(n))
    done = threading.Event()
    if kind == "kernel":
        want = (n + 9) // 10
        seen = [0]

        def on_event(ev: dict) -> None:
            seen[0] += 1
            if seen[0] >= want:
                done.set()

        f: kl.KernelLogFollower | rl.LogFollower = kl.KernelLogFollower(on_event, path)
        f.start()
        delivered = lambda: seen[0] >= want  # noqa: E731
    elif kind == "kernel-follow":  # its parser replaced by a line count: what its following costs
        kf = kl.KernelLogFollower(lambda ev: None, path)
        count = [0]

        def no_parse(line: str, t: float | None = None) -> list:
            count[0] += 1
            if count[0] >= n:
                done.set()
            return []

        kf.parser.feed = no_parse  # type: ignore[method-assign]
        f = kf.start()
        delivered = lambda: count[0] >= n  # noqa: E731
    else:
        log = RunLog()
        holder: list[rl.LogFollower] = []
        parse = kind == "follow+parse"

        def on_lines(lines: list) -> None:
            if parse:
                for text, t in lines:
                    log.line(text, t)
            if holder and holder[0].position >= total:
                done.set()

        rf = rl.LogFollower(path, on_lines, offset=0)
        holder.append(rf)
        f = rf.start()
        delivered = lambda: rf.position >= total  # noqa: E731
    cpu0, t0 = time.process_time(), time.perf_counter()
    w = subprocess.Popen([sys.executable, "-c", WRITER, path, content, str(n), str(seconds)])
    ok = done.wait(seconds + 60)
    wall = time.perf_counter() - t0
    cpu = time.process_time() - cpu0
    w.wait()
    f.stop()
    os.unlink(path)
    extra = {"lines": f.lines} if kind != "follow+parse" else {"lines": f.lines, "points": log.points_seen}
    return {"kind": kind, "ok": ok and delivered(), "wall_s": wall, "cpu_s": cpu, "pct": 100 * cpu / wall,
            "rate": n / wall, **extra}


MEM = r'''
import json, os, resource, sys, time
from sparktui.probes.run_log import LogFollower
from sparktui.probes.run_progress import RunLog
path, mode = sys.argv[1], sys.argv[2]
log = RunLog()
state = {"last": None}
def on_lines(lines):
    for text, t in lines:
        log.line(text, t)
    state["last"] = lines[-1][0]
kb = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
f = LogFollower(path, on_lines, offset=0 if mode == "start" else os.path.getsize(path))
base = kb()
t0 = time.perf_counter()
f.start()
print("ready", flush=True)
deadline = time.monotonic() + 600
while state["last"] != "after" and time.monotonic() < deadline:
    time.sleep(0.05)
took = time.perf_counter() - t0
f.stop()
print(json.dumps({"base_mb": base / 1024, "grew_mb": (kb() - base) / 1024, "bytes": f.bytes_read, "lines": f.lines,
                  "cut": f.cut_lines, "points": log.points_seen, "last": state["last"], "took_s": took}), flush=True)
'''


def giant(folder: str, size_mb: int, line_mb: int) -> tuple[str, int]:
    """A sparse log of about ``size_mb``: 64 KB holes each ended by a progress line, then a
    ``line_mb`` line (no newline in it), then "after"."""
    path = os.path.join(folder, "giant.log")
    hole = 60_000
    with open(path, "wb") as fh:
        i = 0
        while fh.tell() < (size_mb - line_mb) * 1024 * 1024:
            fh.seek(hole, os.SEEK_CUR)
            fh.write(f"\n{i}/99999 (epoch 0), train_loss = 2.911, time/batch = 0.151\n".encode())
            i += 1
        fh.truncate(fh.tell() + line_mb * 1024 * 1024)
        fh.seek(0, os.SEEK_END)
        fh.write(b"\nafter\n")
    return path, i


def mem_run(path: str, mode: str, append_mb: int = 0, uncut: bool = False) -> dict:
    src = str(Path(rl.__file__).resolve().parents[2])
    env = {**os.environ, "PYTHONPATH": src}
    code = MEM.replace("from sparktui.probes.run_log import LogFollower",
                       "import sparktui.probes.run_log as rl\nrl.MAX_PARTIAL = 1 << 40\nfrom sparktui.probes.run_log import LogFollower"
                       ) if uncut else MEM
    p = subprocess.Popen([sys.executable, "-c", code, path, mode], stdout=subprocess.PIPE, text=True, env=env)
    assert p.stdout is not None
    assert p.stdout.readline().strip() == "ready"
    if append_mb:
        with open(path, "ab") as fh:
            block = b"x" * (1024 * 1024)
            for _ in range(append_mb):
                fh.write(block)
                fh.flush()
            fh.write(b"\nafter\n")
    out = p.stdout.readline()
    p.wait(timeout=600)
    return json.loads(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--rate", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--giant-mb", type=int, default=1024)
    ap.add_argument("--line-mb", type=int, default=200)
    a = ap.parse_args(argv)
    misses: list[str] = []
    print(f"run_log follower benchmark  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}  python {sys.version.split()[0]}  "
          f"cpus {os.cpu_count()}  loadavg {os.getloadavg()[0]:.2f}")
    n = int(a.rate * a.seconds)
    with tempfile.TemporaryDirectory() as d:
        kinds = ("kernel-follow", "follow", "kernel", "follow+parse")
        results: dict[str, list[dict]] = {k: [] for k in kinds}
        for rnd in range(a.rounds):
            for kind in (kinds if rnd % 2 == 0 else kinds[::-1]):
                r = follow_once(kind, d, n, a.seconds)
                results[kind].append(r)
                print(f"round {rnd + 1} {kind:13s} {n} lines over {r['wall_s']:.2f} s ({r['rate']:.0f} lines/s): process CPU "
                      f"{r['cpu_s'] * 1000:.1f} ms ({r['pct']:.3f}% of a core); lines delivered {r['lines']}"
                      + (" (a burst's tqdm updates arrive as one line)" if not kind.startswith("kernel") else "")
                      + (f", progress points {r['points']}" if "points" in r else "") + ("" if r["ok"] else "  INCOMPLETE"))
                if not r["ok"]:
                    misses.append(f"{kind}: lines lost")
        med = {k: statistics.median(r["pct"] for r in results[k]) for k in kinds}
        for mine, theirs, what in (("follow", "kernel-follow", "following alone (lines counted, not parsed)"),
                                   ("follow+parse", "kernel", "following and parsing")):
            bound = TOLERANCE * med[theirs] + FLOOR_PCT
            print(f"median at {a.rate} lines/s, {what}: run-log follower {med[mine]:.3f}% of a core, kernel-log follower "
                  f"{med[theirs]:.3f}%, ratio {med[mine] / med[theirs]:.2f}; target <= {TOLERANCE} x kernel + {FLOOR_PCT} "
                  f"= {bound:.3f}%" + ("" if med[mine] <= bound else "  MISS"))
            if med[mine] > bound:
                misses.append(f"{mine} CPU")
        for kind in kinds:
            raw = follow_once(kind, d, n, 0.0)
            print(f"raw    {kind:13s} {n} lines as fast as the writer can: {raw['wall_s']:.3f} s, {raw['rate']:.0f} lines/s; "
                  f"process CPU {raw['cpu_s'] * 1000:.0f} ms ({raw['cpu_s'] / n * 1e6:.1f} us/line)"
                  + ("" if raw["ok"] else "  INCOMPLETE"))
            if not raw["ok"]:
                misses.append(f"{kind}: lines lost (raw)")

        t0 = time.perf_counter()
        path, holes = giant(d, a.giant_mb, a.line_mb)
        size = os.path.getsize(path)
        print(f"giant  {size / 2**20:.0f} MiB log ({holes} lines ending 60 KB holes, then a {a.line_mb} MiB line), "
              f"written sparse in {time.perf_counter() - t0:.1f} s")
        m = mem_run(path, "start")
        ok = m["last"] == "after" and m["bytes"] == size and m["cut"] == 1
        print(f"       followed from its start: {m['bytes'] / 2**20:.0f} MiB in {m['took_s']:.1f} s, {m['lines']} lines "
              f"({m['cut']} cut), {m['points']} progress points; peak RSS {m['base_mb']:.1f} MB after imports, "
              f"+{m['grew_mb']:.1f} MB while following  target < +{RSS_BOUND_MB} MB")
        if not ok:
            misses.append("giant log not read whole")
        if m["grew_mb"] >= RSS_BOUND_MB:
            misses.append("giant log RSS")
        os.unlink(path)
        live = os.path.join(d, "live.log")
        Path(live).write_bytes(b"".join(record("run", i) for i in range(1000)))
        m = mem_run(live, "end", a.line_mb)
        print(f"       a {a.line_mb} MiB line appended live (1 MiB writes): {m['bytes'] / 2**20:.0f} MiB read in "
              f"{m['took_s']:.1f} s, {m['cut']} cut; peak RSS +{m['grew_mb']:.1f} MB  target < +{RSS_BOUND_MB} MB")
        if m["last"] != "after" or m["cut"] != 1:
            misses.append("live giant line not followed")
        if m["grew_mb"] >= RSS_BOUND_MB:
            misses.append("live giant line RSS")
        # the control: the same measure with the cut turned off sees a line buffered whole
        path, _ = giant(d, 64, 20)
        m = mem_run(path, "start", uncut=True)
        print(f"control: the cut turned off (MAX_PARTIAL unbounded), a 64 MiB log with a 20 MiB line: peak RSS "
              f"+{m['grew_mb']:.1f} MB: the measure sees a line held whole" + ("" if m["grew_mb"] >= 20 else "  (NOT SEEN)"))
        if m["grew_mb"] < 20:
            misses.append("the RSS measure did not see the control's buffering")
    print("RESULT: " + ("ok" if not misses else "MISS: " + ", ".join(misses)))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
