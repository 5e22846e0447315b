/* Two ways of timing one MPI collective in one process, on the same buffers: OSU's loop (each
 * call timed alone, MPI_Barrier after each, the mean over iterations averaged over ranks) and
 * gpucal's hot block (one synchronisation, then `iters` back-to-back calls timed together).
 * Launches alternate the order of the two loops. A benchmark probe for docs/fidelity.md, not a
 * test: it says how much of gpucal's lower time against OSU is the per-call barrier.
 *
 *   built as build/tests/perf/timing_loop_probe (or: mpicc -O2 -o timing_loop_probe tests/perf/timing_loop_probe.c)
 *   mpirun -np 2 --bind-to core ./timing_loop_probe allreduce|allgather BYTES ITERS ORDER(0|1)
 * prints: "<collective> <bytes> osu_loop_us <mean> block_us <mean>" on rank 0.
 * BYTES is gpucal's S (allgather: the whole output; each rank sends S / nranks).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int allgather;
static float *send_buf, *recv_buf;
static int count; /* elements each rank sends */

static void call(void) {
  if (allgather)
    MPI_Allgather(send_buf, count, MPI_FLOAT, recv_buf, count, MPI_FLOAT, MPI_COMM_WORLD);
  else
    MPI_Allreduce(send_buf, recv_buf, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
}

/* OSU 7.4's osu_allreduce: barrier, then per iteration t = Wtime; call; timer += Wtime - t; barrier. */
static double osu_loop(int iters) {
  double timer = 0;
  MPI_Barrier(MPI_COMM_WORLD);
  for (int i = 0; i < iters; i++) {
    double t = MPI_Wtime();
    call();
    timer += MPI_Wtime() - t;
    MPI_Barrier(MPI_COMM_WORLD);
  }
  return timer / iters;
}

/* gpucal's hot sample: one barrier, then iters calls timed as one block. */
static double block(int iters) {
  MPI_Barrier(MPI_COMM_WORLD);
  double t = MPI_Wtime();
  for (int i = 0; i < iters; i++) call();
  return (MPI_Wtime() - t) / iters;
}

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank, size;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 5) {
    if (rank == 0) fprintf(stderr, "usage: timing_loop_probe allreduce|allgather BYTES ITERS ORDER\n");
    MPI_Finalize();
    return 2;
  }
  allgather = strcmp(argv[1], "allgather") == 0;
  const long bytes = atol(argv[2]);
  const int iters = atoi(argv[3]), order = atoi(argv[4]);
  count = (int)(allgather ? bytes / 4 / size : bytes / 4);
  if (count < 1 || iters < 1) {
    if (rank == 0) fprintf(stderr, "timing_loop_probe: BYTES and ITERS must give at least one element and one call\n");
    MPI_Finalize();
    return 2;
  }
  send_buf = malloc((size_t)count * 4);
  recv_buf = malloc((size_t)count * 4 * (allgather ? size : 1));
  for (int i = 0; i < count; i++) send_buf[i] = (float)(rank + 1) * 0.5f + (float)(i % 7);
  for (int i = 0; i < iters / 10 + 1; i++) call(); /* warm-up, as both tools do */
  double osu = 0, blk = 0;
  if (order == 0) {
    osu = osu_loop(iters);
    blk = block(iters);
  } else {
    blk = block(iters);
    osu = osu_loop(iters);
  }
  double sums[2] = {osu, blk}, avg[2];
  MPI_Reduce(sums, avg, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  if (rank == 0)
    printf("%s %ld osu_loop_us %.3f block_us %.3f\n", argv[1], bytes, 1e6 * avg[0] / size, 1e6 * avg[1] / size);
  free(send_buf);
  free(recv_buf);
  MPI_Finalize();
  return 0;
}
