// Axis syntax, parsed in one place for every bench:
//   1024            a value           1024,4096       a list
//   64:16384:x2     geometric range   256:4096:+256   arithmetic range
//   8:4G:x2         sizes take binary suffixes K, M, G, T (1K = 1024)
// Items combine with commas (64,128:1024:x2). Ranges include both ends when the step
// lands on the end. Malformed input throws UsageError naming the axis and the item.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpucal {

// Values an axis accepts; sizes stop at 2^52 (exact in a double, beyond any size we sweep).
struct AxisBounds {
  int64_t min = 0;
  int64_t max = int64_t{1} << 52;
};
int64_t parse_size(const std::string& text, const std::string& axis, AxisBounds bounds = {});
std::vector<int64_t> parse_axis(const std::string& spec, const std::string& axis, AxisBounds bounds = {});
// Comma-separated words, each checked against `allowed` (empty: anything non-empty).
std::vector<std::string> parse_word_list(const std::string& spec, const std::string& axis,
                                         const std::vector<std::string>& allowed = {});
// Compact, exact rendering of a byte count for point names: 4096 -> "4K", 1000 -> "1000".
std::string format_size(int64_t bytes);
// A byte count for messages, in GiB with one decimal: "1.5 GiB".
std::string format_gib(double bytes);

}  // namespace gpucal

namespace gpucal {
// A points file: CSV with a header row; '#' starts a comment line. Returns one map per
// data row (column -> text). Throws UsageError naming the file (and line) for an unknown,
// duplicate or missing column, a row with the wrong number of cells, an empty cell, or a
// file without data rows. `columns`: the columns a bench knows; `required`: those every
// row needs. `flag` names the option in messages (e.g. "--shapes").
struct PointsColumns {
  std::vector<std::string> known, required;
};
std::vector<std::vector<std::pair<std::string, std::string>>> read_points_file(const std::string& path,
                                                                              const PointsColumns& columns,
                                                                              const std::string& flag);
// The same on text already read (fuzzing, tests); `source` names it in messages.
std::vector<std::vector<std::pair<std::string, std::string>>> parse_points_text(const std::string& text,
                                                                               const std::string& source,
                                                                               const PointsColumns& columns,
                                                                               const std::string& flag);
}  // namespace gpucal
