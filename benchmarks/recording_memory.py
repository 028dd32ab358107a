"""Peak memory of reading a long recording: `check --replay` (the whole review) and the dashboard's
replay (read, then every sample fed into the History), each in its own process, its peak RSS
read from wait4(). Target: a ~200 MB recording (about 2.3 days at 1 s) under 400 MB peak RSS for
each, and G3 still finds the recording's single lowest-memory second (a 5 GiB dip in the middle)
however the samples are thinned.

    PYTHONPATH=src python3 benchmarks/recording_memory.py [--mb 200] [--target-mb 400] [--src DIR]

``--src`` measures another source tree (e.g. an older commit unpacked with `git archive`).
The recording is synthetic, built from the shipped demo recording's lines (GB10 figures from
FACTS.md), with one process snapshot every 10 samples. Exits 1 on a missed target.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEMO = ROOT / "src" / "sparktui" / "data" / "gb10-demo.jsonl"
DIP_BYTES = 5 * 1024 ** 3  # under G3's 8 GiB floor: only that one second is low

DASHBOARD_READ = """
import sys
from sparktui.core.config import Config
from sparktui.live.sources import ReplaySource
src = ReplaySource(sys.argv[1], Config(), lambda s: None, lambda p: None, speed=None)
src._run()
print(len(src.history), src.label)
"""


def build(path: Path, megabytes: float) -> int:
    """A recording of about ``megabytes`` MB at 1 s; returns its sample count."""
    lines = [json.loads(x) for x in DEMO.read_text().splitlines()]
    head = {**lines[0], "interval_s": 1.0}
    samples = [x for x in lines if x.get("type") == "sample"]
    snapshots = [x for x in lines if x.get("type") == "processes"]
    t0, n, size = float(head["started_at"]), 0, 0
    target = int(megabytes * 1e6)
    with open(path, "w") as f:
        f.write(json.dumps(head) + "\n")
        dip_at = None
        while size < target:
            s = dict(samples[n % len(samples)], t=t0 + n)
            if dip_at is None and size >= target // 2:
                s["mem"] = dict(s["mem"], MemAvailable=DIP_BYTES)
                dip_at = n
            line = json.dumps(s) + "\n"
            if n % 10 == 0:
                p = snapshots[(n // 10) % len(snapshots)]
                line += json.dumps({**p, "t": t0 + n, "data": {**p["data"], "t": t0 + n}}) + "\n"
            f.write(line)
            size += len(line)
            n += 1
    return n


def measure(argv: list[str], env: dict[str, str]) -> tuple[float, float, int, str]:
    """(peak RSS in MB, seconds, exit code, stdout) of one child process."""
    started = time.monotonic()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env, text=True)
    out = proc.stdout.read() if proc.stdout else ""
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss / 1024, time.monotonic() - started, proc.returncode, out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--mb", type=float, default=200.0, help="recording size to generate (MB)")
    ap.add_argument("--target-mb", type=float, default=400.0, help="peak RSS each reader must stay under (MB)")
    ap.add_argument("--src", default=str(ROOT / "src"), help="source tree to measure")
    args = ap.parse_args()
    env = {**os.environ, "PYTHONPATH": args.src, "NO_COLOR": "1"}
    with tempfile.TemporaryDirectory() as tmp:
        rec = Path(tmp) / "long.jsonl"
        n = build(rec, args.mb)
        print(f"recording: {rec.stat().st_size / 1e6:.0f} MB, {n} samples at 1 s ({n / 86400:.1f} days); source {args.src}")
        env["XDG_CONFIG_HOME"] = env["XDG_STATE_HOME"] = env["XDG_CACHE_HOME"] = tmp
        failed = False
        rss, took, code, out = measure([sys.executable, "-m", "sparktui", "check", "G3", "G4", "G6", "--replay", str(rec),
                                        "--json"], env)
        g3 = next((c for c in json.loads(out or "{}").get("checks", []) if c.get("id") == "G3"), {}) if code != 70 else {}
        found = "lowest MemAvailable 5.0 GiB" in g3.get("summary", "")
        print(f"check --replay: peak RSS {rss:.0f} MB, {took:.1f} s, exit {code}; G3 {g3.get('status')} "
              f"({'the 5 GiB dip found' if found else 'the dip NOT found'})")
        failed |= rss > args.target_mb or not found or code not in (0, 1, 2)
        rss, took, code, out = measure([sys.executable, "-c", DASHBOARD_READ, str(rec)], env)
        print(f"dashboard replay read: peak RSS {rss:.0f} MB, {took:.1f} s, exit {code}; {out.strip()}")
        failed |= rss > args.target_mb or code != 0
    print(f"target: each under {args.target_mb:g} MB peak RSS, the dip found: {'FAIL' if failed else 'PASS'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
