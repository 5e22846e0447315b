#include "core/formulas/collective_formulas.h"

#include <cmath>
#include <stdexcept>

#include "core/formulas/collectives.h"

namespace gpucal {

namespace {

using Family = BusFamily;

std::optional<Family> family_of(const std::string& c) {
  const CollectiveInfo* info = find_collective(c);
  if (info == nullptr || info->name != c) return std::nullopt;  // gpucal's names only, as before
  return info->bus;
}

void check_ranks(int nranks) {
  if (nranks < 1)
    throw std::invalid_argument("bus factor: nranks must be >= 1, got " + std::to_string(nranks));
}

}  // namespace

double allreduce_bus_factor(int nranks) {
  return 2.0 * (nranks - 1) / nranks;
}
double exchange_bus_factor(int nranks) {
  return static_cast<double>(nranks - 1) / nranks;
}
double unit_bus_factor(int) {
  return 1.0;
}

double bus_factor(const std::string& collective, int nranks) {
  check_ranks(nranks);
  const auto f = family_of(collective);
  if (!f) throw std::invalid_argument("unknown collective '" + collective + "'");
  switch (*f) {
    case Family::allreduce:
      return allreduce_bus_factor(nranks);
    case Family::exchange:
      return exchange_bus_factor(nranks);
    case Family::unit:
      return unit_bus_factor(nranks);
  }
  return 1.0;
}

bool is_known_collective(const std::string& collective) {
  return family_of(collective).has_value();
}

bool size_is_total_over_ranks(const std::string& collective) {
  const CollectiveInfo* info = find_collective(collective);
  return info != nullptr && info->name == collective && info->size_total_over_ranks;
}

std::optional<int> nranks_from_bus_ratio(const std::string& collective, double ratio, double tolerance) {
  const auto f = family_of(collective);
  if (!f || *f == Family::unit || !(ratio > 0)) return std::nullopt;
  // allreduce: f = 2(n-1)/n -> n = 2/(2-f); exchange: f = (n-1)/n -> n = 1/(1-f).
  const double denominator = *f == Family::allreduce ? 2.0 - ratio : 1.0 - ratio;
  if (!(denominator > 0)) return std::nullopt;
  const double n = (*f == Family::allreduce ? 2.0 : 1.0) / denominator;
  const double rounded = std::round(n);
  if (rounded < 2 || std::abs(n - rounded) > tolerance * rounded) return std::nullopt;
  return static_cast<int>(rounded);
}

}  // namespace gpucal
