// nccl-tests' bus-bandwidth conventions, in one place (bench_collectives' descriptors, the log
// importer and the communication model all use these). algbw = S / t with S the size nccl-tests
// prints; busbw = algbw * factor, the bandwidth a ring-style algorithm needs on each link.
#pragma once

#include <optional>
#include <string>

namespace gpucal {

// 2(n-1)/n: a ring allreduce sends and receives each byte 2(n-1)/n times (reduce-scatter + allgather).
double allreduce_bus_factor(int nranks);
// (n-1)/n: allgather, reduce_scatter, alltoall, gather, scatter, hypercube: each rank moves all of S
// but its own 1/n share.
double exchange_bus_factor(int nranks);
// 1: broadcast, reduce, sendrecv: a pipeline moves S across every link once.
double unit_bus_factor(int nranks);

// By name (a collective of core/formulas/collectives.h); throws std::invalid_argument for another
// name or nranks < 1.
double bus_factor(const std::string& collective, int nranks);
bool is_known_collective(const std::string& collective);

// True where nccl-tests' S is the total over ranks (its printed count is per rank).
bool size_is_total_over_ranks(const std::string& collective);

// The rank count whose bus factor equals `busbw / algbw` (a log that prints no rank list still
// prints both bandwidths): n = 2/(2-f) for allreduce, 1/(1-f) for the (n-1)/n family. nullopt
// when the collective's factor does not depend on n, or the ratio is not within `tolerance` of an
// integer rank count.
std::optional<int> nranks_from_bus_ratio(const std::string& collective, double ratio,
                                         double tolerance = 0.05);

}  // namespace gpucal
