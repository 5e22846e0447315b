#!/usr/bin/env bash
# gpucal check --health as Slurm's HealthCheckProgram on the local cluster (local_cluster.sh,
# HealthCheckInterval 5 s): a node whose health check finds a fault (a NIC trained at x8 of x16, in
# a recorded sysfs tree) is drained by slurmd's own run of it, `sinfo -R` giving gpucal's reason;
# its healthy peer is not. Once the fault is cleared and the node resumed, the check passes and the
# node stays in service. Also times the check as a prolog would run it (it must take well under
# Slurm's 10 s budget for a prolog).
# Usage: slurm_health.sh GPUCAL FIXTURES_DIR WORK_DIR   (exit 77 where the cluster cannot start)
set -euo pipefail
GPUCAL=$(realpath "$1")
FIX=$(realpath "$2")
WORK=$(realpath -m "$3")
HERE=$(cd "$(dirname "$0")" && pwd)
CLUSTER="$HERE/local_cluster.sh"
export GPUCAL_CLUSTER_DIR="$WORK/cluster" GPUCAL_CLUSTER_PREFIX=gh GPUCAL_CLUSTER_SUBNET=10.213.9
export GPUCAL_CLUSTER_CTL_PORT=16837 GPUCAL_CLUSTER_HEALTH_INTERVAL=5

# shellcheck source=cluster_session.sh
source "$HERE/cluster_session.sh"
cluster_session "$WORK" 2
fail() { echo "FAIL: $*"; sinfo -R; for f in "$GPUCAL_CLUSTER_DIR"/log/health-*.log; do echo "== $f"; tail -5 "$f"; done; exit 1; }
reason_of() { sinfo -R -h -n "$1" -o '%E'; }
state_of() { sinfo -h -N -n "$1" -o '%T'; }
# Bounded: up to $1 seconds for the command in "${@:2}" to succeed.
wait_until() { local s=$1; shift; for ((i = 0; i < s * 2; i++)); do if "$@"; then return 0; fi; sleep 0.5; done; return 1; }
drained() { [ -n "$(reason_of "$1")" ]; }

check="$GPUCAL check --health --drain --sysfs"
bash "$CLUSTER" health ghnode1 "$check $FIX/sysfs-healthy"
bash "$CLUSTER" health ghnode2 "$check $FIX/sysfs-narrow-nic"
wait_until 60 drained ghnode2 || fail "ghnode2 not drained within 60 s of its health check failing"
reason=$(reason_of ghnode2)
case "$reason" in
  "gpucal health: pcie_link 0000:3b:00.0 16.0 GT/s PCIe x8 of 16.0 GT/s PCIe x16"*) ;;
  *) fail "ghnode2's drain reason is '$reason'" ;;
esac
echo "ok   ghnode2 drained by its HealthCheckProgram: $(state_of ghnode2), reason '$reason'"
sleep 11  # two more intervals: the healthy node's check has run again
drained ghnode1 && fail "ghnode1 (healthy) was drained: $(reason_of ghnode1)"
echo "ok   ghnode1 (healthy) in service: $(state_of ghnode1)"

# Cleared: the node's check passes again, and a resumed node stays in service.
bash "$CLUSTER" health ghnode2 "$check $FIX/sysfs-healthy"
scontrol update nodename=ghnode2 state=resume
sleep 11
drained ghnode2 && fail "ghnode2 drained again after its fault was cleared: $(reason_of ghnode2)"
case "$(state_of ghnode2)" in idle*|mixed*|alloc*) ;; *) fail "ghnode2 is $(state_of ghnode2) after resume" ;; esac
echo "ok   ghnode2, cleared and resumed, stays in service: $(state_of ghnode2)"

# A node whose CPU is capped by its cgroup (30% of a core for everything in its namespace, slurmd
# and so its health check with it), judged on this machine's own /sys and /proc: drained by the
# cpu_quota check, gpucal's reason in Slurm. Skipped where the kernel has no cgroup v1 cpu controller.
set +e
bash "$CLUSTER" fault cpu ghnode1 30
rc=$?
set -e
[ $rc -eq 0 ] || [ $rc -eq 77 ] || fail "could not cap ghnode1's CPU (exit $rc)"
if [ $rc -eq 0 ]; then
  bash "$CLUSTER" health ghnode1 "$GPUCAL check --health --drain"
  wait_until 60 drained ghnode1 || fail "ghnode1 (CPU capped at 30%) not drained within 60 s"
  reason=$(reason_of ghnode1)
  case "$reason" in
    "gpucal health: cpu_quota "*"0.30 CPUs"*) ;;
    *) fail "ghnode1's drain reason is '$reason'" ;;
  esac
  echo "ok   ghnode1 (CPU capped by its cgroup) drained: reason '$reason'"
  bash "$CLUSTER" fault clear
fi

# As a prolog would run it: this machine's own /sys, timed (a VM exposes few of the checks, and
# no NVIDIA driver).
start=$EPOCHREALTIME
set +e
"$GPUCAL" check --health --sysfs /sys >/dev/null 2>&1
set -e
seconds=$(awk -v a="$start" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.3f", b - a }')
echo "ok   gpucal check --health on this machine's /sys took $seconds s"
awk -v s="$seconds" 'BEGIN { exit !(s < 10) }' || fail "the health check took $seconds s, over a prolog's 10 s"
