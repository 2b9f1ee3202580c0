#!/usr/bin/env bash
# The GPU check behind `bash sparseact.sh gpu` (docs/cuda.md): on a machine with an NVIDIA GPU and a build
# with CUDA kernels, runs
#   1. the [cuda] tests (GPU twins of every kernel against the CPU),
#   2. compute-sanitizer memcheck on them, when it is installed,
#   3. every analysis with a GPU path on --device cpu and on --device cuda, and compares their JSON
#      (tools/gpu/compare.py: same verdicts, largest relative difference, the GPU twin's self-checks),
# and prints one table. Each step has a time limit; everything lands under OUT.
# usage: tools/gpu/check.sh BUILD OUT        exit: 0 all agree, 1 something failed or disagreed
# SPARSEACT_GPU_QUICK=1 runs the analyses at seconds-long sizes (with SPARSEACT_CUDA_STANDIN, the script's
# own test on a machine without a GPU: tests/CMakeLists.txt). SPARSEACT_GPU_STAGES picks the stages (default
# all: "tests memcheck analyses select bench"); `sparseact.sh gpu --quick` (tools/gpu/quick.sh) uses it.
set -u
stages=${SPARSEACT_GPU_STAGES:-tests memcheck analyses select bench}
stage() { case " $stages " in *" $1 "*) return 0 ;; *) return 1 ;; esac; }
build=$1; out=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
mkdir -p "$out"
tests=$build/bin/sparseact_tests
bin=$build/bin
py=$(command -v python3 || true)
rc=0
summary=$out/summary.txt; : > "$summary"
say() { printf '%s\n' "$*" | tee -a "$summary"; }

say "sparseact gpu check — $(date -u +%Y-%m-%dT%H:%MZ)"
if command -v nvidia-smi >/dev/null; then
  say "GPU: $(nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | head -1)"
fi
say "CPU: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
if ! command -v gnuplot >/dev/null && [ -z "${SPARSEACT_GNUPLOT:-}" ]; then
  say "note: no gnuplot here: the analyses write their JSON and CSV but no figures (exit 1 'figures not rendered'); the verdicts are read from the JSON"
fi

# 1. The [cuda] tests. Catch2 v2's closing line: "All tests passed (…)" or "test cases: N | P passed | F failed".
test_line="skipped (SPARSEACT_GPU_STAGES)"; test_s=0
if stage tests; then
  t0=$(date +%s.%N)
  timeout 600 "$tests" "[cuda]~[mpi]" > "$out/cuda_tests.txt" 2>&1; test_rc=$?
  t1=$(date +%s.%N)
  test_line=$(grep -E "All tests passed|test cases:" "$out/cuda_tests.txt" | tail -1)
  [ $test_rc -eq 0 ] || rc=1
  test_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}')
fi

# 2. memcheck.
sanitizer=$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)
if ! stage memcheck; then
  memcheck="skipped (SPARSEACT_GPU_STAGES)"
elif [ -n "$sanitizer" ]; then
  timeout 900 "$sanitizer" --tool memcheck --leak-check full --error-exitcode 9 "$tests" "[cuda]~[mpi]" > "$out/memcheck.txt" 2>&1; mc_rc=$?
  memcheck=$(grep -E "ERROR SUMMARY" "$out/memcheck.txt" | tail -1)
  [ -n "$memcheck" ] || memcheck="no summary (exit $mc_rc)"
  [ $mc_rc -eq 0 ] || rc=1
else
  memcheck="compute-sanitizer not installed: skipped"
fi

# 3. The analyses with a GPU path, at sizes where the GPU has work to do (a few seconds on the CPU of a GPU node).
analyses=(
  "mp_spectrum"
  "mp_sweep --n 1024,2048,4096 --c 0.25,4 --trials 4"
  "lsh_buckets"
  "comet_utilization --nets 20 --images 10000"
  "comet_overlap"
  "checkpoint_spectra"
  "comet_train --widths 1000 --sparsity 0.5 --models standard,smaller,topk,comet,dropout --seeds 2 --epochs 1"
  "momlp_regression --targets fbm --runs 2 --K-sweep 4 --hurst-sweep 0.5 --width 64"
)
if [ "${SPARSEACT_GPU_QUICK:-0}" = 1 ]; then  # seconds-long runs: the script's own test on the CPU stand-in
  analyses=(
    "mp_spectrum --scale quick --n 64 --d 16 --trials 2 --eta-samples 20"
    "mp_sweep --scale quick --n 32,48,64 --c 0.25,4 --trials 2"
    "lsh_buckets --scale quick"
    "comet_utilization --scale quick --nets 3 --images 300"
    "comet_overlap --scale quick --pairs 20 --nets 2 --depth 3 --width 64 --pk 0.1,0.5,1 --resamples 200"
    "checkpoint_spectra --synthetic-blocks 2 --synthetic-d 32 --esd-figures 2"
    "comet_train --scale quick --widths 16 --sparsity 0.5 --models standard,topk,comet,dropout --seeds 2 --epochs 1 --train 256 --test 64"
    "momlp_regression --scale quick --targets fbm --runs 2 --K-sweep 2 --hurst-sweep 0.5 --width 8"
  )
