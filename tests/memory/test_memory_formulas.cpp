// bench_memory's formulas (kernel_table.h): bytes moved and working set of every kernel
// against its closed form, the read kernel's partial sums, fma_chain flops, the shared
// kernel names (core/formulas/kernel_table.h), the sets and the cache-level helpers.
#include <gtest/gtest.h>

#include <cctype>
#include <map>

#include "bench_memory/cache_levels.h"
#include "core/formulas/kernel_table.h"
#include "core/formulas/stream_ops.h"
#include "bench_memory/memory_point.h"
#include "bench_memory/memory_sets.h"
#include "core/errors.h"

using namespace gpucal;
using namespace gpucal::memory;

namespace {

int64_t moved(const char* kernel, Dims d, DType t) { return bytes_moved(find_kernel(kernel), d, t); }

}  // namespace

TEST(MemoryFormulas, KernelNamesAreTheSharedOnes) {
  const std::vector<std::string> expected = {
      "copy", "scale", "add", "triad", "read", "fma_chain", "layernorm_fwd", "layernorm_bwd", "rmsnorm_fwd",
      "rmsnorm_bwd", "softmax_fwd", "softmax_bwd", "gelu_fwd", "gelu_bwd", "swiglu_fwd", "swiglu_bwd", "residual_add",
      "dropout_residual_add", "cross_entropy_fwd", "cross_entropy_bwd", "adamw_step"};
  EXPECT_EQ(kernel_names(), expected);
  EXPECT_THROW(find_kernel("stream_copy"), UsageError);
}

TEST(MemoryFormulas, StreamCountsStreamsBytes) {
  // STREAM: copy and scale move 2 arrays, add and triad 3 (no write-allocate traffic).
  for (DType t : {DType::fp32, DType::bf16}) {
    const int64_t n = 1 << 20, s = static_cast<int64_t>(dtype_bytes(t));
    const Dims d{n, 0, 0};
    EXPECT_EQ(moved("copy", d, t), 2 * n * s);
    EXPECT_EQ(moved("scale", d, t), 2 * n * s);
    EXPECT_EQ(moved("add", d, t), 3 * n * s);
    EXPECT_EQ(moved("triad", d, t), 3 * n * s);
    EXPECT_EQ(moved("read", d, t), n * s + 4 * 256);  // + the 256 fp32 partial sums it writes
    EXPECT_EQ(moved("fma_chain", d, t), 2 * n * s);
    EXPECT_EQ(working_set_bytes(find_kernel("triad"), d, t), 3 * n * s);
  }
}

// The STREAM walk: every STREAM row but copy and read has a functor in stream_ops.h that
// reads as many tensors as its row (n elements each) and writes one.
TEST(MemoryFormulas, StreamRowsHaveTheirFormula) {
  int with_formula = 0;
  for (const KernelDesc& k : kernel_table()) {
    if (k.family != Family::stream) continue;
    const StreamOperands o = stream_operands(k);
    int reads = 0;
    for (const TensorSpec& t : k.tensors) reads += t.access != Access::write;
    const bool found = with_stream_op(k.id, [&](auto op) {
      EXPECT_EQ(decltype(op)::inputs, reads) << k.name;
      EXPECT_EQ(output_tensors(k).size(), 1u) << k.name;
      for (const TensorSpec& t : k.tensors) EXPECT_EQ(t.extent, Extent::n) << k.name;
    });
    EXPECT_EQ(found, k.id != Kernel::copy && k.id != Kernel::read) << k.name;
    EXPECT_GE(o.x, 0) << k.name;
    EXPECT_GE(o.out, 0) << k.name;
    with_formula += found;
  }
  EXPECT_GE(with_formula, 3);
  // The formulas by hand (q = 3); triad's operands are its row's b and c: a = b + q*c.
  EXPECT_EQ(ScaleOp{}(2.0, 0.0, 3.0), 6.0);
  EXPECT_EQ(AddOp{}(2.0, 5.0, 3.0), 7.0);
  EXPECT_EQ(TriadOp{}(2.0, 5.0, 3.0), 17.0);
  const StreamOperands triad = stream_operands(find_kernel("triad"));
  EXPECT_EQ(triad.x, 0);
  EXPECT_EQ(triad.y, 1);
  EXPECT_EQ(triad.out, 2);
}

