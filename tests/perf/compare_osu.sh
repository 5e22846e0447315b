#!/usr/bin/env bash
# gpucal against OSU Micro-Benchmarks and a direct OpenBLAS call on this machine: a
# benchmark, not a ctest test. One command:
#
#   bash tests/perf/compare_osu.sh [--osu /path/to/osu-micro-benchmarks/c/mpi] [--rounds 5]
#        [--launches 4] [--build build] [--combine avg|max] [--work DIR] [--skip-gemm] [--skip-osu]
#        [--osu-malloc same|glibc] [--osu-iterations 200] [--benches allreduce,allgather,reduce_scatter,latency]
#
# One launch is not a sample: a launch of either tool can land in a fast or a slow state for
# its whole run, so each round runs --launches short launches of each tool per size,
# interleaved (osu, gpucal, osu, gpucal, ...; the first tool alternating between rounds), and
# the figures are distributions of launch figures pooled over rounds: per tool and size the
# median over launches, p10/p90, and both modes named when the launches are bimodal
# (tests/perf/launch_stats.py). The verdict uses the state-matched ratio: gpucal's fast state
# over OSU's fast state (each tool's lowest mode; its median when unimodal).
#
# Communication (2 ranks, one per core, `mpirun --bind-to core`), for allreduce, allgather,
# reduce_scatter (osu_reduce_scatter_block: the same MPI call as gpucal's) and ping-pong
# latency (osu_latency vs bench_p2p --pattern pingpong). A launch's figure: gpucal's
# time_us_mean (latency: half of it), OSU's average latency (-i --osu-iterations, fp32: -T
# mpi_float). Sizes are gpucal's S (nccl-tests): OSU's allgather size is per rank, so S = 2 x it.
# Targets: the median over sizes of the state-matched ratio within 5% of 1, no size beyond 1.25.
#
# GEMM (host, fp32, NN, hot): bench_gemm's time_us_mean over a direct cblas_sgemm loop
# (tests/perf/openblas_direct) per shape, launches interleaved alike; target within 2%. Harness
# overhead at 64^3: the same ratio - 1, and the sampling wall time not spent in timed launches
# (1 - samples x launches_per_sample x time_us_mean / sampling_time_s); target <= 1%.
#
# Allocator: gpucal pins glibc's malloc (no mmap, no trim: core/measure/malloc_policy.h); OSU runs the
# same way through MALLOC_MMAP_MAX_=0 and MALLOC_TRIM_THRESHOLD_=SIZE_MAX (--osu-malloc same, the
# default), so both tools see the same allocator. --osu-malloc glibc runs OSU with glibc's
# dynamic defaults: its reduce_scatter_block then maps and unmaps a temporary per call from
# 256 KiB up (10-16x slower here), which is the allocator, not the collective.
#
# OSU is not part of gpucal: build it yourself (./configure CC=mpicc CXX=mpicxx; make) and
# point --osu at the folder holding osu_allreduce, osu_allgather, osu_reduce_scatter_block
# and osu_latency (searched recursively). Without --osu, or when that folder lacks them, the
# OSU comparison is skipped (said so) and the GEMM one runs; with nothing to run the script
# exits 77. Report `uptime` with the figures: other load on the machine moves them.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
osu="" rounds=5 launches=4 osu_iterations=200 build="$repo/build" combine=avg work="" skip_gemm=0 skip_osu=0 osu_malloc=same
benches="allreduce allgather reduce_scatter latency"
while [ $# -gt 0 ]; do
  case "$1" in
    --osu) osu=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --launches) launches=$2; shift 2 ;;
    --osu-iterations) osu_iterations=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --combine) combine=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --skip-gemm) skip_gemm=1; shift ;;
    --skip-osu) skip_osu=1; shift ;;
    --osu-malloc) osu_malloc=$2; shift 2 ;;
    --benches) benches=${2//,/ }; shift 2 ;;
    -h|--help) sed -n '2,40p' "$0"; exit 0 ;;
    *) echo "compare_osu.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$osu_malloc" in
  same) osu_env=(-x MALLOC_MMAP_MAX_=0 -x MALLOC_TRIM_THRESHOLD_=18446744073709551615) ;;
  glibc) osu_env=() ;;
  *) echo "compare_osu.sh: --osu-malloc must be same or glibc" >&2; exit 2 ;;
esac
for n in "$rounds" "$launches" "$osu_iterations"; do
  case "$n" in ''|*[!0-9]*|0) echo "compare_osu.sh: --rounds, --launches and --osu-iterations take positive integers" >&2; exit 2 ;; esac
done
build=$(cd "$build" && pwd)
work=${work:-$(mktemp -d /tmp/compare_osu.XXXXXX)}
mkdir -p "$work"
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun -np 2 --bind-to core --map-by core)

