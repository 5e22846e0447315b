// Who takes part in a run: one process, or MPI ranks across nodes (mpirun/srun). The
// World bootstraps communicators, combines per-rank measurements (max across ranks: the
// slowest rank finishes a collective), agrees on decisions so every rank takes the same
// path (nothing can deadlock), and gathers rows to rank 0, which alone writes sinks.
// Implemented in world.cpp (MPI when GPUCAL_HAVE_MPI and launched under MPI, else a
// single-process world).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace gpucal {

class World {
 public:
  virtual ~World() = default;
  virtual std::string kind() const = 0;  // "single" | "mpi" (for the sidecar)
  virtual int rank() const = 0;
  virtual int size() const = 0;
  bool is_root() const { return rank() == 0; }
  // Node identity: ranks with the same hostname share a node.
  virtual int node() const = 0;          // index of this rank's node, 0..nodes()-1
  virtual int nodes() const = 0;
  virtual int local_rank() const = 0;    // rank among the ranks of its node
  virtual int local_size() const = 0;
  virtual std::string hostname() const = 0;

  virtual bool all_agree(bool local) = 0;           // logical AND across ranks
  virtual double max_across(double local) = 0;      // for times
  virtual double min_across(double local) = 0;
  virtual int64_t sum_across(int64_t local) = 0;    // for wrong-element counts
  virtual void broadcast(std::vector<unsigned char>& bytes, int root) = 0;  // resizes on receivers
  // Each rank's string, gathered on rank 0 (empty vector elsewhere).
  virtual std::vector<std::string> gather_strings(const std::string& local) = 0;
  virtual void barrier() = 0;
  // Ends every rank with `code` (MPI_Abort under MPI): used when a rank cannot go on, so
  // the others do not wait forever. From the thread that runs the rank only: no other
  // thread (the watchdog) may call MPI (see make_world).
  [[noreturn]] virtual void abort(int code) = 0;
  // Sub-world of the ranks passing the same color >= 0, ordered by key; nullptr for a
  // negative color. Collective over the whole world: every rank must call it.
  virtual std::unique_ptr<World> split(int color, int key) = 0;
  // Subgroup of ranks [0, n) when this rank is inside it (nullptr otherwise); used by
  // --ranks sweeps. Collective over the whole world: every rank must call it.
  std::unique_ptr<World> split_first(int n) { return split(rank() < n ? 0 : -1, rank()); }
  // The underlying MPI communicator (MPI_Comm cast to void*) or nullptr.
  virtual void* native_handle() = 0;
  // MPI's thread support as granted ("single", ...; "" outside MPI), for the sidecar.
  virtual std::string mpi_thread_level() const { return ""; }
};

// Creates the world: MPI when the process was started by mpirun/srun (and MPI is compiled
// in), otherwise a single-process world. Calls MPI_Init_thread(MPI_THREAD_SINGLE) on
// first use, the level nccl-tests and OSU run at (MPI_Init) beside the libraries' own
// threads: every MPI call is made by the thread that runs the rank (the watchdog thread
// never calls MPI). Any higher level turns on Open MPI's internal locking: with 4.1.4,
// FUNNELED and MULTIPLE alike made a 128 B allgather at 2 ranks 20% slower (0.66 against
// 0.55 us). The world made here finalizes MPI when destroyed (sub-worlds only free their
// communicator).
// GPUCAL_TEST_RANKS_PER_NODE=k (test only) pretends every k consecutive ranks form a node,
// so node-spanning logic can be tested on one machine.
std::unique_ptr<World> make_world(int* argc, char*** argv);

// Node layout from every rank's hostname (index = rank): pure, unit-tested.
struct NodeLayout {
  int node = 0, nodes = 1, local_rank = 0, local_size = 1;
};
NodeLayout node_layout(const std::vector<std::string>& hostnames, int rank);

}  // namespace gpucal
