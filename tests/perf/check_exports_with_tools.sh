#!/usr/bin/env bash
# Local check of gpucal's exports with each modeling tool's real code (never run in CI; the tools
# are fetched for local use and not committed). See check_exports_with_tools.py for what runs.
#
#   tests/perf/check_exports_with_tools.sh RESULTS_DIR OUT_DIR \
#       [--calculon DIR] [--astrasim DIR] [--nersc DIR] [--vtrain DIR] [--gpucal BIN] [--size BYTES] [--set KEY=VALUE ...]
#
# Each tool given is run; one not given is skipped. Tools, at the commits the exports were written against: calculon-ai/calculon caa4b11;
# astra-sim/astra-sim c0cf6d6 with build/astra_analytical/build.sh -t congestion_unaware run
# (c0cf6d6 does not compile against its own submodules as pinned: four Chakra::FeederV3 qualifiers
# and upstream's fix 7e526fb applied locally); NERSC transformer-perf-estimates 54278b0;
# VIA-Research/vTrain f8dda84. Debian packages: python3-numpy python3-pandas python3-psutil
# python3-matplotlib python3-torch python3-protobuf protobuf-compiler libprotobuf-dev.
#
# A host run lacks figures no host bench measures; pass them with --set, e.g.
#   --set memory_gbps=4.8 --set vector_tflops=0.005 --set processor_usage=0.05 --set offload_gbps=2 \
#   --set offload_gib=8 --set inter_busbw_gbps=0.05 --set inter_alpha_us=50 --set nodes=2 --set comm_bytes=33554432
set -euo pipefail
if [ $# -lt 2 ]; then
  sed -n '2,17p' "$0" >&2
  exit 2
fi
results=$1 out=$2
shift 2
here=$(cd "$(dirname "$0")" && pwd)
gpucal=$here/../../build/app/gpucal
args=()
while [ $# -gt 0 ]; do
  case $1 in
    --gpucal) gpucal=$2; shift 2 ;;
    *) args+=("$1"); shift ;;
  esac
done
exec /usr/bin/python3 "$here/check_exports_with_tools.py" "$results" --out "$out" --gpucal "$gpucal" "${args[@]}"
