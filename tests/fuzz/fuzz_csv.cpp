// libFuzzer target: the calibration CSV reader (app/common/csv_table.h) and the
// writer's record format (core/output/csv_format.h). Any text parses or throws CsvError; what
// parses, written back record by record, parses to the same table (writer and reader agree).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "app/common/csv_table.h"
#include "core/output/csv_format.h"

using gpucal::calibration::CsvError;
using gpucal::calibration::CsvTable;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  CsvTable table;
  try {
    table = CsvTable::parse(text, "fuzz.csv");
  } catch (const CsvError&) {
    return 0;
  }
  std::string written = gpucal::csv_record(table.columns());
  for (size_t r = 0; r < table.row_count(); ++r) {
    std::vector<std::string> cells;
    for (const auto& c : table.columns()) cells.push_back(table.get_string(r, c));
    written += gpucal::csv_record(cells);
  }
  const CsvTable again = CsvTable::parse(written, "again.csv");  // must not throw
  if (again.columns() != table.columns() || again.row_count() != table.row_count() || !again.warnings().empty())
    std::abort();
  for (size_t r = 0; r < table.row_count(); ++r)
    for (const auto& c : table.columns())
      if (again.get_string(r, c) != table.get_string(r, c)) std::abort();
  for (size_t r = 0; r < table.row_count(); ++r)
    for (const auto& c : table.columns()) {
      try {
        table.get_optional_double(r, c);
        table.get_int(r, c);
      } catch (const CsvError&) {
      }
    }
  return 0;
}
