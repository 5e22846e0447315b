#include "core/driver/sweep.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <sstream>

#include "core/errors.h"
#include "core/output/file_io.h"

namespace gpucal {

namespace {

[[noreturn]] void bad(const std::string& axis, const std::string& item, const std::string& why) {
  throw UsageError("--" + axis + ": " + why + " in '" + item + "'");
}

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> parts;
  std::string cur;
  std::stringstream in(s);
  while (std::getline(in, cur, sep)) parts.push_back(cur);
  if (!s.empty() && s.back() == sep) parts.push_back("");
  return parts;
}

constexpr int64_t kMaxValue = int64_t{1} << 52;  // exact in a double, far beyond any size we sweep

void check_bounds(int64_t value, const std::string& axis, const std::string& item, const AxisBounds& b) {
  if (value < b.min) bad(axis, item, std::to_string(value) + " is below the smallest allowed value " + std::to_string(b.min));
  if (value > b.max) bad(axis, item, std::to_string(value) + " is above the largest allowed value " + std::to_string(b.max));
}

}  // namespace

int64_t parse_size(const std::string& text, const std::string& axis, AxisBounds bounds) {
  if (text.empty()) bad(axis, text, "empty value");
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  if (digits == 0) bad(axis, text, "expected a non-negative integer");
  if (digits > 16) bad(axis, text, "value too large");
  int64_t value = std::stoll(text.substr(0, digits));
  std::string suffix = text.substr(digits);
  int shift = 0;
  if (suffix == "K" || suffix == "k" || suffix == "Ki")
    shift = 10;
  else if (suffix == "M" || suffix == "Mi")
    shift = 20;
  else if (suffix == "G" || suffix == "Gi")
    shift = 30;
  else if (suffix == "T" || suffix == "Ti")
    shift = 40;
  else if (!suffix.empty())
    bad(axis, text, "unknown suffix '" + suffix + "' (expected K, M, G or T)");
  if (value > (kMaxValue >> shift)) bad(axis, text, "value too large");
  check_bounds(value << shift, axis, text, bounds);
  return value << shift;
}

std::vector<int64_t> parse_axis(const std::string& spec, const std::string& axis, AxisBounds bounds) {
  if (spec.empty()) throw UsageError("--" + axis + ": empty value");
  std::vector<int64_t> values;
  for (const auto& item : split(spec, ',')) {
    if (item.empty()) bad(axis, spec, "empty list item");
    auto parts = split(item, ':');
    if (parts.size() == 1) {
      values.push_back(parse_size(item, axis, bounds));
      continue;
    }
    if (parts.size() != 3) bad(axis, item, "a range is start:end:xF or start:end:+S");
    const int64_t start = parse_size(parts[0], axis, bounds);
    const int64_t end = parse_size(parts[1], axis, bounds);
    if (start > end) bad(axis, item, "start is greater than end");
    const std::string& step = parts[2];
    if (step.size() < 2 || (step[0] != 'x' && step[0] != '+')) bad(axis, item, "step must be xF (geometric) or +S (arithmetic)");
    const int64_t by = parse_size(step.substr(1), axis);
    if (step[0] == 'x') {
      if (by < 2) bad(axis, item, "geometric factor must be at least 2");
      if (start == 0) bad(axis, item, "geometric range cannot start at 0");
      for (int64_t v = start; v <= end; v *= by) {
        values.push_back(v);
        if (v > end / by) break;
      }
    } else {
      if (by < 1) bad(axis, item, "arithmetic step must be at least 1");
      if ((end - start) / by > 1000000) bad(axis, item, "range has more than a million points");
      for (int64_t v = start; v <= end; v += by) values.push_back(v);
    }
    if (values.size() > 1000000) bad(axis, spec, "more than a million values");
  }
  std::vector<int64_t> sorted = values;
  std::sort(sorted.begin(), sorted.end());
  const auto dup = std::adjacent_find(sorted.begin(), sorted.end());
  if (dup != sorted.end()) bad(axis, spec, "value " + std::to_string(*dup) + " appears twice (each point once)");
  return values;
}

