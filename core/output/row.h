// One measured point as named cells. The sink decides the column order (a fixed, versioned
// schema); a row may leave cells empty but never invent columns.
#pragma once

#include <cstdint>
#include <map>
#include <string>

namespace gpucal {

class Row {
 public:
  Row& set(const std::string& column, const std::string& value);
  Row& set(const std::string& column, const char* value) { return set(column, std::string(value)); }
  Row& set(const std::string& column, double value);
  Row& set(const std::string& column, int64_t value);
  Row& set(const std::string& column, int value) { return set(column, static_cast<int64_t>(value)); }
  Row& set(const std::string& column, bool value) { return set(column, static_cast<int64_t>(value ? 1 : 0)); }
  bool has(const std::string& column) const { return cells_.count(column) != 0; }
  std::string get(const std::string& column) const;  // "" when unset
  const std::map<std::string, std::string>& cells() const { return cells_; }

 private:
  std::map<std::string, std::string> cells_;
};

// Shortest decimal text that round-trips the double to 7 significant digits; "nan"/"inf"
// spelled so that pandas and our reader parse them.
std::string format_number(double value);

}  // namespace gpucal
