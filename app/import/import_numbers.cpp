#include "app/import/import_numbers.h"

#include <cctype>
#include <cmath>
#include <cstdio>

#include "app/import/import_log.h"
#include "app/import/import_text.h"

namespace gpucal::calibration {

namespace {

[[noreturn]] void refuse(const FieldAt& at, const std::string& token, const std::string& expected) {
  throw ImportError(at.file, at.line, at.field + ": '" + token + "' is not " + expected);
}

std::string number(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.15g", v);
  return buf;
}

}  // namespace

int64_t whole_field(const FieldAt& at, const std::string& token, int64_t min, int64_t max) {
  const std::string expected = "a whole number from " + number(static_cast<double>(min)) + " to " +
                               number(static_cast<double>(max));
  if (const auto v = parse_integer(token)) {
    if (*v < min || *v > max) refuse(at, token, expected);
    return *v;
  }
  // JSON writers print some counts as 0.0 (nccl-tests' nwrong).
  const auto v = parse_number(token);
  if (!v || !std::isfinite(*v) || std::floor(*v) != *v || *v < static_cast<double>(min) ||
      *v > static_cast<double>(max))
    refuse(at, token, expected);
  return static_cast<int64_t>(*v);
}

int64_t size_field(const FieldAt& at, const std::string& token) {
  // 1e3 or 8.0 is a whole number too (JSON writers print some sizes so).
  const auto v = parse_number(token);
  if (!v || !std::isfinite(*v) || *v < 0 || *v > static_cast<double>(kMaxSizeBytes) || std::floor(*v) != *v)
    refuse(at, token, "a size in bytes (a whole number from 0 to 2^50)");
  return static_cast<int64_t>(*v);
}

double time_field(const FieldAt& at, const std::string& token, bool zero_ok) {
  const auto v = parse_number(token);
  if (!v || !std::isfinite(*v) || *v < 0 || (*v == 0 && !zero_ok) || *v > kMaxTimeUs)
    refuse(at, token, std::string("a time in microseconds (") + (zero_ok ? "from 0" : "above 0") + ", at most 1e12)");
  return *v;
}

double rate_field(const FieldAt& at, const std::string& token) {
  const auto v = parse_number(token);
  if (!v || !std::isfinite(*v) || *v < 0 || *v > kMaxRate) refuse(at, token, "a bandwidth (a number from 0 to 1e9)");
  return *v;
}

std::string number_token(const FieldAt& at, const nlohmann::json& value) {
  if (!value.is_number())
    throw ImportError(at.file, at.line, at.field + ": expected a number, got " + std::string(value.type_name()));
  return value.dump();
}

double half_unit_of_last_digit(const std::string& token) {
  const auto e = token.find_first_of("eE");
  const std::string mantissa = token.substr(0, e);
  const auto dot = mantissa.find('.');
  const int decimals = dot == std::string::npos ? 0 : static_cast<int>(mantissa.size() - dot - 1);
  const int exponent = e == std::string::npos ? 0 : static_cast<int>(parse_integer(token.substr(e + 1)).value_or(0));
  return 0.5 * std::pow(10.0, exponent - decimals);
}

Printed printed(double value, const std::string& token) { return {value, half_unit_of_last_digit(token)}; }

bool is_integer_token(const std::string& token) {
  const std::size_t first = !token.empty() && (token[0] == '-' || token[0] == '+') ? 1 : 0;
  if (first == token.size()) return false;
  for (std::size_t i = first; i < token.size(); ++i)
    if (!std::isdigit(static_cast<unsigned char>(token[i]))) return false;
  return true;
}

}  // namespace gpucal::calibration
