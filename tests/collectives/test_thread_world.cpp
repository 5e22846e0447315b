// The single-process launch mode's building blocks: ThreadWorld (agreement, reductions,
// broadcast, gather, split, node facts) and the threads communicator on host memory
// (every collective, in and out of place, every reduction, send/recv), each checked by
// every thread against values it computes itself. EXPECT only, never ASSERT: an ASSERT
// returns one thread early and leaves the others waiting in a barrier forever.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <stdexcept>
#include <thread>
#include <vector>

#include "core/world/comm.h"
#include "core/backend/element_convert.h"
#include "core/world/thread_world.h"

using namespace gpucal;

namespace {

// Runs fn(world) on n threads, one rank each.
void run_team(int n, const std::function<void(std::shared_ptr<World>)>& fn) {
  auto worlds = make_thread_worlds(n);
  std::vector<std::thread> threads;
  for (auto& w : worlds) {
    std::shared_ptr<World> shared(std::move(w));
    threads.emplace_back([shared, &fn] { fn(shared); });
  }
  for (auto& t : threads) t.join();
}

TEST(ThreadWorld, AgreementReductionsBroadcastGather) {
  for (int n : {1, 3, 4}) {
    run_team(n, [n](std::shared_ptr<World> w) {
      const int r = w->rank();
      EXPECT_EQ(w->size(), n);
      EXPECT_EQ(w->kind(), "threads");
      EXPECT_TRUE(w->all_agree(true));
      EXPECT_FALSE(w->all_agree(r != n - 1));
      EXPECT_EQ(w->max_across(r * 1.5), (n - 1) * 1.5);
      EXPECT_EQ(w->min_across(r + 10.0), 10.0);
      EXPECT_EQ(w->sum_across(r + 1), static_cast<int64_t>(n) * (n + 1) / 2);
      std::vector<unsigned char> bytes;
      const int root = n - 1;
      if (r == root) bytes = {7, 8, 9, static_cast<unsigned char>(200 + root)};
      w->broadcast(bytes, root);
      EXPECT_EQ(bytes.size(), 4u);
      if (bytes.size() == 4) EXPECT_EQ(bytes[3], 200 + root);
      const auto all = w->gather_strings("rank" + std::to_string(r));
      if (r == 0) {
        EXPECT_EQ(static_cast<int>(all.size()), n);
        for (int i = 0; i < n && i < static_cast<int>(all.size()); ++i) EXPECT_EQ(all[static_cast<size_t>(i)], "rank" + std::to_string(i));
      } else {
        EXPECT_TRUE(all.empty());
      }
      // Many exchanges in a row: no member may overwrite a slot another still reads.
      for (int i = 0; i < 200; ++i) EXPECT_EQ(w->sum_across(i + r), static_cast<int64_t>(n) * i + n * (n - 1) / 2);
      EXPECT_EQ(w->nodes(), 1);
      EXPECT_EQ(w->local_rank(), r);
      EXPECT_EQ(w->local_size(), n);
    });
  }
}

TEST(ThreadWorld, SplitOrdersByKeyThenRank) {
  run_team(5, [](std::shared_ptr<World> w) {
    const int r = w->rank();
    // Evens and odds, each ordered by descending parent rank; rank 4 stays out.
    auto sub = w->split(r == 4 ? -1 : r % 2, -r);
    EXPECT_EQ(sub == nullptr, r == 4);
    if (sub) {  // (a wrong split hangs its peers here: the test's TIMEOUT fails it)
      EXPECT_EQ(sub->size(), 2);
      EXPECT_EQ(sub->rank(), r < 2 ? 1 : 0);  // {2,0} and {3,1}
      EXPECT_EQ(sub->sum_across(r), r % 2 == 0 ? 2 : 4);
      // A split of a split, and the --ranks building block.
      auto first = sub->split_first(1);
      EXPECT_EQ(first != nullptr, sub->rank() == 0);
      if (first) EXPECT_EQ(first->sum_across(1), 1);
    }
    for (int k = 1; k <= 5; ++k) {
      auto f = w->split_first(k);
      EXPECT_EQ(f != nullptr, r < k);
      if (f) {
        EXPECT_EQ(f->size(), k);
        EXPECT_EQ(f->rank(), r);
        EXPECT_EQ(f->max_across(r), k - 1);
      }
    }
  });
}

TEST(ThreadWorld, FakeNodesForTests) {
  setenv("GPUCAL_TEST_RANKS_PER_NODE", "2", 1);
  run_team(4, [](std::shared_ptr<World> w) {
    EXPECT_EQ(w->nodes(), 2);
    EXPECT_EQ(w->node(), w->rank() / 2);
    EXPECT_EQ(w->local_rank(), w->rank() % 2);
    auto pair = w->split_first(2);
    if (pair) EXPECT_EQ(pair->nodes(), 1);
  });
  unsetenv("GPUCAL_TEST_RANKS_PER_NODE");
}

// Input element i of rank r: small integers, exact in every dtype under any order.
double input(int r, size_t i) { return static_cast<double>((r + 1) * static_cast<int>(i % 3) - static_cast<int>(i % 5)); }

double reduced(int n, size_t i, ReduceOp op, DType t) {
  double acc = input(0, i);
  for (int r = 1; r < n; ++r) {
    const double v = input(r, i);
    acc = op == ReduceOp::max ? std::max(acc, v) : op == ReduceOp::min ? std::min(acc, v) : acc + v;
  }
  if (op == ReduceOp::avg) acc = t == DType::int32 ? static_cast<double>(static_cast<int64_t>(acc) / n) : acc / n;
  return acc;
}

struct Buffers {
  std::vector<char> send, recv;
};

void fill(std::vector<char>& buf, DType t, size_t count, size_t first, int r) {
  for (size_t i = 0; i < count; ++i) elem::store_from_double(buf.data(), i, static_cast<int>(t), input(r, first + i));
}
void poison(std::vector<char>& buf, DType t) {
  for (size_t i = 0; i < buf.size() / dtype_bytes(t); ++i) elem::store_from_double(buf.data(), i, static_cast<int>(t), -99);
}
double at(const void* base, DType t, size_t i) { return elem::load_as_double(base, i, static_cast<int>(t)); }

TEST(ThreadCommunicator, EveryCollectiveDtypeOpPlacement) {
  const size_t count = 12;  // divisible by 3 and 4 ranks
  for (int n : {3, 4})
    run_team(n, [n, count](std::shared_ptr<World> w) {
      auto comm = make_host_communicator(w);
      EXPECT_EQ(comm->library(), "shm");
      const int r = comm->rank();
      const size_t block = count / static_cast<size_t>(n);
      for (DType t : {DType::fp64, DType::fp32, DType::bf16, DType::int32})
        for (bool in_place : {false, true}) {
          const size_t es = dtype_bytes(t);
          std::vector<char> a(count * es), b(count * es);
          for (ReduceOp op : {ReduceOp::sum, ReduceOp::max, ReduceOp::min, ReduceOp::avg}) {
            if (op == ReduceOp::avg && t == DType::bf16) continue;  // avg of integers is not exact in bf16
            // allreduce
            fill(a, t, count, 0, r);
            poison(b, t);
            comm->allreduce(a.data(), in_place ? a.data() : b.data(), count, t, op);
            const void* out = in_place ? a.data() : b.data();
            for (size_t i = 0; i < count; ++i) EXPECT_EQ(at(out, t, i), reduced(n, i, op, t)) << to_string(t) << " i=" << i;
            // reduce_scatter: rank r gets block r of the reduction
            fill(a, t, count, 0, r);
            poison(b, t);
            void* rs_out = in_place ? a.data() + block * es * static_cast<size_t>(r) : b.data();
            comm->reduce_scatter(a.data(), rs_out, block, t, op);
            for (size_t i = 0; i < block; ++i) EXPECT_EQ(at(rs_out, t, i), reduced(n, block * static_cast<size_t>(r) + i, op, t));
            // reduce to root 1
            fill(a, t, count, 0, r);
            poison(b, t);
            comm->reduce(a.data(), in_place ? a.data() : b.data(), count, t, op, 1);
            if (r == 1)
              for (size_t i = 0; i < count; ++i) EXPECT_EQ(at(in_place ? a.data() : b.data(), t, i), reduced(n, i, op, t));
          }
          // allgather: block p of the output is rank p's input block
          poison(b, t);
          std::vector<char> mine(block * es);
          fill(mine, t, block, 0, r);
          if (in_place) std::memcpy(b.data() + block * es * static_cast<size_t>(r), mine.data(), mine.size());
          comm->allgather(in_place ? b.data() + block * es * static_cast<size_t>(r) : mine.data(), b.data(), block, t);
          for (int p = 0; p < n; ++p)
            for (size_t i = 0; i < block; ++i) EXPECT_EQ(at(b.data(), t, block * static_cast<size_t>(p) + i), input(p, i));
          // broadcast from the last rank
          fill(a, t, count, 0, r);
          poison(b, t);
          comm->broadcast(a.data(), in_place ? a.data() : b.data(), count, t, n - 1);
          for (size_t i = 0; i < count; ++i) EXPECT_EQ(at(in_place ? a.data() : b.data(), t, i), input(n - 1, i));
          // alltoall: block p of my output is block r of rank p's input
          fill(a, t, count, 0, r);
          poison(b, t);
          comm->alltoall(a.data(), in_place ? a.data() : b.data(), block, t);
          for (int p = 0; p < n; ++p)
            for (size_t i = 0; i < block; ++i)
              EXPECT_EQ(at(in_place ? a.data() : b.data(), t, block * static_cast<size_t>(p) + i),
                        input(p, block * static_cast<size_t>(r) + i));
        }
      // Sub-communicators of the first two ranks.
      auto sub = comm->split_first(2, w->split_first(2));
      EXPECT_EQ(sub != nullptr, r < 2);
      if (sub) {
        int32_t v = r + 5, out = -1;
        sub->allreduce(&v, &out, 1, DType::int32, ReduceOp::sum);
        EXPECT_EQ(out, 11);
      }
    });
}

TEST(ThreadCommunicator, SendRecvGroupedRingAndBlockingPair) {
  run_team(4, [](std::shared_ptr<World> w) {
    auto comm = make_host_communicator(w);
    const int r = comm->rank(), n = comm->size();
    std::vector<unsigned char> out(1000), in(1000, 0);
    for (size_t i = 0; i < out.size(); ++i) out[i] = static_cast<unsigned char>(r * 31 + i);
    for (int round = 0; round < 3; ++round) {
      std::fill(in.begin(), in.end(), 0);
      comm->group_start();
      comm->send(out.data(), out.size(), DType::uint8, (r + 1) % n);
      comm->recv(in.data(), in.size(), DType::uint8, (r + n - 1) % n);
      comm->group_end();
      const int from = (r + n - 1) % n;
      for (size_t i = 0; i < in.size(); ++i) EXPECT_EQ(in[i], static_cast<unsigned char>(from * 31 + i));
    }
    // Outside a group: rank 0 sends then receives, rank 1 the reverse (a rendezvous each).
    if (r < 2) {
      std::fill(in.begin(), in.end(), 0);
      if (r == 0) {
        comm->send(out.data(), 10, DType::uint8, 1);
        comm->recv(in.data(), 10, DType::uint8, 1);
      } else {
        comm->recv(in.data(), 10, DType::uint8, 0);
        comm->send(out.data(), 10, DType::uint8, 0);
      }
      EXPECT_EQ(in[9], static_cast<unsigned char>((1 - r) * 31 + 9));
    }
    EXPECT_THROW(comm->send(out.data(), 1, DType::uint8, r), std::invalid_argument);
    w->barrier();
  });
}

// nccl-tests' gather: one group in which every rank sends its block to the root and the root
// receives every block, its own included (NCCL and MPI take a send/recv to the rank itself
// inside a group).
void gather_in_a_group(Communicator& c, int root) {
  const int r = c.rank(), n = c.size();
  std::vector<int32_t> mine(4, 100 * r + 1), all(4 * static_cast<size_t>(n), -1);
  c.group_start();
  c.send(mine.data(), mine.size(), DType::int32, root);
  if (r == root)
    for (int p = 0; p < n; ++p) c.recv(all.data() + 4 * p, 4, DType::int32, p);
  c.group_end();
  if (r == root)
    for (int p = 0; p < n; ++p) EXPECT_EQ(all[4 * static_cast<size_t>(p) + 3], 100 * p + 1);
}

TEST(ThreadCommunicator, GroupedSendRecvToItselfGathers) {
  run_team(3, [](std::shared_ptr<World> w) {
    auto comm = make_host_communicator(w);
    for (int root : {0, 2}) gather_in_a_group(*comm, root);
  });
  // One rank: the threads communicator and the single-process one (no MPI world).
  run_team(1, [](std::shared_ptr<World> w) {
    gather_in_a_group(*make_thread_communicator(w), 0);
    auto self = make_mpi_communicator(w);
    gather_in_a_group(*self, 0);
    std::vector<int32_t> buf(4);
    EXPECT_THROW(self->send(buf.data(), 4, DType::int32, 0), std::exception);  // outside a group
  });
}

TEST(ThreadCommunicator, MismatchedMessageSizeIsAnError) {
  run_team(2, [](std::shared_ptr<World> w) {
    auto comm = make_host_communicator(w);
    std::vector<char> buf(64);
    if (comm->rank() == 0) {
      comm->send(buf.data(), 64, DType::uint8, 1);  // released even though the receiver rejects it
    } else {
      EXPECT_THROW(comm->recv(buf.data(), 32, DType::uint8, 0), std::runtime_error);
    }
  });
}

TEST(ThreadCommunicator, NeedsAThreadWorldAndHasNoGraphs) {
  run_team(1, [](std::shared_ptr<World> w) {
    auto comm = make_thread_communicator(w);
    EXPECT_THROW(comm->capture_graph([] {}), std::exception);
  });
}

}  // namespace
