#include "app/report/junit.h"

#include <cstdio>
#include <sstream>

#include "app/compare/compare_report.h"

namespace gpucal::fleet {

using calibration::xml_escape;

std::string junit_xml(const std::string& suite_name, const std::vector<JUnitCase>& cases) {
  int failures = 0, skipped = 0;
  for (const auto& c : cases) {
    failures += !c.failure.empty();
    skipped += c.failure.empty() && !c.skipped.empty();
  }
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"" << xml_escape(suite_name)
    << "\" tests=\"" << cases.size() << "\" failures=\"" << failures << "\" skipped=\"" << skipped << "\">\n";
  for (const auto& c : cases) {
    x << "  <testcase classname=\"" << xml_escape(c.classname) << "\" name=\"" << xml_escape(c.name) << "\">";
    if (!c.failure.empty()) x << "<failure message=\"" << xml_escape(c.failure) << "\"/>";
    else if (!c.skipped.empty()) x << "<skipped message=\"" << xml_escape(c.skipped) << "\"/>";
    if (!c.output.empty()) x << "<system-out>" << xml_escape(c.output) << "</system-out>";
    x << "</testcase>\n";
  }
  x << "</testsuite>\n</testsuites>\n";
  return x.str();
}

std::string format_value(double value) {
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, "%.4g", value);
  return buffer;
}

}  // namespace gpucal::fleet
