#!/bin/sh
# Runs plots/plot_results.py and plot_compare.py on a small synthetic results folder and checks
# that each figure came out as PNG and SVG, then reads plot_results.py's figures from their
# objects (check_plot_figures.py beside this script: units, ticks, legends, pair matrices). Exit 77 (ctest: skipped) when no Python with
# matplotlib is found.  Usage: run_plot_test.sh WRITE_SYNTHETIC GPUCAL PLOTS_DIR WORK_DIR
set -eu
write_synthetic=$1 gpucal=$2 plots=$3 work=$4
python=""
for candidate in /usr/bin/python3 python3; do
  if "$candidate" -c 'import matplotlib' >/dev/null 2>&1; then python=$candidate; break; fi
done
if [ -z "$python" ]; then
  echo "SKIP: no python3 with matplotlib (tried /usr/bin/python3 and python3 on PATH)"
  exit 77
fi
rm -rf "$work"
"$write_synthetic" "$work/base"
"$write_synthetic" "$work/cur" 1.2
"$gpucal" fit "$work/base" >/dev/null
"$python" "$plots/plot_results.py" "$work/base" -o "$work/figs"
"$gpucal" compare "$work/base" "$work/cur" --json "$work/compare.json" >/dev/null || true
"$python" "$plots/plot_compare.py" "$work/base" "$work/cur" -o "$work/figs"
"$python" "$plots/plot_compare.py" --compare-json "$work/compare.json" -o "$work/figs_json"
missing=0
for fig in collectives_bandwidth gemm_efficiency_heatmap gemm_roofline attention_tflops p2p_pair_matrix p2p_pair_bandwidth \
    memory_bandwidth memory_ops; do
  for ext in png svg; do
    if ! ls "$work/figs/$fig"*."$ext" >/dev/null 2>&1; then echo "missing $fig*.$ext"; missing=1; fi
  done
done
for ext in png svg; do
  [ -f "$work/figs/compare_ratios.$ext" ] || { echo "missing compare_ratios.$ext"; missing=1; }
  [ -f "$work/figs_json/compare_ratios.$ext" ] || { echo "missing figs_json/compare_ratios.$ext"; missing=1; }
done
"$python" "$(dirname "$0")/check_plot_figures.py" "$plots" "$work/base" || missing=1
# A results folder without collectives: the figure is skipped with a reason, not an error.
mkdir -p "$work/gemm_only"
cp "$work/base/gemm.csv" "$work/gemm_only/"
"$python" "$plots/plot_results.py" "$work/gemm_only" -o "$work/figs_gemm_only" | grep -q "skip.*collectives"
exit $missing
