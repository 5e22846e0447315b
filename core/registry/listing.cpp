#include "core/registry/listing.h"

#include <algorithm>

namespace gpucal::registry {

namespace {

// Characters counted as one column each (UTF-8 continuation bytes add none).
size_t display_width(const std::string& s) {
  return static_cast<size_t>(std::count_if(s.begin(), s.end(), [](char c) { return (c & 0xC0) != 0x80; }));
}

std::string markdown_cell(const std::string& text, bool code) {
  std::string out;
  for (const char c : text) {
    if (c == '|' || (!code && (c == '\\' || c == '*' || c == '<'))) out += '\\';
    out += c;
  }
  return code && !out.empty() ? "`" + out + "`" : out;
}

std::string markdown_line(const std::vector<std::string>& cells) {
  std::string out = "|";
  for (const auto& c : cells) out += " " + c + " |";
  return out + "\n";
}

}  // namespace

std::string join(const std::vector<std::string>& words, const std::string& separator) {
  std::string out;
  for (const auto& w : words) out += (out.empty() ? "" : separator) + w;
  return out;
}

std::string plain_table(const Listing& table) {
  std::vector<size_t> width(table.columns.size(), 0);
  auto widen = [&](const std::vector<std::string>& cells) {
    for (size_t i = 0; i < cells.size() && i < width.size(); ++i)
      width[i] = std::max(width[i], display_width(cells[i]));
  };
  widen(table.columns);
  for (const auto& row : table.rows) widen(row);
  auto line = [&](const std::vector<std::string>& cells) {
    std::string out;
    for (size_t i = 0; i < cells.size() && i < width.size(); ++i) {
      out += cells[i];
      if (i + 1 < cells.size()) out += std::string(width[i] - display_width(cells[i]) + 2, ' ');
    }
    while (!out.empty() && out.back() == ' ') out.pop_back();
    return out + "\n";
  };
  std::string out = line(table.columns);
  for (const auto& row : table.rows) out += line(row);
  return out;
}

std::string markdown_table(const Listing& table) {
  auto is_code = [&](size_t i) {
    return i == 0 ||
           std::find(table.code_columns.begin(), table.code_columns.end(), i) != table.code_columns.end();
  };
  std::vector<std::string> header, rule;
  for (const auto& c : table.columns) {
    header.push_back(markdown_cell(c, false));
    rule.emplace_back("---");
  }
  std::string out = markdown_line(header) + markdown_line(rule);
  for (const auto& row : table.rows) {
    std::vector<std::string> cells;
    for (size_t i = 0; i < row.size(); ++i) cells.push_back(markdown_cell(row[i], is_code(i)));
    out += markdown_line(cells);
  }
  return out;
}

std::string impl_table(const std::vector<ImplRow>& rows, bool markdown, const std::string& extra_column) {
  Listing t{.columns = {"impl", "backend", "help"}};
  if (!extra_column.empty()) t.columns.push_back(extra_column);
  t.columns.push_back(markdown ? "built when" : "built");
  for (const ImplRow& r : rows) {
    std::vector<std::string> cells{r.name, r.backends, r.help};
    if (!extra_column.empty()) cells.push_back(r.extra);
    if (markdown)
      cells.push_back(r.needs.empty() ? "always" : r.needs);
    else
      cells.push_back(r.missing.empty() ? "yes" : "no");
    t.rows.push_back(cells);
  }
  if (markdown) return markdown_table(t);
  std::string out = plain_table(t);
  Listing lacking{.columns = {"not in this build", "why"}};
  for (const ImplRow& r : rows)
    if (!r.missing.empty()) lacking.rows.push_back({r.name, r.missing});
  return lacking.rows.empty() ? out : out + "\n" + plain_table(lacking);
}

}  // namespace gpucal::registry
