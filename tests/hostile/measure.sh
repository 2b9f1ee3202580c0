#!/usr/bin/env bash
# Times a checkpoint reader on each hostile file (make_hostile.py) with /usr/bin/time -v: exit code,
# wall seconds, peak RSS, and the reader's one line. Usage: measure.sh READER FOLDER [TIMEOUT_S]
# READER is a command taking the checkpoint path: build/bin/checkpoint_spectra's --checkpoint, or
# a build of load_checkpoint.cpp against any version of the readers.
set -u
reader=$1 dir=$2 limit=${3:-120}
printf '%-28s %4s %9s %11s  %s\n' file exit wall_s peak_rss_mb message
for f in many_keys.safetensors header_limit.safetensors metadata_limit.safetensors index forged_600k.npz forged_20m.npz crc_flip.npz; do
  log=$(mktemp)
  timeout "$limit" /usr/bin/time -v $reader "$dir/$f" >"$log.out" 2>"$log"
  code=$?
  wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, t, ":"); s = 0; for (i = 1; i <= n; ++i) s = s * 60 + t[i]; print s}' "$log")
  rss=$(awk -F': ' '/Maximum resident set size/ {printf "%.0f", $2 / 1024}' "$log")
  msg=$(grep -v -E '^\s|Command (being timed|exited)' "$log" | head -n 1 | cut -c1-150)
  [ "$code" = 124 ] && msg="timed out after ${limit} s"
  printf '%-28s %4s %9s %11s  %s\n' "$f" "$code" "${wall:--}" "${rss:--}" "${msg:-$(head -n 1 "$log.out")}"
  rm -f "$log" "$log.out"
done