TEST(MemoryFormulas, RowOpsMoveTheirMinimum) {
  const int64_t R = 300, C = 1000;
  const Dims d{0, R, C};
  for (DType t : {DType::fp32, DType::bf16, DType::fp16}) {
    const int64_t s = static_cast<int64_t>(dtype_bytes(t)), RC = R * C;
    // read x, gamma, beta; write y, mean and rstd (fp32)
    EXPECT_EQ(moved("layernorm_fwd", d, t), 2 * RC * s + 2 * C * s + 8 * R);
    // read dy, x, gamma, mean, rstd; write dx, dgamma, dbeta
    EXPECT_EQ(moved("layernorm_bwd", d, t), 3 * RC * s + 3 * C * s + 8 * R);
    EXPECT_EQ(moved("rmsnorm_fwd", d, t), 2 * RC * s + C * s + 4 * R);
    EXPECT_EQ(moved("rmsnorm_bwd", d, t), 3 * RC * s + 2 * C * s + 4 * R);
    EXPECT_EQ(moved("softmax_fwd", d, t), 2 * RC * s);
    EXPECT_EQ(moved("softmax_bwd", d, t), 3 * RC * s);
    EXPECT_EQ(moved("gelu_fwd", d, t), 2 * RC * s);
    EXPECT_EQ(moved("gelu_bwd", d, t), 3 * RC * s);
    EXPECT_EQ(moved("swiglu_fwd", d, t), 3 * RC * s);
    EXPECT_EQ(moved("swiglu_bwd", d, t), 5 * RC * s);
    EXPECT_EQ(moved("residual_add", d, t), 3 * RC * s);
    EXPECT_EQ(moved("dropout_residual_add", d, t), 3 * RC * s + RC);  // + the 1-byte mask
    // logits, int32 targets; loss and lse in fp32
    EXPECT_EQ(moved("cross_entropy_fwd", d, t), RC * s + 4 * R + 8 * R);
    EXPECT_EQ(moved("cross_entropy_bwd", d, t), 2 * RC * s + 8 * R);
    EXPECT_EQ(working_set_bytes(find_kernel("swiglu_bwd"), d, t), 5 * RC * s);
  }
}

TEST(MemoryFormulas, AdamWReadsFourWritesThree) {
  const Dims d{1000, 0, 0};
  EXPECT_EQ(moved("adamw_step", d, DType::fp32), 7 * 1000 * 4);   // p, g, m, v read; p, m, v written
  EXPECT_EQ(moved("adamw_step", d, DType::bf16), 7 * 1000 * 2);
  EXPECT_EQ(working_set_bytes(find_kernel("adamw_step"), d, DType::fp32), 4 * 1000 * 4);
}

// The closed forms docs/bench_memory.md's kernel table shows (gpucal list memory-kernels).
TEST(MemoryFormulas, BytesFormulasInClosedForm) {
  const std::map<std::string, std::string> expected{
      {"copy", "2ns"},           {"triad", "3ns"},
      {"read", "ns + 4*slots"},  {"layernorm_fwd", "2RCs + 2Cs + 8R"},
      {"layernorm_bwd", "3RCs + 3Cs + 8R"}, {"rmsnorm_bwd", "3RCs + 2Cs + 4R"},
      {"swiglu_bwd", "5RCs"},    {"dropout_residual_add", "3RCs + RC"},
      {"cross_entropy_fwd", "RCs + 12R"}, {"cross_entropy_bwd", "2RCs + 8R"},
      {"adamw_step", "7ns"}};
  for (const auto& [name, formula] : expected) EXPECT_EQ(bytes_formula(find_kernel(name)), formula) << name;
  // Every row's formula evaluated at a point is its bytes_moved.
  const Dims d{1 << 16, 64, 1024};
  for (const auto& k : kernel_table()) {
    std::string f = bytes_formula(k);
    EXPECT_FALSE(f.empty()) << k.name;
    int64_t total = 0;
    for (size_t start = 0; start < f.size();) {
      const size_t end = std::min(f.find(" + ", start), f.size());
      std::string term = f.substr(start, end - start);
      start = end + 3;
      size_t digits = 0;
      while (digits < term.size() && std::isdigit(static_cast<unsigned char>(term[digits]))) ++digits;
      int64_t value = digits ? std::stoll(term.substr(0, digits)) : 1;
      term = term.substr(digits);
      if (!term.empty() && term[0] == '*') term = term.substr(1);
      for (const auto& [symbol, size] : std::vector<std::pair<std::string, int64_t>>{
               {"slots", read_slots(d.n)}, {"RC", d.rows * d.cols}, {"n", d.n}, {"C", d.cols}, {"R", d.rows}})
        if (term.rfind(symbol, 0) == 0) {
          value *= size;
          term = term.substr(symbol.size());
          break;
        }
      if (term == "s" || term == "*s") value *= 4;
      total += value;
    }
    EXPECT_EQ(total, bytes_moved(k, d, DType::fp32)) << k.name << ": " << f;
  }
}

TEST(MemoryFormulas, ReadSlotsAndChunks) {
  EXPECT_EQ(read_slots(1), 1);
  EXPECT_EQ(read_slots(4095), 1);
  EXPECT_EQ(read_slots(8192), 2);
  EXPECT_EQ(read_slots(int64_t{1} << 40), 1024);
  for (int64_t n : {int64_t{1}, int64_t{1000}, int64_t{12345}, int64_t{1} << 22, (int64_t{1} << 22) + 7}) {
    const int64_t slots = read_slots(n), chunk = read_chunk(n);
    EXPECT_GE(slots * chunk, n);
    EXPECT_LT((slots - 1) * chunk, n);  // every slot holds at least one element
  }
}

