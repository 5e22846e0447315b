// MPI collectives on host memory: the host backend's communicator, so every collective
// path runs in CI under mpirun. fp16/bf16/fp8 travel as contiguous bytes with user-defined
// reductions (MPI has no such types); avg is a sum divided by the rank count afterwards
// (MPI has no avg; integers truncate toward zero like NCCL's). Where MPI's in-place
// convention differs from NCCL's (reduce_scatter writes its block at the start of the
// buffer), the result is moved to NCCL's place, so one reference checks every library.
#include <cstring>
#include <map>
#include <mutex>

#include "core/world/comm.h"
#include "core/backend/element_convert.h"
#include "core/errors.h"
#if defined(GPUCAL_HAVE_MPI)
#include "core/world/mpi_check.h"
#endif

namespace gpucal {

namespace {

#if defined(GPUCAL_HAVE_MPI)

// The user reductions need the element type; MPI hands them only the datatype handle.
std::mutex g_types_mu;
std::map<MPI_Datatype, DType> g_byte_types;  // contiguous-byte datatype -> element type

DType dtype_of(MPI_Datatype* dt) {
  std::lock_guard<std::mutex> lock(g_types_mu);
  return g_byte_types.at(*dt);
}

template <typename Combine>
void reduce_elements(void* in, void* inout, int* len, MPI_Datatype* dt, Combine combine) {
  const int code = static_cast<int>(dtype_of(dt));
  for (int i = 0; i < *len; ++i) {
    const double a = elem::load_as_double(in, static_cast<uint64_t>(i), code);
    const double b = elem::load_as_double(inout, static_cast<uint64_t>(i), code);
    elem::store_from_double(inout, static_cast<uint64_t>(i), code, combine(a, b));
  }
}
void user_sum(void* in, void* inout, int* len, MPI_Datatype* dt) {
  reduce_elements(in, inout, len, dt, [](double a, double b) { return a + b; });
}
void user_max(void* in, void* inout, int* len, MPI_Datatype* dt) {
  reduce_elements(in, inout, len, dt, [](double a, double b) { return a > b ? a : b; });
}
void user_min(void* in, void* inout, int* len, MPI_Datatype* dt) {
  reduce_elements(in, inout, len, dt, [](double a, double b) { return a < b ? a : b; });
}

class MpiCommunicator : public Communicator {
 public:
  explicit MpiCommunicator(std::shared_ptr<World> group)
      : group_(std::move(group)), comm_(reinterpret_cast<MPI_Comm>(group_->native_handle())) {
    if (!comm_) throw std::logic_error("MPI communicator needs an MPI world");
    for (DType t : {DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2}) {
      MPI_Datatype dt;
      MPI_CHECK(MPI_Type_contiguous(static_cast<int>(dtype_bytes(t)), MPI_BYTE, &dt));
      MPI_CHECK(MPI_Type_commit(&dt));
      byte_types_[t] = dt;
      std::lock_guard<std::mutex> lock(g_types_mu);
      g_byte_types[dt] = t;
    }
    MPI_CHECK(MPI_Op_create(&user_sum, 1, &user_ops_[0]));
    MPI_CHECK(MPI_Op_create(&user_max, 1, &user_ops_[1]));
    MPI_CHECK(MPI_Op_create(&user_min, 1, &user_ops_[2]));
  }
  ~MpiCommunicator() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    for (auto& op : user_ops_) MPI_Op_free(&op);
    for (auto& [t, dt] : byte_types_) {
      {
        std::lock_guard<std::mutex> lock(g_types_mu);
        g_byte_types.erase(dt);
      }
      MPI_Type_free(&dt);
    }
  }
  std::string library() const override { return "mpi"; }
  std::string version() const override {
    char v[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    MPI_Get_library_version(v, &len);
    std::string s(v, static_cast<size_t>(len));
    return s.substr(0, s.find_first_of(",\n"));
  }
  int rank() const override { return group_->rank(); }
  int size() const override { return group_->size(); }
  std::string unsupported(DType t, bool) const override {
    return collective_dtype(t) ? "" : "MPI collectives here carry fp64, fp32, fp16, bf16, fp8 and int32, not " + to_string(t);
  }

  void allreduce(const void* send, void* recv, size_t count, DType t, ReduceOp op) override {
    MPI_CHECK(MPI_Allreduce(send == recv ? MPI_IN_PLACE : send, recv, icount(count), type(t), mpi_op(t, op), comm_));
    finish_avg(recv, count, t, op);
  }
  void allgather(const void* send, void* recv, size_t send_count, DType t) override {
    const bool in_place = send == static_cast<const char*>(recv) + bytes(t, send_count) * static_cast<size_t>(rank());
    MPI_CHECK(MPI_Allgather(in_place ? MPI_IN_PLACE : send, icount(send_count), type(t), recv, icount(send_count),
                            type(t), comm_));
  }
  void reduce_scatter(const void* send, void* recv, size_t recv_count, DType t, ReduceOp op) override {
    const size_t block = bytes(t, recv_count);
    const bool in_place = recv == static_cast<const char*>(send) + block * static_cast<size_t>(rank());
    if (in_place) {
      void* buf = const_cast<void*>(send);
      MPI_CHECK(MPI_Reduce_scatter_block(MPI_IN_PLACE, buf, icount(recv_count), type(t), mpi_op(t, op), comm_));
      if (rank() != 0) std::memmove(recv, buf, block);  // MPI leaves it at the start; NCCL at rank*block
    } else {
      MPI_CHECK(MPI_Reduce_scatter_block(send, recv, icount(recv_count), type(t), mpi_op(t, op), comm_));
    }
    finish_avg(recv, recv_count, t, op);
  }
  void broadcast(const void* send, void* recv, size_t count, DType t, int root) override {
    // The root sends from `send`; every rank, the root included, ends with the data in `recv`.
    void* buf = rank() == root ? const_cast<void*>(send) : recv;
    MPI_CHECK(MPI_Bcast(buf, icount(count), type(t), root, comm_));
    if (rank() == root && send != recv) std::memcpy(recv, send, bytes(t, count));
  }
  void reduce(const void* send, void* recv, size_t count, DType t, ReduceOp op, int root) override {
    const void* s = rank() == root && send == recv ? MPI_IN_PLACE : send;
    MPI_CHECK(MPI_Reduce(s, recv, icount(count), type(t), mpi_op(t, op), root, comm_));
    if (rank() == root) finish_avg(recv, count, t, op);
  }
  void alltoall(const void* send, void* recv, size_t count_per_peer, DType t) override {
    MPI_CHECK(MPI_Alltoall(send == recv ? MPI_IN_PLACE : send, icount(count_per_peer), type(t), recv,
                           icount(count_per_peer), type(t), comm_));
  }
  // Inside a group, sends and receives are posted nonblocking and complete together at
  // group_end (NCCL's group semantics: a rank may send and receive at once, bidir/ring).
  void send(const void* buf, size_t count, DType t, int peer) override {
    if (group_depth_ == 0) {
      MPI_CHECK(MPI_Send(buf, icount(count), type(t), peer, 0, comm_));
      return;
    }
    pending_.emplace_back();
    MPI_CHECK(MPI_Isend(buf, icount(count), type(t), peer, 0, comm_, &pending_.back()));
  }
  void recv(void* buf, size_t count, DType t, int peer) override {
    if (group_depth_ == 0) {
      MPI_CHECK(MPI_Recv(buf, icount(count), type(t), peer, 0, comm_, MPI_STATUS_IGNORE));
      return;
    }
    pending_.emplace_back();
    MPI_CHECK(MPI_Irecv(buf, icount(count), type(t), peer, 0, comm_, &pending_.back()));
  }
  void group_start() override { ++group_depth_; }
  void group_end() override {
    if (group_depth_ == 0 || --group_depth_ > 0 || pending_.empty()) return;
    std::vector<MPI_Request> requests;
    requests.swap(pending_);
    MPI_CHECK(MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE));
  }
  std::function<void()> capture_graph(const std::function<void()>&) override {
    throw SkipPoint("graph launch needs a GPU communicator (nccl/rccl), not MPI on host memory");
  }
  void abort() override {}  // the World's MPI_Abort ends every rank
  std::shared_ptr<Communicator> split_first(int, std::shared_ptr<World> sub) override {
    return sub ? make_mpi_communicator(std::move(sub)) : nullptr;
  }

