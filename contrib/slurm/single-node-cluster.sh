#!/bin/bash
# A throw-away single-node Slurm cluster in a directory: this host is the
# only node (its real CPU count), munged, slurmctld and slurmd run from DIR
# with their state, spool, sockets and logs there; no cgroups
# (proctrack/linuxproc, task/none), no accounting. For trying the job-array
# recipe on one machine and for hwcal's CI test (crates/cli/tests/fleet.rs).
# Needs root (slurmd runs as root) and Debian's slurm-wlm and munge.
#
#   contrib/slurm/single-node-cluster.sh start DIR   # prints SLURM_CONF=DIR/slurm.conf
#   SLURM_CONF=DIR/slurm.conf sbatch ...
#   contrib/slurm/single-node-cluster.sh stop DIR    # stops the daemons; DIR is left to the caller
# Exit status of start: 0 up, 1 failed (daemons stopped again), 3 cannot run
# here (not root, or the packages are missing: the reason on stderr).
set -euo pipefail

cmd=${1:?usage: $0 start|stop DIR}
dir=${2:?usage: $0 start|stop DIR}
dir=$(cd "$dir" && pwd)

stop() {
  if [ -f "$dir/slurm.conf" ]; then
    SLURM_CONF="$dir/slurm.conf" scontrol shutdown >/dev/null 2>&1 || true
  fi
  # Whatever did not go down with the shutdown: by its own pid file.
  for pidfile in "$dir/slurmd.pid" "$dir/slurmctld.pid" "$dir/munged.pid"; do
    if [ -f "$pidfile" ]; then
      pid=$(cat "$pidfile" 2>/dev/null || true)
      for _ in $(seq 50); do
        [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || break
        kill "$pid" 2>/dev/null || true
        sleep 0.1
      done
      [ -n "$pid" ] && kill -9 "$pid" 2>/dev/null || true
      rm -f "$pidfile"
    fi
  done
}

case "$cmd" in
stop)
  stop
  exit 0
  ;;
start) ;;
*)
  echo "usage: $0 start|stop DIR" >&2
  exit 2
  ;;
esac

for exe in munged slurmctld slurmd scontrol sinfo; do
  command -v "$exe" >/dev/null 2>&1 || { echo "SKIP: $exe not installed (apt-get install slurm-wlm munge)" >&2; exit 3; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: slurmd needs root" >&2; exit 3; }

# Ports: SLURMCTLD_PORT / SLURMD_PORT where given (the test picks free
# ones), else a random pair.
ctld_port=${SLURMCTLD_PORT:-$((20000 + RANDOM % 20000))}
slurmd_port=${SLURMD_PORT:-$((ctld_port + 1))}
host=$(hostname -s)
cpus=$(nproc --all)
mkdir -p "$dir/state" "$dir/spool"
chmod 755 "$dir"  # munged wants its socket's directory searchable by all
head -c 1024 /dev/urandom >"$dir/munge.key"
chmod 600 "$dir/munge.key"
munged --force --socket="$dir/munge.sock" --key-file="$dir/munge.key" --pid-file="$dir/munged.pid" \
  --log-file="$dir/munged.log" --seed-file="$dir/munged.seed"

cat >"$dir/slurm.conf" <<CONF
ClusterName=hwcaltest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$dir/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SwitchType=switch/none
MpiDefault=none
MailProg=/bin/true
ReturnToService=2
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus State=UNKNOWN
# A node that is down, as some of any fleet's are, in a partition of its
# own with this one ("fleet", never given jobs): the recipe's node count
# must leave it out.
NodeName=ghost NodeAddr=127.0.0.2 CPUs=1 State=DOWN Reason=down-for-the-test
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
PartitionName=fleet Nodes=$host,ghost Default=NO MaxTime=INFINITE State=UP
CONF

export SLURM_CONF="$dir/slurm.conf"
slurmctld -f "$SLURM_CONF"
slurmd -f "$SLURM_CONF"
# Ready when the node reports idle (30 s at most).
for _ in $(seq 150); do
  if [ "$(sinfo -h -n "$host" -o %t 2>/dev/null)" = idle ]; then
    echo "SLURM_CONF=$SLURM_CONF"
    exit 0
  fi
  sleep 0.2
done
echo "the node did not come up; logs in $dir" >&2
tail -n 20 "$dir/slurmctld.log" "$dir/slurmd.log" >&2 || true
stop
exit 1
