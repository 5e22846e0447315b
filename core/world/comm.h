// Communicators: one interface over NCCL (CUDA), RCCL (HIP, the same API) and MPI on host
// memory, used by bench_collectives and bench_p2p. A communicator belongs to a group of
// ranks (a World, possibly a sub-world of --ranks n); calls follow NCCL's conventions:
// counts in elements, in-place when the pointers say so (allgather: send = recv +
// rank*send_count; reduce_scatter: recv = send + rank*recv_count; others: send == recv),
// asynchronous on the backend's stream for GPUs, blocking for MPI on the host.
#pragma once

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/backend/backend.h"
#include "core/backend/dtype.h"
#include "core/world/world.h"

namespace gpucal {

enum class ReduceOp { sum, max, min, avg };
std::string to_string(ReduceOp op);
ReduceOp parse_reduce_op(const std::string& name);  // throws UsageError naming sum, max, min, avg
std::vector<ReduceOp> parse_reduce_op_list(const std::string& csv);
// The dtypes a collective may carry (fp64 fp32 fp16 bf16 fp8_e4m3 fp8_e5m2 int32).
bool collective_dtype(DType t);

class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual std::string library() const = 0;  // nccl | rccl | mpi
  virtual std::string version() const = 0;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  // Empty when the dtype/op can run here, else why not (the point becomes a skip).
  virtual std::string unsupported(DType t, bool reduction) const = 0;

  virtual void allreduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) = 0;
  virtual void allgather(const void* send, void* recv, size_t send_count, DType t) = 0;
  virtual void reduce_scatter(const void* send, void* recv, size_t recv_count, DType t, ReduceOp op) = 0;
  virtual void broadcast(const void* send, void* recv, size_t count, DType t, int root) = 0;
  virtual void reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) = 0;
  // count_per_peer elements go from send block p to rank p's recv block `rank()`.
  virtual void alltoall(const void* send, void* recv, size_t count_per_peer, DType t) = 0;
  virtual void send(const void* buf, size_t count, DType t, int peer) = 0;
  virtual void recv(void* buf, size_t count, DType t, int peer) = 0;
  // Brackets calls that must progress together (NCCL group; MPI: send/recv inside it are
  // posted nonblocking and completed at group_end). Inside a group a rank may also send to
  // and receive from itself, as NCCL and MPI allow (nccl-tests' gather and scatter).
  virtual void group_start() {}
  virtual void group_end() {}
  // A replayable launch of `issue` (CUDA/HIP graph capture on the stream); throws SkipPoint
  // where graphs do not exist (MPI).
  virtual std::function<void()> capture_graph(const std::function<void()>& issue) = 0;
  // Ends outstanding operations so a stuck rank can exit (ncclCommAbort); called from the
  // watchdog thread. MPI has no per-communicator abort: the World's MPI_Abort follows.
  virtual void abort() = 0;
  // Library facts for the sidecar (version, algorithm/protocol notes).
  virtual std::string describe() const { return library() + " " + version(); }
  // The communicator of ranks [0, n) (--ranks n): collective over this communicator's
  // ranks; `sub` is the matching sub-world (World::split_first(n)), null outside the
  // group, where the result is null too. NCCL: ncclCommSplit; MPI: the sub-world's comm.
  virtual std::shared_ptr<Communicator> split_first(int n, std::shared_ptr<World> sub) = 0;
};

// MPI on host memory over `group` (shared: the communicator keeps it alive).
std::shared_ptr<Communicator> make_mpi_communicator(std::shared_ptr<World> group);
// Threads of one process on host memory (`group` must be a ThreadWorld: --threads N).
std::shared_ptr<Communicator> make_thread_communicator(std::shared_ptr<World> group);
// The host backend's communicator for `group`: threads for a ThreadWorld, else MPI.
std::shared_ptr<Communicator> make_host_communicator(std::shared_ptr<World> group);
// NCCL (CUDA builds) or RCCL (HIP builds) on `backend`'s device and stream; the unique id
// is made by the group's rank 0 and broadcast over the group's World (MPI).
std::shared_ptr<Communicator> make_nccl_communicator(std::shared_ptr<World> group, Backend& backend);
// Names of the GPU communicator libraries compiled in ("nccl", "rccl").
std::vector<std::string> compiled_gpu_communicators();
// Version of the GPU communicator library for `backend` ("" when not compiled in).
std::string gpu_communicator_version(const std::string& backend);

}  // namespace gpucal
