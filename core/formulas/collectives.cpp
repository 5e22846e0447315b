#include "core/formulas/collectives.h"

#include <algorithm>

namespace gpucal {

const std::vector<CollectiveInfo>& collectives() {
  static const std::vector<CollectiveInfo> table{
      {.name = "allreduce", .help = "every rank ends with the reduction of all inputs",
       .bus = BusFamily::allreduce, .reduces = true, .in_bench = true, .nccl_tests_name = "all_reduce",
       .nccl_tuning_name = "AllReduce", .osu_words = {"allreduce"}, .aliases = {"all_reduce", "all-reduce"}},
      {.name = "allgather", .help = "every rank ends with every rank's block",
       .bus = BusFamily::exchange, .size_total_over_ranks = true, .in_bench = true,
       .nccl_tests_name = "all_gather", .nccl_tuning_name = "AllGather", .osu_words = {"allgather"},
       .aliases = {"all_gather", "all-gather"}},
      {.name = "reduce_scatter", .help = "every rank ends with its block of the reduction",
       .bus = BusFamily::exchange, .size_total_over_ranks = true, .reduces = true, .in_bench = true,
       .nccl_tests_name = "reduce_scatter", .nccl_tuning_name = "ReduceScatter",
       .osu_words = {"reduce_scatter", "reduce-scatter", "reduce scatter"},
       .aliases = {"reduce-scatter", "reducescatter"}},
      {.name = "alltoall", .help = "every rank sends a distinct block to every rank",
       .bus = BusFamily::exchange, .size_total_over_ranks = true, .in_bench = true,
       .nccl_tests_name = "alltoall", .osu_words = {"all-to-all", "alltoall"},
       .aliases = {"all_to_all", "all-to-all"}},
      {.name = "broadcast", .help = "every rank ends with the root's buffer", .rooted = true, .in_bench = true,
       .nccl_tests_name = "broadcast", .nccl_tuning_name = "Broadcast", .osu_words = {"broadcast", "bcast"},
       .aliases = {"bcast"}},
      {.name = "reduce", .help = "the root ends with the reduction of all inputs", .reduces = true,
       .rooted = true, .in_bench = true, .nccl_tests_name = "reduce", .nccl_tuning_name = "Reduce",
       .osu_words = {"reduce"}},
      {.name = "sendrecv", .help = "each rank sends to the next and receives from the previous (imported)",
       .nccl_tests_name = "sendrecv"},
      {.name = "gather", .help = "the root ends with every rank's block (imported)", .bus = BusFamily::exchange,
       .size_total_over_ranks = true, .rooted = true, .nccl_tests_name = "gather"},
      {.name = "scatter", .help = "every rank ends with its block of the root's buffer (imported)",
       .bus = BusFamily::exchange, .size_total_over_ranks = true, .rooted = true, .nccl_tests_name = "scatter"},
      {.name = "hypercube", .help = "nccl-tests' hypercube exchange (imported)", .bus = BusFamily::exchange,
       .size_total_over_ranks = true, .nccl_tests_name = "hypercube"},
  };
  return table;
}

const CollectiveInfo* find_collective(std::string_view name) {
  for (const auto& c : collectives()) {
    if (c.name == name) return &c;
    if (std::find(c.aliases.begin(), c.aliases.end(), name) != c.aliases.end()) return &c;
  }
  return nullptr;
}

std::vector<std::string> collective_names(bool in_bench_only) {
  std::vector<std::string> out;
  for (const auto& c : collectives())
    if (!in_bench_only || c.in_bench) out.emplace_back(c.name);
  return out;
}

}  // namespace gpucal
