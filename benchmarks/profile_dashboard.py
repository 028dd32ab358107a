"""Where the live dashboard's steady CPU goes: per thread (from /proc, each thread named by py-spy)
and, inside the busiest, the functions (py-spy's samples, inclusive), over a window after its
first checks.

sparktui runs in a real terminal (tmux, 120x40) in an empty folder (G10 scans "."), as in
side_by_side.py; py-spy (a sampling profiler: it reads the process from outside, nothing is
added to it) must be on PATH. Prints figures only; no target (side_by_side.py judges them).

    python benchmarks/profile_dashboard.py [--warm 20] [--seconds 60] [--save FILE] [--note TEXT]
"""

from __future__ import annotations

import argparse
import collections
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TICK = os.sysconf("SC_CLK_TCK")


def thread_cpu(pid: int) -> dict[int, float]:
    """Each thread's CPU seconds so far (user + system)."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            stat = Path(f"/proc/{pid}/task/{tid}/stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2:].split()
        out[int(tid)] = (int(fields[11]) + int(fields[12])) / TICK
    return out


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--warm", type=float, default=20.0, help="seconds after start before the window")
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--save")
    ap.add_argument("--note", default="")
    a = ap.parse_args()
    spy = shutil.which("py-spy")
    if spy is None or shutil.which("tmux") is None:
        print("needs py-spy and tmux on PATH", file=sys.stderr)
        return 2
    cwd = tempfile.mkdtemp(prefix="profile-cwd-")
    sock = os.path.join(cwd, "tmux.sock")
    cmd = f"cd {cwd} && exec {sys.executable} -m sparktui --no-session"
    subprocess.run(["tmux", "-S", sock, "new-session", "-d", "-s", "p", "-x", "120", "-y", "40", cmd], check=True)
    lines = [f"date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}",
             f"machine: {platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs); python {platform.python_version()}",
             f"command: python benchmarks/profile_dashboard.py --warm {a.warm:g} --seconds {a.seconds:g}",
             f"note: {a.note}", ""]
    try:
        time.sleep(1.0)
        pid = int(subprocess.run(["tmux", "-S", sock, "display-message", "-p", "-t", "p", "#{pane_pid}"],
                                 capture_output=True, text=True).stdout)
        time.sleep(a.warm)
        raw = os.path.join(cwd, "prof.raw")
        before, t0 = thread_cpu(pid), time.monotonic()
        subprocess.run([spy, "record", "-p", str(pid), "-d", str(int(a.seconds)), "-r", "500", "--threads",
                        "--nonblocking", "-f", "raw", "-o", raw], capture_output=True, timeout=a.seconds + 60)
        after, took = thread_cpu(pid), time.monotonic() - t0
        names: dict[int, str] = {}
        per_thread: dict[int, collections.Counter] = collections.defaultdict(collections.Counter)
        for line in Path(raw).read_text().splitlines() if os.path.exists(raw) else []:
            stack, n = line.rsplit(" ", 1)
            frames = stack.split(";")
            m = re.match(r"thread \((\d+)\): (.*)", frames[0])
            if not m:
                continue
            tid = int(m.group(1))
            names[tid] = m.group(2)
            seen = set()
            for f in frames[1:]:
                where = re.search(r"\((?:.*?/)?((?:sparktui|textual|rich|pynvml|psutil)/[^:]*|[^/:]*):\d+\)", f)
                key = re.sub(r" \(.*", "", f) + (f"  [{where.group(1)}]" if where else "")
                if key not in seen:
                    seen.add(key)
                    per_thread[tid][key] += int(n)
        total = sum(after.get(t, 0) - before.get(t, 0) for t in after)
        lines.append(f"CPU share over {took:.0f} s: {total / took * 100:.2f} % of one core, by thread:")
        for tid in sorted(after, key=lambda t: before.get(t, 0) - after[t]):
            share = (after[tid] - before.get(tid, 0)) / took * 100
            lines.append(f"  {share:6.2f} %  {names.get(tid, '(no Python frames sampled)'):28s} tid {tid}")
        for tid, counts in sorted(per_thread.items(), key=lambda kv: -sum(kv[1].values())):
            share = (after.get(tid, 0) - before.get(tid, 0)) / took * 100
            if share < 0.05:
                continue
            top = max(counts.values())
            lines += ["", f"{names[tid]} ({share:.2f} %): functions, inclusive, share of its samples"]
            for key, c in counts.most_common(40):
                if c * 20 >= top:
                    lines.append(f"  {c / top * 100:5.1f} %  {key}")
    finally:
        subprocess.run(["tmux", "-S", sock, "send-keys", "-t", "p", "q"], capture_output=True)
        time.sleep(1.0)
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)
        shutil.rmtree(cwd, ignore_errors=True)
    text = "\n".join(lines) + "\n"
    print(text)
    if a.save:
        Path(a.save).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
