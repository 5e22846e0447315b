// Collectives between the threads of one process on host memory: the host backend's
// communicator in the single-process launch mode (--threads N), so that mode runs in CI as
// MPI does under mpirun. Every call is one exchange of buffer pointers (all inputs are
// ready), each rank reading its peers' buffers and writing its own output, and a closing
// barrier (no peer still reads my buffers when I return). Where my output overlaps an
// input a peer still reads (in-place allreduce, reduce and alltoall) the result goes
// through a scratch buffer copied after the barrier. Reductions follow NCCL: fp32, fp64
// and int32 in their own type, fp16/bf16/fp8 through float, avg = sum / n (integers
// truncate toward zero). Point-to-point messages are posted to the team's mailbox and
// copied by the receiver; inside group_start/group_end they complete together.
#include <cstring>
#include <limits>

#include "core/world/comm.h"
#include "core/backend/element_convert.h"
#include "core/errors.h"
#include "core/world/thread_world.h"

namespace gpucal {

namespace {

template <typename T>
T combine(ReduceOp op, T acc, T v) {
  return op == ReduceOp::max ? (v > acc ? v : acc) : op == ReduceOp::min ? (v < acc ? v : acc) : acc + v;  // avg sums
}

template <typename T, typename Acc>
void reduce_typed(const std::vector<const char*>& ins, size_t offset, char* out, size_t count, ReduceOp op, int n) {
  for (size_t i = 0; i < count; ++i) {
    Acc acc = reinterpret_cast<const T*>(ins[0] + offset)[i];
    for (size_t p = 1; p < ins.size(); ++p) acc = combine<Acc>(op, acc, reinterpret_cast<const T*>(ins[p] + offset)[i]);
    if (op == ReduceOp::avg) acc = acc / static_cast<Acc>(n);
    reinterpret_cast<T*>(out)[i] = static_cast<T>(acc);
  }
}

// out[i] = op over p of element i of the array at ins[p] + offset (bytes), i < count.
// Reads every input of element i before writing out[i], so out may be one of the inputs
// at the same element (in-place reduce_scatter).
void reduce_into(const std::vector<const char*>& ins, size_t offset, void* out, size_t count, DType t, ReduceOp op) {
  const int n = static_cast<int>(ins.size());
  char* o = static_cast<char*>(out);
  switch (t) {
    case DType::fp64: return reduce_typed<double, double>(ins, offset, o, count, op, n);
    case DType::fp32: return reduce_typed<float, float>(ins, offset, o, count, op, n);
    case DType::int32: return reduce_typed<int32_t, int64_t>(ins, offset, o, count, op, n);
    default: break;
  }
  const int code = static_cast<int>(t);
  const size_t first = offset / dtype_bytes(t);
  for (size_t i = 0; i < count; ++i) {
    double acc = elem::load_as_double(ins[0], first + i, code);
    for (int p = 1; p < n; ++p) acc = combine(op, acc, elem::load_as_double(ins[static_cast<size_t>(p)], first + i, code));
    if (op == ReduceOp::avg) acc /= n;
    elem::store_from_double(out, i, code, acc);
  }
}

class ThreadCommunicator : public Communicator {
 public:
  explicit ThreadCommunicator(std::shared_ptr<World> group) : group_(std::move(group)) {
    world_ = dynamic_cast<ThreadWorld*>(group_.get());
    if (!world_) throw std::logic_error("the threads communicator needs a ThreadWorld");
  }
  std::string library() const override { return "shm"; }
  std::string version() const override { return "gpucal threads (host shared memory)"; }
  int rank() const override { return world_->rank(); }
  int size() const override { return world_->size(); }
  std::string unsupported(DType t, bool) const override {
    return collective_dtype(t) ? "" : "collectives carry fp64, fp32, fp16, bf16, fp8 and int32, not " + to_string(t);
  }

  void allreduce(const void* s, void* r, size_t count, DType t, ReduceOp op) override {
    const auto ins = inputs(s);
    const bool alias = s == r;  // peers read my input where I would write
    void* out = alias ? scratch(count * dtype_bytes(t)) : r;
    reduce_into(ins, 0, out, count, t, op);
    world_->barrier();
    if (alias) std::memcpy(r, out, count * dtype_bytes(t));
  }
  void allgather(const void* s, void* r, size_t send_count, DType t) override {
    const auto ins = inputs(s);
    const size_t block = send_count * dtype_bytes(t);
    for (int p = 0; p < size(); ++p) {
      char* dst = static_cast<char*>(r) + block * static_cast<size_t>(p);
      if (dst != ins[static_cast<size_t>(p)]) std::memcpy(dst, ins[static_cast<size_t>(p)], block);
    }
    world_->barrier();
  }
  void reduce_scatter(const void* s, void* r, size_t recv_count, DType t, ReduceOp op) override {
    const auto ins = inputs(s);
    // In place, r is my own block of s, which peers do not read: element-wise safe.
    reduce_into(ins, recv_count * dtype_bytes(t) * static_cast<size_t>(rank()), r, recv_count, t, op);
    world_->barrier();
  }
  void broadcast(const void* s, void* r, size_t count, DType t, int root) override {
    const auto ins = inputs(s);
    const char* src = ins[static_cast<size_t>(root)];
    if (src != r) std::memcpy(r, src, count * dtype_bytes(t));
    world_->barrier();
  }
  void reduce(const void* s, void* r, size_t count, DType t, ReduceOp op, int root) override {
    const auto ins = inputs(s);
    const bool mine = rank() == root, alias = mine && s == r;
    void* out = alias ? scratch(count * dtype_bytes(t)) : r;
    if (mine) reduce_into(ins, 0, out, count, t, op);
    world_->barrier();
    if (alias) std::memcpy(r, out, count * dtype_bytes(t));
  }
  void alltoall(const void* s, void* r, size_t count_per_peer, DType t) override {
    const auto ins = inputs(s);
    const size_t block = count_per_peer * dtype_bytes(t);
    const bool alias = s == r;
    char* out = alias ? static_cast<char*>(scratch(block * static_cast<size_t>(size()))) : static_cast<char*>(r);
    for (int p = 0; p < size(); ++p)
      std::memcpy(out + block * static_cast<size_t>(p), ins[static_cast<size_t>(p)] + block * static_cast<size_t>(rank()),
                  block);
    world_->barrier();
    if (alias) std::memcpy(r, out, block * static_cast<size_t>(size()));
  }