 private:
  static int icount(size_t count) {
    if (count > static_cast<size_t>(INT32_MAX))
      throw SkipPoint("MPI counts are 32-bit: " + std::to_string(count) + " elements is too many");
    return static_cast<int>(count);
  }
  static size_t bytes(DType t, size_t count) { return dtype_bytes(t) * count; }
  MPI_Datatype type(DType t) const {
    switch (t) {
      case DType::fp64: return MPI_DOUBLE;
      case DType::fp32: return MPI_FLOAT;
      case DType::int32: return MPI_INT32_T;
      case DType::uint8: return MPI_UINT8_T;  // raw bytes of point-to-point messages
      default: {
        auto it = byte_types_.find(t);
        if (it == byte_types_.end()) throw SkipPoint("no MPI datatype for " + to_string(t));
        return it->second;
      }
    }
  }
  MPI_Op mpi_op(DType t, ReduceOp op) const {
    const bool native = t == DType::fp64 || t == DType::fp32 || t == DType::int32;
    switch (op) {
      case ReduceOp::sum:
      case ReduceOp::avg: return native ? MPI_SUM : user_ops_[0];
      case ReduceOp::max: return native ? MPI_MAX : user_ops_[1];
      case ReduceOp::min: return native ? MPI_MIN : user_ops_[2];
    }
    return MPI_SUM;
  }
  void finish_avg(void* buf, size_t count, DType t, ReduceOp op) const {
    if (op != ReduceOp::avg) return;
    const int code = static_cast<int>(t);
    const int n = size();
    if (t == DType::int32) {
      auto* p = static_cast<int32_t*>(buf);
      for (size_t i = 0; i < count; ++i) p[i] /= n;
      return;
    }
    for (size_t i = 0; i < count; ++i)
      elem::store_from_double(buf, i, code, elem::load_as_double(buf, i, code) / n);
  }

