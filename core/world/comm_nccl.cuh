// The NCCL/RCCL communicator, written once: comm_nccl.cu compiles it for CUDA against
// nccl.h, comm_rccl.hip for HIP against rccl/rccl.h (the same API), into gpucal::cuda and
// gpucal::hip. Collectives are asynchronous on the backend's stream; the unique id is made
// by the group's rank 0 and broadcast over the World (MPI). Verified status: compiled
// against NCCL 2.28 (CUDA 13); never run here (no GPU in the build machine).
#pragma once

#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>

#include "core/world/comm.h"
#include "core/errors.h"
#include "core/backend/gpu_runtime.h"
#include "core/world/nccl_versions.h"

#if defined(GPUCAL_GPU_HIP)
#include <rccl/rccl.h>
#define GPUCAL_CCL_NAME "rccl"
// Graph capture names (not in gpu_runtime.h, which the kernels share).
#define gpuGraph_t hipGraph_t
#define gpuGraphExec_t hipGraphExec_t
#define gpuStreamBeginCapture hipStreamBeginCapture
#define gpuStreamEndCapture hipStreamEndCapture
#define gpuStreamCaptureModeThreadLocal hipStreamCaptureModeThreadLocal
#define gpuGraphInstantiate(exec, graph) hipGraphInstantiate(exec, graph, nullptr, nullptr, 0)
#define gpuGraphLaunch hipGraphLaunch
#define gpuGraphExecDestroy hipGraphExecDestroy
#define gpuGraphDestroy hipGraphDestroy
#else
#include <nccl.h>
#define GPUCAL_CCL_NAME "nccl"
#define gpuGraph_t cudaGraph_t
#define gpuGraphExec_t cudaGraphExec_t
#define gpuStreamBeginCapture cudaStreamBeginCapture
#define gpuStreamEndCapture cudaStreamEndCapture
#define gpuStreamCaptureModeThreadLocal cudaStreamCaptureModeThreadLocal
#define gpuGraphInstantiate(exec, graph) cudaGraphInstantiate(exec, graph, 0)
#define gpuGraphLaunch cudaGraphLaunch
#define gpuGraphExecDestroy cudaGraphExecDestroy
#define gpuGraphDestroy cudaGraphDestroy
#endif

