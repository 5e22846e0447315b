#!/usr/bin/env bash
# gpucal fleet run --rails 2 on the local Slurm (local_cluster.sh), 4 nodes of 2 ranks each: the
# path of one node's second rank (rail 1: its MPI ports, as a GPU's own NIC) is rate-limited to
# RATE (default 200mbit) both ways, the rest of that node and every other rank untouched. The
# report must name exactly that node, for rail 1 (kind rail, metric rail1_bw_gbps), and nothing
# else: no other node, no link, no other rail.
# Usage: slurm_rails.sh GPUCAL WORK_DIR [RATE]   (exit 77 where the cluster cannot start)
set -euo pipefail
GPUCAL=$(realpath "$1")
WORK=$(realpath -m "$2")
RATE=${3:-200mbit}
HERE=$(cd "$(dirname "$0")" && pwd)
CLUSTER="$HERE/local_cluster.sh"
export GPUCAL_CLUSTER_DIR="$WORK/cluster" GPUCAL_CLUSTER_PREFIX=gr GPUCAL_CLUSTER_SUBNET=10.213.11
export GPUCAL_CLUSTER_CTL_PORT=16857

cleanup() { bash "$CLUSTER" down >/dev/null 2>&1 || true; }
cleanup
rm -rf "$WORK" && mkdir -p "$WORK"
trap cleanup EXIT
set +e
bash "$CLUSTER" up 4
rc=$?
set -e
[ $rc -eq 0 ] || exit $rc
eval "$(bash "$CLUSTER" env)"
bash "$CLUSTER" fault rail grnode3 1 "$RATE"

# The link phase only (the node phase is the planted-fault test's), with the operator's host
# settings of docs/operators.md.
cat > "$WORK/rails.sbatch" <<JOB
#!/bin/bash
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1
exec "$GPUCAL" fleet run "\$1" --suite fleet-smoke --backend host --phases link --rails 2 --pairs-at-once 1 \\
  --link-timeout 90 --probe-timeout 20 --statistic best --min-deviation 0.5 \\
  --ignore-metrics p2p_bw_gbps,p2p_latency_us,internode_latency_us,allreduce_busbw_gbps_n2_nodes2
JOB
start=$(date +%s)
set +e
timeout 900 sbatch --wait -N 4 --ntasks-per-node 2 -o "$WORK/rails.out" "$WORK/rails.sbatch" "$WORK/fleet" > "$WORK/sbatch.out" 2>&1
set -e
echo "fleet run: $(( $(date +%s) - start )) s"
python3 - "$WORK/fleet" grnode3 <<'PY'
import json, os, sys
fleet, planted = sys.argv[1], sys.argv[2]
try:
    report = json.load(open(os.path.join(fleet, 'report.json')))
except (OSError, ValueError) as e:
    sys.exit(f'FAIL: no report ({e}); see {fleet}/../rails.out')
manifest = json.load(open(os.path.join(fleet, 'fleet.json')))
bad_steps = [(s['nodes'], s.get('detail'), s['status']) for s in manifest['steps'] if s['status'] != 'ok']
suspects = [(s['subject'], s['kind'], s['metric']) for s in report['suspects']]
for s in report['suspects']:
    print(f"named: {s['subject']} [{s['kind']}] {s['metric']}: {s['reason']}")
for t in report['link_capacity']:
    if t['metric'].startswith('rail'):
        print(t['metric'], ', '.join(f"{r['subject']} {r['value']:.3g}" for r in t['rows']))
problems = []
if manifest.get('rails') != 2:
    problems.append(f"manifest rails {manifest.get('rails')}")
if bad_steps:
    problems.append(f'steps not ok: {bad_steps}')
if suspects != [(planted, 'rail', 'rail1_bw_gbps')]:
    problems.append(f'suspects {suspects}, expected exactly [({planted!r}, rail, rail1_bw_gbps)]')
if report['suspect_links']:
    problems.append(f"links named: {report['suspect_links']}")
for p in problems:
    print('FAIL:', p)
sys.exit(1 if problems else 0)
PY
