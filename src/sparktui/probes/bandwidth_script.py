"""Runs INSIDE the target interpreter: measure memory bandwidth with torch and CUDA events.

Intrusive (allocates the buffer on the GPU; on a GB10 that is the shared pool), so sparktui only
starts it after its gates and the user's confirmation. Everything is freed by the process exiting.
Copy bandwidth counts bytes read + written per second (each byte of the copy is read once and
written once); the read-only figure times a sum over the source buffer.
"""

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the same module, under the name mypy knows it by
    from sparktui.probes import target_script as ts
else:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import target_script as ts  # same folder, stdlib only


def measure(total_bytes, repeats, target_s):
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False (torch %s, CUDA %s)" % (torch.__version__, torch.version.cuda))
    dev = torch.device("cuda")
    half = (int(total_bytes) // 2) // 4 * 4
    src = torch.empty(half // 4, dtype=torch.float32, device=dev).fill_(1.0)
    dst = torch.empty_like(src)
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)

    def timed(fn, iters):
        start.record()
        for _ in range(iters):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / 1000.0

    copy = lambda: dst.copy_(src)
    read = lambda: torch.sum(src)
    for _ in range(3):  # warm-up: first touch, clocks up
        copy()
        read()
    torch.cuda.synchronize()
    one = timed(copy, 3) / 3
    iters = max(5, min(2000, int(target_s / max(one, 1e-6))))
    copy_gbs, read_gbs = [], []
    for _ in range(repeats):
        copy_gbs.append(2.0 * half * iters / timed(copy, iters) / 1e9)
        read_gbs.append(1.0 * half * iters / timed(read, iters) / 1e9)
    copy_gbs.sort()
    read_gbs.sort()
    med = copy_gbs[len(copy_gbs) // 2]
    return {
        "device": torch.cuda.get_device_name(0),
        "capability": list(torch.cuda.get_device_capability(0)),
        "torch": torch.__version__,
        "buffer_bytes": 2 * half,
        "iterations": iters,
        "repeats": repeats,
        "copy_gbs": med,
        "copy_gbs_all": copy_gbs,
        "read_gbs": read_gbs[len(read_gbs) // 2],
        "read_gbs_all": read_gbs,
        "spread_pct": 100.0 * (copy_gbs[-1] - copy_gbs[0]) / med if med else None,
        "convention": "copy: bytes read + written per second; read: bytes read per second (GB = 1e9 bytes)",
    }


def main(argv):
    args = ts.parse_args(argv, {"--fd": "1", "--bytes": str(4 << 30), "--repeats": "5", "--target-s": "0.25"})
    ts.open_channel(args["--fd"])
    ts.run_stage("import torch", ts.stage_import_torch, set())
    ts.run_stage("measure", lambda: measure(int(args["--bytes"]), int(args["--repeats"]), float(args["--target-s"])), set())
    ts.emit("end", "")


if __name__ == "__main__":
    main(sys.argv[1:])
