// --graph: a collective is issued eagerly (and completed) before its graph is captured.
// NCCL >= 2.22 connects lazily at the first collective, which must not happen inside a
// capture. A communicator that records its calls drives a CollectiveOp on the host backend.
#include <gtest/gtest.h>

#include "bench_collectives/collective_list.h"
#include "bench_collectives/collective_op.h"
#include "core/errors.h"
#include "core/world/world.h"

using namespace gpucal;
using namespace gpucal::coll;

namespace {

class RecordingComm : public Communicator {
 public:
  std::vector<std::string> calls;
  bool capturing = false;

  std::string library() const override { return "nccl"; }
  std::string version() const override { return "recording fake"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string unsupported(DType, bool) const override { return ""; }
  void allreduce(const void*, void*, size_t, DType, ReduceOp) override { note("allreduce"); }
  void allgather(const void*, void*, size_t, DType) override { note("allgather"); }
  void reduce_scatter(const void*, void*, size_t, DType, ReduceOp) override { note("reduce_scatter"); }
  void broadcast(const void*, void*, size_t, DType, int) override { note("broadcast"); }
  void reduce(const void*, void*, size_t, DType, ReduceOp, int) override { note("reduce"); }
  void alltoall(const void*, void*, size_t, DType) override { note("alltoall"); }
  void send(const void*, size_t, DType, int) override {}
  void recv(void*, size_t, DType, int) override {}
  std::function<void()> capture_graph(const std::function<void()>& issue) override {
    calls.push_back("capture_begin");
    capturing = true;
    issue();
    capturing = false;
    calls.push_back("capture_end");
    return [this] { calls.push_back("replay"); };
  }
  void abort() override {}
  std::shared_ptr<Communicator> split_first(int, std::shared_ptr<World>) override { return nullptr; }

 private:
  void note(const std::string& name) { calls.push_back(capturing ? name + "(captured)" : name); }
};

}  // namespace

TEST(GraphWarmup, EagerCollectiveBeforeTheCapture) {
  auto comm = std::make_shared<RecordingComm>();
  auto group = std::make_shared<Group>();
  group->world = std::shared_ptr<World>(make_world(nullptr, nullptr));
  group->comm = comm;
  std::unique_ptr<Backend> backend = make_backend("host");
  RunConfig config;
  for (const auto* d : {&allreduce_desc(), &allgather_desc(), &broadcast_desc()}) {
    comm->calls.clear();
    CollectivePoint p{d, "nccl", DType::fp32, ReduceOp::sum, false, 0, 4096, "hot", true};
    CollectiveOp op(p, group);
    op.setup(*backend, config);
    ASSERT_EQ(comm->calls.size(), 4u) << d->name;
    EXPECT_EQ(comm->calls[0], d->name) << "an eager launch comes first";
    EXPECT_EQ(comm->calls[1], "capture_begin");
    EXPECT_EQ(comm->calls[2], d->name + "(captured)");
    EXPECT_EQ(comm->calls[3], "capture_end");
    op.launch();
    EXPECT_EQ(comm->calls.back(), "replay");
    op.teardown();
  }
}
