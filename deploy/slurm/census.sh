#!/usr/bin/env bash
# A census on Slurm (docs/census.md):
#
#   deploy/slurm/census.sh <list.toml> <shards> <out> [--behavior]
#
# submits the shards as one job array (task k runs
# `verity census <list.toml> --shard k/<shards> [--behavior]`), the merge as a job that
# starts once every task succeeded (afterok; cancelled if one failed), and
# waits for both. <out>, new or empty and on a file system every node sees,
# receives shard-<k>/ (each shard's census), logs/ (each job's output) and
# census/ (the merged census, there only once the merge succeeded).
#
# Exit 0 once <out>/census is written; 1 when a shard or the merge failed
# (with the end of its log) or Slurm refused the jobs; 2 for bad arguments.
#
# The jobs run offline in the directory this is started from: prepare the
# list's published packages there first (`./verity census prepare
# <list.toml> --jobs 4`, the one networked step, into .verity/census/).
# sbatch's own variables (SBATCH_PARTITION, SBATCH_TIMELIMIT, ...) apply to
# every job; VERITY_CENSUS_JOBS (default 1) servers are audited at once in
# each task.
set -euo pipefail

# Inside a job, sbatch runs a copy of this script with these arguments.
case "${1-}" in
--shard-job) # <verity> <list> <shards> <out> <jobs> [--behavior]
  k=${SLURM_ARRAY_TASK_ID:?not a Slurm array task}
  exec "$2" census "$3" --shard "$k/$4" --jobs "$6" --out "$5/shard-$k" ${7:+"$7"}
  ;;
--merge-job) # <verity> <shards> <out>
  dirs=()
  for ((k = 1; k <= $3; k++)); do dirs+=("$4/shard-$k"); done
  "$2" census merge "${dirs[@]}" --out "$4/census.partial"
  exec mv -T -- "$4/census.partial" "$4/census"
  ;;
esac

usage() {
  echo "census.sh: $1" >&2
  exit 2
}
[ $# -eq 3 ] || { [ $# -eq 4 ] && [ "$4" = --behavior ]; } ||
  usage "expected 3 arguments and an optional --behavior, got $# (usage: deploy/slurm/census.sh <list.toml> <shards> <out> [--behavior])"
list=$1 shards=$2 out=$3 behavior=${4-} jobs=${VERITY_CENSUS_JOBS:-1}
[[ -f $list && -r $list ]] || usage "list $(printf %q "$list"): not a readable file"
[[ $shards =~ ^[1-9][0-9]{0,4}$|^100000$ ]] ||
  usage "shards $(printf %q "$shards"): expected a whole number from 1 to 100000"
[[ $jobs =~ ^[1-9][0-9]{0,2}$ ]] ||
  usage "VERITY_CENSUS_JOBS $(printf %q "$jobs"): expected a whole number from 1 to 999"
# sbatch reads % and \ in a log path as file-name patterns.
[[ $out != *[%\\[:cntrl:]]* ]] ||
  usage "out $(printf %q "$out"): a path with %, \\ or a control character cannot name Slurm's logs"
if [ -e "$out" ] && { [ ! -d "$out" ] || [ -n "$(ls -A -- "$out")" ]; }; then
  usage "out $(printf %q "$out"): exists and is not an empty directory"
fi
for cmd in sbatch squeue scancel; do
  command -v "$cmd" >/dev/null || { echo "census.sh: $cmd not found: run this on a Slurm submit host" >&2; exit 1; }
done
[[ $list == /* ]] || list=$PWD/$list
[[ $out == /* ]] || out=$PWD/$out
verity=$(cd -- "$(dirname -- "$0")/../.." && pwd)/verity
mkdir -p -- "$out/logs"

array=$(sbatch --parsable --job-name=verity-census --array="1-$shards" \
  --output="$out/logs/shard-%a.log" -- "$0" --shard-job "$verity" "$list" "$shards" "$out" "$jobs" ${behavior:+"$behavior"}) ||
  { rmdir -- "$out/logs"; echo "census.sh: sbatch refused the shard array (its error is above)" >&2; exit 1; }
array=${array%%;*}
# shellcheck disable=SC2317 # called by the traps below
cancel() {
  scancel -- "$array" ${merge:+"$merge"}
  exit "$1"
}
trap 'cancel 130' INT
trap 'cancel 143' TERM
merge=$(sbatch --parsable --job-name=verity-census-merge --dependency="afterok:$array" --kill-on-invalid-dep=yes \
  --output="$out/logs/merge.log" -- "$0" --merge-job "$verity" "$shards" "$out") ||
  { scancel -- "$array"; echo "census.sh: sbatch refused the merge job (its error is above)" >&2; exit 1; }
merge=${merge%%;*}
echo "census.sh: shards: job array $array ($shards tasks); merge: job $merge; logs in $out/logs"

# Wait until neither is pending or running (squeue lists only those).
failures=0
while :; do
  if left=$(squeue --noheader --jobs="$array,$merge" --format=%i); then
    [ -z "$left" ] && break
    failures=0
  elif ((++failures >= 30)); then
    echo "census.sh: squeue failed for 30 s; jobs $array and $merge may still run" >&2
    exit 1
  fi
  sleep 1
done

if [ -d "$out/census" ]; then
  echo "census.sh: merged census in $out/census"
  exit 0
fi
tail_of() {
  if [ -f "$1" ]; then tail -n 20 -- "$1" >&2; else echo "  (no log: it never started)" >&2; fi
}
failed=0
for ((k = 1; k <= shards; k++)); do
  [ -f "$out/shard-$k/census.json" ] && continue
  failed=$((failed + 1))
  echo "census.sh: shard $k/$shards failed; the end of $out/logs/shard-$k.log:" >&2
  tail_of "$out/logs/shard-$k.log"
done
if [ "$failed" -eq 0 ]; then
  echo "census.sh: the merge failed; the end of $out/logs/merge.log:" >&2
  tail_of "$out/logs/merge.log"
fi
exit 1
