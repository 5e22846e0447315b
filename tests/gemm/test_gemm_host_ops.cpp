// GEMM ops driven end to end on the host backend without Google Benchmark: every axis the
// host offers (fp32/fp64, layouts, batch, beta, autotune, cold-rotate), the recorded
// skips (bf16 on OpenBLAS, graphs on the host), verification catching a corrupt output, and
// the above-peak rejection.
#include <gtest/gtest.h>

#include <set>

#include "bench_gemm/gemm_formulas.h"
#include "bench_gemm/gemm_impls.h"
#include "core/driver/driver.h"
#include "core/errors.h"

using namespace gpucal;
using namespace gpucal::gemm;

namespace {

struct HostRun {
  std::unique_ptr<Backend> backend = make_backend("host");
  RunConfig config;
  std::string bench = "gemm";
  RunTally tally;
  HostRun() {
    config.regime = "hot";
    config.measure.cold = false;
    config.measure.max_time_s = 0.01;
    config.measure.warmup_time_s = 0;
    config.measure.min_samples = 3;
  }
  Row run(const GemmProblem& p, const GemmRunOptions& o = {}) {
    auto op = make_host_gemm(p, config.regime, o);
    PointContext ctx{*backend, config, bench, {}};
    return run_point(*op, ctx, nullptr, tally);
  }
};

}  // namespace

TEST(GemmHostOps, EveryLayoutBatchedWithBeta) {
  HostRun h;
  for (DType t : {DType::fp32, DType::fp64})
    for (const char* layout : {"NN", "NT", "TN", "TT"}) {
      const Row row = h.run(make_problem(t, layout, 13, 11, 41, 3, 1.5, 0.5));
      EXPECT_EQ(row.get("status"), "ok") << row.get("point") << ": " << row.get("status_detail");
      EXPECT_EQ(row.get("verified"), "ok") << row.get("point");
      EXPECT_EQ(row.get("layout"), layout);
      EXPECT_EQ(row.get("batch"), "3");
      EXPECT_EQ(row.get("algo_source"), "library");
      EXPECT_EQ(row.get("verify_method"), "host-fp64-all");
    }
  EXPECT_EQ(h.tally.failures, 0);
}

TEST(GemmHostOps, UnsupportedDtypeIsARecordedSkip) {
  HostRun h;
  for (DType t : {DType::bf16, DType::fp16, DType::fp8_e4m3, DType::int8}) {
    const Row row = h.run(make_problem(t, "TN", 16, 16, 16, 1, 1, 0));
    EXPECT_EQ(row.get("status"), "skipped") << to_string(t);
    EXPECT_NE(row.get("status_detail").find("OpenBLAS offers fp32 and fp64"), std::string::npos);
    EXPECT_EQ(row.get("dtype"), to_string(t));  // parameters are still recorded
  }
  EXPECT_EQ(h.tally.skips, 4);
  EXPECT_EQ(h.tally.failures, 0);
}

TEST(GemmHostOps, GraphIsARecordedSkipOnTheHost) {
  HostRun h;
  GemmRunOptions o;
  o.graph_launches = 4;
  const Row row = h.run(make_problem(DType::fp32, "NN", 16, 16, 16, 1, 1, 0), o);
  EXPECT_EQ(row.get("status"), "skipped");
  EXPECT_EQ(row.get("regime"), "graph");
  EXPECT_NE(row.get("status_detail").find("graph replay needs a GPU backend"), std::string::npos);
}

TEST(GemmHostOps, AutotuneAndRotate) {
  HostRun h;
  GemmRunOptions o;
  o.autotune = 4;
  o.rotate = true;
  o.best = std::make_shared<BestSoFar>();
  const Row row = h.run(make_problem(DType::fp32, "TN", 64, 48, 32, 2, 1, 0), o);
  ASSERT_EQ(row.get("status"), "ok") << row.get("status_detail");
  EXPECT_EQ(row.get("regime"), "cold-rotate");
  EXPECT_EQ(row.get("point"), "gemm/openblas/fp32/TN/m64/n48/k32/b2/autotune4/cold-rotate");
  EXPECT_EQ(row.get("algo_source"), "autotune");
  EXPECT_EQ(row.get("autotune_candidates"), "1");  // OpenBLAS has one candidate
  EXPECT_EQ(row.get("autotune_gain"), "1");
  EXPECT_GT(std::stod(row.get("heuristic_time_us")), 0);
  // (64*32 + 32*48) * 4 bytes * batch 2 = 28 KiB per copy: many copies to exceed 2x the LLC.
  EXPECT_GT(std::stoll(row.get("rotate_copies")), 2);
  EXPECT_EQ(row.get("efficiency_vs_best_so_far"), "1");
  EXPECT_EQ(o.best->entries().size(), 1u);
}

