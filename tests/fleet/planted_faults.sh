#!/usr/bin/env bash
# gpucal fleet run on a real Slurm cluster of network namespaces (tests/fleet/local_cluster.sh)
# with three planted faults; the report must name exactly those nodes, and no other, and --drain
# must drain exactly those in Slurm (the finding as the reason):
#   gcnode2  its link rate-limited to 8 Mbit/s (tc tbf on both ends of its veth)
#   gcnode3  its CPU capped at 2% of one core (cgroup v1 cpu.cfs_quota_us): a slow GEMM
#   gcnode6  stops answering mid-run: every process in it SIGSTOPped once the link phase starts
# SET subtle plants faults a fleet's fastest samples do not show, the nodes it must name:
#   gcnode3  its CPU capped at 30% of one core: named by its health check (cpu_quota)
#   gcnode5  its slurmd killed before the job: named failed, with srun's error, and left out of
#            the link and fleet phases once it does not answer a probe
# and one it must not name: gcnode2's link capped at 16 Gbit/s, inside what healthy pairs reach on
# 2 shared cores (a third below the median at most; the host settings name a third of it).
# SET lossy plants a lossy port, named as the node (its half round trip first), never as its
# healthy peers' links:
#   gcnode4  6% of the packets into and out of it dropped (nftables, numgen random)
# Usage: planted_faults.sh GPUCAL WORK_DIR [RUNS [SET]]   (RUNS fleet runs, each checked; SET gross
# (default), subtle or lossy; exit 1 when any run misses a fault or names another node; 77 where the
# cluster cannot start)
# Results: WORK_DIR/run<i>/ (the fleet folder and its report), WORK_DIR/results.md (one line per run).
set -euo pipefail
GPUCAL=$(realpath "$1")
WORK=$(realpath -m "$2")
RUNS=${3:-1}
SET=${4:-gross}
case "$SET" in
  gross) EXPECTED=gcnode2,gcnode3,gcnode6 ;;
  subtle) EXPECTED=gcnode3,gcnode5 ;;
  lossy) EXPECTED=gcnode4 ;;
  *) echo "SET: gross, subtle or lossy, got '$SET'" >&2; exit 2 ;;
esac
HERE=$(cd "$(dirname "$0")" && pwd)
CLUSTER="$HERE/local_cluster.sh"
export GPUCAL_CLUSTER_DIR="$WORK/cluster"
NODES=6

# shellcheck source=cluster_session.sh
source "$HERE/cluster_session.sh"
cluster_session "$WORK" "$NODES"

# The job an operator would submit (docs/operators.md), with this machine's settings: 6 nodes
# share 2 cores with whatever else runs, so ranks yield when idle (OMPI_MCA_mpi_yield_when_idle),
# pairs are measured one at a time, each figure comes from its fastest sample (--statistic best:
# other load stretches samples at random, a planted fault slows every one), and the figures the
# scheduler rather than the hardware decides are left out of the ranking: a half round trip and a
# copy between two threads of one node, and the pair allreduce, whose healthy pairs differ tenfold
# here. The half round trip between nodes is ranked: a lossy port shows there first. A figure is
# named only below a third of the median (--min-deviation 0.67): healthy nodes here spread up to
# 2.2x (a node's two-thread allreduce at 0.66 against a median of 1.45 GB/s, its copy at 6.2
# against 9.5), while the planted faults are 7 to 3,000 times below.
cat > "$WORK/nightly.sbatch" <<JOB
#!/bin/bash
#SBATCH --job-name=gpucal-fleet
#SBATCH --no-kill
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1
exec "$GPUCAL" fleet run "\$1" --suite fleet-smoke --backend host --pairs-at-once 1 \\
  --link-timeout 60 --probe-timeout 20 --straggler-min 300 --statistic best --min-deviation 0.67 \\
  --ignore-metrics p2p_bw_gbps,p2p_latency_us,allreduce_busbw_gbps_n2_nodes2 \\
  --history "$WORK/history.sqlite" --drain
JOB

# Bounded wait: up to $1 seconds for the condition "${@:2}".
wait_until() {
  local limit=$1; shift
  for ((i = 0; i < limit * 2; i++)); do
    if "$@"; then return 0; fi
    sleep 0.5
  done
  return 1
}

failed=0
echo "| run | seconds | named nodes | named links | verdict |" > "$WORK/results.md"
echo "| --- | --- | --- | --- | --- |" >> "$WORK/results.md"
for ((run = 1; run <= RUNS; run++)); do
  out="$WORK/run$run"
  bash "$CLUSTER" fault clear
  # The previous run's --drain: every node back in service.
  for n in $(seq -f 'gcnode%g' 1 "$NODES"); do scontrol update NodeName="$n" State=RESUME >/dev/null 2>&1 || true; done
  # ... and idle, each answering slurmctld, before the next faults (a node resumed while its slurmd
  # is killed would be marked not responding, and the job would wait for it).
  wait_until 60 sh -c "[ \"\$(sinfo -h -N -t idle -o %T | grep -vc '[*~#]')\" -ge $NODES ]" ||
    echo "run $run: not every node idle and answering: $(sinfo -h -N -o '%N %T' | tr '\n' ' ')" >&2
  if [ "$SET" = gross ]; then
    bash "$CLUSTER" fault link gcnode2 8mbit
    bash "$CLUSTER" fault cpu gcnode3 2
  elif [ "$SET" = lossy ]; then
    bash "$CLUSTER" fault loss gcnode4 6
  else
    bash "$CLUSTER" fault link gcnode2 16gbit
    bash "$CLUSTER" fault cpu gcnode3 30
    bash "$CLUSTER" fault slurmd gcnode5
  fi
  start=$(date +%s)
  sbatch --wait -N "$NODES" -o "$WORK/run$run.out" "$WORK/nightly.sbatch" "$out" > "$WORK/run$run.sbatch" 2>&1 &
  job=$!
  # Mid-run: the node phase has ended once the link phase makes its first folder.
  if ! wait_until 900 test -d "$out/links"; then
    echo "run $run: the link phase did not start within 900 s" >&2
  elif [ "$SET" = gross ]; then
    bash "$CLUSTER" fault stop gcnode6
  fi
  wait_until 1200 test -s "$out/report.json" || echo "run $run: no report within 1200 s" >&2
  bash "$CLUSTER" fault clear   # gcnode6 answers again, so the job can complete
  wait_until 120 sh -c "! kill -0 $job 2>/dev/null" || { scancel --full -u root 2>/dev/null || true; }
  wait "$job" 2>/dev/null || true
  seconds=$(( $(date +%s) - start ))
  all_nodes=$(seq -s, -f 'gcnode%g' 1 "$NODES")
  if python3 "$HERE/check_planted.py" "$out" "$EXPECTED" "$run" "$seconds" "$all_nodes" >> "$WORK/results.md"; then
    echo "run $run: ok (${seconds} s)"
  else
    echo "run $run: FAILED (${seconds} s); see $out/report.md" >&2
    failed=1
  fi
done
cat "$WORK/results.md"
exit $failed
