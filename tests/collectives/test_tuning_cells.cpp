// --nccl-tuning-log without a GPU: a communicator that appends TUNING lines to a file the
// way NCCL does on rank 0 (one per collective, with the count it was called with) drives
// a CollectiveOp on the host backend through setup, verify and launches; annotate must
// fill nccl_algo, nccl_proto and nccl_choices from the point's own window only.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "bench_collectives/collective_list.h"
#include "bench_collectives/collective_op.h"
#include "core/errors.h"
#include "core/world/world.h"

using namespace gpucal;
using namespace gpucal::coll;

namespace {

const char* const kAlgo[] = {"TREE", "RING"};
const char* const kProto[] = {"LL", "LL128", "SIMPLE"};

// Rank 0 of an n-rank NCCL communicator as far as its log goes; moves no data.
class LoggingComm : public Communicator {
 public:
  LoggingComm(std::string path, int nranks, bool numbered) : path_(std::move(path)), n_(nranks), numbered_(numbered) {}
  int algo = 1, proto = 0;  // indices into kAlgo, kProto
  bool silent = false;      // logs nothing (NCCL_DEBUG_SUBSYS without TUNING)

  std::string library() const override { return "nccl"; }
  std::string version() const override { return "logging fake"; }
  int rank() const override { return 0; }
  int size() const override { return n_; }
  std::string unsupported(DType, bool) const override { return ""; }
  void allreduce(const void*, void*, size_t n, DType t, ReduceOp) override { log("AllReduce", n, t, false); }
  void allgather(const void*, void*, size_t n, DType t) override { log("AllGather", n, t, true); }
  void reduce_scatter(const void*, void*, size_t n, DType t, ReduceOp) override { log("ReduceScatter", n, t, true); }
  void broadcast(const void*, void*, size_t n, DType t, int) override { log("Broadcast", n, t, false); }
  void reduce(const void*, void*, size_t n, DType t, ReduceOp, int) override { log("Reduce", n, t, false); }
  void alltoall(const void*, void*, size_t, DType) override {}  // grouped send/recv: no TUNING line
  void send(const void*, size_t, DType, int) override {}
  void recv(void*, size_t, DType, int) override {}
  std::function<void()> capture_graph(const std::function<void()>&) override { throw SkipPoint("no graphs here"); }
  void abort() override {}
  std::shared_ptr<Communicator> split_first(int, std::shared_ptr<World>) override { return nullptr; }

 private:
  // Named form (NCCL >= 2.24): API count · sizeof. Numbered (2.20-2.22, RCCL): no name, and
  // allgather/reduce_scatter count the whole buffer.
  void log(const char* func, size_t count, DType t, bool per_rank_count) {
    if (silent) return;
    const size_t bytes = count * dtype_bytes(t);
    std::ofstream out(path_, std::ios::app);
    out << "gpu-node-7:4242:4250 [0] NCCL INFO ";
    if (numbered_)
      out << bytes * (per_rank_count ? static_cast<size_t>(n_) : 1) << " Bytes -> Algo " << algo << " proto " << proto
          << " time 12.500000\n";
    else
      out << func << ": " << bytes << " Bytes -> Algo " << kAlgo[algo] << " proto " << kProto[proto]
          << " channel{Lo..Hi}={0..1}\n";
    out << "gpu-node-7:4242:4251 [0] NCCL INFO Connected all rings\n";  // noise between them
  }
  std::string path_;
  int n_;
  bool numbered_;
};

struct Fixture {
  std::string path;
  std::shared_ptr<LoggingComm> comm;
  std::shared_ptr<Group> group;
  std::unique_ptr<Backend> backend = make_backend("host");
  RunConfig config;

  Fixture(int nranks, bool numbered)
      : path((std::filesystem::temp_directory_path() / ("gpucal_tuning_cells_" + std::to_string(getpid()) + ".log"))
                 .string()) {
    std::remove(path.c_str());
    comm = std::make_shared<LoggingComm>(path, nranks, numbered);
    group = std::make_shared<Group>();
    group->nranks = nranks;
    group->world = std::shared_ptr<World>(make_world(nullptr, nullptr));
    group->comm = comm;
  }
  ~Fixture() { std::remove(path.c_str()); }

  // A point's life as the driver runs it, with a choice change on the last launch.
  Row run(const CollectiveDesc& d, bool with_log = true) {
    CollectivePoint p{&d, "nccl", DType::fp16, ReduceOp::sum, false, 0, 4096, "hot", false};
    if (with_log) p.tuning_log = std::make_shared<LogTail>(path);
    CollectiveOp op(p, group);
    comm->algo = 0;
    comm->proto = 2;
    op.launch();  // before the window (an earlier point of the same shape): not counted
    op.setup(*backend, config);
    comm->algo = 1;
    comm->proto = 0;
    op.verify();
    for (int i = 0; i < 3; ++i) op.launch();
    comm->proto = 1;
    op.launch();
    Measurement m;
    m.seconds.median = m.local_seconds.median = 1e-4;
    Row row;
    EXPECT_TRUE(op.annotate(row, m));
    op.teardown();
    return row;
  }
};

}  // namespace

// Named form: the API count (allgather 512 fp16 per rank = 1024 B); numbered: the whole
// buffer (4096 B). Either way the row gets the choice of its own launches.
TEST(TuningCells, EveryCollectiveReadsItsOwnWindowInEitherForm) {
  for (bool numbered : {false, true}) {
    Fixture f(4, numbered);
    if (f.group->world->kind() != "single") GTEST_SKIP() << "needs a single-process world";
    for (const auto* d : {&allreduce_desc(), &allgather_desc(), &reduce_scatter_desc(), &broadcast_desc(), &reduce_desc()}) {
      const Row row = f.run(*d);
      EXPECT_EQ(row.get("nccl_algo"), "RING") << d->name << " numbered=" << numbered;
      EXPECT_EQ(row.get("nccl_proto"), "LL") << d->name << " numbered=" << numbered;
      // verify + 3 launches, then 1 with LL128; the TREE/SIMPLE launch before setup is not counted
      EXPECT_EQ(row.get("nccl_choices"), "RING/LL:4,RING/LL128:1") << d->name << " numbered=" << numbered;
    }
  }
}

TEST(TuningCells, AlltoallAndMissingLinesSayWhy) {
  Fixture f(4, false);
  if (f.group->world->kind() != "single") GTEST_SKIP() << "needs a single-process world";
  Row row = f.run(alltoall_desc());
  EXPECT_EQ(row.get("nccl_algo"), "");
  EXPECT_EQ(row.get("nccl_proto"), "");
  EXPECT_EQ(row.get("nccl_choices").rfind("none: all-to-all runs as point-to-point tasks", 0), 0u) << row.get("nccl_choices");

  f.comm->silent = true;
  row = f.run(allreduce_desc());
  EXPECT_EQ(row.get("nccl_algo"), "");
  EXPECT_EQ(row.get("nccl_choices"), "none: no TUNING line for AllReduce of 4096 B in " + f.path);
}

TEST(TuningCells, WithoutTheLogNoCellsAreWritten) {
  Fixture f(4, false);
  if (f.group->world->kind() != "single") GTEST_SKIP() << "needs a single-process world";
  const Row row = f.run(allreduce_desc(), false);
  EXPECT_FALSE(row.has("nccl_algo"));
  EXPECT_FALSE(row.has("nccl_proto"));
  EXPECT_FALSE(row.has("nccl_choices"));
  EXPECT_TRUE(row.has("busbw_gbps"));
}
