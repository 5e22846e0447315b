#include "core/output/row.h"

#include <cmath>
#include <cstdio>

namespace gpucal {

Row& Row::set(const std::string& column, const std::string& value) {
  cells_[column] = value;
  return *this;
}
Row& Row::set(const std::string& column, double value) { return set(column, format_number(value)); }
Row& Row::set(const std::string& column, int64_t value) { return set(column, std::to_string(value)); }

std::string Row::get(const std::string& column) const {
  auto it = cells_.find(column);
  return it == cells_.end() ? "" : it->second;
}

std::string format_number(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", value);
  return buf;
}

}  // namespace gpucal
