#!/usr/bin/env bash
# `bash sparseact.sh gpu-pack [ARCHIVE]`: for a GPU machine without Debian's -dev packages or a package
# registry. Packs, under their absolute paths, what `sparseact.sh gpu` needs there:
#   - the checkout's tracked files but figures/ (the scripts and the tests' own inputs);
#   - from the build: the library, the CUDA module, the test executable and the analyses with a GPU path;
#   - the shared libraries these need beyond the C/C++ runtime and CUDA (found with ldd), into BUILD/gpu-deps;
#   - the Fashion-MNIST files.
# On the GPU machine: tar -xzf ARCHIVE -C / && bash <this checkout's path>/sparseact.sh gpu
# (the same absolute path as here, so the executables' RUNPATH still resolves).
# usage: tools/gpu/pack.sh ROOT BUILD ARCHIVE
set -euo pipefail
root=$1; build=$2; archive=$3
gpu_analyses=(mp_spectrum mp_sweep lsh_buckets comet_utilization comet_overlap checkpoint_spectra comet_train momlp_regression)
for f in "$build/lib/libsparseact_cuda.so" "$build/bin/sparseact_tests"; do
  [ -e "$f" ] || { echo "sparseact gpu-pack: $f is missing (a build with CUDA kernels and tests is needed; is nvcc on PATH?)" >&2; exit 2; }
done
deps=$build/gpu-deps
rm -rf "$deps"; mkdir -p "$deps"
exes=("$build/bin/sparseact_tests")
for a in "${gpu_analyses[@]}"; do exes+=("$build/bin/$a"); done
# The GPU training benchmark and its peer script (copied beside it by the build), when built.
[ -x "$build/bin/bench/gpu_train_vs_torch" ] && exes+=("$build/bin/bench/gpu_train_vs_torch" "$build/bin/bench/gpu_train_vs_torch.py" "$build/bin/bench/peer_common.py")
# The C and C++ runtimes and CUDA are on every GPU machine; everything else the executables load is packed.
skip='^(linux-vdso|libc\.so|libm\.so|libdl\.so|libpthread|librt\.so|libstdc\+\+|libgcc_s|ld-linux|libsparseact|libcu|libnvJitLink|libnvrtc)'
for f in "${exes[@]}" "$build"/lib/libsparseact.so* "$build/lib/libsparseact_cuda.so"; do [[ $f == *.py ]] || ldd "$f"; done |
  awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | sort -u | while read -r name path; do
    [[ $name =~ $skip ]] && continue
    cp -L "$path" "$deps/$name"
  done
touch "$build/.gpu-pack"  # tells sparseact.sh gpu to use this build as it is
list=$(mktemp)
# The checkout without figures/ (16 MB the GPU check does not read: it writes its own results).
(cd "$root" && git ls-files | grep -v '^figures/' | sed "s|^|${root#/}/|") > "$list"
for f in "${exes[@]}" "$build"/lib/libsparseact* "$deps" "$build/.gpu-pack"; do echo "${f#/}"; done >> "$list"
[ -d /usr/share/datasets/fashion-mnist ] && echo usr/share/datasets/fashion-mnist >> "$list"
tar -czf "$archive" -C / -T "$list"
rm -f "$list" "$build/.gpu-pack"  # the marker travels in the archive only: a later build here is not a packed one
size=$(du -m "$archive" | cut -f1)
echo "sparseact gpu-pack: $archive, ${size} MB; on the GPU machine: tar -xzf $(basename "$archive") -C / && bash $root/sparseact.sh gpu"
[ "$size" -lt 60 ] || echo "sparseact gpu-pack: warning: ${size} MB is over the 60 MB a device transfer allows" >&2
