"""G11 follower cost: CPU while the log is quiet, during a paced 10,000-line burst, and the raw rate.

    PYTHONPATH=src python benchmarks/kernel_log_follow.py [--quiet-s 10] [--burst-s 10] [--lines 10000]

The follower (probes/kernel_log.py ``KernelLogFollower``) reads a FIFO standing in for /dev/kmsg; a
separate writer process feeds it kmsg records (1 in 10 an Xid, the rest ordinary kernel noise), so
only the follower's side is measured. CPU is this process's (time.process_time: the main thread
only waits) and the follower thread's own (from /proc/self/task/TID/stat, clock ticks).
Targets: quiet ~0 (a blocking select: under 0.1% of a core), the paced burst under 1% of a core
averaged over its wall time; every event delivered. Exits 1 on a miss.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import threading
import time

from sparktui.probes import kernel_log as kl

XID = "NVRM: Xid (PCI:000f:01:00): 13, Graphics SM Warp Exception on (GPC 0, TPC 0, SM 0): Out Of Range Address"
NOISE = "usb 1-1: new high-speed USB device number 2 using xhci_hcd"
TICK = os.sysconf("SC_CLK_TCK")

WRITER = r"""
import os, sys, time
path, n, seconds = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
XID, NOISE = sys.argv[4], sys.argv[5]
w = os.open(path, os.O_WRONLY)
t0 = time.monotonic()
for i in range(n):
    os.write(w, f"3,{i},{i * 1000},-;{XID if i % 10 == 0 else NOISE}\n".encode())
    if seconds > 0:
        lag = t0 + (i + 1) * seconds / n - time.monotonic()
        if lag > 0:
            time.sleep(lag)
os.close(w)
"""


def thread_cpu_s(tid: int) -> float:
    with open(f"/proc/self/task/{tid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime


class Counter:
    def __init__(self, want: int) -> None:
        self.n = 0
        self.want = want
        self.done = threading.Event()

    def __call__(self, ev: dict) -> None:
        self.n += 1
        if self.n >= self.want:
            self.done.set()


def burst(fifo: str, lines: int, seconds: float) -> dict:
    want = (lines + 9) // 10
    c = Counter(want)
    f = kl.KernelLogFollower(c, fifo).start()
    assert f._thread is not None and f._thread.native_id is not None
    tid = f._thread.native_id
    cpu0, th0, t0 = time.process_time(), thread_cpu_s(tid), time.perf_counter()
    w = subprocess.Popen([sys.executable, "-c", WRITER, fifo, str(lines), str(seconds), XID, NOISE])
    ok = c.done.wait(seconds + 60)
    wall = time.perf_counter() - t0
    cpu, th = time.process_time() - cpu0, thread_cpu_s(tid) - th0
    w.wait()
    f.stop()
    return {"lines": lines, "events_want": want, "events": c.n, "lines_seen": f.lines, "ok": ok and c.n == want,
            "wall_s": wall, "cpu_s": cpu, "thread_cpu_s": th, "pct": 100 * cpu / wall, "rate": lines / wall}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quiet-s", type=float, default=10.0)
    ap.add_argument("--burst-s", type=float, default=10.0)
    ap.add_argument("--lines", type=int, default=10_000)
    a = ap.parse_args(argv)
    misses = []
    print(f"kernel_log follower benchmark  {time.strftime('%Y-%m-%d %H:%M:%S %Z')}  python {sys.version.split()[0]}  "
          f"cpus {os.cpu_count()}  loadavg {os.getloadavg()[0]:.2f}")
    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "kmsg.fifo")
        os.mkfifo(fifo)

        f = kl.KernelLogFollower(lambda ev: None, fifo).start()
        assert f._thread is not None and f._thread.native_id is not None
        time.sleep(0.2)
        tid = f._thread.native_id
        cpu0, th0, t0 = time.process_time(), thread_cpu_s(tid), time.perf_counter()
        time.sleep(a.quiet_s)
        wall = time.perf_counter() - t0
        cpu, th = time.process_time() - cpu0, thread_cpu_s(tid) - th0
        f.stop()
        pct = 100 * cpu / wall
        print(f"quiet  {wall:6.2f} s wall: process CPU {cpu * 1000:.2f} ms ({pct:.4f}% of a core), "
              f"follower thread {th * 1000:.0f} ms (tick {1000 / TICK:.0f} ms)  target < 0.1%")
        if pct >= 0.1 or th > 0:
            misses.append("quiet CPU")

        paced = burst(fifo, a.lines, a.burst_s)
        print(f"paced  {paced['lines']} lines over {paced['wall_s']:.2f} s ({paced['rate']:.0f} lines/s): "
              f"process CPU {paced['cpu_s'] * 1000:.1f} ms ({paced['pct']:.3f}% of a core), follower thread "
              f"{paced['thread_cpu_s'] * 1000:.0f} ms; events {paced['events']}/{paced['events_want']}, "
              f"lines seen {paced['lines_seen']}  target < 1%")
        if paced["pct"] >= 1.0:
            misses.append("paced burst CPU")
        if not paced["ok"]:
            misses.append("paced burst lost events")

        raw = burst(fifo, a.lines, 0.0)
        print(f"raw    {raw['lines']} lines as fast as the writer can: {raw['wall_s']:.3f} s, {raw['rate']:.0f} lines/s "
              f"delivered; process CPU {raw['cpu_s'] * 1000:.0f} ms ({raw['cpu_s'] / raw['lines'] * 1e6:.1f} us/line); "
              f"events {raw['events']}/{raw['events_want']}, lines seen {raw['lines_seen']}")
        if not raw["ok"]:
            misses.append("raw burst lost events")
    print("RESULT: " + ("ok" if not misses else "MISS: " + ", ".join(misses)))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
