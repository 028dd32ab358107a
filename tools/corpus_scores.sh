#!/usr/bin/env bash
# How many of the real public texts the parsers of outside text read as a person does: the G11
# kernel-log corpus (tests/data/kernel_logs, each excerpt in four formats and as found), the G10
# launch-recipe corpus (tests/data/recipes) and the G14 training-log corpus (tests/data/run_logs:
# what the parser reads of each excerpt, and G14's verdict on it as a saved log). Runs the two corpus test files against the tree's src/,
# or against another tree's src/ given as $1 (e.g. an older commit checked out as a worktree), and
# prints pytest's count for each. Exits non-zero when any case disagrees.
#   tools/corpus_scores.sh [OTHER_SRC]
set -uo pipefail
cd "$(dirname "$0")/.."
src=${1:-src}
rc=0
for t in tests/gotchas/g11/test_real_logs.py tests/gotchas/g10/test_real_recipes.py \
         "tests/test_run_progress.py -k excerpt" tests/run/test_corpus_g14.py; do
  # shellcheck disable=SC2086  # "FILE -k EXPR": split on purpose
  out=$(PYTHONPATH="$src" python -m pytest -q -p no:cacheprovider -p no:randomly -n 0 $t 2>&1 | tail -1)
  echo "$t against $src: $out"
  case $out in *[0-9]" failed"*|*error*) rc=1;; esac
done
exit $rc
