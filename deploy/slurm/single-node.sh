#!/usr/bin/env bash
# A private single-node Slurm cluster in one directory, for trying
# deploy/slurm/census.sh on one machine (and for its test):
#
#   deploy/slurm/single-node.sh start <dir>   # then: export SLURM_CONF=<dir>/slurm.conf
#   deploy/slurm/single-node.sh stop <dir>
#
# `start` writes <dir> (new or empty) with its own slurm.conf, munge key
# and socket, state and spool directories and logs, starts munged,
# slurmctld and slurmd on two free ports (no systemd, nothing in /etc or
# /run), waits until the node is idle and prints the SLURM_CONF line.
# `stop` cancels the cluster's jobs, stops the three daemons by their pid
# files and waits until each has exited. Needs root and Debian's slurm-wlm
# (22.05); the settings are ones that work without cgroups (docs/census.md).
# munged insists that every directory above <dir> be searchable by all.
# Exit 2 for bad arguments, 1 when a daemon does not come up or go down.
set -euo pipefail

fail() {
  echo "single-node.sh: $1" >&2
  exit "${2:-1}"
}
[[ $# -eq 2 && ($1 == start || $1 == stop) ]] ||
  fail "usage: deploy/slurm/single-node.sh start|stop <dir>" 2
# slurm.conf cannot quote other characters.
[[ $2 =~ ^[A-Za-z0-9._/-]+$ ]] ||
  fail "dir $(printf %q "$2"): use letters, digits and . _ - / only" 2
dir=$2
[[ $dir == /* ]] || dir=$PWD/$dir
# A Unix socket's path has at most 107 bytes.
[ ${#dir} -le 88 ] || fail "dir $dir: longer than 88 bytes (munge's socket path would not fit)" 2
export SLURM_CONF=$dir/slurm.conf

# Wait up to 20 s for a command to succeed.
until_ok() {
  local what=$1
  shift
  for _ in $(seq 100); do "$@" >/dev/null 2>&1 && return 0; sleep 0.2; done
  fail "no $what after 20 s; see the logs in $dir"
}
queue_empty() { local q; q=$(squeue --noheader) && [ -z "$q" ]; }
node_idle() { [ "$(sinfo --noheader --format=%t)" = idle ]; }

if [ "$1" = stop ]; then
  [ -f "$SLURM_CONF" ] || fail "$dir holds no cluster (no slurm.conf)" 2
  if [ -f "$dir/slurmctld.pid" ] && kill -0 "$(cat "$dir/slurmctld.pid")" 2>/dev/null; then
    scancel --user="$(id -un)" || true
    for _ in $(seq 100); do queue_empty 2>/dev/null && break; sleep 0.2; done
  fi
  pids=()
  for f in slurmd.pid slurmctld.pid munge/munged.pid; do
    [ -f "$dir/$f" ] || continue
    pid=$(cat "$dir/$f")
    # Only a daemon of this cluster: a stale pid file may name another process.
    tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$dir/" && pids+=("$pid")
  done
  [ ${#pids[@]} -eq 0 ] || kill -TERM "${pids[@]}" 2>/dev/null || true
  for pid in "${pids[@]}"; do
    for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || continue 2; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    echo "single-node.sh: pid $pid ignored SIGTERM for 10 s; killed" >&2
  done
  exit 0
fi

if [ -e "$dir" ] && { [ ! -d "$dir" ] || [ -n "$(ls -A -- "$dir")" ]; }; then
  fail "dir $dir: exists and is not an empty directory" 2
fi
[ "$(id -u)" -eq 0 ] || fail "start needs root (slurmd runs jobs as their users)" 2
for cmd in munged munge slurmctld slurmd sinfo; do
  command -v "$cmd" >/dev/null || fail "$cmd not found: apt-get install -y slurm-wlm" 2
done
# munged wants its socket's directories searchable by everyone.
mkdir -p -- "$dir"
chmod 0755 -- "$dir"
mkdir -m 0755 -- "$dir/munge" "$dir/state" "$dir/spool"
head -c 1024 /dev/urandom >"$dir/munge/munge.key"
chmod 0400 -- "$dir/munge/munge.key"

# A port nothing listens on (below the ephemeral range), other than $1.
free_port() {
  local p
  while :; do
    p=$((20000 + RANDOM % 10000))
    if [ "$p" != "${1-}" ] && ! (: <"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then
      echo "$p"
      return
    fi
  done
}
ctld_port=$(free_port)
slurmd_port=$(free_port "$ctld_port")
host=$(hostname -s)
cat >"$SLURM_CONF" <<EOF
ClusterName=single-node-$ctld_port
SlurmctldHost=$host
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.socket
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
NodeName=$host CPUs=$(nproc) State=UNKNOWN
PartitionName=main Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF

# From here on, a failure stops whatever started.
trap '[ $? -eq 0 ] || "$0" stop "$dir" >/dev/null 2>&1' EXIT
munged --key-file="$dir/munge/munge.key" --socket="$dir/munge/munge.socket" \
  --pid-file="$dir/munge/munged.pid" --log-file="$dir/munge/munged.log" \
  --seed-file="$dir/munge/munged.seed" ||
  fail "munged did not start; see $dir/munge/munged.log"
until_ok munged munge --socket="$dir/munge/munge.socket" --no-input
slurmctld -f "$SLURM_CONF" >>"$dir/slurmctld.log" 2>&1 || fail "slurmctld did not start; see $dir/slurmctld.log"
slurmd -f "$SLURM_CONF" >>"$dir/slurmd.log" 2>&1 || fail "slurmd did not start; see $dir/slurmd.log"
until_ok "idle node" node_idle
echo "export SLURM_CONF=$SLURM_CONF"
