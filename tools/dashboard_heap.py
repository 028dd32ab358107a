"""Where the dashboard's Python heap goes: runs the live dashboard headless (Textual's test pilot) for
a few seconds under tracemalloc and prints the traced total and the top packages by allocation.

    python tools/dashboard_heap.py [SECONDS]

A diagnostic beside benchmarks/rss_breakdown.py (which sees mappings, not Python objects)."""

from __future__ import annotations

import asyncio
import sys
import tracemalloc

tracemalloc.start(1)

from sparktui.core.config import Config  # noqa: E402
from sparktui.ui.app import SparkApp  # noqa: E402


def package_of(filename: str) -> str:
    if "site-packages/" in filename:
        return filename.split("site-packages/")[-1].split("/")[0]
    if "/sparktui/" in filename:
        return "sparktui"
    return filename.rsplit("/", 1)[-1]


async def main(seconds: float) -> None:
    app = SparkApp(Config(), keep_session=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause(seconds)
        snap = tracemalloc.take_snapshot()
    by_package: dict[str, int] = {}
    for s in snap.statistics("filename"):
        key = package_of(s.traceback[0].filename)
        by_package[key] = by_package.get(key, 0) + s.size
    print(f"traced Python heap after {seconds:g} s: {sum(by_package.values()) / 2**20:.1f} MB "
          f"({len(sys.modules)} modules loaded)")
    for name, size in sorted(by_package.items(), key=lambda kv: -kv[1])[:15]:
        print(f"{size / 2**20:8.2f} MB  {name}")


if __name__ == "__main__":
    asyncio.run(main(float(sys.argv[1]) if len(sys.argv) > 1 else 8.0))
