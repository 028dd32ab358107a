"""A real recording under a GPU load: idle, a torch matmul loop, cool-down; then a summary and the
G3/G4/G6 verdicts judged from the recording.

    PYTHONPATH=src python3 benchmarks/record_under_load.py -o $OUT/load.jsonl --load-min 4

sparktui never imports torch: the load runs in its own subprocess (this interpreter, `-c` code),
and the recorder is `python -m sparktui record` in another, stopped with SIGTERM at the end.
Phases: --idle-s of baseline, --load-min of bf16 8192x8192 matmuls, --cool-s of cool-down.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from sparktui.core.recording import read_recording  # noqa: E402

LOAD = r"""
import sys, time, torch
secs, n = float(sys.argv[1]), int(sys.argv[2])
a = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
b = torch.randn(n, n, device="cuda", dtype=torch.bfloat16)
torch.cuda.synchronize()
end = time.time() + secs
it, t0, last = 0, time.time(), time.time()
while time.time() < end:
    for _ in range(20):
        c = a @ b
    torch.cuda.synchronize()
    it += 20
    if time.time() - last >= 30:
        dt = time.time() - t0
        print(f"load: {it} matmuls, {2 * n**3 * it / dt / 1e12:.0f} TFLOPS", flush=True)
        last = time.time()
dt = time.time() - t0
print(f"load done: {it} matmuls in {dt:.0f} s, {2 * n**3 * it / dt / 1e12:.0f} TFLOPS", flush=True)
"""


def phase_stats(samples: list[dict], t_from: float, t_to: float) -> dict:
    rows = [(s, g) for s in samples if t_from <= s["t"] < t_to for g in s.get("gpus", [])[:1]]

    def col(key):
        return [g[key] for _, g in rows if isinstance(g.get(key), (int, float))]

    def rng(xs, nd=0):
        return None if not xs else f"{min(xs):.{nd}f}..{max(xs):.{nd}f} (mean {sum(xs) / len(xs):.{nd}f})"

    reasons: dict[str, int] = {}
    for _, g in rows:
        for r in g.get("reasons") or []:
            reasons[r] = reasons.get(r, 0) + 1
    counters = {}
    for key in ("sw_power_cap_ns", "sync_boost_ns", "sw_thermal_ns", "hw_thermal_ns", "hw_power_brake_ns"):
        xs = col(key)
        counters[key.replace("_ns", "_s")] = (xs[-1] - xs[0]) / 1e9 if len(xs) > 1 else None
    avail = [s["mem"]["MemAvailable"] / 2**30 for s, _ in rows if (s.get("mem") or {}).get("MemAvailable")]
    errors = sorted({k for _, g in rows for k in (g.get("errors") or {})})
    return {"samples": len(rows), "temp_c": rng(col("temp_c")), "power_w": rng(col("power_w"), 1),
            "power_limit_w": rng(col("power_limit_w")), "sm_mhz": rng(col("sm_mhz")), "util_gpu": rng(col("util_gpu")),
            "reasons": reasons, "clock_event_counter_growth": counters,
            "mem_available_gib": rng(avail, 1), "unavailable_fields": errors}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", default="load.jsonl")
    ap.add_argument("--load-min", type=float, default=4.0)
    ap.add_argument("--idle-s", type=float, default=20.0)
    ap.add_argument("--cool-s", type=float, default=30.0)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--size", type=int, default=8192, help="matmul size n (n x n bf16)")
    a = ap.parse_args()
    out = Path(a.output)
    if out.exists():
        out.unlink()
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src") + os.pathsep + os.environ.get("PYTHONPATH", "")}
    rec = subprocess.Popen([sys.executable, "-m", "sparktui", "record", "-o", str(out), "--interval", str(a.interval),
                            "--processes-every", "10"], env=env)
    marks = {"start": time.time()}
    time.sleep(a.idle_s)
    marks["load_start"] = time.time()
    load = subprocess.run([sys.executable, "-c", LOAD, str(a.load_min * 60), str(a.size)], env=env)
    marks["load_end"] = time.time()
    time.sleep(a.cool_s)
    marks["end"] = time.time()
    rec.send_signal(signal.SIGTERM)
    rc = rec.wait(timeout=30)
    print(f"recorder exit {rc}; load exit {load.returncode}")
    r = read_recording(out)
    summary = {
        "file": str(out), "bytes": out.stat().st_size, "samples": len(r.samples), "process_snapshots": len(r.processes),
        "duration_s": round(r.duration_s, 1), "problems": r.problems,
        "gpu": [((d.get("name") or {}).get("value"), (d.get("compute_capability") or {}).get("value"))
                for d in (r.header.get("static") or {}).get("devices", [])],
        "driver": ((r.header.get("static") or {}).get("driver_version") or {}).get("value"),
        "idle": phase_stats(r.samples, marks["start"], marks["load_start"]),
        "load": phase_stats(r.samples, marks["load_start"], marks["load_end"]),
        "cool": phase_stats(r.samples, marks["load_end"], marks["end"] + 5),
    }
    print(json.dumps(summary, indent=1))
    out.with_suffix(".summary.json").write_text(json.dumps(summary, indent=1))
    check = subprocess.run([sys.executable, "-m", "sparktui", "check", "--replay", str(out), "-v"], env=env,
                           capture_output=True, text=True)
    print(check.stdout + check.stderr)
    return 0 if rc == 0 and load.returncode == 0 and r.samples else 1


if __name__ == "__main__":
    raise SystemExit(main())
