# Sourced by the local Slurm tests (planted_faults.sh, slurm_link_fault.sh, slurm_health.sh):
# `cluster_session WORK NODES` stops what an earlier, killed run left, empties WORK, starts NODES
# nodes with local_cluster.sh ($CLUSTER, under the caller's GPUCAL_CLUSTER_* settings), stops them
# when the caller exits, and exports what a Slurm client needs. Where the cluster cannot start the
# caller exits with local_cluster.sh's status (77: skipped).
cluster_session() {
  local work=$1 nodes=$2 rc
  cleanup() { bash "$CLUSTER" down >/dev/null 2>&1 || true; }
  cleanup
  rm -rf "$work" && mkdir -p "$work"
  trap cleanup EXIT
  set +e
  bash "$CLUSTER" up "$nodes"
  rc=$?
  set -e
  [ $rc -eq 0 ] || exit $rc
  eval "$(bash "$CLUSTER" env)"
}
