"""Dashboard overhead: sparktui vs a minimal Textual app with one 1 Hz sparkline, side by side.

Both run in real tmux sessions for the same time; the script samples each process's CPU time and
RSS with psutil and prints CPU share, RSS at start and end (growth), and time to first paint.
Targets: sparktui CPU under 2x the minimal app's, RSS under 100 MB, first paint under 1 s (never
painting is a miss), no RSS growth over a 10-minute soak (printed, judged by the reader). Exits 1
when one of the first three is missed.

    python benchmarks/overhead.py [--seconds 60] [--replay FILE | --fake]   # default: live (this machine)

--fake runs the live dashboard on the fake GB10 NVML of sparktui.testing, its readings moving as a loaded
GPU's do (a machine without a GPU otherwise draws no GPU telemetry, which is cheaper than what a
Spark shows).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

import psutil

MINIMAL_APP = '''
import random
from textual.app import App
from textual.widgets import Sparkline, Static


class Minimal(App):
    def compose(self):
        yield Static("minimal")
        yield Sparkline([], id="s")

    def on_mount(self):
        self.data = []
        self.set_interval(1.0, self.tick)

    def tick(self):
        self.data = (self.data + [random.random()])[-120:]
        self.query_one("#s", Sparkline).data = list(self.data)


Minimal().run()
'''


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

FAKE_SPARK = '''
import sys
sys.path[:0] = [{root!r} + "/src"]
from sparktui.testing import fake_nvml
from sparktui.probes import nvml
fake = fake_nvml.gb10_loaded()
nvml.set_backend(fake)


def jitter():  # a GPU under load never reads the same twice: values move as on the H200
    import random, time
    while True:
        fake.set(power_w=random.uniform(70, 95), temp_c=random.randint(70, 76), sm_mhz=random.randint(2380, 2500),
                 gr_mhz=random.randint(2380, 2500), util_gpu=random.randint(90, 100))
        time.sleep(0.25)


import threading
threading.Thread(target=jitter, daemon=True).start()
from sparktui.cli.main import main
raise SystemExit(main())
'''


def tmux(sock: str, *args: str) -> str:
    return subprocess.run(["tmux", "-S", sock, *args], capture_output=True, text=True).stdout


def start(sock: str, name: str, command: str) -> None:
    subprocess.run(["tmux", "-S", sock, "new-session", "-d", "-s", name, "-x", "120", "-y", "36", command], check=True)


def pane_pid(sock: str, name: str) -> int:
    return int(tmux(sock, "display-message", "-p", "-t", name, "#{pane_pid}").strip())


def app_process(shell_pid: int) -> psutil.Process:
    """The python process under the pane (the pane's command is exec'd, or a child of sh)."""
    p = psutil.Process(shell_pid)
    if "python" in p.name():
        return p
    for c in p.children(recursive=True):
        if "python" in c.name():
            return c
    return p


def main_thread_cpu(p: psutil.Process) -> float:
    """CPU seconds of the process's main thread (on Linux its thread id is the process id)."""
    for t in p.threads():
        if t.id == p.pid:
            return t.user_time + t.system_time
    return 0.0