  std::shared_ptr<World> group_;
  MPI_Comm comm_;
  std::map<DType, MPI_Datatype> byte_types_;
  MPI_Op user_ops_[3] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};
  int group_depth_ = 0;
  std::vector<MPI_Request> pending_;  // sends/receives posted inside the open group
};

#endif  // GPUCAL_HAVE_MPI

// A group of one rank without MPI (a plain, single-process run): every collective is a
// copy from send to recv (avg over one rank is the value itself).
class SelfCommunicator : public Communicator {
 public:
  std::string library() const override { return "mpi"; }
  std::string version() const override { return "none (single process)"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string unsupported(DType t, bool) const override {
    return collective_dtype(t) ? "" : "collectives carry fp64, fp32, fp16, bf16, fp8 and int32, not " + to_string(t);
  }
  void allreduce(const void* s, void* r, size_t n, DType t, ReduceOp) override { copy(s, r, n, t); }
  void allgather(const void* s, void* r, size_t n, DType t) override { copy(s, r, n, t); }
  void reduce_scatter(const void* s, void* r, size_t n, DType t, ReduceOp) override { copy(s, r, n, t); }
  void broadcast(const void* s, void* r, size_t n, DType t, int) override { copy(s, r, n, t); }
  void reduce(const void* s, void* r, size_t n, DType t, ReduceOp, int) override { copy(s, r, n, t); }
  void alltoall(const void* s, void* r, size_t n, DType t) override { copy(s, r, n, t); }
  // Only to itself inside a group (gather's root receiving its own block), completed at group_end.
  void send(const void* buf, size_t count, DType t, int peer) override {
    check_self(peer);
    sends_.push_back({const_cast<void*>(buf), count * dtype_bytes(t)});
  }
  void recv(void* buf, size_t count, DType t, int peer) override {
    check_self(peer);
    receives_.push_back({buf, count * dtype_bytes(t)});
  }
  void group_start() override { ++group_depth_; }
  void group_end() override {
    if (group_depth_ == 0 || --group_depth_ > 0) return;
    std::vector<Message> sends, receives;
    sends.swap(sends_);
    receives.swap(receives_);
    if (sends.size() != receives.size())
      throw std::runtime_error("a group of one rank posted " + std::to_string(sends.size()) + " send(s) and " +
                               std::to_string(receives.size()) + " receive(s) to itself");
    for (size_t i = 0; i < sends.size(); ++i) {
      if (sends[i].bytes != receives[i].bytes)
        throw std::runtime_error("a receive of " + std::to_string(receives[i].bytes) + " bytes matched a send of " +
                                 std::to_string(sends[i].bytes));
      if (sends[i].buf != receives[i].buf) std::memcpy(receives[i].buf, sends[i].buf, sends[i].bytes);
    }
  }
  std::function<void()> capture_graph(const std::function<void()>&) override {
    throw SkipPoint("graph launch needs a GPU communicator (nccl/rccl)");
  }
  void abort() override {}
  std::shared_ptr<Communicator> split_first(int, std::shared_ptr<World> sub) override {
    return sub ? std::make_shared<SelfCommunicator>() : nullptr;
  }

 private:
  struct Message {
    void* buf;
    size_t bytes;
  };
  static void copy(const void* s, void* r, size_t n, DType t) {
    if (s != r) std::memcpy(r, s, n * dtype_bytes(t));
  }
  void check_self(int peer) const {
    if (peer != 0 || group_depth_ == 0) throw SkipPoint("send/recv needs two ranks");
  }
  int group_depth_ = 0;
  std::vector<Message> sends_, receives_;
};

}  // namespace

std::shared_ptr<Communicator> make_mpi_communicator(std::shared_ptr<World> group) {
#if defined(GPUCAL_HAVE_MPI)
  if (group->native_handle()) return std::make_shared<MpiCommunicator>(std::move(group));
#endif
  if (group->size() != 1) throw std::logic_error("a multi-rank group without MPI");
  return std::make_shared<SelfCommunicator>();
}

}  // namespace gpucal