TEST(GemmHostOps, CorruptOutputFailsVerification) {
  HostRun h;
  h.config.inject_fault = "corrupt-output";
  const Row row = h.run(make_problem(DType::fp64, "NN", 8, 8, 8, 1, 1, 0));
  EXPECT_EQ(row.get("status"), "error");
  EXPECT_EQ(row.get("verified"), "fail");
  EXPECT_NE(row.get("status_detail").find("host fp64: 1 of 64"), std::string::npos) << row.get("status_detail");
  EXPECT_EQ(h.tally.failures, 1);
}

TEST(GemmHostOps, AbovePeakIsRejected) {
  HostRun h;
  auto op = make_host_gemm(make_problem(DType::fp32, "NN", 256, 256, 256, 1, 1, 0), "hot", {});
  op->setup(*h.backend, h.config);
  ASSERT_EQ(op->verify().status, "ok");
  Measurement m;
  m.seconds.median = m.seconds.p10 = m.seconds.p90 = m.seconds.min = m.seconds.max = m.seconds.mean = 1e-12;
  m.seconds.count = 10;
  Row row;
  EXPECT_FALSE(op->annotate(row, m));  // 33 PFLOP/s on a CPU: implausible
  EXPECT_GT(std::stod(row.get("efficiency")), 1.0);
  Measurement slow = m;
  slow.seconds.median = 10.0;  // 3.4 MFLOP/s: plausible
  Row ok;
  EXPECT_TRUE(op->annotate(ok, slow));
  EXPECT_EQ(ok.get("roofline_bound"), "compute");
  EXPECT_TRUE(ok.get("tiles").empty());  // no tile on the host: no wave columns
  op->teardown();
}

// Rotated copies of odd-sized operands start on 256-byte boundaries (cuBLASLt's heuristic
// assumes it): a GEMM that only records where each launch's operands are.
namespace {
class AddressRecordingGemm : public GemmOp {
 public:
  using GemmOp::GemmOp;
  std::vector<uintptr_t> addresses;
  int launches = 0;

 protected:
  void prepare() override {}
  void run(int copy) override {
    ++launches;
    addresses.push_back(reinterpret_cast<uintptr_t>(a_at(copy)));
    addresses.push_back(reinterpret_cast<uintptr_t>(b_at(copy)));
    if (c_at(copy)) addresses.push_back(reinterpret_cast<uintptr_t>(c_at(copy)));
  }
  AlgoInfo algorithm() const override { return {}; }
};
}  // namespace

TEST(GemmHostOps, RotatedCopiesAre256ByteAligned) {
  HostRun h;
  GemmRunOptions o;
  o.rotate = true;
  // 33x17 fp32 A (2244 bytes), 17x9 B (612 bytes), C read with beta: every size odd in 256ths.
  AddressRecordingGemm op(make_problem(DType::fp32, "NN", 33, 9, 17, 1, 1, 0.5), "recording", "hot", o);
  op.setup(*h.backend, h.config);
  for (int i = 0; i < 8; ++i) op.launch();  // cycles through the copies
  ASSERT_EQ(op.launches, 8);
  std::set<uintptr_t> distinct(op.addresses.begin(), op.addresses.end());
  EXPECT_GT(distinct.size(), 3u);  // several copies of each operand were used
  for (uintptr_t a : op.addresses) EXPECT_EQ(a % kOperandAlignBytes, 0u) << std::hex << a;
}

// A point the library lacks is skipped before its operands are allocated and filled: the
// llm set's 16384x32768x8192 bf16 GEMM on OpenBLAS took 5.5 s and 1 GB to become a skip row.
namespace {
class BufferProbeGemm : public GemmOp {
 public:
  using GemmOp::GemmOp;
  bool buffers_at_prepare = true;
  bool skip = true;
  bool has_buffers() const { return a_at(0) != nullptr && b_at(0) != nullptr && d() != nullptr; }

 protected:
  void prepare() override {
    buffers_at_prepare = a_at(0) != nullptr || b_at(0) != nullptr || d() != nullptr;
    if (skip) throw SkipPoint("probe: the library lacks this point");
  }
  void run(int) override {}
  AlgoInfo algorithm() const override { return {}; }
};
}  // namespace

TEST(GemmHostOps, PrepareDecidesBeforeAnyBufferIsAllocated) {
  HostRun h;
  BufferProbeGemm op(make_problem(DType::fp32, "NN", 64, 64, 64, 1, 1, 0.5), "probe", "hot", {});
  EXPECT_THROW(op.setup(*h.backend, h.config), SkipPoint);
  EXPECT_FALSE(op.buffers_at_prepare);
  EXPECT_FALSE(op.has_buffers());
  op.teardown();
  BufferProbeGemm runs(make_problem(DType::fp32, "NN", 64, 64, 64, 1, 1, 0.5), "probe", "hot", {});
  runs.skip = false;
  runs.setup(*h.backend, h.config);  // a point that runs still gets its buffers after prepare()
  EXPECT_FALSE(runs.buffers_at_prepare);
  EXPECT_TRUE(runs.has_buffers());
  runs.teardown();
}