def first_paint(sock: str, name: str, marker: str, t0: float, timeout: float = 30.0) -> float | None:
    while time.monotonic() - t0 < timeout:
        if marker in tmux(sock, "capture-pane", "-p", "-t", name):
            return time.monotonic() - t0
        time.sleep(0.02)
    return None


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=60.0)
    ap.add_argument("--replay", help="run sparktui on a recording instead of this machine")
    ap.add_argument("--fake", action="store_true", help="live dashboard on the fake GB10 NVML of sparktui.testing")
    ap.add_argument("--extra-processes", type=int, default=0,
                    help="idle processes to start first (a desktop host has hundreds for the process view to scan)")
    a = ap.parse_args()
    if not shutil.which("tmux"):
        print("tmux not installed")
        return 1
    tmp = tempfile.mkdtemp()
    sock = os.path.join(tmp, "tmux.sock")
    minimal = os.path.join(tmp, "minimal.py")
    with open(minimal, "w") as f:
        f.write(MINIMAL_APP)
    spark_args = f"--replay {a.replay} --speed 1" if a.replay else ""
    spark = f"{sys.executable} -m sparktui"
    if a.fake:
        with open(os.path.join(tmp, "fake_spark.py"), "w") as f:
            f.write(FAKE_SPARK.format(root=ROOT))
        spark = f"{sys.executable} {os.path.join(tmp, 'fake_spark.py')}"
    runs = {"sparktui": f"exec {spark} {spark_args}", "minimal": f"exec {sys.executable} {minimal}"}
    marks = {"sparktui": "G10", "minimal": "minimal"}
    procs, paint = {}, {}
    idle = [subprocess.Popen(["sleep", str(int(a.seconds) + 120)]) for _ in range(a.extra_processes)]
    try:
        for name, cmd in runs.items():
            t0 = time.monotonic()
            start(sock, name, cmd)
            paint[name] = first_paint(sock, name, marks[name], t0)
            procs[name] = app_process(pane_pid(sock, name))
        time.sleep(3)  # let start-up work (imports, first checks) pass before measuring
        base = {n: (p.cpu_times(), p.memory_info().rss, time.monotonic()) for n, p in procs.items()}
        main0 = main_thread_cpu(procs["sparktui"])
        rss_samples = {n: [] for n in procs}
        end = time.monotonic() + a.seconds
        while time.monotonic() < end:
            time.sleep(min(5.0, max(0.1, end - time.monotonic())))
            for n, p in procs.items():
                rss_samples[n].append(p.memory_info().rss)
        print(f"{'':10} {'cpu %':>7} {'rss start':>10} {'rss end':>9} {'rss max':>9} {'first paint':>12}")
        share = {}
        for n, p in procs.items():
            ct0, rss0, t0 = base[n]
            ct1 = p.cpu_times()
            cpu = (ct1.user + ct1.system - ct0.user - ct0.system) / (time.monotonic() - t0) * 100
            share[n] = cpu
            fp = f"{paint[n]:.2f} s" if paint[n] is not None else "never"
            print(f"{n:10} {cpu:7.2f} {rss0 / 2**20:9.1f}M {rss_samples[n][-1] / 2**20:8.1f}M "
                  f"{max(rss_samples[n]) / 2**20:8.1f}M {fp:>12}")
        # where sparktui's time goes: the event loop (drawing, judging) or the reader threads
        # (NVML sampler, process scans, check workers), which come and go, so: total minus main
        main_cpu = (main_thread_cpu(procs["sparktui"]) - main0) / a.seconds * 100
        print(f"sparktui by thread: event loop {main_cpu:.2f} %, other threads {share['sparktui'] - main_cpu:.2f} %")
        ratio = share["sparktui"] / max(share["minimal"], 1e-6)
        growth = (rss_samples["sparktui"][-1] - base["sparktui"][1]) / 2**20
        rss_end = rss_samples["sparktui"][-1] / 2**20

        def verdict(ok: bool) -> str:
            return "PASS" if ok else "FAIL"

        def secs(x: float | None) -> str:
            return "never" if x is None else f"{x:.2f} s"

        fp = paint["sparktui"]
        met = {"CPU ratio": ratio < 2, "RSS": rss_end < 100, "first paint": fp is not None and fp < 1.0}
        print(f"\nsparktui/minimal CPU ratio: {ratio:.2f} (target < 2): {verdict(met['CPU ratio'])}")
        print(f"sparktui RSS: {rss_end:.1f} MB (target < 100): {verdict(met['RSS'])}; "
              f"growth over {a.seconds:.0f} s: {growth:+.1f} MB")
        print(f"first paint: sparktui {secs(fp)} (target < 1 s): {verdict(met['first paint'])}, "
              f"minimal {secs(paint['minimal'])}")
        # growth while it keeps running, after the first checks have imported what they use: a leak
        # shows here, warm-up does not
        xs = rss_samples["sparktui"]
        per_min = xs[::12]  # samples are 5 s apart
        print("sparktui RSS each minute: " + " ".join(f"{x / 2**20:.1f}" for x in per_min) + " MB")
        half = len(xs) // 2
        if half:
            print(f"sparktui RSS growth over the second half ({a.seconds / 2:.0f} s): {(xs[-1] - xs[half]) / 2**20:+.1f} MB")
    finally:
        subprocess.run(["tmux", "-S", sock, "kill-server"], capture_output=True)
        for p in idle:
            p.kill()
            p.wait()
    missed = [name for name, ok in met.items() if not ok]
    if missed:  # a script or CI step sees the miss, not only a reader of the output
        print(f"missed: {', '.join(missed)}")
    return 1 if missed else 0


if __name__ == "__main__":
    raise SystemExit(main())
