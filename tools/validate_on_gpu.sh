#!/usr/bin/env bash
# Validate sparktui on a machine with a real NVIDIA GPU, in one go (the lent device machine has
# ten-minute calls): headless checks, the cost of one telemetry sample against nvidia-smi, the G5
# bandwidth figure against a torch reference, a soak of 10 Hz sampling on real NVML, the dashboard
# drawn on real NVML, and proof that the watcher holds no CUDA context. Everything lands in $OUT.
#
#     OUT=/tmp/out bash tools/validate_on_gpu.sh [SOAK_MINUTES]
#
# Textual is optional there: wheels in .whl/ are installed when present (pip --no-index).
set -u
OUT=${OUT:?set OUT to a folder for the results}
SOAK_MIN=${1:-8}
cd "$(dirname "$0")/.."
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
PY=${PY:-python3}

if ls .whl/*.whl >/dev/null 2>&1; then
    $PY -m pip install -q --no-deps --no-index .whl/*.whl 2>&1 | tail -2
fi

{
    date -u; uname -m; nvidia-smi -L
    nvidia-smi --query-gpu=name,driver_version,power.limit,memory.total --format=csv
    $PY -c "import sys, torch; print(sys.version.split()[0], torch.__version__, 'cuda', torch.version.cuda)"
    $PY -c "import textual; print('textual', textual.__version__)" 2>&1
    echo "tmux: $(command -v tmux || echo none)"
} > "$OUT/env.txt" 2>&1

# The soak runs beside everything else: its RSS is its own, and 10 Hz NVML is light.
$PY benchmarks/sample_cost.py --skip-cost --minutes "$SOAK_MIN" > "$OUT/soak.txt" 2>&1 &
soak=$!

{
    echo '$ sparktui check'; $PY -m sparktui check
    echo; echo '$ sparktui check --json'; $PY -m sparktui check --json
} > "$OUT/check.txt" 2>&1

$PY benchmarks/sample_cost.py --minutes 0 > "$OUT/sample-cost.txt" 2>&1

{
    echo '$ benchmarks/g5_bandwidth.py'; $PY benchmarks/g5_bandwidth.py
    echo; echo '$ sparktui bandwidth --yes --json'; $PY -m sparktui bandwidth --yes --json
} > "$OUT/g5.txt" 2>&1

# The dashboard on real NVML, headless: a picture once every check has answered, and while it
# runs, nvidia-smi's list of compute processes (the watcher must not be on it).
$PY - > "$OUT/dashboard.txt" 2>&1 <<'EOF'
import asyncio, os, subprocess, time
from sparktui.core.config import Config
from sparktui.ui.app import SparkApp

async def main():
    app = SparkApp(Config())
    t0 = time.monotonic()
    async with app.run_test(size=(132, 42)) as pilot:
        for _ in range(1200):
            states = app.board.states.values()
            if all(st.verdict is not None and st.running_since is None for st in states):
                break
            await pilot.pause(0.1)
        print(f"every check answered after {time.monotonic() - t0:.1f} s")
        await pilot.pause(3)
        smi = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory",
                              "--format=csv"], capture_output=True, text=True).stdout
        print("dashboard pid", os.getpid(), "\nnvidia-smi compute apps while it runs:\n" + smi)
        for gid, st in sorted(app.board.states.items(), key=lambda kv: int(kv[0][1:])):
            print(gid, st.verdict.status, "-", st.verdict.summary)
        with open(os.path.join(os.environ["OUT"], "dashboard-h200.svg"), "w") as f:
            f.write(app.export_screenshot(title="sparktui on an H200"))

asyncio.run(main())
EOF

if command -v tmux >/dev/null && $PY -c "import textual" 2>/dev/null; then
    $PY benchmarks/overhead.py --seconds 120 > "$OUT/overhead.txt" 2>&1
fi

wait "$soak"
echo "done $(date -u)"
