#!/usr/bin/env bash
# Run a benchmark and keep its output under benchmarks/results/ with the header every saved figure
# carries: date, machine, tree, command; and the command's exit status at the end (a benchmark
# exits non-zero when it misses its target). Prints the output too; exits with the command's status.
#   benchmarks/save.sh NAME COMMAND...     ->  benchmarks/results/NAME-YYYY-MM-DD.txt
set -uo pipefail
cd "$(dirname "$0")/.."
name=$1; shift
out="benchmarks/results/${name}-$(date -u +%F).txt"
gpu=$(nvidia-smi -L 2>/dev/null | head -1); gpu=${gpu:-no NVIDIA GPU}
{
  echo "# date: $(date -u '+%F %T UTC')"
  echo "# machine: $(hostname) ($(uname -m), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg)); $gpu; $(python3 -V 2>&1)"
  echo "# tree: $(git rev-parse --short HEAD 2>/dev/null)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "# command: $*"
} > "$out"
"$@" 2>&1 | tee -a "$out"
rc=${PIPESTATUS[0]}
echo "# exit status: $rc" >> "$out"
echo "saved: $out (exit status $rc)" >&2
exit "$rc"
