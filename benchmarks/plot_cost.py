"""What a telemetry plot costs: sparktui's Plot against Textual's Sparkline and textual-plotext.

Each draws the same hour of 1 Hz readings (a temperature's random walk, a few n/a gaps) in a 60x8
cell widget, N frames; every frame the hour slides by one reading (what the dashboard does each
second), so no frame is served from a cache. A frame's cost is the CPU time of feeding the data
and rendering every row (thread time, the median of N: the machine may be shared). Each widget
runs in its own process: the RSS delta is what importing it, building it and drawing N frames
added to a running Textual app.

    python benchmarks/plot_cost.py [--frames 300]

Target for the chosen widget (sparktui's Plot): the cheapest per frame of the three, under
2 ms a frame and under 5 MB of RSS. Exits 1 on a miss. textual-plotext is not a dependency:
`pip install textual-plotext` into the environment for this comparison only.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import random
import subprocess
import sys
import time

WIDTH, HEIGHT, POINTS = 60, 8, 3600
CHOSEN = "sparktui Plot"
TARGET_MS, TARGET_MB = 2.0, 5.0
WIDGETS = ("sparktui Plot", "textual Sparkline", "textual-plotext")


def rss_mb() -> float:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def installed(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


def readings(n: int) -> list[float | None]:
    rng, v, out = random.Random(4), 45.0, []
    for i in range(n):
        v = min(95.0, max(30.0, v + rng.uniform(-0.6, 0.6)))
        out.append(None if i % 900 < 5 else round(v))  # NVML says n/a now and then
    return out


def make(name: str):
    """The widget, and a function that gives it one frame's data (times, values)."""
    if name == "sparktui Plot":
        from sparktui.ui.widgets.plot import Plot

        w = Plot()
        return w, lambda t, v: w.plot(t, v, t[-1] - POINTS, t[-1], (20.0, 100.0), hold_s=2.5)
    if name == "textual Sparkline":
        from textual.widgets import Sparkline

        w = Sparkline([], summary_function=max)
        return w, lambda t, v: setattr(w, "data", [x for x in v if x is not None])
    from textual_plotext import PlotextPlot

    w = PlotextPlot()

    def feed(t, v):
        w.plt.clear_data()
        w.plt.plot([x for x, y in zip(t, v) if y is not None], [y for y in v if y is not None])
        w.refresh()

    return w, feed


async def measure(name: str, frames: int) -> dict:
    from textual.app import App
    from textual.geometry import Region

    class Bench(App):
        CSS = f"Screen {{ layout: vertical; }} #w {{ width: {WIDTH}; height: {HEIGHT}; }}"

    app = Bench()
    data = readings(POINTS + frames + 10)
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        before = rss_mb()
        widget, feed = make(name)
        widget.id = "w"
        await app.mount(widget)
        await pilot.pause()
        region = Region(0, 0, WIDTH, HEIGHT)
        took = []
        for i in range(frames + 10):
            times = [float(t) for t in range(i, i + POINTS)]
            t0 = time.thread_time()  # CPU, not wall time: the machine is shared
            feed(times, data[i:i + POINTS])
            lines = widget.render_lines(region)
            took.append(time.thread_time() - t0)
            assert len(lines) == HEIGHT
        after = rss_mb()
    took = sorted(took[10:])  # the first frames build caches and import lazily
    # the median: the machine is shared, and another process's burst is not the widget's cost
    return {"widget": name, "ms_per_frame": 1000 * took[len(took) // 2], "p95_ms": 1000 * took[int(len(took) * 0.95)],
            "rss_delta_mb": after - before}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--one", help=argparse.SUPPRESS)  # the child: measure one widget, print JSON
    args = ap.parse_args()
    if args.one:
        print(json.dumps(asyncio.run(measure(args.one, args.frames))))
        return 0
    print(f"# plot cost: {POINTS} readings (1 h at 1 Hz) in {WIDTH}x{HEIGHT} cells, {args.frames} frames, "
          f"the hour sliding one reading a frame")
    print(f"# {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} · {platform.node()} · {platform.machine()} · "
          f"{os.cpu_count()} CPUs · load {os.getloadavg()[0]:.1f} · Python {platform.python_version()}")
    print(f"# command: python benchmarks/plot_cost.py --frames {args.frames}")
    print("# " + " · ".join(f"{pkg} {installed(pkg)}" for pkg in ("textual", "textual-plotext", "plotext")))
    results = {}
    for name in WIDGETS:
        p = subprocess.run([sys.executable, __file__, "--one", name, "--frames", str(args.frames)],
                           capture_output=True, text=True, check=False)
        if p.returncode != 0:
            print(f"{name:<20} failed: {(p.stderr.strip().splitlines() or ['?'])[-1]}")
            continue
        r = results[name] = json.loads(p.stdout.strip().splitlines()[-1])
        print(f"{name:<20} {r['ms_per_frame']:8.3f} ms CPU/frame median  (p95 {r['p95_ms']:.3f})  RSS +{r['rss_delta_mb']:.1f} MB")
    chosen = results.get(CHOSEN)
    if chosen is None or len(results) < len(WIDGETS):
        print("FAIL: not every widget was measured (pip install textual-plotext for the comparison)")
        return 1
    cheapest = min(results.values(), key=lambda r: r["ms_per_frame"])
    misses = []
    if cheapest is not chosen:
        misses.append(f"{cheapest['widget']} is cheaper per frame")
    if chosen["ms_per_frame"] > TARGET_MS:
        misses.append(f"over {TARGET_MS} ms a frame")
    if chosen["rss_delta_mb"] > TARGET_MB:
        misses.append(f"over {TARGET_MB} MB of RSS")
    print(f"{'FAIL' if misses else 'ok'}: {CHOSEN} (target: cheapest, under {TARGET_MS} ms a frame and {TARGET_MB} MB)"
          + (": " + "; ".join(misses) if misses else ""))
    return 1 if misses else 0


if __name__ == "__main__":
    sys.exit(main())
