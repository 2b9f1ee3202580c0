#!/usr/bin/env bash
# Runs the libFuzzer targets built in BUILD (tests/fuzz/CMakeLists.txt, standalone) for SECONDS each,
# one after the other, and prints one summary line per target. `bash sparseact.sh fuzz [SECONDS]`
# builds BUILD and calls this.
#
#     run_fuzzers.sh BUILD SECONDS [TARGET...]     (targets: safetensors npy npz index idx; default all)
#
# In BUILD: seeds/<target>/ (make_corpus.py, regenerated each run, with the decoded regression
# inputs), corpus/<target>/ (what libFuzzer found, kept between runs), artifacts/<target>/ (inputs
# that crashed, leaked, timed out or ran out of memory), logs/<target>.log (libFuzzer's output).
# A finding is an artifact: turn it into tests/fuzz/regressions/<target>/NAME.hex (README there).
# Exit status: 1 when any target found something, else 0.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
if [ $# -lt 2 ]; then
  echo "usage: $0 BUILD SECONDS [TARGET...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
seconds=$2
shift 2
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then targets=(safetensors npy npz index idx); fi
case "$seconds" in
  ''|*[!0-9]*) echo "SECONDS must be a whole number of seconds, not '$seconds'" >&2; exit 2 ;;
esac

/usr/bin/python3 "$here/make_corpus.py" "$build/seeds" --clean --regressions "$here/regressions" >/dev/null
mkdir -p "$build/logs"

# Sanitizer reports end the run as a crash; leaks count (libFuzzer checks them per input).
export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:detect_leaks=1:allocator_may_return_null=0}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# Symbolized stacks: clang-16's own llvm-symbolizer (package llvm-16); ASan does not take a symlink to
# another version's from PATH.
if [ -z "${ASAN_SYMBOLIZER_PATH:-}" ]; then
  for s in /usr/lib/llvm-16/bin/llvm-symbolizer "$(readlink -f "$(command -v llvm-symbolizer || true)" || true)"; do
    if [ -x "$s" ]; then export ASAN_SYMBOLIZER_PATH=$s; break; fi
  done
fi

final_stat() {  # stat NAME LOG: libFuzzer's final statistic NAME, or '?'
  local v
  v=$(grep -o "^stat::$1: *[0-9]*" "$2" | tail -n 1 | grep -o '[0-9]*$' || true)
  echo "${v:-?}"
}

status=0
summary=()
for t in "${targets[@]}"; do
  exe=$build/fuzz_$t
  if [ ! -x "$exe" ]; then
    echo "fuzz: no $exe (build it first)" >&2
    exit 2
  fi
  corpus=$build/corpus/$t
  artifacts=$build/artifacts/$t
  log=$build/logs/$t.log
  mkdir -p "$corpus" "$artifacts"
  # A regression input that still fails would stop libFuzzer at its first seed: it is reported here
  # (a finding) and left out, so the run still looks for new ones.
  known=()
  for r in "$build/seeds/$t"/regression-*; do
    [ -e "$r" ] || continue
    if ! "$build/fuzz_replay" "$t" "$r" >/dev/null 2>&1; then
      known+=("$(basename "$r")")
      rm -f "$r"
    fi
  done
  before=$(mktemp)
  ls "$artifacts" | sort >"$before"
  echo "fuzz $t: ${seconds}s, log $log"
  rc=0
  "$exe" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=1048576 -print_final_stats=1 \
         -artifact_prefix="$artifacts/" "$corpus" "$build/seeds/$t" >"$log" 2>&1 || rc=$?
  found=$(ls "$artifacts" | sort | comm -13 "$before" - | grep -E '^(crash|leak|timeout|oom)-' || true)
  slow=$(ls "$artifacts" | sort | comm -13 "$before" - | grep -c '^slow-unit-' || true)
  rm -f "$before"
  n_found=$(printf '%s' "$found" | grep -c . || true)
  cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$log" | tail -n 1 || true)
  line=$(printf 'fuzz %-11s %s execs (%s/s), %s, %s new inputs, corpus %s files, peak RSS %s MB, slow %s, findings %s' \
         "$t" "$(final_stat number_of_executed_units "$log")" "$(final_stat average_exec_per_sec "$log")" "${cov:-cov: ?}" \
         "$(final_stat new_units_added "$log")" "$(ls "$corpus" | wc -l)" "$(final_stat peak_rss_mb "$log")" "$slow" "$n_found")
  if [ "$rc" -ne 0 ] || [ "$n_found" -gt 0 ]; then
    status=1
    line+=" (exit $rc): $(grep -m1 -E 'ERROR: (AddressSanitizer|LeakSanitizer|libFuzzer)|runtime error:|==[0-9]+== ?ERROR' "$log" || echo 'see the log')"
    for f in $found; do line+=$'\n'"    $artifacts/$f"; done
  fi
  if [ ${#known[@]} -gt 0 ]; then
    status=1
    line+=$'\n'"    still failing, left out of the run (tests/fuzz/regressions/$t/): ${known[*]/#regression-/}"
  fi
  echo "$line"
  summary+=("$line")
done

echo
echo "fuzz summary (${seconds}s per target; artifacts under $build/artifacts/):"
printf '%s\n' "${summary[@]}"
exit $status
