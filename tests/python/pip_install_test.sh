#!/usr/bin/env bash
# ctest's python_pip_install (issue 39): the Python package the way its users install it.
#   pip_install_test.sh SOURCE_DIR WORK_DIR [ANALYSES]
# In a throw-away virtual environment (WORK_DIR/venv, made anew by Debian's python3 -m venv), pip installs
# pytest, numpy and scipy from PyPI, then `pip install SOURCE_DIR` (pyproject.toml: scikit-build-core and
# pybind11 from PyPI, the Debian libraries), and runs `python -m pytest SOURCE_DIR/tests/python` from an
# empty folder, with no PYTHONPATH or SPARSEACT_BIN: the tests import the installed package and
# sparseact.run() starts the analyses installed in it. The CMake build is kept in WORK_DIR/wheel-build
# (the next run rebuilds only what changed); the wheel holds only ANALYSES (default:
# "checkpoint_spectra;mp_spectrum", the ones the tests run) to keep the build short.
# Exit 77 (skipped) where python3 -m venv is missing (Debian's python3-venv) or PyPI cannot be reached.
set -euo pipefail
src=$(cd "$1" && pwd)
work=$2
analyses=${3:-checkpoint_spectra;mp_spectrum}
python=${SPARSEACT_PIP_TEST_PYTHON:-/usr/bin/python3}
mkdir -p "$work"
work=$(cd "$work" && pwd)

if [ -n "${SPARSEACT_TEST_PRELOAD:-}" ]; then
  echo "skipped: under sparseact.sh sanitize (the wheel is built without sanitizers; sparseact.sh test runs this)"
  exit 77
fi
if ! "$python" -m venv --help >/dev/null 2>&1 || ! "$python" -c "import ensurepip" 2>/dev/null; then
  echo "skipped: $python -m venv is not available (Debian's python3-venv)"
  exit 77
fi
rm -rf "$work/venv" "$work/run"
"$python" -m venv "$work/venv"
pip=("$work/venv/bin/python" -m pip --disable-pip-version-check)
if ! "${pip[@]}" install -q pytest numpy scipy; then
  echo "skipped: pip could not install pytest, numpy and scipy from PyPI (offline?)"
  exit 77
fi
unset PYTHONPATH SPARSEACT_BIN
start=$(date +%s)
echo "+ pip install $src --config-settings=build-dir=$work/wheel-build --config-settings=cmake.define.SPARSEACT_PYTHON_ANALYSES=\"$analyses\""
CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)} \
  "${pip[@]}" install "$src" --config-settings="build-dir=$work/wheel-build" \
    --config-settings="cmake.define.SPARSEACT_PYTHON_ANALYSES=$analyses"
echo "# pip install took $(( $(date +%s) - start )) s"
mkdir -p "$work/run"
cd "$work/run"   # not the source tree: `import sparseact` must find the installed package
"$work/venv/bin/python" - <<'PY'
import pathlib, numpy, sparseact
pkg = pathlib.Path(sparseact.__file__).parent
print("sparseact", sparseact.__version__, "from", pkg)
print("analyses:", sorted(p.name for p in (pkg / "bin").iterdir()))
print(sparseact.layer_metrics(numpy.random.default_rng(0).standard_normal((512, 128)))["kind"])
PY
exec "$work/venv/bin/python" -m pytest "$src/tests/python" -q -p no:cacheprovider -rs
