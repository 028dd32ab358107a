# Sourced by the tools/validate_*_on_gpu.sh scripts: the repository root, sparktui from src/, and
# the wheels carried in .whl/ (textual, pytest plugins: the lent GPU machine has no network)
# installed into /tmp/site with pip --no-index.
set -u
OUT=${OUT:?set OUT to a folder for the results}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
export PYTHONPATH=$PWD/src PYTHONUNBUFFERED=1
PY=${PY:-python3}
if ls .whl/*.whl >/dev/null 2>&1; then
    $PY -m pip install -q --no-deps --no-index --target /tmp/site .whl/*.whl 2>&1 | tail -2
    export PYTHONPATH=$PWD/src:/tmp/site
fi
