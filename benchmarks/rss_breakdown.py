"""Where each program's resident memory goes: sparktui, nvitop, the minimal Textual app, and a bare
Python that has only initialised NVML (what NVML alone costs any monitor that uses it), and the
same after glibc's malloc_trim (how much of that is freed memory glibc kept).

    python benchmarks/rss_breakdown.py [--seconds 30] [--save FILE | --no-save]

Each runs in its own pty (benchmarks/side_by_side.py's), settles, runs --seconds more, and then
its /proc/PID/smaps is summed by mapping: the heap and anonymous memory (Python objects, pymalloc
arenas, thread stacks), libnvidia-ml, CUDA/driver libraries, libpython and the Python extension
modules, other shared libraries, and files. Prints one table (MB of RSS) and exits 0: this is a
breakdown that explains the RSS target of side_by_side.py, not a target itself.
"""

from __future__ import annotations

import argparse
import datetime
import os
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from side_by_side import RESULTS, Program, Pty, machine_lines, programs  # noqa: E402

NVML_ONLY = ("import pynvml, time\npynvml.nvmlInit()\n"
             "hs = [pynvml.nvmlDeviceGetHandleByIndex(i) for i in range(pynvml.nvmlDeviceGetCount())]\n"
             "[pynvml.nvmlDeviceGetTemperature(h, 0) for h in hs]\nprint('NVML READY', flush=True)\ntime.sleep(3600)\n")
NVML_TRIMMED = NVML_ONLY.replace("print('NVML READY'", "import ctypes; ctypes.CDLL(None).malloc_trim(0)\nprint('NVML READY'")
PYTHON_ONLY = "import time\nprint('PYTHON READY', flush=True)\ntime.sleep(3600)\n"


def category(path: str) -> str:
    name = os.path.basename(path)
    if not path or path.startswith("[anon") or path in ("[heap]", "[stack]"):
        return "heap + anon (Python objects, arenas, stacks)"
    if "libnvidia-ml" in name:
        return "libnvidia-ml (NVML)"
    if "libcuda" in name or "nvidia" in path.lower():
        return "CUDA / other NVIDIA libraries"
    if "libpython" in name or name.startswith("python3"):
        return "python binary / libpython"
    if name.endswith(".so") or ".so." in name or ".cpython-" in name:
        return "other shared libraries + extension modules"
    return "other mapped files"


def smaps_by_category(pid: int) -> Counter:
    out: Counter = Counter()
    current = ""
    with open(f"/proc/{pid}/smaps") as fh:
        for line in fh:
            first = line.split(maxsplit=1)[0]
            if "-" in first and not first.endswith(":"):  # a mapping's header line: range perms offset dev inode [path]
                parts = line.split(maxsplit=5)
                current = parts[5].strip() if len(parts) == 6 else ""
            elif first == "Rss:":
                out[category(current)] += int(line.split()[1]) * 1024
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--machine", default=os.uname().nodename)
    ap.add_argument("--save")
    ap.add_argument("--no-save", action="store_true")
    ap.add_argument("--note", default="")
    args = ap.parse_args()
    py = sys.executable
    tmp = Path(tempfile.mkdtemp(prefix="rss-breakdown-"))
    (tmp / "nvml.py").write_text(NVML_ONLY)
    (tmp / "bare.py").write_text(PYTHON_ONLY)
    (tmp / "nvml_trim.py").write_text(NVML_TRIMMED)
    progs = [*programs([]), Program("python+NVML", [py, str(tmp / "nvml.py")], "NVML READY", ""),
             Program("+malloc_trim", [py, str(tmp / "nvml_trim.py")], "NVML READY", ""),
             Program("python", [py, str(tmp / "bare.py")], "PYTHON READY", "")]
    env = {**os.environ, "TERM": "xterm-256color"}
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    rows: dict[str, Counter | str] = {}
    for prog in progs:
        p = Pty(prog.argv, 120, 40, env, str(tmp))
        try:
            if p.wait_for(prog.screen_text, 0, 60.0) is None:
                rows[prog.name] = f"not measured: {p.head() or 'no output'}"
                continue
            time.sleep(args.seconds)
            rows[prog.name] = smaps_by_category(p.pid)
        finally:
            p.kill()
    cats = sorted({c for r in rows.values() if isinstance(r, Counter) for c in r})
    names = list(rows)
    lines = [f"date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M:%S} UTC", *machine_lines(),
             f"command: {' '.join(sys.argv)}", *( [f"note: {args.note}"] if args.note else []),
             f"RSS by mapping after the settled screen + {args.seconds:g} s (MB)", ""]
    lines.append(f"{'':46}" + "".join(f"{n:>13}" for n in names))
    for c in [*cats, "total"]:
        cells = []
        for n in names:
            r = rows[n]
            if not isinstance(r, Counter):
                cells.append(f"{'—':>13}")
                continue
            v = sum(r.values()) if c == "total" else r.get(c, 0)
            cells.append(f"{v / 2**20:>13.1f}")
        lines.append(f"{c:46}" + "".join(cells))
    lines += [""] + [f"{n}: {r}" for n, r in rows.items() if not isinstance(r, Counter)]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if not args.no_save:
        out = Path(args.save) if args.save else RESULTS / f"rss-breakdown-{args.machine}-{datetime.date.today()}.txt"
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text)
        print(f"saved {out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
