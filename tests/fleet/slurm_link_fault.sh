#!/usr/bin/env bash
# gpucal fleet run's link phase on the local Slurm (local_cluster.sh), 4 nodes of 2 ranks each,
# with one planted fault, under the operator's host settings of docs/operators.md. The report
# must name exactly the expected suspects (subject, kind, metric), no link and nothing else.
#   slurm_link_fault.sh GPUCAL WORK_DIR "rail grnode3 1 200mbit" grnode3:rail:rail1_bw_gbps
#     the path of one node's second rank (rail 1: its MPI ports, as a GPU's own NIC) at 200
#     Mbit/s both ways, the rest of that node and every other rank untouched (--rails 2)
#   slurm_link_fault.sh GPUCAL WORK_DIR "loss grnode2 6" "grnode2:node links"
#     a lossy port: 6% of grnode2's packets dropped each way; to be named as the node (by whichever
#     figures or failed steps show it), not as the links of its healthy peers. Not a ctest: with
#     4 nodes on 2 shared cores a healthy pair's noise names a false link in some runs, and at 3%
#     the fastest sample (`best`) of some pairs misses every loss (docs/verified.md).
# Usage: slurm_link_fault.sh GPUCAL WORK_DIR FAULT SUBJECT:KIND[:METRIC] [STATISTIC (default best)]
#        (FAULT: local_cluster.sh's `fault` arguments; exit 77 where the cluster cannot start)
set -euo pipefail
GPUCAL=$(realpath "$1")
WORK=$(realpath -m "$2")
FAULT=$3
EXPECT=$4
STATISTIC=${5:-best}
HERE=$(cd "$(dirname "$0")" && pwd)
CLUSTER="$HERE/local_cluster.sh"
export GPUCAL_CLUSTER_DIR="$WORK/cluster" GPUCAL_CLUSTER_PREFIX=gr GPUCAL_CLUSTER_SUBNET=10.213.11
export GPUCAL_CLUSTER_CTL_PORT=16857

# shellcheck source=cluster_session.sh
source "$HERE/cluster_session.sh"
cluster_session "$WORK" 4
# shellcheck disable=SC2086  # FAULT is several words
bash "$CLUSTER" fault $FAULT

# The link phase only (the node phase is the planted-fault test's), with the operator's host
# settings of docs/operators.md.
cat > "$WORK/fleet.sbatch" <<JOB
#!/bin/bash
export OPENBLAS_NUM_THREADS=1 OMP_NUM_THREADS=1 OMPI_MCA_mpi_yield_when_idle=1
exec "$GPUCAL" fleet run "\$1" --suite fleet-smoke --backend host --phases link --rails 2 --pairs-at-once 1 \\
  --link-timeout 90 --probe-timeout 20 --statistic $STATISTIC --min-deviation 0.67 \\
  --ignore-metrics p2p_bw_gbps,p2p_latency_us,allreduce_busbw_gbps_n2_nodes2
JOB
start=$(date +%s)
set +e
timeout 900 sbatch --wait -N 4 --ntasks-per-node 2 -o "$WORK/fleet.out" "$WORK/fleet.sbatch" "$WORK/fleet" > "$WORK/sbatch.out" 2>&1
set -e
echo "fleet run: $(( $(date +%s) - start )) s"
python3 - "$WORK/fleet" "$EXPECT" <<'PY'
import json, os, sys
fleet, expected = sys.argv[1], tuple(sys.argv[2].split(':'))
try:
    report = json.load(open(os.path.join(fleet, 'report.json')))
except (OSError, ValueError) as e:
    sys.exit(f'FAIL: no report ({e}); see {fleet}/../fleet.out')
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
# A failing step is a finding of its own: allowed only where the planted node is in it and the
# expectation names kind and subject alone.
if [b for b in bad_steps if len(expected) == 3 or expected[0] not in b[0]]:
    problems.append(f'steps not ok: {bad_steps}')
# SUBJECT:KIND:METRIC: exactly that one suspect; SUBJECT:KIND: every suspect that subject and kind
# (one or more, by whichever metrics showed it).
if len(expected) == 3 and suspects != [expected]:
    problems.append(f'suspects {suspects}, expected exactly [{expected}]')
if len(expected) == 2 and (not suspects or any(s[:2] != expected for s in suspects)):
    problems.append(f'suspects {suspects}, expected {expected[0]} as {expected[1]} only')
if report['suspect_links']:
    problems.append(f"links named: {report['suspect_links']}")
for p in problems:
    print('FAIL:', p)
sys.exit(1 if problems else 0)
PY
