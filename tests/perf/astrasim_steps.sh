#!/usr/bin/env bash
# Whole steps in ASTRA-sim beside gpucal predict (a local check, not run in CI: ASTRA-sim is built
# from its own checkout). For each layout it exports the Chakra traces and ASTRA-sim's network and
# system from one results folder, workload-aware (with --model and the layout) and plain (without),
# replays the calibrated compute times (roofline-enabled 0), and prints the simulated step (the
# slowest rank's cycles, ns) over the predicted one. 4 GPUs in one node (--set nodes=1).
# Usage: astrasim_steps.sh ASTRA_SIM_DIR GPUCAL RESULTS_DIR WORK_DIR
#   ASTRA_SIM_DIR: a checkout with build/astra_analytical/build.sh run (congestion-unaware backend)
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 ASTRA_SIM_DIR GPUCAL RESULTS_DIR WORK_DIR" >&2; exit 2; }
ASTRA=$(realpath "$1")
GPUCAL=$(realpath "$2")
RESULTS=$(realpath "$3")
WORK=$(realpath -m "$4")
SIM="$ASTRA/build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware"
[ -x "$SIM" ] || { echo "$SIM: not built (run build/astra_analytical/build.sh there)" >&2; exit 2; }
MODEL=(--model llama3-8b --scale 8 --seq 512 --micro-batch 1)
LAYOUTS=(
  "--tp 2 --pp 2 --dp 1 --global-batch 1"
  "--tp 2 --pp 2 --dp 1 --global-batch 4"
  "--tp 1 --pp 4 --dp 1 --global-batch 1"
  "--tp 1 --pp 4 --dp 1 --global-batch 8"
  "--tp 1 --pp 2 --dp 2 --global-batch 4"
  "--tp 2 --pp 1 --dp 2 --global-batch 2"
)

no_roofline() {
  python3 -c "import json, sys; p = sys.argv[1]; s = json.load(open(p)); s['roofline-enabled'] = 0; json.dump(s, open(p, 'w'), indent=2)" "$1"
}

simulate() {  # the slowest rank's cycles
  "$SIM" --workload-configuration=out/chakra/workload --comm-group-configuration=out/chakra/comm_group.json \
    --system-configuration="$1/astrasim/system.json" --network-configuration="$1/astrasim/network.yml" \
    --remote-memory-configuration="$ASTRA/examples/remote_memory/analytical/no_memory_expansion.json" 2>&1 |
    sed -n 's/.*finished, \([0-9]*\) cycles.*/\1/p' | sort -n | tail -1
}

echo "| layout | gpucal predict | ASTRA-sim, workload-aware | ratio | ASTRA-sim, plain | ratio |"
echo "| --- | --- | --- | --- | --- | --- |"
for i in "${!LAYOUTS[@]}"; do
  read -r -a layout <<< "${LAYOUTS[$i]}"
  dir="$WORK/layout$i"
  rm -rf "$dir" && mkdir -p "$dir" && cd "$dir"
  "$GPUCAL" export "$RESULTS" --to chakra "${MODEL[@]}" "${layout[@]}" --ranks-per-node 4 --out out > export.log
  "$GPUCAL" export "$RESULTS" --to astrasim --set gpus_per_node=4 --set nodes=1 "${MODEL[@]}" "${layout[@]}" --out aware >> export.log
  "$GPUCAL" export "$RESULTS" --to astrasim --set gpus_per_node=4 --set nodes=1 --out plain >> export.log
  no_roofline aware/astrasim/system.json
  no_roofline plain/astrasim/system.json
  "$GPUCAL" predict "$RESULTS" "${MODEL[@]}" "${layout[@]}" --ranks-per-node 4 --output predict.json --quiet > predict.log
  aware=$(simulate aware || true)
  plain=$(simulate plain || true)
  if [ -z "$aware" ] || [ -z "$plain" ]; then
    echo "ASTRA-sim finished no rank for ${LAYOUTS[$i]} (see $dir)" >&2
    exit 1
  fi
  python3 - "${LAYOUTS[$i]}" "$aware" "$plain" <<'PY'
import json, sys
step = json.load(open("predict.json"))["breakdown"]["step"]["time_s"] * 1e3
aware, plain = int(sys.argv[2]) / 1e6, int(sys.argv[3]) / 1e6
print("| %s | %.3f ms | %.3f ms | %.4f | %.3f ms | %.4f |" % (sys.argv[1], step, aware, aware / step, plain, plain / step))
PY
done