#define NCCL_CHECK(call)                                                                                 \
  do {                                                                                                   \
    ncclResult_t gpucal_nccl_rc_ = (call);                                                               \
    if (gpucal_nccl_rc_ != ncclSuccess)                                                                  \
      ::gpucal::throw_call_error(GPUCAL_CCL_NAME, ncclGetErrorString(gpucal_nccl_rc_), #call, __FILE__, __LINE__); \
  } while (0)

namespace gpucal::GPUCAL_GPU_NS {

namespace {

// ncclGetVersion() of the library loaded at run time (0 when it will not say).
int loaded_ccl_version() {
  int v = 0;
  return ncclGetVersion(&v) == ncclSuccess ? v : 0;
}

ncclDataType_t ccl_type(DType t) {
  switch (t) {
    case DType::fp64: return ncclFloat64;
    case DType::fp32: return ncclFloat32;
    case DType::fp16: return ncclFloat16;
    case DType::bf16: return ncclBfloat16;
    case DType::int32: return ncclInt32;
    case DType::uint8: return ncclUint8;  // raw bytes of point-to-point messages (bench_p2p)
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= NCCL_VERSION(2, 24, 0) && !defined(GPUCAL_GPU_HIP)
    // The enum needs 2.24 headers; the loaded library must be 2.24 too (it is what runs).
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
      if (!nccl_has_fp8(loaded_ccl_version()))
        throw SkipPoint("nccl fp8 needs NCCL >= 2.24; the loaded libnccl is " + nccl_version_text(loaded_ccl_version()));
      return t == DType::fp8_e4m3 ? ncclFloat8e4m3 : ncclFloat8e5m2;
#endif
    default: throw SkipPoint(std::string(GPUCAL_CCL_NAME) + " in this build has no " + to_string(t));
  }
}

ncclRedOp_t ccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::sum: return ncclSum;
    case ReduceOp::max: return ncclMax;
    case ReduceOp::min: return ncclMin;
    case ReduceOp::avg: return ncclAvg;
  }
  return ncclSum;
}

class CclCommunicator : public Communicator {
 public:
  // Collective over `group`: a fresh communicator from a unique id (rank 0 makes it).
  CclCommunicator(std::shared_ptr<World> group, Backend& backend) : CclCommunicator(std::move(group), backend, nullptr) {
    ncclUniqueId id{};
    std::vector<unsigned char> bytes;
    if (group_->is_root()) {
      NCCL_CHECK(ncclGetUniqueId(&id));
      bytes.assign(reinterpret_cast<unsigned char*>(&id), reinterpret_cast<unsigned char*>(&id) + sizeof id);
    }
    group_->broadcast(bytes, 0);
    std::memcpy(&id, bytes.data(), sizeof id);
    NCCL_CHECK(ncclCommInitRank(&comm_, group_->size(), id, group_->rank()));
  }
  // Wraps a communicator made by ncclCommSplit.
  CclCommunicator(std::shared_ptr<World> group, Backend& backend, ncclComm_t comm)
      : group_(std::move(group)),
        backend_(backend),
        stream_(static_cast<gpuStream_t>(backend.stream())),
        comm_(comm),
        native_alltoall_(find_native_alltoall()) {}
  ~CclCommunicator() override {
    if (comm_ && !aborted_.load()) (void)ncclCommDestroy(comm_);
  }
  std::string library() const override { return GPUCAL_CCL_NAME; }
  std::string version() const override { return ccl_version_string(); }
  std::string describe() const override {
    return library() + " " + version() +
           (native_alltoall_ ? " (alltoall: ncclAlltoAll)" : " (alltoall: grouped ncclSend/ncclRecv)");
  }
  int rank() const override { return group_->rank(); }
  int size() const override { return group_->size(); }
  std::string unsupported(DType t, bool) const override {
    try {
      (void)ccl_type(t);
      return "";
    } catch (const SkipPoint& e) {
      return e.what();
    }
  }
  void allreduce(const void* s, void* r, size_t n, DType t, ReduceOp op) override {
    NCCL_CHECK(ncclAllReduce(s, r, n, ccl_type(t), ccl_op(op), comm_, stream_));
  }
  void allgather(const void* s, void* r, size_t n, DType t) override {
    NCCL_CHECK(ncclAllGather(s, r, n, ccl_type(t), comm_, stream_));
  }
  void reduce_scatter(const void* s, void* r, size_t n, DType t, ReduceOp op) override {
    NCCL_CHECK(ncclReduceScatter(s, r, n, ccl_type(t), ccl_op(op), comm_, stream_));
  }
  void broadcast(const void* s, void* r, size_t n, DType t, int root) override {
    NCCL_CHECK(ncclBroadcast(s, r, n, ccl_type(t), root, comm_, stream_));
  }
  void reduce(const void* s, void* r, size_t n, DType t, ReduceOp op, int root) override {
    NCCL_CHECK(ncclReduce(s, r, n, ccl_type(t), ccl_op(op), root, comm_, stream_));
  }
  // As nccl-tests does it: NCCL's own ncclAlltoAll where the loaded library has it
  // (>= 2.28), else grouped send/recv to every peer (every NCCL and RCCL version).
  void alltoall(const void* s, void* r, size_t n, DType t) override {
    if (s == r) throw SkipPoint(std::string(GPUCAL_CCL_NAME) + " has no in-place all-to-all");
    if (native_alltoall_) {
      NCCL_CHECK(native_alltoall_(s, r, n, ccl_type(t), comm_, stream_));
      return;
    }
    const size_t block = n * dtype_bytes(t);
    NCCL_CHECK(ncclGroupStart());
    for (int p = 0; p < size(); ++p) {
      NCCL_CHECK(ncclSend(static_cast<const char*>(s) + block * static_cast<size_t>(p), n, ccl_type(t), p, comm_, stream_));
      NCCL_CHECK(ncclRecv(static_cast<char*>(r) + block * static_cast<size_t>(p), n, ccl_type(t), p, comm_, stream_));
    }
    NCCL_CHECK(ncclGroupEnd());
  }
  void send(const void* buf, size_t n, DType t, int peer) override {
    NCCL_CHECK(ncclSend(buf, n, ccl_type(t), peer, comm_, stream_));
  }
  void recv(void* buf, size_t n, DType t, int peer) override {
    NCCL_CHECK(ncclRecv(buf, n, ccl_type(t), peer, comm_, stream_));
  }
  void group_start() override { NCCL_CHECK(ncclGroupStart()); }
  void group_end() override { NCCL_CHECK(ncclGroupEnd()); }
  std::function<void()> capture_graph(const std::function<void()>& issue) override {
    struct Graph {
      gpuGraph_t graph{};
      gpuGraphExec_t exec{};
      ~Graph() {
        if (exec) (void)gpuGraphExecDestroy(exec);
        if (graph) (void)gpuGraphDestroy(graph);
      }
    };
    auto g = std::make_shared<Graph>();
    GPU_CHECK(gpuStreamBeginCapture(stream_, gpuStreamCaptureModeThreadLocal));
    issue();
    GPU_CHECK(gpuStreamEndCapture(stream_, &g->graph));
    GPU_CHECK(gpuGraphInstantiate(&g->exec, g->graph));
    gpuStream_t stream = stream_;
    return [g, stream] { GPU_CHECK(gpuGraphLaunch(g->exec, stream)); };
  }
  // From the watchdog thread: ncclCommAbort ends the kernels stuck waiting for peers.
  void abort() override {
    if (!aborted_.exchange(true)) (void)ncclCommAbort(comm_);
  }
  std::shared_ptr<Communicator> split_first(int n, std::shared_ptr<World> sub) override {
#if defined(NCCL_VERSION_CODE) && NCCL_VERSION_CODE >= NCCL_VERSION(2, 18, 0)
    ncclComm_t child = nullptr;
    NCCL_CHECK(ncclCommSplit(comm_, rank() < n ? 0 : NCCL_SPLIT_NOCOLOR, rank(), &child, nullptr));
    if (!sub) return nullptr;
    return std::make_shared<CclCommunicator>(std::move(sub), backend_, child);
#else
    (void)n;  // no ncclCommSplit: a fresh communicator per group, bootstrapped over MPI
    return sub ? std::make_shared<CclCommunicator>(std::move(sub), backend_) : nullptr;
#endif
  }
  // ncclAlltoAll of the library loaded at run time, when it is >= 2.28 (looked up by name,
  // so binaries built against 2.28 headers still load with an older libnccl; RCCL: not
  // looked for, its all-to-all API differs by release).
  using AlltoallFn = ncclResult_t (*)(const void*, void*, size_t, ncclDataType_t, ncclComm_t, gpuStream_t);
  static AlltoallFn find_native_alltoall() {
#if defined(GPUCAL_GPU_HIP)
    return nullptr;
#else
    if (!nccl_has_alltoall(loaded_ccl_version())) return nullptr;
    return reinterpret_cast<AlltoallFn>(dlsym(RTLD_DEFAULT, "ncclAlltoAll"));
#endif
  }
  static std::string ccl_version_string() {
    const int v = loaded_ccl_version();
    return v ? nccl_version_text(v) : "unknown";
  }

 private:
  std::shared_ptr<World> group_;
  Backend& backend_;
  gpuStream_t stream_;
  ncclComm_t comm_ = nullptr;
  AlltoallFn native_alltoall_ = nullptr;
  std::atomic<bool> aborted_{false};
};

}  // namespace

std::shared_ptr<Communicator> make_ccl_communicator(std::shared_ptr<World> group, Backend& backend) {
  return std::make_shared<CclCommunicator>(std::move(group), backend);
}

std::string ccl_version() { return CclCommunicator::ccl_version_string(); }

}  // namespace gpucal::GPUCAL_GPU_NS
