// CSV text as every writer of gpucal spells it (RFC 4180), and as calibration's reader
// (app/common/csv_table.h) reads it back: one place, so writer and reader agree.
#pragma once

#include <string>
#include <vector>

namespace gpucal {

// Quotes a cell only when it holds a comma, quote, CR or LF ("" escapes a quote).
std::string csv_escape(const std::string& cell);
// One record with its line end. A record of one empty cell is written `""`: a blank line
// would read back as no record at all.
std::string csv_record(const std::vector<std::string>& cells);

}  // namespace gpucal
