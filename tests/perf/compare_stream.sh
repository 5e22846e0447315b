#!/usr/bin/env bash
# bench_memory's host copy and triad against McCalpin's STREAM (stream.c) on the same arrays
# (fp32, ARRAY_ELEMENTS per array, every OpenMP thread). A benchmark script, not a test:
# figures depend on the machine and its load; compare ratios within one run.
#
#   tests/perf/compare_stream.sh [STREAM_C] [BUILD_DIR]
#     STREAM_C   path to stream.c (not part of gpucal: fetch it yourself, e.g. from
#                https://www.cs.virginia.edu/stream/FTP/Code/stream.c; default /work/ext/stream/stream.c).
#                Without it the comparison is skipped, said so, exit 77.
#     BUILD_DIR  gpucal build folder with bench_memory/bench_memory (default build)
#   environment: ROUNDS (3), LAUNCHES (4 per tool per round), ARRAY_ELEMENTS (33554432 = 128 MiB
#                of fp32 per array, 4x a 32 MiB last-level cache), NTIMES (STREAM's repetitions,
#                20), OMP_NUM_THREADS (all cores)
#
# One launch is not a sample: each round runs LAUNCHES launches of each tool, interleaved (the
# first tool alternating), and the figures are distributions of launch figures pooled over
# rounds (tests/perf/launch_stats.py: median over launches, p10/p90, both modes named when
# bimodal); ratios are of the medians and state-matched (fast state against fast state).
#
# stream.c is compiled twice with the flags bench_memory's host kernels get (CMake Release:
# -O3, plus -fopenmp): as is (the baseline x86-64 ISA of the command line) and with
# -march=x86-64-v4, the ISA of the clone bench_memory's kernels run on an AVX-512 CPU (its
# kernels are built with target_clones for x86-64-v4, x86-64-v3 and the baseline). STREAM
# counts bytes as bench_memory does (copy 2 arrays, triad 3). A launch's figures, as times per
# pass over the arrays: STREAM's average and minimum time over its NTIMES, bench_memory's
# time_us_median and time_us_min.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
STREAM_C=${1:-/work/ext/stream/stream.c}
BUILD=${2:-build}
ROUNDS=${ROUNDS:-3}
LAUNCHES=${LAUNCHES:-4}
N=${ARRAY_ELEMENTS:-33554432}
NTIMES=${NTIMES:-20}
BENCH=$BUILD/bench_memory/bench_memory
[ -f "$STREAM_C" ] || { echo "compare_stream.sh: skipped: no stream.c at $STREAM_C (fetch it; it is not part of gpucal)"; exit 77; }
[ -x "$BENCH" ] || { echo "compare_stream.sh: no $BENCH (build first)" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CC=${CC:-gcc}
FLAGS="-O3 -fopenmp -DSTREAM_TYPE=float -DSTREAM_ARRAY_SIZE=$N -DNTIMES=$NTIMES"
$CC $FLAGS "$STREAM_C" -o "$WORK/stream_base"
$CC $FLAGS -march=x86-64-v4 "$STREAM_C" -o "$WORK/stream_v4" 2>/dev/null || cp "$WORK/stream_base" "$WORK/stream_v4"
BYTES=$((N * 4))
echo "# $(nproc) CPUs, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}, load $(cut -d' ' -f1-3 /proc/loadavg), $N fp32 per array"
echo "# $ROUNDS rounds x $LAUNCHES launches per tool; $CC $FLAGS [-march=x86-64-v4]; bench_memory --kernel copy,triad --dtype fp32 --bytes $BYTES"
run_stream() {
  for variant in base v4; do "$WORK/stream_$variant" > "$WORK/stream_${variant}_$1_$2.txt"; done
}
run_bench() {
  "$BENCH" --backend host --kernel copy,triad --dtype fp32 --bytes "$BYTES" --max-time-per-point 1 \
    --min-samples "$NTIMES" --quiet --out "$WORK/bench_$1_$2.csv" > /dev/null 2>&1
}
for r in $(seq 1 "$ROUNDS"); do
  for l in $(seq 1 "$LAUNCHES"); do
    if [ $(((r + l) % 2)) = 0 ]; then run_stream "$r" "$l"; run_bench "$r" "$l"; else run_bench "$r" "$l"; run_stream "$r" "$l"; fi
  done
done
python3 "$here/compare_stream_table.py" "$WORK"
