// Printers for a CompareResult, kept apart from the comparison itself: console table,
// Markdown, JUnit XML (one <testcase> per compared point, <failure> for regressions and for
// points that now error) and JSON (read by plots/plot_compare.py).
#pragma once
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "app/compare/compare.h"

namespace gpucal::calibration {

void print_compare_console(const CompareResult& result, std::ostream& out);
void write_compare_markdown(const CompareResult& result, const std::string& path);
void write_compare_junit(const CompareResult& result, const std::string& path);
nlohmann::json compare_to_json(const CompareResult& result);

std::string xml_escape(const std::string& text);

}  // namespace gpucal::calibration
