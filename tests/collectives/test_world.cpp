// World checks. Without MPI in the environment it checks the single-process world and
// node_layout; under `mpirun -np N` (the world_mpi test) every rank checks the reductions,
// gathers, broadcasts and splits against values it can compute itself. Exit 0 on every
// rank when all hold.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/world/world.h"

using namespace gpucal;

namespace {
int failures = 0;
#define EXPECT(cond)                                                                          \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      std::fprintf(stderr, "test_world: rank check failed at line %d: %s\n", __LINE__, #cond); \
      ++failures;                                                                             \
    }                                                                                         \
  } while (0)

void check_node_layout() {
  const std::vector<std::string> hosts = {"a", "a", "b", "b", "a", "c"};
  NodeLayout l = node_layout(hosts, 4);
  EXPECT(l.nodes == 3);
  EXPECT(l.node == 0);
  EXPECT(l.local_rank == 2);
  EXPECT(l.local_size == 3);
  l = node_layout(hosts, 3);
  EXPECT(l.node == 1 && l.local_rank == 1 && l.local_size == 2);
  l = node_layout({"only"}, 0);
  EXPECT(l.nodes == 1 && l.node == 0 && l.local_rank == 0 && l.local_size == 1);
}

void check_world(World& w) {
  const int r = w.rank(), n = w.size();
  EXPECT(n >= 1 && r >= 0 && r < n);
  EXPECT(w.all_agree(true));
  EXPECT(!w.all_agree(r != n - 1));
  EXPECT(w.max_across(r * 1.5) == (n - 1) * 1.5);
  EXPECT(w.min_across(r + 10.0) == 10.0);
  EXPECT(w.sum_across(r + 1) == static_cast<int64_t>(n) * (n + 1) / 2);
  std::vector<unsigned char> bytes;
  if (r == 0) bytes = {1, 2, 3, 250};
  w.broadcast(bytes, 0);
  EXPECT(bytes.size() == 4 && bytes[3] == 250);
  const auto all = w.gather_strings("rank" + std::to_string(r));
  if (r == 0) {
    EXPECT(static_cast<int>(all.size()) == n);
    for (int i = 0; i < static_cast<int>(all.size()); ++i) EXPECT(all[static_cast<size_t>(i)] == "rank" + std::to_string(i));
  } else {
    EXPECT(all.empty());
  }
  EXPECT(w.local_rank() < w.local_size() && w.node() < w.nodes());
  // Sub-worlds of the first k ranks, the --ranks sweep's building block.
  for (int k = 1; k <= n; k *= 2) {
    auto sub = w.split_first(k);
    EXPECT((sub != nullptr) == (r < k));
    if (!sub) continue;
    EXPECT(sub->size() == k && sub->rank() == r);
    EXPECT(sub->sum_across(1) == k);
    EXPECT(sub->max_across(r) == k - 1);
  }
  // GPUCAL_TEST_RANKS_PER_NODE=2 (set by the test): pairs of ranks form fake nodes.
  if (const char* per = std::getenv("GPUCAL_TEST_RANKS_PER_NODE")) {
    const int p = std::atoi(per);
    EXPECT(w.nodes() == (n + p - 1) / p);
    EXPECT(w.node() == r / p && w.local_rank() == r % p);
    if (auto sub = w.split_first(p)) EXPECT(sub->nodes() == 1);
  }
  w.barrier();
}
}  // namespace

int main(int argc, char** argv) {
  auto world = make_world(&argc, &argv);
  if (world->is_root()) check_node_layout();
  check_world(*world);
  const int64_t total = world->sum_across(failures);
  if (world->is_root()) std::printf("test_world: %s world, %d rank(s), %lld failed check(s)\n", world->kind().c_str(), world->size(), static_cast<long long>(total));
  return total == 0 ? 0 : 1;
}
