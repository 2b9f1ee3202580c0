#!/usr/bin/env bash
# The determinism claims under every OpenBLAS x86-64 kernel set this CPU can run (issue 26): the
# tests tagged [reproducible] and [hvp] (same bits for any thread count or block, or a printed
# bound where GEMM shapes change) and the MPI-labelled tests (every analysis's bytes under
# mpirun -n 1, 2, 3; kills and resumes), each under OPENBLAS_CORETYPE=K. Not in CI: CI keeps the
# machine's own kernel. Usage: tests/determinism_by_kernel.sh BUILD [KERNEL...]
set -u
build=$(cd "${1:-build}" && pwd)
shift || true
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(Prescott Haswell SkylakeX Cooperlake Zen)
printf '%-11s %-34s %-34s %s\n' kernel "[reproducible],[hvp] test cases" "ctest -L mpi (not mpi_off_build)" seconds
for k in "${kernels[@]}"; do
  case $k in  # kernels whose instructions this CPU lacks would die of SIGILL: say so instead
    SkylakeX) grep -q -w avx512f /proc/cpuinfo || { printf '%-11s not run: no AVX-512\n' "$k"; continue; } ;;
    Cooperlake) grep -q -w avx512_bf16 /proc/cpuinfo || { printf '%-11s not run: no AVX-512 BF16\n' "$k"; continue; } ;;
    Haswell|Zen) grep -q -w avx2 /proc/cpuinfo || { printf '%-11s not run: no AVX2\n' "$k"; continue; } ;;
  esac
  start=$(date +%s)
  log=$build/determinism-$k.log
  OPENBLAS_CORETYPE=$k OMP_NUM_THREADS=2 "$build/bin/sparseact_tests" "[reproducible],[hvp]" >"$log" 2>&1
  # Catch: "All tests passed (N assertions in M test cases)" or "test cases: M | P passed | F failed"
  unit=$(grep -E '^(All tests passed|test cases:)' "$log" | tail -n 1 |
         sed -E 's/^All tests passed \(([0-9]+) assertions in ([0-9]+) test cases\)/\2 of \2 passed/; s/^test cases: *([0-9]+) \| *([0-9]+) passed \| *([0-9]+) failed/\2 of \1 passed, \3 FAILED/')
  OPENBLAS_CORETYPE=$k ctest --test-dir "$build" -L mpi -E mpi_off_build >>"$log" 2>&1
  mpi=$(grep -E 'tests passed' "$log" | tail -n 1 | sed -E 's/^([0-9]+)% tests passed, ([0-9]+) tests failed out of ([0-9]+)/\2 of \3 failed/')
  printf '%-11s %-34s %-34s %s\n' "$k" "$unit" "$mpi" $(( $(date +%s) - start ))
done
