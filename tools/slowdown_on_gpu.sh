#!/usr/bin/env bash
# Issue 27, item 3: a real slowdown, attributed. A torch training loop on the GPU prints tqdm
# progress to a log; `sparktui record` follows the log and samples telemetry beside it (and the
# dashboard runs in tmux, its screen captured); after a steady stretch the GPU clocks are locked low
# (`nvidia-smi -lgc`, root), held there, then reset (`-rgc`, in a trap: whatever happens), and the
# run goes on a little. Then `check --replay` judges the recording (G14, G4). Needs root and torch in
# $PY; results land in $OUT.
#
#     OUT=/tmp/out STEADY=90 LOCKED=120 AFTER=40 bash tools/slowdown_on_gpu.sh
source "$(dirname "$0")/gpu_env.sh"
STEADY=${STEADY:-90} LOCKED=${LOCKED:-120} AFTER=${AFTER:-40}
W=/tmp/slowdown; rm -rf $W; mkdir -p $W
LOG=$W/train.log REC=$OUT/recording.jsonl
# G14's slow window fits a run of minutes (default 300 s against a 600 s baseline); G4's window too
printf '[run]\nslow_window_s = 30\n\n[thermal]\nwindow_min = 2\n' > $W/config.toml
reset_clocks() { nvidia-smi -rgc >>$OUT/clocks.txt 2>&1; nvidia-smi -rac >>$OUT/clocks.txt 2>&1
                 [ -n "${PL_DEFAULT:-}" ] && nvidia-smi -pl "$PL_DEFAULT" >>$OUT/clocks.txt 2>&1; true; }
trap 'reset_clocks' EXIT INT TERM
state() { { echo "== $1 ($(date -u +%T))"; nvidia-smi --query-gpu=clocks.sm,clocks.max.sm,clocks.applications.graphics,clocks.default_applications.graphics,power.draw,power.limit,utilization.gpu,temperature.gpu,clocks_event_reasons.active --format=csv
           nvidia-smi -q -d PERFORMANCE | sed -n '/Clocks Event Reasons/,/Sparse/p'; } >>$OUT/clocks.txt 2>&1; }
state before
cat > $W/train.py <<'PYEOF'
import sys, time, torch
torch.manual_seed(0)
dev = "cuda"
n = 8192
a = torch.randn(n, n, device=dev, dtype=torch.bfloat16); w = torch.randn(n, n, device=dev, dtype=torch.bfloat16) / n ** 0.5
for _ in range(5): a @ w
torch.cuda.synchronize(); t0 = time.perf_counter()
for _ in range(50): a @ w
torch.cuda.synchronize(); per = (time.perf_counter() - t0) / 50
k = max(1, round(0.1 / per))  # matmuls per step: ~10 steps/s at full clocks
print(f"calibrated: {per * 1e3:.2f} ms a matmul, {k} a step", file=sys.stderr, flush=True)
try:
    from tqdm import tqdm
except ImportError:
    tqdm = None
total = 100000
it = tqdm(range(total), file=sys.stderr, desc="train", mininterval=0.1) if tqdm else range(total)
t_start = time.time()
for step in it:
    for _ in range(k): x = a @ w
    torch.cuda.synchronize()
    if tqdm is None:
        el = time.time() - t_start
        print(f"train: {step + 1}/{total} [{int(el) // 60:02d}:{int(el) % 60:02d}, {(step + 1) / el:.2f}it/s]", file=sys.stderr, flush=True)
PYEOF
env -u PYTHONPATH $PY $W/train.py 2>$LOG & train=$!
for i in $(seq 60); do grep -q "it/s" $LOG 2>/dev/null && break; sleep 1; done
echo "training pid $train; log after ${i}s: $(head -c 300 $LOG | tr '\r' '\n' | head -3)" >>$OUT/run-notes.txt
$PY -m sparktui --config $W/config.toml record -o $REC --interval 1 --run-log $LOG --no-cuda-smoke \
    >$W/record.out 2>&1 & rec=$!
dash=
if command -v tmux >/dev/null && $PY -c 'import textual' 2>/dev/null; then
    TERM=xterm-256color tmux new-session -d -s dash -x 160 -y 48 \
        "$PY -m sparktui --config $W/config.toml --run-log $LOG --no-cuda-smoke --no-session" && dash=1
fi
cap() { [ -n "$dash" ] && { echo "===== dashboard screen: $1 ($(date -u +%T))"; tmux capture-pane -p -t dash; } >>$OUT/dashboard-screens.txt 2>&1; true; }
# card LABEL KEYS...: move to a check's row (G: the last, G14; g then Down x3: G4), open its card, capture, close
card() { [ -n "$dash" ] || return 0; local label=$1; shift
         for k in "$@"; do tmux send-keys -t dash "$k"; sleep 0.3; done
         tmux send-keys -t dash Enter; sleep 1.5; cap "$label"; tmux send-keys -t dash Escape; sleep 0.7; }
sleep $((STEADY - 10)); cap "steady"; sleep 10
state "steady, before the lock"
LOCKED_WITH=
for spec in "300,600" "345,600" "600,600" "800,800"; do
    if nvidia-smi -lgc $spec >>$OUT/clocks.txt 2>&1; then LOCKED_WITH="-lgc $spec"; break; fi
done
if [ -z "$LOCKED_WITH" ]; then  # no clock lock on this machine: the power limit instead, reset in the trap
    PL_DEFAULT=$(nvidia-smi --query-gpu=power.default_limit --format=csv,noheader,nounits | head -1)
    PL_MIN=$(nvidia-smi --query-gpu=power.min_limit --format=csv,noheader,nounits | head -1)
    nvidia-smi -pl "$PL_MIN" >>$OUT/clocks.txt 2>&1 && LOCKED_WITH="-pl $PL_MIN (clock lock refused)"
fi
echo "slowed with: ${LOCKED_WITH:-nothing (both refused)} at $(date -u +%T)" >>$OUT/run-notes.txt
sleep 15; state "locked, 15 s in"; sleep $((LOCKED / 2 - 15)); cap "locked, $((LOCKED / 2)) s in"
sleep $((LOCKED / 2 - 16)); state "locked, near the end"; cap "locked, near the end"
card "G14's card, the lock on" G; card "G4's card, the lock on" g Down Down Down; sleep 10
reset_clocks; echo "reset at $(date -u +%T)" >>$OUT/run-notes.txt
sleep 10; state "after the reset"; sleep $((AFTER - 10)); cap "after the reset"
kill -TERM $rec; wait $rec; echo "record exit $?" >>$OUT/run-notes.txt
[ -n "$dash" ] && { tmux send-keys -t dash q; sleep 2; tmux kill-session -t dash 2>/dev/null; }
kill -TERM $train; wait $train 2>/dev/null
tr '\r' '\n' < $LOG | tail -3 >>$OUT/run-notes.txt
for args in "G14 G4 -v" "G14 G4 --json"; do
    { echo "\$ sparktui --config slow-window-30s.toml check --replay recording.jsonl $args"
      $PY -m sparktui --config $W/config.toml check --replay $REC $args; echo "exit $?"; } >>$OUT/replay-check.txt 2>&1
done
{ echo "\$ sparktui check --replay recording.jsonl G14 G4 -v   (default config: slow window 300 s, G4 window 10 min)"
  $PY -m sparktui check --replay $REC G14 G4 -v; echo "exit $?"; } >>$OUT/replay-check.txt 2>&1
ls -la $REC >>$OUT/run-notes.txt
