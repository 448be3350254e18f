#!/usr/bin/env bash
# A one-node Slurm cluster on this machine, for the tests and for trying the suite's
# Slurm executor without a cluster: Debian's slurm-wlm and munge, a generated
# slurm.conf (one partition, "debug", of this machine's CPUs and memory), slurmctld and
# slurmd started and stopped by this script.  Needs root (the daemons run as root).
#
#   scripts/slurm_local.sh up [--install]   start it (--install: apt-get the packages
#                                           when they are missing); prints the line to
#                                           export SLURM_CONF
#   scripts/slurm_local.sh down             stop the daemons (the state folder is kept)
#   scripts/slurm_local.sh status           up or not, and sinfo
#
# State, logs and slurm.conf: $COMPSUITE_SLURM_STATE (default /tmp/compsuite-slurm).
# Nothing under /etc is changed: the commands find the cluster through SLURM_CONF.
set -euo pipefail

STATE=${COMPSUITE_SLURM_STATE:-/tmp/compsuite-slurm}
CONF=$STATE/slurm.conf
PARTITION=debug

die() { echo "slurm_local: $*" >&2; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "needs root (slurmctld and slurmd run as root here)"; }

have_packages() { command -v slurmctld >/dev/null && command -v slurmd >/dev/null \
                  && command -v sbatch >/dev/null && command -v munged >/dev/null; }

install_packages() {
    command -v apt-get >/dev/null || die "no apt-get: install Slurm (slurmctld, slurmd, sbatch) and munge yourself"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >"$STATE/apt.log" 2>&1 \
        || { apt-get update -q >>"$STATE/apt.log" 2>&1 && \
             DEBIAN_FRONTEND=noninteractive apt-get install -y -q slurm-wlm munge >>"$STATE/apt.log" 2>&1; } \
        || die "apt-get install slurm-wlm munge failed; see $STATE/apt.log"
}

write_conf() {
    local host cpus mem
    host=$(hostname -s)
    cpus=$(getconf _NPROCESSORS_ONLN)   # not nproc: it follows OMP_NUM_THREADS
    mem=$(( $(awk '/MemTotal/ {print $2}' /proc/meminfo) / 1024 - 1024 ))
    mkdir -p "$STATE/spool" "$STATE/ctld"
    cat >"$CONF" <<EOF
# written by scripts/slurm_local.sh: one node, one partition
ClusterName=compsuite-local
SlurmctldHost=$host
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
MpiDefault=none
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# a job over its memory (--mem) is killed, as on a cluster that enforces it: each
# job's processes sampled every second, their shared pages counted once (UsePss: a
# job's processes that share memory are not counted over it)
JobAcctGatherType=jobacct_gather/linux
JobAcctGatherFrequency=task=1
JobAcctGatherParams=OverMemoryKill,UsePss
AccountingStorageType=accounting_storage/none
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
ReturnToService=2
SlurmctldPort=6817
SlurmdPort=6818
SlurmctldPidFile=$STATE/slurmctld.pid
SlurmdPidFile=$STATE/slurmd.pid
SlurmdSpoolDir=$STATE/spool
StateSaveLocation=$STATE/ctld
SlurmctldLogFile=$STATE/slurmctld.log
SlurmdLogFile=$STATE/slurmd.log
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
MinJobAge=300
KillWait=10
# a requeued job (preempted, or at its time limit) may start again after this many
# seconds (default 120)
AuthInfo=cred_expire=10
Waittime=0
DefMemPerCPU=$(( mem / cpus ))
NodeName=$host CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=$PARTITION Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
}

start_munge() {
    if pgrep -x munged >/dev/null; then return; fi
    mkdir -p /etc/munge /var/run/munge /var/lib/munge /var/log/munge
    if [ ! -s /etc/munge/munge.key ]; then
        dd if=/dev/urandom of=/etc/munge/munge.key bs=1024 count=1 status=none
    fi
    chmod 400 /etc/munge/munge.key
    if id munge >/dev/null 2>&1; then
        chown -R munge:munge /etc/munge /var/run/munge /var/lib/munge /var/log/munge
        runuser -u munge -- munged
    else
        munged --force
    fi
}

wait_idle() {
    for _ in $(seq 1 60); do
        if SLURM_CONF=$CONF sinfo -h -o %T 2>/dev/null | grep -qE '^(idle|mixed|allocated)'; then
            return 0
        fi
        sleep 0.5
    done
    die "the node did not come up; see $STATE/slurmctld.log and $STATE/slurmd.log"
}

up() {
    need_root
    mkdir -p "$STATE"
    if ! have_packages; then
        [ "${1:-}" = --install ] || die "Slurm or munge is not installed (slurm-wlm, munge); rerun with --install"
        install_packages
    fi
    write_conf
    start_munge
    if pgrep -x slurmctld >/dev/null; then   # running: read the configuration again
        SLURM_CONF=$CONF scontrol reconfigure >/dev/null 2>&1 || true
    else
        SLURM_CONF=$CONF slurmctld -c
    fi
    pgrep -x slurmd >/dev/null || SLURM_CONF=$CONF slurmd -c
    sleep 1
    SLURM_CONF=$CONF scontrol update nodename="$(hostname -s)" state=resume >/dev/null 2>&1 || true
    wait_idle
    echo "slurm_local: up (partition $PARTITION, $(getconf _NPROCESSORS_ONLN) CPUs); export SLURM_CONF=$CONF"
}

down() {
    need_root
    for d in slurmd slurmctld; do
        if pgrep -x $d >/dev/null; then pkill -x $d || true; fi
    done
    for _ in $(seq 1 20); do
        pgrep -x slurmctld >/dev/null || pgrep -x slurmd >/dev/null || break
        sleep 0.5
    done
    echo "slurm_local: down (state kept in $STATE)"
}

status() {
    if pgrep -x slurmctld >/dev/null && [ -f "$CONF" ]; then
        SLURM_CONF=$CONF sinfo
    else
        echo "slurm_local: not running"
        return 1
    fi
}

case "${1:-}" in
    up) shift; up "$@" ;;
    down) down ;;
    status) status ;;
    *) echo "usage: $0 up [--install] | down | status" >&2; exit 2 ;;
esac