  void send(const void* buf, size_t count, DType t, int peer) override {
    check_peer(peer);
    auto msg = std::make_unique<ThreadTeam::Message>();
    msg->data = buf;
    msg->bytes = count * dtype_bytes(t);
    ThreadTeam& team = world_->team();
    {
      std::lock_guard<std::mutex> lock(team.mu);
      team.mailbox[{rank(), peer}].push_back(msg.get());
    }
    team.cv.notify_all();
    sent_.push_back(std::move(msg));
    if (group_depth_ == 0) complete();
  }
  void recv(void* buf, size_t count, DType t, int peer) override {
    check_peer(peer);
    receives_.push_back({buf, count * dtype_bytes(t), peer});
    if (group_depth_ == 0) complete();
  }
  void group_start() override { ++group_depth_; }
  void group_end() override {
    if (group_depth_ > 0 && --group_depth_ == 0) complete();
  }
  std::function<void()> capture_graph(const std::function<void()>&) override {
    throw SkipPoint("graph launch needs a GPU communicator (nccl/rccl), not threads on host memory");
  }
  void abort() override {}  // the watchdog's World::abort ends the process, every thread
  std::shared_ptr<Communicator> split_first(int, std::shared_ptr<World> sub) override {
    return sub ? std::make_shared<ThreadCommunicator>(std::move(sub)) : nullptr;
  }

 private:
  struct Receive {
    void* buf;
    size_t bytes;
    int peer;
  };
  std::vector<const char*> inputs(const void* mine) {
    ThreadTeam::Slot slot;
    slot.ptr = mine;
    // One barrier suffices here: the slots are read before the closing barrier of the
    // call, and nobody writes them again before passing it.
    ThreadTeam& team = world_->team();
    team.slots[static_cast<size_t>(rank())] = slot;
    team.barrier();
    std::vector<const char*> out;
    for (const auto& x : team.slots) out.push_back(static_cast<const char*>(x.ptr));
    return out;
  }
  void* scratch(size_t bytes) {
    if (scratch_.size() < bytes) scratch_.resize(bytes);
    return scratch_.data();
  }
  // A rank may address itself inside a group, as NCCL and MPI allow (gather's root receives its
  // own block); outside one its send would wait for a receive it has not posted yet.
  void check_peer(int peer) const {
    if (peer < 0 || peer >= size() || (peer == rank() && group_depth_ == 0))
      throw std::invalid_argument("send/recv peer " + std::to_string(peer) +
                                  " is not another rank of the group (a rank addresses itself only inside a group)");
  }
  // Receives in order of posting (FIFO per sender, as MPI matches one tag), then waits
  // until every send of this call or group was copied by its receiver.
  void complete() {
    ThreadTeam& team = world_->team();
    std::vector<Receive> receives;
    receives.swap(receives_);
    std::vector<std::unique_ptr<ThreadTeam::Message>> sent;
    sent.swap(sent_);
    std::string error;
    for (const Receive& r : receives) {
      ThreadTeam::Message* m = nullptr;
      {
        std::unique_lock<std::mutex> lock(team.mu);
        auto& queue = team.mailbox[{r.peer, rank()}];
        team.cv.wait(lock, [&] { return !queue.empty(); });
        m = queue.front();
        queue.pop_front();
      }
      // The copy runs unlocked, so pairs of ranks copy concurrently.
      if (m->bytes == r.bytes)
        std::memcpy(r.buf, m->data, r.bytes);
      else if (error.empty())
        error = "threads recv of " + std::to_string(r.bytes) + " bytes matched a send of " + std::to_string(m->bytes) +
                " from rank " + std::to_string(r.peer);
      {
        std::lock_guard<std::mutex> lock(team.mu);
        m->consumed = true;  // even when rejected: its sender must not wait forever
      }
      team.cv.notify_all();
    }
    {
      std::unique_lock<std::mutex> lock(team.mu);
      for (const auto& m : sent) team.cv.wait(lock, [&] { return m->consumed; });
    }
    if (!error.empty()) throw std::runtime_error(error);
  }

  std::shared_ptr<World> group_;
  ThreadWorld* world_ = nullptr;
  std::vector<char> scratch_;
  int group_depth_ = 0;
  std::vector<std::unique_ptr<ThreadTeam::Message>> sent_;
  std::vector<Receive> receives_;
};

}  // namespace

std::shared_ptr<Communicator> make_thread_communicator(std::shared_ptr<World> group) {
  return std::make_shared<ThreadCommunicator>(std::move(group));
}

std::shared_ptr<Communicator> make_host_communicator(std::shared_ptr<World> group) {
  if (dynamic_cast<ThreadWorld*>(group.get())) return make_thread_communicator(std::move(group));
  return make_mpi_communicator(std::move(group));
}

}  // namespace gpucal