std::vector<std::string> parse_word_list(const std::string& spec, const std::string& axis,
                                         const std::vector<std::string>& allowed) {
  std::vector<std::string> words;
  for (const auto& w : split(spec, ',')) {
    if (w.empty()) bad(axis, spec, "empty list item");
    if (!allowed.empty() && std::find(allowed.begin(), allowed.end(), w) == allowed.end()) {
      std::string list;
      for (const auto& a : allowed) list += (list.empty() ? "" : ", ") + a;
      bad(axis, w, "unknown value (expected one of: " + list + ")");
    }
    if (std::find(words.begin(), words.end(), w) != words.end())
      bad(axis, spec, "'" + w + "' appears twice (each point once)");
    words.push_back(w);
  }
  if (words.empty()) throw UsageError("--" + axis + ": empty value");
  return words;
}

std::string format_size(int64_t bytes) {
  const char* suffixes[] = {"", "K", "M", "G", "T"};
  int i = 0;
  while (i < 4 && bytes != 0 && bytes % 1024 == 0) {
    bytes /= 1024;
    ++i;
  }
  return std::to_string(bytes) + suffixes[i];
}

std::string format_gib(double bytes) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(1);
  s << bytes / double(1ull << 30) << " GiB";
  return s.str();
}

}  // namespace gpucal

#include <fstream>

namespace gpucal {

std::vector<std::vector<std::pair<std::string, std::string>>> parse_points_text(const std::string& text,
                                                                               const std::string& source,
                                                                               const PointsColumns& columns,
                                                                               const std::string& flag) {
  std::vector<std::string> header;
  std::vector<std::vector<std::pair<std::string, std::string>>> rows;
  std::string line;
  std::istringstream in(text);
  int lineno = 0;
  auto trim = [](std::string s) {
    s.erase(0, s.find_first_not_of(" \t\r"));
    s.erase(s.find_last_not_of(" \t\r") + 1);
    return s;
  };
  auto where = [&](int at) { return flag + ": " + source + ":" + std::to_string(at) + ": "; };
  auto known_list = [&] {
    std::string list;
    for (const auto& c : columns.known) list += (list.empty() ? "" : ", ") + c;
    return list;
  };
  while (std::getline(in, line)) {
    ++lineno;
    line = trim(line);
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> cells;
    for (const auto& c : split(line, ',')) cells.push_back(trim(c));
    if (header.empty()) {
      for (const auto& c : cells) {
        if (std::find(columns.known.begin(), columns.known.end(), c) == columns.known.end())
          throw UsageError(where(lineno) + "unknown column '" + c + "' (expected: " + known_list() + ")");
        if (std::find(header.begin(), header.end(), c) != header.end())
          throw UsageError(where(lineno) + "column '" + c + "' appears twice");
        header.push_back(c);
      }
      for (const auto& r : columns.required)
        if (std::find(header.begin(), header.end(), r) == header.end())
          throw UsageError(where(lineno) + "the header lacks column '" + r + "'");
      continue;
    }
    if (cells.size() != header.size())
      throw UsageError(where(lineno) + "expected " + std::to_string(header.size()) + " cells, got " +
                       std::to_string(cells.size()));
    std::vector<std::pair<std::string, std::string>> row;
    for (size_t i = 0; i < cells.size(); ++i) {
      if (cells[i].empty()) throw UsageError(where(lineno) + "column '" + header[i] + "' is empty");
      row.emplace_back(header[i], cells[i]);
    }
    rows.push_back(std::move(row));
  }
  if (header.empty()) throw UsageError(flag + ": " + source + ": no header row (expected columns: " + known_list() + ")");
  if (rows.empty()) throw UsageError(flag + ": " + source + ": no data rows after the header");
  return rows;
}

std::vector<std::vector<std::pair<std::string, std::string>>> read_points_file(const std::string& path,
                                                                              const PointsColumns& columns,
                                                                              const std::string& flag) {
  if (const std::string why = not_a_regular_file(path); !why.empty())
    throw UsageError(flag + ": '" + path + "' " + why);
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(flag + ": cannot read '" + path + "'");
  // Bounded: a points file is small, and /dev/zero or a FIFO must not read forever.
  constexpr size_t kMaxBytes = size_t{16} << 20;
  std::string text(kMaxBytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  text.resize(static_cast<size_t>(in.gcount()));
  if (text.size() > kMaxBytes) throw UsageError(flag + ": '" + path + "' is larger than 16 MiB");
  if (text.find('\0') != std::string::npos) throw UsageError(flag + ": '" + path + "' is not a text file (NUL bytes)");
  return parse_points_text(text, path, columns, flag);
}

}  // namespace gpucal