fi
: > "$out/compare.jsonl"
stage analyses || analyses=()
for line in "${analyses[@]}"; do
  read -r -a args <<< "$line"
  name=${args[0]}; flags=("${args[@]:1}")
  for dev in cpu cuda; do
    s=$(date +%s.%N)
    timeout 600 "$bin/$name" "${flags[@]}" --device $dev --out "$out/$name.$dev" > "$out/$name.$dev.log" 2>&1
    echo $? > "$out/$name.$dev.rc"
    e=$(date +%s.%N)
    awk -v a="$s" -v b="$e" 'BEGIN{printf "%.2f", b-a}' > "$out/$name.$dev.wall"
  done
  if [ -f "$out/$name.cpu/$name.json" ] && [ -f "$out/$name.cuda/$name.json" ] && [ -n "$py" ]; then
    "$py" "$here/compare.py" "$out/$name.cpu/$name.json" "$out/$name.cuda/$name.json" >> "$out/compare.jsonl" || rc=1
  else
    echo "{\"analysis\": \"$name\", \"missing\": true}" >> "$out/compare.jsonl"; rc=1
  fi
done

# The selection k-WTA kernel (SPARSEACT_KWTA_KERNEL=select, cuda/comet_forward.hpp) on the COMET analyses,
# against the same CPU runs: its rows read "<name>+select".
stage select || analyses=()
for line in "${analyses[@]}"; do
  read -r -a args <<< "$line"
  name=${args[0]}; flags=("${args[@]:1}")
  case "$name" in comet_*) ;; *) continue ;; esac
  row=$name+select
  s=$(date +%s.%N)
  SPARSEACT_KWTA_KERNEL=select timeout 600 "$bin/$name" "${flags[@]}" --device cuda --out "$out/$row.cuda" > "$out/$row.cuda.log" 2>&1
  echo $? > "$out/$row.cuda.rc"
  e=$(date +%s.%N)
  awk -v a="$s" -v b="$e" 'BEGIN{printf "%.2f", b-a}' > "$out/$row.cuda.wall"
  cp "$out/$name.cpu.rc" "$out/$row.cpu.rc"; cp "$out/$name.cpu.wall" "$out/$row.cpu.wall"
  if [ -f "$out/$name.cpu/$name.json" ] && [ -f "$out/$row.cuda/$name.json" ] && [ -n "$py" ]; then
    "$py" "$here/compare.py" "$out/$name.cpu/$name.json" "$out/$row.cuda/$name.json" "$row" >> "$out/compare.jsonl" || rc=1
  else
    echo "{\"analysis\": \"$row\", \"missing\": true}" >> "$out/compare.jsonl"; rc=1
  fi
done

# The table.
"$py" - "$out" "$test_line" "$test_s" "$memcheck" <<'PY' | tee -a "$summary"
import json, os, sys
out, test_line, test_s, memcheck = sys.argv[1:5]
print(f"\n[cuda] tests: {test_line or 'no result line'} ({test_s} s)")
print(f"memcheck:     {memcheck}")
rows = [json.loads(l) for l in open(os.path.join(out, "compare.jsonl")) if l.strip()]
print()
print(f"| {'analysis':<24} | exit cpu/cuda | wall cpu s | wall cuda s | cpu/cuda | same verdicts | max rel. diff | twin (self-checks) | twin cost |")
print(f"|{'-'*26}|---------------|------------|-------------|----------|---------------|---------------|--------------------|-----------|")
bad = False
for r in rows:
    name = r["analysis"]
    rc = [open(os.path.join(out, f"{name}.{d}.rc")).read().strip() for d in ("cpu", "cuda")]
    wall = [float(open(os.path.join(out, f"{name}.{d}.wall")).read()) for d in ("cpu", "cuda")]
    if r.get("missing"):
        print(f"| {name:<24} | {rc[0]}/{rc[1]:<11} | {wall[0]:>10.2f} | {wall[1]:>11.2f} |          | no JSON       |               |                    |           |")
        bad = True
        continue
    twins = r["twin"]
    twin = f"{sum(t['verdict'] == 'holds' for t in twins)}/{len(twins)} agree" if twins else "none recorded"
    share = r.get("twin_share_of_wall_time")
    cost = f"{100 * share:.1f} %" if share is not None else ""
    bad = bad or not r["same_verdicts"] or not r["twin_agrees"]
    print(f"| {name:<24} | {rc[0] + '/' + rc[1]:<13} | {wall[0]:>10.2f} | {wall[1]:>11.2f} | {wall[0] / wall[1]:>7.2f}x | "
          f"{'yes' if r['same_verdicts'] else 'NO':<13} | {r['max_relative_difference']:>13.2e} | {twin:<18} | {cost:>9} |")
    for v in r["verdicts_differ"]:
        print(f"|   verdict differs: {v}")
sys.exit(1 if bad else 0)
PY
[ ${PIPESTATUS[0]} -eq 0 ] || rc=1

# 4. The GPU training benchmark against PyTorch on the same card (issue 41), on a real GPU only: the python that
# runs it must have a CUDA build of torch (SPARSEACT_GPU_PYTHON, else python3 on the PATH).
if stage bench && [ "${SPARSEACT_CUDA_STANDIN:-}" = "" ] && [ -x "$bin/bench/gpu_train_vs_torch" ] && [ "${SPARSEACT_GPU_QUICK:-0}" != 1 ]; then
  say ""
  say "bench/gpu_train_vs_torch (Hutchinson ≥ 2× torch, a COMET epoch ≥ 1×):"
  timeout 900 "$bin/bench/gpu_train_vs_torch" --python "${SPARSEACT_GPU_PYTHON:-$(command -v python3)}" --out "$out/gpu_train_vs_torch" \
    > "$out/gpu_train_vs_torch.log" 2>&1
  echo "exit $?" >> "$out/gpu_train_vs_torch.log"
  grep -E "^\s+\[|^exit" "$out/gpu_train_vs_torch.log" | tee -a "$summary"
fi
say ""
say "results and logs: $out"
exit $rc
