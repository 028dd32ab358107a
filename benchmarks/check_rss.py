"""What each check leaves resident in a long-lived process (the dashboard): per check, a fresh
interpreter imports what the dashboard imports, runs the check once, collects garbage and gives
freed heap back (malloc_trim, as the dashboard does each minute), and prints what RSS grew by.
With --isolated the probes declared ``isolated`` (G8's fetch, G10's scan) run in their child
process, as the dashboard reads them (runner.long_lived). Run it in a folder worth scanning (G10
scans "."). Prints figures only.

    python benchmarks/check_rss.py [--isolated] [--save FILE] [--note TEXT] [G1 G8 ...]
    python benchmarks/check_rss.py --imports      # RSS of the dashboard's imports, layer by layer
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ONE = """
import ctypes, gc, sys, threading
def rss():
    return int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0]) / 1024
import sparktui.ui.app, sparktui.cli.main
from sparktui import runner
from sparktui.core.config import load_config
cfg = load_config(None)
if sys.argv[1] == "isolated":
    runner.long_lived()
trim = ctypes.CDLL("libc.so.6").malloc_trim
gc.collect(); trim(0)
r0, n0 = rss(), len(sys.modules)
for judged in runner.stream(sys.argv[2:], cfg, threading.Event()):
    last = judged
gc.collect(); trim(0)
v = last.verdicts[0]
print(f"{rss() - r0:+6.1f} MB  {len(sys.modules) - n0:+4d} modules  {v.status.value}")
"""


IMPORTS = """
import sys
def rss():
    return int(open('/proc/self/status').read().split('VmRSS:')[1].split()[0]) / 1024
r = rss()
for group in sys.argv[1:]:
    for m in group.split(","):
        __import__(m)
    print(f"{rss() - r:+6.1f} MB  {rss():6.1f} MB in all  {group}")
    r = rss()
"""
LAYERS = ("textual.app,textual.widgets", "pynvml,ctypes", "psutil",
          "sparktui.core.config,sparktui.core.readings,sparktui.core.shapes,sparktui.core.telemetry",
          "sparktui.gotchas", "sparktui.runner,sparktui.probes", "sparktui.live,sparktui.flows",
          "sparktui.ui.app", "sparktui.cli.main")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("ids", nargs="*", default=[f"G{i}" for i in range(1, 15) if i != 5])
    ap.add_argument("--isolated", action="store_true")
    ap.add_argument("--imports", action="store_true", help="the dashboard's imports, layer by layer")
    ap.add_argument("--save")
    ap.add_argument("--note", default="")
    a = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT / "src"), os.environ.get("PYTHONPATH")) if p)}
    if a.imports:
        out = subprocess.run([sys.executable, "-c", IMPORTS, *LAYERS], capture_output=True, text=True, env=env,
                             timeout=120)
        text = (f"date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}\n"
                f"machine: {platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs); python {platform.python_version()}\n"
                f"command: python benchmarks/check_rss.py --imports\nnote: {a.note}\n"
                "RSS each layer of the dashboard's imports adds (a fresh interpreter, in this order)\n\n" + out.stdout)
        print(text)
        if a.save:
            Path(a.save).write_text(text)
        return out.returncode
    mode = "isolated" if a.isolated else "in-process"
    lines = [f"date: {time.strftime('%Y-%m-%d %H:%M:%S UTC', time.gmtime())}",
             f"machine: {platform.node()} ({platform.machine()}, {os.cpu_count()} CPUs); python {platform.python_version()}",
             f"command: python benchmarks/check_rss.py{' --isolated' if a.isolated else ''} {' '.join(a.ids)}",
             f"note: {a.note}", f"mode: {mode} (G8 and G10 {'in a child process' if a.isolated else 'in this process'}); "
             "RSS kept after one run of the check, gc and malloc_trim", ""]
    for gid in a.ids:
        out = subprocess.run([sys.executable, "-c", ONE, "isolated" if a.isolated else "here", gid], capture_output=True,
                             text=True, env=env, timeout=600)
        said = out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else \
            f"failed (exit {out.returncode}): {out.stderr.strip().splitlines()[-1:] or ''}"
        lines.append(f"{gid:4s} {said}")
        print(lines[-1], flush=True)
    text = "\n".join(lines) + "\n"
    if a.save:
        Path(a.save).write_text(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
