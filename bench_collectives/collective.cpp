#include "bench_collectives/collective.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/errors.h"
#include "core/driver/sweep.h"
#include "core/formulas/collective_formulas.h"
#include "core/registry/registry.h"

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

const CollectiveInfo& CollectiveDesc::info() const {
  const CollectiveInfo* row = find_collective(name);
  if (row == nullptr) throw std::logic_error("collective '" + name + "' has no row in core/formulas/collectives.cpp");
  return *row;
}

double CollectiveDesc::bus_factor(int nranks) const {
  return gpucal::bus_factor(name, nranks);
}

std::string collectives_help() {
  std::vector<CollectiveInfo> rows;
  for (const auto* d : all_collectives()) rows.push_back(d->info());
  return "all, or a list of:\n" + registry::help_lines(rows);
}

std::vector<const CollectiveDesc*> parse_collectives(const std::string& csv) {
  std::vector<std::string> allowed{"all"};
  for (const auto* d : all_collectives()) {
    allowed.push_back(d->name);
    for (const auto alias : d->info().aliases) allowed.emplace_back(alias);
  }
  std::vector<const CollectiveDesc*> out;
  auto words = parse_word_list(csv, "collective", allowed);  // the one list path
  for (auto& w : words)
    if (w != "all") w = std::string(find_collective(w)->name);  // an alias names its collective
  for (size_t i = 0; i < words.size(); ++i)
    if (std::find(words.begin(), words.begin() + i, words[i]) != words.begin() + i)
      throw UsageError("--collective: '" + words[i] + "' is named twice");
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
