#!/usr/bin/env bash
# gpucal against OSU Micro-Benchmarks and a direct OpenBLAS call on this machine: a
# benchmark, not a ctest test. One command:
#
#   bash tests/perf/compare_osu.sh --osu /path/to/osu-micro-benchmarks/c/mpi [--rounds 5]
#        [--build build] [--combine avg|max] [--work DIR] [--skip-gemm] [--skip-osu]
#        [--osu-malloc same|glibc] [--benches allreduce,allgather,reduce_scatter,latency]
#
# Communication (2 ranks, one per core, `mpirun --bind-to core`), for allreduce, allgather,
# reduce_scatter (osu_reduce_scatter_block: the same MPI call as gpucal's) and ping-pong
# latency (osu_latency vs bench_p2p --pattern pingpong): both tools run interleaved, N
# rounds, the order alternating between rounds. Per size: gpucal's time_us_mean (latency:
# half of it) over OSU's average latency, fp32 (OSU: -T mpi_float), the median over rounds.
# Sizes are gpucal's S (nccl-tests): OSU's allgather size is per rank, so S = 2 x it.
# Targets: the median over sizes within 5% of 1, no size beyond 1.25.
#
# GEMM (host, fp32, NN, hot): bench_gemm's time_us_mean over a direct cblas_sgemm loop
# (tests/perf/openblas_direct) per shape, interleaved; target within 2%. Harness overhead at
# 64^3: the same ratio - 1, and the sampling wall time not spent in timed launches
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
# and osu_latency (searched recursively). Report `uptime` with the figures: other load on
# the machine moves them.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
osu="" rounds=5 build="$repo/build" combine=avg work="" skip_gemm=0 skip_osu=0 osu_malloc=same
benches="allreduce allgather reduce_scatter latency"
while [ $# -gt 0 ]; do
  case "$1" in
    --osu) osu=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --combine) combine=$2; shift 2 ;;
    --work) work=$2; shift 2 ;;
    --skip-gemm) skip_gemm=1; shift ;;
    --skip-osu) skip_osu=1; shift ;;
    --osu-malloc) osu_malloc=$2; shift 2 ;;
    --benches) benches=${2//,/ }; shift 2 ;;
    -h|--help) sed -n '2,31p' "$0"; exit 0 ;;
    *) echo "compare_osu.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
case "$osu_malloc" in
  same) osu_env=(-x MALLOC_MMAP_MAX_=0 -x MALLOC_TRIM_THRESHOLD_=18446744073709551615) ;;
  glibc) osu_env=() ;;
  *) echo "compare_osu.sh: --osu-malloc must be same or glibc" >&2; exit 2 ;;
esac
case "$rounds" in ''|*[!0-9]*|0) echo "compare_osu.sh: --rounds must be a positive integer" >&2; exit 2 ;; esac
[ "$skip_osu" = 1 ] || [ -n "$osu" ] || { echo "compare_osu.sh: --osu DIR is required (or --skip-osu)" >&2; exit 2; }
build=$(cd "$build" && pwd)
work=${work:-$(mktemp -d /tmp/compare_osu.XXXXXX)}
mkdir -p "$work"
[ "$(id -u)" = 0 ] && export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun=(mpirun -np 2 --bind-to core --map-by core)

find_bin() {
  local path
  path=$(find "$1" -name "$2" -type f -perm -u+x 2>/dev/null | head -1)
  [ -n "$path" ] || { echo "compare_osu.sh: $2 not found under $1" >&2; exit 2; }
  echo "$path"
}

echo "machine: $(nproc) cores; $(uptime)"
echo "OSU allocator: $osu_malloc (gpucal: pinned, no mmap and no trim, see core/measure/malloc_policy.h)"
echo "work folder: $work"

if [ "$skip_osu" = 0 ]; then
  coll="$build/bench_collectives/bench_collectives"
  p2p="$build/bench_p2p/bench_p2p"
  for b in "$coll" "$p2p"; do [ -x "$b" ] || { echo "compare_osu.sh: $b not built" >&2; exit 2; }; done
  declare -A osu_bin=(
    [allreduce]=$(find_bin "$osu" osu_allreduce) [allgather]=$(find_bin "$osu" osu_allgather)
    [reduce_scatter]=$(find_bin "$osu" osu_reduce_scatter_block) [latency]=$(find_bin "$osu" osu_latency))
  # gpucal's S per benchmark; OSU's size for the same work is S (allgather: S / 2, per rank).
  declare -A first_size=([allreduce]=4 [allgather]=32 [reduce_scatter]=32 [latency]=1)
  declare -A gpucal_cmd=(
    [allreduce]="$coll --collective allreduce --dtype fp32"
    [allgather]="$coll --collective allgather --dtype fp32"
    [reduce_scatter]="$coll --collective reduce_scatter --dtype fp32"
    [latency]="$p2p --pattern pingpong")
  # Interleaved per size, so both tools of a pair see the same moment's machine.
  for r in $(seq 1 "$rounds"); do
    for bench in $benches; do
      s=${first_size[$bench]}
      while [ "$s" -le 1048576 ]; do
        osu_size=$s
        [ "$bench" = allgather ] && osu_size=$((s / 2))
        run_osu() {
          local t=(-T mpi_float)
          [ "$bench" = latency ] && t=()
          "${mpirun[@]}" "${osu_env[@]}" "${osu_bin[$bench]}" -m "$osu_size:$osu_size" "${t[@]}" >> "$work/osu_${bench}_$r.txt"
        }
        run_gpucal() {
          # shellcheck disable=SC2086
          "${mpirun[@]}" ${gpucal_cmd[$bench]} --backend host --combine "$combine" --quiet --sizes "$s" \
            --out "$work/gpucal_${bench}_${r}_$s.csv" > /dev/null 2>&1
        }
        if [ $((r % 2)) = 1 ]; then run_osu; run_gpucal; else run_gpucal; run_osu; fi
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
      run_direct() { echo "$s $("$direct" "$s" "$s" "$s" 0.5)" >> "$work/direct_$r.txt"; }
      run_gemm() {
        "$gemm" --backend host --dtype fp32 --layout NN --m "$s" --n "$s" --k "$s" --regime hot \
          --max-time-per-point 0.5 --noise-target 0 --quiet --out "$work/gemm_${s}_$r.csv" > /dev/null
      }
      if [ $((r % 2)) = 1 ]; then run_direct; run_gemm; else run_gemm; run_direct; fi
    done
  done
fi

echo "end: $(uptime)"
python3 "$here/compare_osu_table.py" "$work" "$rounds" "$combine"
