#!/usr/bin/env bash
# Run the whole test suite on a machine with a real NVIDIA GPU (the lent H200: NVML, driver and
# CUDA torch are real there, so a test that quietly assumes "no GPU here" fails), then soak it:
# RUNS more whole runs under tools/soak_tests.sh. Everything lands in $OUT; ten-minute calls, so
# each part has its own time limit.
#
#     OUT=/tmp/out TREE=<commit> bash tools/suite_on_gpu.sh [RUNS] [WORKERS]
#
# TREE names the commit in the outputs: the machine's copy of .git may be older than the tree sent.
#
# No network there: the one test that builds a torch CPU venv from PyPI is deselected and named.
set -u
RUNS=${1:-3}
WORKERS=${2:-8}
source "$(dirname "$0")/gpu_env.sh"
export TREE=${TREE:-unknown}
NO_NETWORK=tests/test_target_probe.py::test_real_torch_cpu_build
{
    echo "# date: $(date -u '+%F %H:%M') UTC"
    echo "# tree: ${TREE:-unknown}"
    nvidia-smi -L
    nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
    $PY -c "import sys, torch; print('python', sys.version.split()[0], 'torch', torch.__version__, 'cuda', torch.cuda.is_available())"
    echo "cpus: $(nproc); tmux: $(command -v tmux || echo none); sshd: $(command -v sshd || ls /usr/sbin/sshd 2>/dev/null || echo none); prometheus: $(command -v prometheus || echo none)"
    echo "ruff: $($PY -m ruff --version 2>&1 | tail -1); textual: $($PY -c 'import importlib.metadata as m; print(m.version("textual"))' 2>&1 | tail -1)"
    echo "deselected (needs network): $NO_NETWORK"
} > "$OUT/env.txt" 2>&1

start=$(date +%s)
timeout "${SUITE_LIMIT:-240}" $PY -m pytest -q -n "$WORKERS" -p no:cacheprovider -rfEs \
    --deselect "$NO_NETWORK" > "$OUT/suite.txt" 2>&1
echo "exit $? in $(( $(date +%s) - start )) s" >> "$OUT/suite.txt"

SOAK_DIR=/tmp/soak timeout "${SOAK_LIMIT:-300}" tools/soak_tests.sh "$RUNS" "$WORKERS" \
    --deselect "$NO_NETWORK" > "$OUT/soak.txt" 2>&1
echo "exit $?" >> "$OUT/soak.txt"
cp /tmp/soak/run-*.log "$OUT/" 2>/dev/null
tail -n 3 "$OUT/suite.txt" "$OUT/soak.txt"
