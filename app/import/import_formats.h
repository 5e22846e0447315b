// The import formats registry: every log format `gpucal import` reads, one row each, with the
// rule that recognizes it and the reader that parses it. `gpucal import --help`, --format's
// validation and the "unknown log format" message list the formats from this table; adding a
// format is its reader file, its row in import_formats.cpp and its source in
// app/import/import_sources.cmake (docs/extending.md, "Import format").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "app/import/import_log.h"
#include "app/import/import_text.h"

namespace gpucal::calibration {

// Where a format's rule looks.
enum class FormatScope {
  whole_file,  // the first line that is neither blank nor a '#' comment; the reader takes every line
  table,       // every line: a match starts a table of this format (a log may hold several tools' tables)
};

struct ImportFormat {
  std::string_view name;  // as --format takes it
  std::string_view help;  // one line: what the format is and what the rule looks for
  FormatScope scope = FormatScope::table;
  bool (*detects)(const std::string& line) = nullptr;
  std::vector<ImportedRun> (*parse)(const std::string& path, const std::vector<LogLine>& lines,
                                    const ImportOptions& options) = nullptr;
};

const std::vector<ImportFormat>& import_formats();

// "" when `name` is auto or a row's name; otherwise the one-line "unknown import format" message
// with the nearest name and the choices.
std::string check_import_format(const std::string& name);

}  // namespace gpucal::calibration
