// Reader for our calibration CSVs (RFC 4180: header row, comma separator, fields
// optionally in double quotes with "" as an escaped quote, newlines allowed inside quotes,
// LF or CRLF line ends). Columns are addressed by name; typed getters throw CsvError with
// file, line and column so a malformed file is a one-line diagnosis. A last line without
// its line end (a run killed mid-write) is dropped and reported in warnings().
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpucal::calibration {

class CsvError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class CsvTable {
 public:
  // Throws CsvError when the file cannot be opened or is malformed.
  static CsvTable read_file(const std::string& path);
  // `source_name` only labels error messages.
  static CsvTable parse(const std::string& text, const std::string& source_name);

  const std::string& source() const { return source_; }
  const std::vector<std::string>& columns() const { return columns_; }
  // "file:line: ..." for each record dropped as torn.
  const std::vector<std::string>& warnings() const { return warnings_; }
  std::size_t row_count() const { return rows_.size(); }
  bool has_column(const std::string& column) const { return index_.count(column) != 0; }
  // 1-based line in the file where data row `row` starts (for messages).
  std::size_t line_of(std::size_t row) const { return row_lines_.at(row); }

  const std::string& get_string(std::size_t row, const std::string& column) const;
  double get_double(std::size_t row, const std::string& column) const;  // empty -> error
  int64_t get_int(std::size_t row, const std::string& column) const;    // empty -> error
  // Empty field or absent column -> nullopt; a non-number -> CsvError.
  std::optional<double> get_optional_double(std::size_t row, const std::string& column) const;
  // Absent column -> `fallback`.
  std::string get_string_or(std::size_t row, const std::string& column,
                            const std::string& fallback) const;

  // Throws CsvError naming every column in `required` that the header lacks.
  void require_columns(const std::vector<std::string>& required) const;

 private:
  std::size_t column_index(const std::string& column) const;
  [[noreturn]] void fail_field(std::size_t row, const std::string& column,
                               const std::string& what) const;

  std::string source_;
  std::vector<std::string> columns_;
  std::map<std::string, std::size_t> index_;
  std::vector<std::vector<std::string>> rows_;
  std::vector<std::size_t> row_lines_;
  std::vector<std::string> warnings_;
};

// Per-sample file FILE.samples.csv (columns point,sample,time_us): times in µs grouped by
// point, in file order. A torn last line is dropped and its warning appended to `warnings`.
std::map<std::string, std::vector<double>> read_samples_file(const std::string& path,
                                                            std::vector<std::string>* warnings = nullptr);

}  // namespace gpucal::calibration