TEST(MemoryFormulas, FmaChainFlops) {
  EXPECT_EQ(kFmaSteps % 2, 1);  // odd: a kernel that skips the chain fails verification
  EXPECT_DOUBLE_EQ(fma_chain_flops(1000), 2.0 * 1000 * kFmaSteps);
}

TEST(MemoryFormulas, PointKeys) {
  EXPECT_EQ((MemoryPoint{Kernel::triad, DType::fp32, Dims{1 << 20, 0, 0}}.key("host", "hot")), "memory/host/triad/fp32/4M/hot");
  EXPECT_EQ((MemoryPoint{Kernel::copy, DType::bf16, Dims{2048, 0, 0}}.key("gpucal", "hot")), "memory/gpucal/copy/bf16/4K/hot");
  EXPECT_EQ((MemoryPoint{Kernel::fma_chain, DType::fp16, Dims{1 << 24, 0, 0}}.key("gpucal", "hot")),
            "memory/gpucal/fma_chain/fp16/n16M/hot");
  EXPECT_EQ((MemoryPoint{Kernel::layernorm_fwd, DType::bf16, Dims{0, 4096, 4096}}.key("cudnn", "cold")),
            "memory/cudnn/layernorm_fwd/bf16/r4096/c4096/cold");
  EXPECT_EQ((MemoryPoint{Kernel::adamw_step, DType::fp32, Dims{67108864, 0, 0}}.key("gpucal", "hot")),
            "memory/gpucal/adamw_step/fp32/p67108864/hot");
}

TEST(MemoryFormulas, Sets) {
  EXPECT_EQ(swiglu_ffn(4096), 11008);
  EXPECT_EQ(swiglu_ffn(5120), 13824);
  EXPECT_EQ(swiglu_ffn(8192), 22016);
  for (const auto& name : set_names()) {
    std::set<Kernel> kernels;
    for (const SetPoint& p : named_set(name)) kernels.insert(p.kernel);
    EXPECT_EQ(kernels.size(), kernel_table().size()) << name << " covers every kernel";
  }
  int64_t top = 0;
  for (const SetPoint& p : named_set("llm")) top = std::max(top, p.stream_bytes);
  EXPECT_EQ(top, int64_t{1} << 30);  // >= 4x the largest last-level cache listed (MI300X's 256 MB)
  EXPECT_THROW(named_set("huge"), UsageError);
}

TEST(MemoryFormulas, CacheHelpers) {
  EXPECT_EQ(count_cpu_list("0-3,8,10-11"), 7);
  EXPECT_EQ(count_cpu_list("5"), 1);
  EXPECT_EQ(count_cpu_list(""), 0);
  EXPECT_EQ(count_cpu_list("3-1"), 0);
  const std::vector<CacheLevel> levels = {{"L1d", 64 << 10, 32 << 10, 2, "t"}, {"L2", 2 << 20, 1 << 20, 2, "t"},
                                          {"L3", 32 << 20, 32 << 20, 1, "t"}};
  EXPECT_EQ(last_level_bytes(levels), 32 << 20);
  EXPECT_EQ(placement(levels, 64 << 10), "L1d");
  EXPECT_EQ(placement(levels, (64 << 10) + 1), "L2");
  EXPECT_EQ(placement(levels, 33 << 20), "memory");
  DeviceInfo mi300x;
  mi300x.backend = "hip";
  mi300x.name = "AMD Instinct MI300X";
  mi300x.arch = "gfx942";
  mi300x.l2_bytes = 4 << 20;
  const auto gpu = cache_levels(mi300x);
  ASSERT_EQ(gpu.size(), 2u);
  EXPECT_EQ(gpu[0].bytes, 32 << 20);  // 8 XCDs x 4 MB
  EXPECT_EQ(gpu[1].name, "MALL");
  EXPECT_EQ(last_level_bytes(gpu), 256 << 20);
}

TEST(MemoryFormulas, CopyReferenceIsTheMemoryPlateau) {
  RunContext ctx;
  ctx.llc_bytes = 1 << 20;
  std::string why;
  EXPECT_FALSE(ctx.copy_reference(DType::fp32, why));
  EXPECT_NE(why.find(">= 4x the last-level cache"), std::string::npos);
  ctx.record_copy(DType::fp32, 2 << 20, 500);   // in cache: not the plateau
  EXPECT_FALSE(ctx.copy_reference(DType::fp32, why));
  ctx.record_copy(DType::fp32, 4 << 20, 100);
  ctx.record_copy(DType::fp32, 8 << 20, 120);
  ctx.record_copy(DType::fp32, 16 << 20, 90);
  auto ref = ctx.copy_reference(DType::fp32, why);
  ASSERT_TRUE(ref);
  EXPECT_DOUBLE_EQ(ref->gbps, 100);  // median
  ref = ctx.copy_reference(DType::bf16, why);  // another dtype moves bytes the same way
  ASSERT_TRUE(ref);
  EXPECT_NE(ref->describe.find("copy fp32"), std::string::npos);
}
