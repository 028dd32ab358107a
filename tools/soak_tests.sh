#!/usr/bin/env bash
# Flaky-test soak: run the whole suite N times (default 5) under `-n 4` (more workers than this
# 2-core VM has: load is the point) and list every test that failed in any run, with how often.
# Exits 1 when any test failed once. Usage: tools/soak_tests.sh [RUNS] [WORKERS] [extra pytest args]
# Output: one junit XML per run under $SOAK_DIR (default a temp folder), and the summary on stdout.
set -uo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-5}
WORKERS=${2:-4}
shift $(( $# > 2 ? 2 : $# ))
SOAK_DIR=${SOAK_DIR:-$(mktemp -d -t sparktui-soak-XXXX)}
mkdir -p "$SOAK_DIR"
PY=${PY:-python3}
echo "soak: $RUNS runs of the suite, -n $WORKERS, on $(nproc) CPUs, $(date -u +%FT%TZ), ${TREE:-$(git rev-parse --short HEAD 2>/dev/null)}"
# SOAK_PARALLEL=2 runs two suites at once (on a machine with the cores for it: more load, more
# chances for a timing-dependent test to show itself); each run has its own --basetemp.
PARALLEL=${SOAK_PARALLEL:-1}
one_run() {
  local i=$1 start rc; shift
  start=$(date +%s)
  "$PY" -m pytest -q -n "$WORKERS" -p no:cacheprovider --basetemp="$SOAK_DIR/tmp-$i" \
    --junitxml="$SOAK_DIR/run-$i.xml" "$@" >"$SOAK_DIR/run-$i.log" 2>&1
  rc=$?
  rm -rf "$SOAK_DIR/tmp-$i"
  echo "run $i: exit $rc in $(( $(date +%s) - start )) s: $(tail -1 "$SOAK_DIR/run-$i.log")"
}
for i in $(seq 1 "$RUNS"); do
  one_run "$i" "$@" &
  if (( i % PARALLEL == 0 )); then wait; fi
done
wait
"$PY" - "$SOAK_DIR" "$RUNS" <<'PYEOF'
import collections, pathlib, sys
import xml.etree.ElementTree as ET

folder, runs = pathlib.Path(sys.argv[1]), int(sys.argv[2])
failed = collections.Counter()
for xml in sorted(folder.glob("run-*.xml")):
    for case in ET.parse(xml).getroot().iter("testcase"):
        if case.find("failure") is not None or case.find("error") is not None:
            failed[f"{case.get('classname')}::{case.get('name')}"] += 1
if not failed:
    print(f"soak: no test failed in {runs} runs")
    sys.exit(0)
print(f"soak: {len(failed)} test(s) failed at least once in {runs} runs:")
for name, n in failed.most_common():
    print(f"  {n}/{runs}  {name}")
sys.exit(1)
PYEOF
