// The formulas users rely on: nccl-tests sizes and bus factors per collective, in-place
// layouts, exact reference reductions, point keys, axis errors.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "bench_collectives/collective_list.h"
#include "bench_collectives/collective_op.h"
#include "core/errors.h"
#include "core/formulas/collective_formulas.h"

using namespace gpucal;
using namespace gpucal::coll;

TEST(Collectives, BusFactorsFollowNcclTests) {
  for (int n : {1, 2, 3, 4, 8, 16}) {
    EXPECT_DOUBLE_EQ(allreduce_desc().bus_factor(n), 2.0 * (n - 1) / n);
    EXPECT_DOUBLE_EQ(allgather_desc().bus_factor(n), (n - 1.0) / n);
    EXPECT_DOUBLE_EQ(reduce_scatter_desc().bus_factor(n), (n - 1.0) / n);
    EXPECT_DOUBLE_EQ(alltoall_desc().bus_factor(n), (n - 1.0) / n);
    EXPECT_DOUBLE_EQ(broadcast_desc().bus_factor(n), 1.0);
    EXPECT_DOUBLE_EQ(reduce_desc().bus_factor(n), 1.0);
  }
  EXPECT_DOUBLE_EQ(allreduce_desc().bus_factor(8), 1.75);
}

TEST(Collectives, SizeIsTheTotalBufferForAllgatherAndReduceScatter) {
  // S = 4096 fp32 elements at 4 ranks.
  Counts c = allgather_desc().counts(4096, 4, 4);
  EXPECT_EQ(c.send, 1024);  // each rank contributes S/n
  EXPECT_EQ(c.recv, 4096);  // and receives S
  EXPECT_EQ(c.param, 1024);  // nccl-tests prints the per-rank count
  c = reduce_scatter_desc().counts(4096, 4, 4);
  EXPECT_EQ(c.send, 4096);
  EXPECT_EQ(c.recv, 1024);
  EXPECT_EQ(c.param, 1024);
  c = alltoall_desc().counts(4096, 4, 4);
  EXPECT_EQ(c.send, 4096);
  EXPECT_EQ(c.recv, 4096);
  EXPECT_EQ(c.param, 1024);  // per peer
  for (const auto* d : {&allreduce_desc(), &broadcast_desc(), &reduce_desc()}) {
    c = d->counts(4096, 4, 4);
    EXPECT_EQ(c.send, 4096) << d->name;
    EXPECT_EQ(c.recv, 4096) << d->name;
    EXPECT_EQ(c.param, 4096) << d->name;
  }
}

// nccl-tests' getCollByteCount: (count / nranks) & ~(16 / eltSize - 1), and `size` is
// max(sendBytes, recvBytes) of what runs.
TEST(Collectives, OddSizesRoundDownPerRankToSixteenBytesAsNcclTests) {
  EXPECT_EQ(rank_block(250, 4, 3), 80);   // 1000 B fp32 at 3 ranks: 83 -> 80 elements
  EXPECT_EQ(rank_block(1000, 1, 3), 320);  // fp8: multiples of 16 elements
  EXPECT_EQ(rank_block(125, 8, 3), 40);   // fp64: multiples of 2
  EXPECT_EQ(rank_block(2, 4, 2), 0);      // 8 B at 2 ranks: nothing left
  Counts c = allgather_desc().counts(1000 / 4, 4, 3);
  EXPECT_EQ(c.param, 80);
  EXPECT_EQ(run_bytes(c, 4), 960);
  c = reduce_scatter_desc().counts(1000 / 4, 4, 3);
  EXPECT_EQ(run_bytes(c, 4), 960);
  c = alltoall_desc().counts(1000 / 4, 4, 3);
  EXPECT_EQ(c.param, 80);
  EXPECT_EQ(run_bytes(c, 4), 960);
  // allreduce, broadcast, reduce take any whole count: 1002 B of fp32 runs 1000 B.
  c = allreduce_desc().counts(1002 / 4, 4, 3);
  EXPECT_EQ(run_bytes(c, 4), 1000);
  EXPECT_EQ(c.param, 250);
}

TEST(Collectives, InPlaceLayoutsAreNccls) {
  const Counts ag{1024, 4096};
  EXPECT_EQ(allgather_desc().in_place_send_offset(2, ag), 2048);
  EXPECT_EQ(allgather_desc().in_place_recv_offset(2, ag), 0);
  const Counts rs{4096, 1024};
  EXPECT_EQ(reduce_scatter_desc().in_place_send_offset(3, rs), 0);
  EXPECT_EQ(reduce_scatter_desc().in_place_recv_offset(3, rs), 3072);
}

TEST(Collectives, InputsReduceExactlyInEveryDtype) {
  for (DType t : {DType::fp64, DType::fp32, DType::fp16, DType::bf16, DType::fp8_e4m3, DType::fp8_e5m2, DType::int32})
    for (int n : {2, 3, 8, 64, 1000}) {
      Reference ref{n, 0, ReduceOp::sum, t, {}};
      double worst = 0;
      for (int64_t i = 0; i < 50; ++i) {
        double partial = 0;
        for (int r = 0; r < n; ++r) {
          const double v = ref.input(r, i);
          EXPECT_EQ(v, std::trunc(v));
          EXPECT_LE(std::fabs(v), 4);
          partial += v;
          worst = std::max(worst, std::fabs(partial));
        }
        worst = std::max(worst, std::fabs(ref.reduced(i)));
      }
      const double limit = t == DType::fp16 ? 2048 : t == DType::bf16 ? 256 : t == DType::fp8_e4m3 ? 16 : t == DType::fp8_e5m2 ? 8 : 1e7;
      EXPECT_LE(worst, limit) << to_string(t) << " n=" << n;
    }
}

