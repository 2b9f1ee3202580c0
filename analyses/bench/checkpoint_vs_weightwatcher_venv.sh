#!/usr/bin/env bash
# checkpoint_vs_weightwatcher_venv.sh — the Python environment of the WeightWatcher peer of
# analyses/bench/checkpoint_vs_weightwatcher (issue 16). Usage:
#
#   analyses/bench/checkpoint_vs_weightwatcher_venv.sh VENV
#
# Creates a virtual environment at VENV over Debian's /usr/bin/python3 with --system-site-packages, so
# that Debian's python3-torch (and its numpy 1.x, python3-scipy, python3-pandas, python3-matplotlib
# where installed) stay visible, then installs from PyPI what Debian lacks: weightwatcher (with its
# pandas, powerlaw, scikit-learn, matplotlib), safetensors, and "numpy<2".
# Why numpy<2 (tried on Debian 12): with pip's numpy 2.x shadowing Debian's 1.24, Debian's torch 1.13
# (built against numpy 1.x) loses its numpy bridge ("Failed to initialize NumPy: _ARRAY_API not
# found", torch.from_numpy: "RuntimeError: Numpy is not available"; weightwatcher imports torch when
# it is present) and Debian's scipy 1.10 declares numpy<1.27. With the pin pip settles on numpy
# 1.26.4 (the newest 1.x; weightwatcher's pandas 3 wants ≥ 1.26), which torch 1.13 and scipy 1.10
# both accept: checked below by importing all of them and converting an array.
# Idempotent: exits at once when VENV already passes that check.
set -euo pipefail

venv=${1:?usage: $0 VENV}
python=${SPARSEACT_SYSTEM_PYTHON:-/usr/bin/python3}

check='import weightwatcher, safetensors.numpy, numpy, scipy.linalg, torch
assert int(numpy.__version__.split(".")[0]) < 2
torch.from_numpy(numpy.ones(2))'
if [ -x "$venv/bin/python" ] && "$venv/bin/python" -c "$check" >/dev/null 2>&1; then
  echo "$venv/bin/python"
  exit 0
fi

if ! "$python" -c 'import torch' >/dev/null 2>&1; then
  echo "$0: $python cannot import torch; install Debian's python3-torch (apt-get install python3-torch)" >&2
  exit 1
fi
# Debian splits venv's ensurepip into python3-venv.
if ! "$python" -c 'import ensurepip' >/dev/null 2>&1; then
  echo "$0: $python lacks ensurepip; install Debian's python3-venv (apt-get install python3-venv)" >&2
  exit 1
fi

"$python" -m venv --system-site-packages "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check "numpy<2" weightwatcher safetensors >&2
if ! "$venv/bin/python" -c "$check" >&2; then
  echo "$0: $venv: weightwatcher, safetensors, numpy<2 and torch do not import together" >&2
  exit 1
fi
echo "$venv/bin/python"
