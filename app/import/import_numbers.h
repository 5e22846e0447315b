// The numbers a log gives, each checked where it is read: a size, time, count or rate that no
// run can print (a size of 1e300 or 2^62 bytes, an infinite time, a count of 1e30) is a
// corrupted row, refused with one line naming the file, the line (or the JSON path) and the
// field, never converted into a wrong number or dropped without a word.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace gpucal::calibration {

// Where a number was read: "a.log:12: column 'size'" or "a.json: results[3].size".
struct FieldAt {
  const std::string& file;
  int line;           // 0 for JSON: `field` is then its path
  std::string field;  // a column name or a JSON path
};

// Beyond these a number is not a measurement: no collective or message moves more than 2^50
// bytes (1 PiB), no single operation takes 1e12 us (11.6 days), no link runs at 1e9 GB/s.
constexpr int64_t kMaxSizeBytes = int64_t{1} << 50;
constexpr double kMaxTimeUs = 1e12;
constexpr double kMaxRate = 1e9;
constexpr int64_t kMaxRanks = int64_t{1} << 24;  // as gpucal import --nranks
constexpr int64_t kMaxIterations = int64_t{1} << 40;
constexpr int64_t kMaxDeviceIndex = 65535;
constexpr int64_t kMaxCycles = 1000000;  // rccl-tests -N

// A size in bytes: a whole number from 0 to kMaxSizeBytes.
int64_t size_field(const FieldAt& at, const std::string& token);
// A time in microseconds: finite, at most kMaxTimeUs, above 0 (or at least 0 with `zero_ok`).
double time_field(const FieldAt& at, const std::string& token, bool zero_ok = false);
// A bandwidth as printed (GB/s, MB/s): finite, from 0 to kMaxRate.
double rate_field(const FieldAt& at, const std::string& token);
// A whole number from `min` to `max` (counts, iterations, ranks, device indices).
int64_t whole_field(const FieldAt& at, const std::string& token, int64_t min, int64_t max);

// A JSON value as the token it was printed as; throws when it is not a number.
std::string number_token(const FieldAt& at, const nlohmann::json& value);

// A number as printed stands for an interval: its value plus or minus half a unit of its last
// printed digit ("0.05" is [0.045, 0.055], "80922" is [80921.5, 80922.5], "1.2e+05" is
// [1.15e5, 1.25e5]). Consistency checks between printed numbers (algbw = S/t, busbw = algbw x
// factor) compare such intervals, so a table as printed is never refused for its rounding.
struct Printed {
  double value = 0;
  double half_unit = 0;  // 0: an exact value (computed, not printed)
  double low() const { return value - half_unit; }
  double high() const { return value + half_unit; }
};
double half_unit_of_last_digit(const std::string& token);
Printed printed(double value, const std::string& token);

// Whether a token is an integer as written ("64", "-5", "99999999999999999999"), whatever its
// range: such a first token makes a line a table row, to be read or refused, never skipped.
bool is_integer_token(const std::string& token);

}  // namespace gpucal::calibration
