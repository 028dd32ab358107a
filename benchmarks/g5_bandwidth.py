"""G5 figure: `sparktui bandwidth --yes` against a plain torch copy loop, in the same run.

Needs a machine with a CUDA GPU and a torch that sees it (the lent GPU machine). The reference is
the simplest honest loop: ``dst.copy_(src)`` timed with CUDA events, bytes read + written counted,
same buffer size. Target: sparktui's figure is at least 90% of the reference's.

    python benchmarks/g5_bandwidth.py [--python PYTHON] [--size-gib 4]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import textwrap

REFERENCE = textwrap.dedent('''
    import sys, torch
    total = int(float(sys.argv[1]) * (1 << 30))
    half = total // 2 // 4
    a = torch.ones(half, dtype=torch.float32, device="cuda")
    b = torch.empty_like(a)
    for _ in range(3):
        b.copy_(a)
    torch.cuda.synchronize()
    s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    best = []
    for _ in range(5):
        s.record()
        for _ in range(50):
            b.copy_(a)
        e.record(); e.synchronize()
        best.append(2 * half * 4 * 50 / (s.elapsed_time(e) / 1e3) / 1e9)
    best.sort()
    print(best[len(best) // 2])
''')


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--python", default=sys.executable, help="interpreter with CUDA torch")
    ap.add_argument("--size-gib", type=float, default=4.0)
    ap.add_argument("--force", action="store_true", help="pass --force (process gate) to sparktui bandwidth")
    a = ap.parse_args()
    ref = subprocess.run([a.python, "-c", REFERENCE, str(a.size_gib)], capture_output=True, text=True)
    if ref.returncode != 0:
        print(f"reference loop failed (no CUDA torch?): {ref.stderr.strip()[-400:]}")
        return 0
    ref_gbs = float(ref.stdout.strip())
    p = subprocess.run([sys.executable, "-m", "sparktui", "bandwidth", "--yes", "--json", "--python", a.python,
                        "--size", str(a.size_gib)] + (["--force"] if a.force else []), capture_output=True, text=True)
    try:
        doc = json.loads(p.stdout)
    except json.JSONDecodeError:
        print(f"sparktui bandwidth gave no JSON (rc {p.returncode}): {p.stdout[-400:]} {p.stderr[-400:]}")
        return 1
    res = doc["result"]
    if res.get("status") != "ok":
        print(f"sparktui bandwidth did not measure: {res.get('reason')}")
        return 1
    ratio = res["copy_gbs"] / ref_gbs
    print(f"device: {res['device']}  buffer: {res['buffer_bytes'] / 2**30:.2f} GiB  iterations: {res['iterations']} x {res['repeats']}")
    print(f"reference torch copy loop : {ref_gbs:9.1f} GB/s (read + written)")
    print(f"sparktui bandwidth (copy) : {res['copy_gbs']:9.1f} GB/s (read + written), spread {res['spread_pct']:.1f}%")
    print(f"sparktui bandwidth (read) : {res['read_gbs']:9.1f} GB/s (read only)")
    print(f"ratio sparktui/reference  : {ratio:.3f}  (target >= 0.90) -> {'PASS' if ratio >= 0.9 else 'FAIL'}")
    print(f"verdict: {doc['verdict']['status']}: {doc['verdict']['summary']}")
    return 0 if ratio >= 0.9 else 1


if __name__ == "__main__":
    raise SystemExit(main())
