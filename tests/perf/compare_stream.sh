#!/usr/bin/env bash
# bench_memory's host copy and triad against McCalpin's STREAM (stream.c), run interleaved
# for several rounds on the same arrays (fp32, ARRAY_ELEMENTS per array, every OpenMP
# thread), printing each round's figures and the ratios. A benchmark script, not a test:
# figures depend on the machine and its load; compare ratios within one run.
#
#   tests/perf/compare_stream.sh [STREAM_C] [BUILD_DIR]
#     STREAM_C   path to stream.c (not part of gpucal: fetch it yourself, e.g. from
#                https://www.cs.virginia.edu/stream/FTP/Code/stream.c; default /work/ext/stream/stream.c)
#     BUILD_DIR  gpucal build folder with bench_memory/bench_memory (default build)
#   environment: ROUNDS (5), ARRAY_ELEMENTS (33554432 = 128 MiB of fp32 per array, 4x a 32 MiB
#                last-level cache), NTIMES (STREAM's repetitions, 20), OMP_NUM_THREADS (all cores)
#
# stream.c is compiled twice with the flags bench_memory's host kernels get (CMake Release:
# -O3, plus -fopenmp): as is (the baseline x86-64 ISA of the command line) and with
# -march=x86-64-v4, the ISA of the clone bench_memory's kernels run on an AVX-512 CPU (its
# kernels are built with target_clones for x86-64-v4, x86-64-v3 and the baseline). STREAM
# counts bytes as bench_memory does (copy 2 arrays, triad 3) in MB/s = 1e6 B/s and reports the
# best of NTIMES; bench_memory reports the median of its samples (bandwidth_gbps) and, for the
# like-for-like figure, bytes / time_us_min.
set -euo pipefail
STREAM_C=${1:-/work/ext/stream/stream.c}
BUILD=${2:-build}
ROUNDS=${ROUNDS:-5}
N=${ARRAY_ELEMENTS:-33554432}
NTIMES=${NTIMES:-20}
BENCH=$BUILD/bench_memory/bench_memory
[ -f "$STREAM_C" ] || { echo "compare_stream.sh: no stream.c at $STREAM_C (fetch it; it is not part of gpucal)" >&2; exit 2; }
[ -x "$BENCH" ] || { echo "compare_stream.sh: no $BENCH (build first)" >&2; exit 2; }
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
CC=${CC:-gcc}
FLAGS="-O3 -fopenmp -DSTREAM_TYPE=float -DSTREAM_ARRAY_SIZE=$N -DNTIMES=$NTIMES"
$CC $FLAGS "$STREAM_C" -o "$WORK/stream_base"
$CC $FLAGS -march=x86-64-v4 "$STREAM_C" -o "$WORK/stream_v4" 2>/dev/null || cp "$WORK/stream_base" "$WORK/stream_v4"
BYTES=$((N * 4))
echo "# $(nproc) CPUs, OMP_NUM_THREADS=${OMP_NUM_THREADS:-unset}, load $(cut -d' ' -f1-3 /proc/loadavg), $N fp32 per array, $ROUNDS rounds"
echo "# $CC $FLAGS [-march=x86-64-v4]; bench_memory --kernel copy,triad --dtype fp32 --bytes $BYTES"
for r in $(seq 1 "$ROUNDS"); do
  for variant in base v4; do
    "$WORK/stream_$variant" > "$WORK/stream_${variant}_$r.txt"
  done
  "$BENCH" --backend host --kernel copy,triad --dtype fp32 --bytes "$BYTES" --max-time-per-point 3 \
    --min-samples "$NTIMES" --quiet --out "$WORK/bench_$r.csv" > /dev/null 2>&1
done
python3 - "$WORK" "$ROUNDS" <<'EOF'
import csv, re, statistics, sys
work, rounds = sys.argv[1], int(sys.argv[2])

def stream_rates(path):
    """{kernel: (best GB/s, mean GB/s)}: STREAM's best rate (MB/s = 1e6 B/s) and the rate of its
    average time (bytes = best rate x min time)."""
    out = {}
    for k in ("Copy", "Triad"):
        best, avg_t, min_t = (float(x) for x in
                              re.search(r"^%s:\s+([0-9.]+)\s+([0-9.]+)\s+([0-9.]+)" % k, open(path).read(), re.M).groups())
        out[k.lower()] = (best / 1e3, best / 1e3 * min_t / avg_t)
    return out

rows = {"copy": [], "triad": []}
print("%-5s %-6s %9s %9s %9s %9s %9s %8s %8s %8s" % ("round", "kernel", "str best", "str mean", "v4 best",
                                                      "our med", "our best", "med/mean", "best/bst", "best/v4"))
for r in range(1, rounds + 1):
    base, v4 = stream_rates("%s/stream_base_%d.txt" % (work, r)), stream_rates("%s/stream_v4_%d.txt" % (work, r))
    for row in csv.DictReader(open("%s/bench_%d.csv" % (work, r))):
        k = row["kernel"]
        med = float(row["bandwidth_gbps"])
        best = int(row["bytes"]) / float(row["time_us_min"]) / 1e3
        ratios = (med / base[k][1], best / base[k][0], best / v4[k][0])
        rows[k].append(ratios)
        print("%-5d %-6s %9.2f %9.2f %9.2f %9.2f %9.2f %8.3f %8.3f %8.3f" % ((r, k, base[k][0], base[k][1], v4[k][0], med,
                                                                              best) + ratios))
print()
print("median over rounds of bench_memory / STREAM: our median vs STREAM's mean, best vs best (baseline ISA), "
      "best vs best (x86-64-v4)")
for k, v in rows.items():
    print("%-6s %8.3f %8.3f %8.3f" % (k, statistics.median(x[0] for x in v), statistics.median(x[1] for x in v),
                                      statistics.median(x[2] for x in v)))
EOF
