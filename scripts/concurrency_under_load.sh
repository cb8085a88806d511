#!/usr/bin/env bash
# Concurrent-idempotence verdicts at --jobs 1 and --jobs 2, first as the
# machine is, then with two CPU hogs (sha256sum /dev/zero, one per core)
# running beside verity. Prints one line per (load, jobs, fixture) with the
# concurrent verdicts, the attempt counts and the expectation check.
# Usage: scripts/concurrency_under_load.sh [fixture...]
set -u
cd "$(dirname "$0")/.."
fixtures=("$@")
[ ${#fixtures[@]} -gt 0 ] || fixtures=(liar-concurrent honest-idempotent startup-writer)
runs_dir=$(mktemp -d)
for load in none hog; do
  hogs=()
  if [ "$load" = hog ]; then
    for _ in 1 2; do timeout 3600 sha256sum /dev/zero >/dev/null & hogs+=($!); done
  fi
  for jobs in 1 2; do
    for f in "${fixtures[@]}"; do
      line=$(deno run -A main.ts run "$f" --jobs "$jobs" --runs-dir "$runs_dir" 2>/dev/null |
        grep -E "concurrent_idempotence|attempts:|expectations" | tr -s ' ' | tr '\n' '|')
      echo "load=$load jobs=$jobs $f: $line"
    done
  done
  [ ${#hogs[@]} -gt 0 ] && kill "${hogs[@]}" 2>/dev/null
done
rm -rf "$runs_dir"
