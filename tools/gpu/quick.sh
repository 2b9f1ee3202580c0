#!/usr/bin/env bash
# `bash sparseact.sh gpu --quick`: a first run on a card that fits in about ten minutes (issue 51, docs/cuda.md).
# Each step is its own process under its own time limit; a failure is recorded and the next step runs. One table
# at the end: step, exit, seconds, the result line. Everything lands under OUT (a log per step).
#   1. the device probe: card, driver, compute mode, the module's libraries, the [cuda][device] tests
#   2. the [cuda] COMET tests (forward, k-WTA limits, ties, NaN, threads) with blocking launches, one case per process
#   3. compute-sanitizer memcheck, racecheck and synccheck on those tests alone (racecheck and synccheck on the
#      selection kernel only: the counting kernel makes N² shared reads per column)
#   4. the [plain_train] tests under the counting kernel, then under selection
#   5. spectra and LSH ([cuda] without routing, training or device)
#   6. the quick-scale analyses with a GPU path on cpu, cuda and cuda with selection (their JSON compared)
#   7. one full-size comet_utilization under selection, every core launching: the shared-memory cap race
#   8. where the forward's time goes: nsys's kernel / copy / API split of one COMET forward, where nsys is here
# usage: tools/gpu/quick.sh BUILD OUT        exit: 0 every step passed, 1 otherwise
# SPARSEACT_GPU_QUICK_STEPS="1 2 4" runs only those steps.
set -u
build=$1; out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$out"
T=$build/bin/sparseact_tests
B=$build/bin
export SPARSEACT_GNUPLOT=${SPARSEACT_GNUPLOT:-$(command -v gnuplot || echo /bin/true)}  # no gnuplot: JSON still written
py=$(command -v python3 || true)
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
steps=${SPARSEACT_GPU_QUICK_STEPS:-1 2 3 4 5 6 7 8}
table=$out/table.txt; : > "$table"
rc=0

wanted() { case " $steps " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
# row STEP NAME EXIT SECONDS RESULT
row() { printf '| %-2s | %-34s | %4s | %7s | %s |\n' "$1" "$2" "$3" "$4" "$5" >> "$table"; [ "$3" = 0 ] || [ "$3" = "-" ] || rc=1; }
# run STEP NAME LIMIT_S LOG COMMAND...: one process, its own limit, its exit and wall time in the table
run() {
  local step=$1 name=$2 limit=$3 log=$4; shift 4
  local s e code line
  s=$(date +%s.%N)
  timeout "$limit" "$@" > "$out/$log" 2>&1; code=$?
  e=$(date +%s.%N)
  line=$(grep -E "All tests passed|test cases:|ERROR SUMMARY|RACECHECK SUMMARY|SYNCCHECK SUMMARY" "$out/$log" | tail -1)
  [ $code -eq 124 ] && line="timed out after $limit s"
  [ -n "$line" ] || line=$(tail -1 "$out/$log" | cut -c1-100)
  row "$step" "$name" "$code" "$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.1f", b-a}')" "$line"
}

{
  echo "sparseact gpu --quick — $(date -u +%Y-%m-%dT%H:%MZ)"
  command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,memory.total,driver_version,compute_mode --format=csv,noheader
  echo "CPU: $(nproc) cores"
} | tee "$out/env.txt"

if wanted 1; then
  missing=$(ldd "$build/lib/libsparseact_cuda.so" 2>&1 | grep "not found" || true)
  [ -z "$missing" ] || echo "$missing" >> "$out/env.txt"
  run 1 "device probe ([cuda][device])" 60 1-device.txt "$T" "[cuda][device]"
