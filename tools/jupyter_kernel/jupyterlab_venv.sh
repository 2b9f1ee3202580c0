#!/usr/bin/env bash
# JupyterLab for the notebooks (issue 39), as `bash sparseact.sh test` sets it up:
#   jupyterlab_venv.sh VENV
# Debian 12 packages no JupyterLab, so it comes from PyPI into the virtual environment VENV (made once;
# later runs only refresh the kernelspec). The clang-repl C++17 kernel's kernelspec (xcpp17, run by
# Debian's /usr/bin/python3 with python3-ipykernel) goes into VENV/share/jupyter/kernels, where that
# JupyterLab finds it and the user's own Jupyter folders stay untouched. Then:
#   VENV/bin/jupyter lab notebooks/
#   VENV/bin/jupyter nbconvert --to html --execute --output-dir build/notebooks notebooks/001_marchenko_pastur.ipynb
set -euo pipefail
venv=$1
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ ! -x "$venv/bin/jupyter-lab" ]; then
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check jupyterlab
fi
/usr/bin/python3 "$here/install.py" --prefix "$venv"
