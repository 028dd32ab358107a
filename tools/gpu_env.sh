# Sourced by the tools/*_on_gpu.sh scripts: the repository root, sparktui from src/, and the wheels
# carried in .whl/ (textual, pytest plugins, ruff: the lent GPU machine has no network) installed
# into $SITE (default /tmp/site) with pip --no-index, their scripts (ruff, pytest) on PATH.
#
# $SITE is emptied first: a warm machine keeps it from an earlier call, and pip --target does not
# replace a folder already there (it only warns "Target directory ... already exists"). On the lent
# H100 (a call on the machine an earlier call had installed into) ruff's package was there and its
# binary was not, so `python -m ruff` found none; pip --target does just that when a bin/ from an
# earlier install (nvitop's scripts) is there: the new wheels' scripts are dropped.
set -u
OUT=${OUT:?set OUT to a folder for the results}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
PY=${PY:-python3}
SITE=${SITE:-/tmp/site}
if ls .whl/*.whl >/dev/null 2>&1; then
    rm -rf "$SITE"
    $PY -m pip install -q --no-deps --no-index --target "$SITE" .whl/*.whl 2>&1 | tail -2
    export PYTHONPATH=$PWD/src:$SITE
    export PATH=$SITE/bin:$PATH
fi