find_bin() {
  find "$1" -name "$2" -type f -perm -u+x 2>/dev/null | head -1
}

# OSU absent: skip its comparison, say so, and go on with the GEMM one.
declare -A osu_bin=()
if [ "$skip_osu" = 0 ]; then
  if [ -z "$osu" ] || [ ! -d "$osu" ]; then
    echo "OSU comparison skipped: no OSU folder (--osu DIR${osu:+: '$osu' is not a folder})"
    skip_osu=1
  else
    for pair in allreduce:osu_allreduce allgather:osu_allgather reduce_scatter:osu_reduce_scatter_block latency:osu_latency; do
      osu_bin[${pair%%:*}]=$(find_bin "$osu" "${pair#*:}")
      [ -n "${osu_bin[${pair%%:*}]}" ] || { echo "OSU comparison skipped: ${pair#*:} not found under $osu"; skip_osu=1; }
    done
  fi
fi
if [ "$skip_osu" = 1 ] && [ "$skip_gemm" = 1 ]; then
  echo "compare_osu.sh: nothing to compare (OSU skipped, --skip-gemm)"
  exit 77
fi

echo "machine: $(nproc) cores; $(uptime)"
echo "OSU allocator: $osu_malloc (gpucal: pinned, no mmap and no trim, see core/measure/malloc_policy.h)"
echo "work folder: $work"

if [ "$skip_osu" = 0 ]; then
  coll="$build/bench_collectives/bench_collectives"
  p2p="$build/bench_p2p/bench_p2p"
  for b in "$coll" "$p2p"; do [ -x "$b" ] || { echo "compare_osu.sh: $b not built" >&2; exit 2; }; done
  # gpucal's S per benchmark; OSU's size for the same work is S (allgather: S / 2, per rank).
  declare -A first_size=([allreduce]=4 [allgather]=32 [reduce_scatter]=32 [latency]=1)
  declare -A gpucal_cmd=(
    [allreduce]="$coll --collective allreduce --dtype fp32"
    [allgather]="$coll --collective allgather --dtype fp32"
    [reduce_scatter]="$coll --collective reduce_scatter --dtype fp32"
    [latency]="$p2p --pattern pingpong")
  # Interleaved per size and launch, so both tools see the same moment's machine; many short
  # launches per round, so each tool's launches sample its launch-level states.
  for r in $(seq 1 "$rounds"); do
    for bench in $benches; do
      s=${first_size[$bench]}
      while [ "$s" -le 1048576 ]; do
        osu_size=$s
        [ "$bench" = allgather ] && osu_size=$((s / 2))
        for l in $(seq 1 "$launches"); do
          run_osu() {
            local t=(-T mpi_float)
            [ "$bench" = latency ] && t=()
            "${mpirun[@]}" "${osu_env[@]}" "${osu_bin[$bench]}" -m "$osu_size:$osu_size" -i "$osu_iterations" \
              -x $((osu_iterations / 10 + 1)) "${t[@]}" > "$work/osu_${bench}_${s}_${r}_$l.txt"
          }
          run_gpucal() {
            # shellcheck disable=SC2086
            "${mpirun[@]}" ${gpucal_cmd[$bench]} --backend host --combine "$combine" --quiet --sizes "$s" \
              --max-time-per-point 0.1 --out "$work/gpucal_${bench}_${s}_${r}_$l.csv" > /dev/null 2>&1
          }
          if [ $(((r + l) % 2)) = 0 ]; then run_osu; run_gpucal; else run_gpucal; run_osu; fi
        done
        s=$((s * 2))
      done
    done
    echo "round $r of $rounds done; $(uptime)"
  done
fi

if [ "$skip_gemm" = 0 ]; then
  gemm="$build/bench_gemm/bench_gemm"
  direct="$build/tests/perf/openblas_direct"
  for b in "$gemm" "$direct"; do [ -x "$b" ] || { echo "compare_osu.sh: $b not built" >&2; exit 2; }; done
  for r in $(seq 1 "$rounds"); do
    for s in 64 256 512 1024; do
      for l in $(seq 1 "$launches"); do
        run_direct() { echo "$s $("$direct" "$s" "$s" "$s" 0.2)" > "$work/direct_${s}_${r}_$l.txt"; }
        run_gemm() {
          "$gemm" --backend host --dtype fp32 --layout NN --m "$s" --n "$s" --k "$s" --regime hot \
            --max-time-per-point 0.2 --noise-target 0 --quiet --out "$work/gemm_${s}_${r}_$l.csv" \
            > /dev/null 2> "$work/gemm_${s}_${r}_$l.log"
        }
        if [ $(((r + l) % 2)) = 0 ]; then run_direct; run_gemm; else run_gemm; run_direct; fi
      done
    done
  done
fi

echo "end: $(uptime)"
python3 "$here/compare_osu_table.py" "$work" "$combine"
