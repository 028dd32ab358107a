#!/usr/bin/env bash
# Issue 27, item 4: G13's driver facts, G4's clocks-set-by-hand rule and the DCGM-named series on a
# real driver: what reads, what is NOT_SUPPORTED. Results land in $OUT.
#
#     OUT=/tmp/out bash tools/new_rules_on_gpu.sh
source "$(dirname "$0")/gpu_env.sh"
{ echo "\$ sparktui check G13 G4 -v"; $PY -m sparktui check G13 G4 -v; echo "exit $?"
  echo "\$ sparktui check G13 G4 --json"; $PY -m sparktui check G13 G4 --json; echo "exit $?"
  echo "\$ modinfo nvidia (head)"; modinfo nvidia 2>&1 | head -12
  echo "\$ cat /proc/driver/nvidia/version"; cat /proc/driver/nvidia/version 2>&1
  echo "\$ ls /var/run/reboot-required*"; ls -la /var/run/reboot-required* 2>&1; } > "$OUT/new-rules.txt" 2>&1
$PY tools/nvml_dump.py > "$OUT/nvml-dump.json" 2>"$OUT/nvml-dump.err"
$PY -m sparktui export --listen 127.0.0.1:9477 --no-cuda-smoke G4 G13 > /tmp/export.out 2>&1 & ex=$!
$PY - > "$OUT/export-scrape.txt" 2>&1 <<'PYEOF'
import time, urllib.request
t0 = time.monotonic(); body = None
while time.monotonic() - t0 < 120:
    try:
        body = urllib.request.urlopen("http://127.0.0.1:9477/metrics", timeout=30).read().decode()
        if "DCGM_FI_DEV" in body:
            break
    except OSError:
        pass
    time.sleep(1)
print(f"# first scrape with DCGM names after {time.monotonic() - t0:.1f} s")
print(body if body is not None else "no answer")
PYEOF
kill -TERM $ex; wait $ex; echo "# export exit $?" >> "$OUT/export-scrape.txt"; cat /tmp/export.out >> "$OUT/export-scrape.txt"
