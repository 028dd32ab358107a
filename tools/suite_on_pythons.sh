#!/usr/bin/env bash
# The whole suite under other Pythons that pyproject allows (>= 3.10; CI runs 3.11), from pyenv's
# interpreters: a venv each under /tmp with `pip install -e '.[test]'`, then the README's pytest
# command. The one test that installs torch into a fresh venv is deselected (it is run by CI).
# Exits 1 when any version fails. Usage: tools/suite_on_pythons.sh 3.10.13 3.13.0
set -uo pipefail
cd "$(dirname "$0")/.."
rc=0
for v in "$@"; do
  py=${PYENV_ROOT:-$HOME/.pyenv}/versions/$v/bin/python
  venv=/tmp/sparktui-py$v
  if [ ! -x "$venv/bin/python" ]; then
    "$py" -m venv "$venv" && "$venv/bin/pip" install -q -e '.[test]' >/dev/null 2>&1 || { echo "Python $v: cannot set up $venv"; rc=1; continue; }
  fi
  echo "== Python $v ($(date -u '+%F %H:%M') UTC, $(git rev-parse --short HEAD 2>/dev/null))"
  "$venv/bin/python" -m pytest -q -n 2 -p no:cacheprovider -rfEs \
    --deselect tests/test_target_probe.py::test_real_torch_cpu_build 2>&1 | sed -n '/short test summary info/,$p'
  [ "${PIPESTATUS[0]}" = 0 ] || rc=1
done
exit $rc
