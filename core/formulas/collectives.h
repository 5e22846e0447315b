// The collectives registry: every collective gpucal measures, imports or models, one row each,
// with the facts the benches, the importers and the communication model share: its bus-bandwidth
// family (docs/field-reference.md, "Communication formulas"), nccl-tests' size convention, the
// names other tools print for it, and whether bench_collectives runs it. bench_collectives'
// descriptors (bench_collectives/<name>.cpp) add how to run and check it; they take their name
// and facts from here.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gpucal {

// busbw = algbw * factor(n):
//   allreduce  2(n-1)/n  a ring sends and receives each byte 2(n-1)/n times
//   exchange   (n-1)/n   each rank moves all of S but its own 1/n share
//   unit       1         a pipeline moves S across every link once
enum class BusFamily { allreduce, exchange, unit };

struct CollectiveInfo {
  std::string_view name;  // gpucal's name, as in CSV rows and on every command line
  std::string_view help;  // one line: what every rank ends with
  BusFamily bus = BusFamily::unit;
  // nccl-tests' S is the total over ranks (the `count` it prints is per rank).
  bool size_total_over_ranks = false;
  bool reduces = false, rooted = false;
  bool in_bench = false;  // bench_collectives measures it (the others are imported and modelled)
  // nccl-tests' binary without _perf/_mpi (all_reduce); "" for none.
  std::string_view nccl_tests_name{};
  // NCCL's function as its TUNING log lines name it (AllReduce); "" where NCCL logs none.
  std::string_view nccl_tuning_name{};
  // Words in an OSU test's title that name it, tried in registry order; empty for none.
  std::vector<std::string_view> osu_words{};
  // Other spellings a user may type (reduce-scatter).
  std::vector<std::string_view> aliases{};
};

const std::vector<CollectiveInfo>& collectives();
// By name or alias; nullptr for another word.
const CollectiveInfo* find_collective(std::string_view name);
// The names of the collectives, all or only those bench_collectives runs.
std::vector<std::string> collective_names(bool in_bench_only = false);

}  // namespace gpucal
