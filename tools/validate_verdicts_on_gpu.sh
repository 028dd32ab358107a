#!/usr/bin/env bash
# Issue 12 on a machine with a real NVIDIA GPU, in one ten-minute call: what NVML answers for the
# five clock-event counters (and what one batched read costs), the headless checks, a recording
# made under a real matmul load judged by `check --replay` (review mode: worst window, with when),
# G5 on the real device, and the test suite on a machine that HAS a GPU. Results land in $OUT.
#
#     OUT=/tmp/out bash tools/validate_verdicts_on_gpu.sh [LOAD_MINUTES]
#
# Wheels in .whl/ (textual, pytest plugins) are installed when present (pip --no-index).
source "$(dirname "$0")/gpu_env.sh"
LOAD_MIN=${1:-3}
{ date -u; uname -m; nvidia-smi -L; nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv
  $PY -c "import sys, torch, pynvml; print(sys.version.split()[0], torch.__version__, 'cuda', torch.version.cuda, 'nvidia-ml-py', getattr(pynvml, '__version__', '?'))"
} > "$OUT/env.txt" 2>&1

# 1. The counters, straight from NVML: each field's answer, then the cost of the sampler's batch.
$PY - > "$OUT/counters.txt" 2>&1 <<'PYEOF'
import statistics, time
import pynvml as nv
nv.nvmlInit(); h = nv.nvmlDeviceGetHandleByIndex(0)
ids = {74: "SW power capping", 75: "thermal policy (old)", 76: "sync boost", 269: "SW thermal slowdown",
       270: "HW thermal slowdown", 271: "HW power brake"}
for fid, name in ids.items():
    v = nv.nvmlDeviceGetFieldValues(h, [fid])[0]
    print(f"field {fid:>3} {name:<22} return {v.nvmlReturn} value {v.value.ullVal}")
def cost(fn, n=300):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter(); fn(); ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6
five = [74, 76, 269, 270, 271]
print(f"one batched call, 5 fields: {cost(lambda: nv.nvmlDeviceGetFieldValues(h, five)):.0f} us (median of 300)")
print(f"one field (269) alone:      {cost(lambda: nv.nvmlDeviceGetFieldValues(h, [269])):.0f} us")
print(f"temperature read:           {cost(lambda: nv.nvmlDeviceGetTemperature(h, 0)):.0f} us")
PYEOF
echo '$ sampler: 12 samples at 0.5 s (counters every 10 s)' >> "$OUT/counters.txt"
$PY - >> "$OUT/counters.txt" 2>&1 <<'PYEOF'
import json, time
from sparktui.probes.sampler import Sampler
s = Sampler(interval_s=0.5)
t0 = time.perf_counter(); x = [s.sample_once() for _ in range(12)]; dt = time.perf_counter() - t0
g = x[-1]["gpus"][0]
print(json.dumps({k: g.get(k) for k in ("temp_c", "power_w", "sm_mhz", "reasons", "sw_power_cap_ns", "sync_boost_ns",
                  "sw_thermal_ns", "hw_thermal_ns", "hw_power_brake_ns", "thermal_policy_ns", "errors")}, indent=1))
print(f"12 samples in {dt * 1000:.1f} ms")
s.close()
PYEOF

{ echo '$ sparktui check -v'; $PY -m sparktui check -v; echo "exit $?"
  echo; echo '$ sparktui check --json'; $PY -m sparktui check --json; } > "$OUT/check.txt" 2>&1

# 2. A real recording under load, judged whole (review mode) with a window that fits it.
mkdir -p /tmp/cfg/sparktui; printf '[thermal]\nwindow_min = 2\n' > /tmp/cfg/sparktui/config.toml
$PY benchmarks/record_under_load.py -o "$OUT/load.jsonl" --load-min "$LOAD_MIN" --idle-s 20 --cool-s 20 > "$OUT/load.txt" 2>&1
{ echo '$ sparktui --config window2.toml check --replay load.jsonl -v'
  $PY -m sparktui --config /tmp/cfg/sparktui/config.toml check --replay "$OUT/load.jsonl" -v; echo "exit $?"
  echo; $PY -m sparktui --config /tmp/cfg/sparktui/config.toml check --replay "$OUT/load.jsonl" --json; } > "$OUT/replay.txt" 2>&1

# 3. G5 on the real device (inside a container the process gate needs --force).
{ echo '$ sparktui bandwidth --yes --force --json'; $PY -m sparktui bandwidth --yes --force --json; echo "exit $?"; } > "$OUT/g5.txt" 2>&1

# 4. The suite on a machine with a GPU (torch-side tests use this machine's CUDA torch).
if $PY -c "import textual, pytest_asyncio" 2>/dev/null; then
    $PY -m venv --system-site-packages /tmp/torchvenv >/dev/null 2>&1
    export SPARKTUI_TEST_TORCH_VENV=/tmp/torchvenv
    timeout 240 $PY -m pytest -q -n 8 -p no:cacheprovider -m "not typecheck" > "$OUT/pytest.txt" 2>&1
    echo "pytest exit $?" >> "$OUT/pytest.txt"
fi
echo "done $(date -u)"