fi
# One Catch2 process per test case: a sticky device fault fails its own case only.
per_case() {  # STEP NAME LIMIT LOG SPEC [ENV=VALUE…]
  local step=$1 name=$2 limit=$3 log=$4 spec=$5; shift 5
  local s e code=0 n=0 failed=0
  s=$(date +%s.%N)
  : > "$out/$log"
  while IFS= read -r case; do
    [ -n "$case" ] || continue
    n=$((n + 1))
    # A test spec splits at commas and reads [ as a tag: escape both, as catch_discover_tests does.
    local spec_of=${case//\\/\\\\}
    spec_of=${spec_of//,/\\,}
    spec_of=${spec_of//[/\\[}
    env "$@" SPARSEACT_CUDA_SYNC=1 timeout "$limit" "$T" "$spec_of" --warn NoTests >> "$out/$log" 2>&1 || { failed=$((failed + 1)); code=1; echo "FAILED: $case" >> "$out/$log"; }
  done < <("$T" "$spec" --list-test-names-only 2>/dev/null | grep -v '^$' | grep -v "matching test case")
  e=$(date +%s.%N)
  row "$step" "$name" "$code" "$(awk -v a="$s" -v b="$e" 'BEGIN{printf "%.1f", b-a}')" "$((n - failed)) of $n test cases passed"
}
if wanted 2; then per_case 2 "COMET forward ([cuda][routing])" 120 2-comet.txt "[cuda][routing]" CUDA_LAUNCH_BLOCKING=1; fi
if wanted 3; then
  if [ -n "$sanitizer" ]; then
    run 3 "memcheck [cuda][routing]" 180 3-memcheck.txt "$sanitizer" --tool memcheck --error-exitcode 9 "$T" "[cuda][routing]"
    for tool in racecheck synccheck; do
      run 3 "$tool kwta_select_apply" 120 "3-$tool.txt" "$sanitizer" --tool $tool --kernel-name kns=kwta_select_apply --error-exitcode 9 "$T" "[cuda][routing]"
    done
  else
    row 3 "sanitizers" "-" "-" "compute-sanitizer not installed: skipped"
  fi
fi
if wanted 4; then
  per_case 4 "trainer, counting ([plain_train])" 120 4-train-count.txt "[cuda][plain_train]" CUDA_LAUNCH_BLOCKING=1 SPARSEACT_KWTA_KERNEL=count
  per_case 4 "trainer, selection ([plain_train])" 120 4-train-select.txt "[cuda][plain_train]" CUDA_LAUNCH_BLOCKING=1 SPARSEACT_KWTA_KERNEL=select
fi
if wanted 5; then run 5 "spectra and LSH ([cuda], the rest)" 120 5-rest.txt "$T" "[cuda]~[routing]~[plain_train]~[device]~[mpi]"; fi
if wanted 6; then
  # check.sh's seconds-long list and its comparison, on cpu, cuda and cuda+select.
  run 6 "quick analyses: cpu, cuda, +select" 300 6-analyses.txt \
    env SPARSEACT_GPU_QUICK=1 SPARSEACT_GPU_STAGES="analyses select" bash "$here/check.sh" "$build" "$out/analyses"
fi
if wanted 7; then
  run 7 "comet_utilization full size, +select" 240 7-utilization.txt \
    env SPARSEACT_KWTA_KERNEL=select "$B/comet_utilization" --nets 40 --images 10000 --device cuda --out "$out/comet_utilization.select"
fi
if wanted 8; then
  if command -v nsys >/dev/null && [ -x "$B/comet_utilization" ]; then
    run 8 "forward time split (nsys)" 180 8-nsys.txt nsys profile --stats=true --force-overwrite true -o "$out/forward" \
      "$B/comet_utilization" --nets 16 --images 10000 --device cuda --out "$out/comet_utilization.nsys"
  else
    row 8 "forward time split" "-" "-" "nsys not installed: skipped"
  fi
fi

{
  echo
  echo "| step | what | exit | seconds | result |"
  echo "|---|---|---|---|---|"
  sed 's/^| \([^|]*\)| \([^|]*\)|/| \1| \2|/' "$table"
  echo
  echo "logs: $out"
} | tee "$out/summary.txt"
exit $rc
