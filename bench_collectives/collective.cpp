#include "bench_collectives/collective.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/errors.h"
#include "core/driver/sweep.h"

namespace gpucal::coll {

namespace {

// Largest integer M such that every integer in [-M, M] is exact in the dtype.
double exact_integer_limit(DType t) {
  switch (t) {
    case DType::fp64: return 9007199254740992.0;  // 2^53
    case DType::fp32: return 16777216.0;          // 2^24
    case DType::fp16: return 2048.0;
    case DType::bf16: return 256.0;
    case DType::fp8_e4m3: return 16.0;
    case DType::fp8_e5m2: return 8.0;
    default: return 2147483647.0;
  }
}

}  // namespace

// Values in [-A, A] with A = min(4, M / n), so any partial sum of n of them stays within
// M and is exact whatever the order; when even A = 1 is too much (fp8 beyond 8 or 16
// ranks), only the first M ranks contribute non-zero values.
double Reference::input(int rank, int64_t index) const {
  const double limit = exact_integer_limit(dtype);
  const int64_t a = std::clamp<int64_t>(static_cast<int64_t>(limit / nranks), 1, 4);
  const int64_t contributors = std::min<int64_t>(nranks, static_cast<int64_t>(limit) / a);
  if (rank >= contributors) return 0.0;
  return static_cast<double>((rank * 5 + index * 3 + 1) % (2 * a + 1) - a);
}

double Reference::reduced(int64_t index) const {
  double acc = input(0, index);
  for (int r = 1; r < nranks; ++r) {
    const double v = input(r, index);
    if (op == ReduceOp::max) acc = std::max(acc, v);
    else if (op == ReduceOp::min) acc = std::min(acc, v);
    else acc += v;
  }
  if (op == ReduceOp::avg) acc = dtype == DType::int32 ? std::trunc(acc / nranks) : acc / nranks;
  return acc;
}

int64_t rank_block(int64_t elements, size_t esize, int nranks) {
  const int64_t per_rank = elements / nranks;
  const int64_t align = esize >= 16 ? 1 : static_cast<int64_t>(16 / esize);
  return per_rank / align * align;
}

int64_t run_bytes(const Counts& c, size_t esize) {
  return std::max(c.send, c.recv) * static_cast<int64_t>(esize);
}

const std::vector<const CollectiveDesc*>& all_collectives() {
  static const std::vector<const CollectiveDesc*> all = {&allreduce_desc(), &allgather_desc(), &reduce_scatter_desc(),
                                                         &broadcast_desc(), &reduce_desc(),    &alltoall_desc()};
  return all;
}

std::vector<const CollectiveDesc*> parse_collectives(const std::string& csv) {
  std::vector<std::string> allowed{"all"};
  for (const auto* d : all_collectives()) allowed.push_back(d->name);
  std::string normalized = csv;  // reduce-scatter is reduce_scatter
  std::replace(normalized.begin(), normalized.end(), '-', '_');
  std::vector<const CollectiveDesc*> out;
  const auto words = parse_word_list(normalized, "collective", allowed);  // the one list path
  if (words.size() > 1 && std::find(words.begin(), words.end(), "all") != words.end())
    throw UsageError("--collective: 'all' already names every collective; give it alone");
  for (const auto& item : words) {
    if (item == "all") return all_collectives();
    for (const auto* d : all_collectives())
      if (d->name == item) out.push_back(d);
  }
  return out;
}

}  // namespace gpucal::coll
