# Sourced by run_all_*.sh: run from the repository root with its Python package and venv;
# OUT (default out/linux-reference) receives the run directories.
TOOLS=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
cd "$TOOLS/../../.."
export PYTHONPATH=$PWD/python
PY=${PY:-.venv/bin/python}
OUT=${OUT:-out/linux-reference}