TEST(Collectives, ReferenceOps) {
  Reference ref{3, 0, ReduceOp::max, DType::fp32, {}};
  for (int64_t i = 0; i < 10; ++i) {
    const double a = ref.input(0, i), b = ref.input(1, i), c = ref.input(2, i);
    ref.op = ReduceOp::max;
    EXPECT_EQ(ref.reduced(i), std::max({a, b, c}));
    ref.op = ReduceOp::min;
    EXPECT_EQ(ref.reduced(i), std::min({a, b, c}));
    ref.op = ReduceOp::sum;
    EXPECT_EQ(ref.reduced(i), a + b + c);
    ref.op = ReduceOp::avg;
    EXPECT_DOUBLE_EQ(ref.reduced(i), (a + b + c) / 3);
  }
  Reference ints{3, 0, ReduceOp::avg, DType::int32, {}};
  for (int64_t i = 0; i < 10; ++i) EXPECT_EQ(ints.reduced(i), std::trunc((ints.input(0, i) + ints.input(1, i) + ints.input(2, i)) / 3));
}

TEST(Collectives, ExpectedValuesFollowTheDataMovement) {
  const int n = 3;
  Reference ref{n, 1, ReduceOp::sum, DType::fp32, alltoall_desc().counts(12, 4, n)};
  // alltoall: element j of rank r comes from rank j/per, block r of its input.
  EXPECT_EQ(alltoall_desc().expected(ref, 2, 5), ref.input(1, 2 * 4 + 1));
  ref.counts = allgather_desc().counts(12, 4, n);
  EXPECT_EQ(allgather_desc().expected(ref, 0, 9), ref.input(2, 1));
  ref.counts = reduce_scatter_desc().counts(12, 4, n);
  EXPECT_EQ(reduce_scatter_desc().expected(ref, 2, 3), ref.reduced(2 * 4 + 3));
  EXPECT_EQ(broadcast_desc().expected(ref, 0, 7), ref.input(1, 7));
  EXPECT_TRUE(std::isnan(reduce_desc().expected(ref, 0, 7)));
  EXPECT_EQ(reduce_desc().expected(ref, 1, 7), ref.reduced(7));
}

TEST(Collectives, PointKeysAreUniqueAndReadable) {
  CollectivePoint p{&allreduce_desc(), "nccl", DType::fp32, ReduceOp::sum, false, 0, 8192, "hot", false};
  EXPECT_EQ(p.key(4), "collectives/nccl/allreduce/fp32/sum/n4/oop/8K/hot");
  std::set<std::string> keys;
  for (const auto* d : all_collectives())
    for (ReduceOp op : {ReduceOp::sum, ReduceOp::max})
      for (int root : {0, 1})
        for (bool ip : {false, true}) {
          CollectivePoint q{d, "mpi", DType::bf16, op, ip, root, 1 << 20, "hot", false};
          keys.insert(q.key(2));
        }
  // reducing: 2 ops; rooted: 2 roots; everything: 2 placements.
  EXPECT_EQ(keys.size(), 2u * 2 /*allreduce*/ + 2 /*allgather*/ + 2 * 2 /*rs*/ + 2 * 2 /*bcast*/ + 2 * 2 * 2 /*reduce*/ + 2);
}

// The registry walk: every descriptor the bench runs has its registry row, marked in_bench, and
// every in_bench row has a descriptor; every row says what it does and how nccl-tests names it.
TEST(Collectives, RegistryAndDescriptorsAgree) {
  std::set<std::string> described;
  for (const auto* d : all_collectives()) {
    ASSERT_NE(find_collective(d->name), nullptr) << d->name;
    EXPECT_TRUE(d->info().in_bench) << d->name;
    EXPECT_TRUE(d->counts && d->in_place_send_offset && d->in_place_recv_offset && d->expected && d->issue) << d->name;
    described.insert(d->name);
  }
  std::set<std::string_view> nccl_tests_names, names;
  for (const auto& c : collectives()) {
    EXPECT_FALSE(c.help.empty()) << c.name;
    EXPECT_FALSE(c.nccl_tests_name.empty()) << c.name;
    EXPECT_TRUE(nccl_tests_names.insert(c.nccl_tests_name).second) << c.name;
    EXPECT_TRUE(names.insert(c.name).second) << c.name;
    for (const auto alias : c.aliases) EXPECT_EQ(find_collective(alias), &c) << alias;
    EXPECT_EQ(c.in_bench, described.count(std::string(c.name)) == 1) << c.name;
    for (int n : {2, 3, 8}) EXPECT_GT(bus_factor(std::string(c.name), n), 0.0) << c.name;
  }
}

TEST(Collectives, ParsingNamesTheAcceptedValues) {
  EXPECT_EQ(parse_collectives("all").size(), 6u);
  EXPECT_EQ(parse_collectives("reduce-scatter").front()->name, "reduce_scatter");
  EXPECT_EQ(parse_collectives("all_gather,bcast").back()->name, "broadcast");
  EXPECT_THROW(parse_collectives("allreduce,all_reduce"), UsageError);
  EXPECT_THROW(parse_collectives("allreduse"), UsageError);
  EXPECT_THROW(parse_reduce_op("prod"), UsageError);
  EXPECT_EQ(parse_reduce_op_list("sum,avg").size(), 2u);
  EXPECT_FALSE(collective_dtype(DType::tf32));
  EXPECT_TRUE(collective_dtype(DType::fp8_e5m2));
}
