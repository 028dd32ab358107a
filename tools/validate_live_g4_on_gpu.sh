#!/usr/bin/env bash
# Live G4 on a real GPU: what each clock-event counter field costs alone, a `check G4 --watch`
# under a real matmul load (live mode, trailing window, counters read by gather), and the dashboard
# on real NVML (every check answers; the watcher holds no CUDA context). Results land in $OUT.
#
#     OUT=/tmp/out bash tools/validate_live_g4_on_gpu.sh
source "$(dirname "$0")/gpu_env.sh"
$PY - > "$OUT/field-costs.txt" 2>&1 <<'PYEOF'
import statistics, time
import pynvml as nv
nv.nvmlInit(); h = nv.nvmlDeviceGetHandleByIndex(0)
def cost(ids, n=200):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter(); nv.nvmlDeviceGetFieldValues(h, ids); ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6
for fid in (74, 75, 76, 269, 270, 271):
    print(f"field {fid:>3} alone: {cost([fid]):7.0f} us (median of 200)")
print(f"fields 269+270+271 together: {cost([269, 270, 271]):7.0f} us")
print(f"fields 74+76 together:       {cost([74, 76]):7.0f} us")
print(f"all five together:           {cost([74, 76, 269, 270, 271]):7.0f} us")
PYEOF
mkdir -p /tmp/w1; printf '[thermal]\nwindow_min = 1\n' > /tmp/w1/config.toml
LOAD='import sys, time, torch
a = torch.randn(8192, 8192, device="cuda", dtype=torch.bfloat16); b = torch.randn_like(a)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    for _ in range(20): c = a @ b
    torch.cuda.synchronize()'
$PY -c "$LOAD" 95 & load=$!
sleep 10
{ echo '$ sparktui --config w1.toml check G4 G6 --watch 1 -v   (under a bf16 matmul load)'
  $PY -m sparktui --config /tmp/w1/config.toml check G4 G6 --watch 1 -v; echo "exit $?"; } > "$OUT/live-g4.txt" 2>&1
wait $load
$PY - > "$OUT/dashboard.txt" 2>&1 <<'PYEOF'
import asyncio, os, subprocess, time
from sparktui.core.config import Config
from sparktui.ui.app import SparkApp
async def main():
    app = SparkApp(Config()); t0 = time.monotonic()
    async with app.run_test(size=(132, 42)) as pilot:
        for _ in range(900):
            if all(st.verdict is not None and st.running_since is None for st in app.board.states.values()):
                break
            await pilot.pause(0.1)
        print(f"every check answered after {time.monotonic() - t0:.1f} s")
        smi = subprocess.run(["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory", "--format=csv"],
                             capture_output=True, text=True).stdout
        print("dashboard pid", os.getpid(), "\nnvidia-smi compute apps while it runs:\n" + smi)
        for gid, st in sorted(app.board.states.items(), key=lambda kv: int(kv[0][1:])):
            print(gid, st.verdict.status.value, "-", st.verdict.summary)
asyncio.run(main())
PYEOF
echo "done $(date -u)"
