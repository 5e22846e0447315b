// JUnit XML for CI dashboards (one testsuite; a testcase per checked figure), shared by
// `gpucal check` and `gpucal fleet report`.
#pragma once
#include <string>
#include <vector>

namespace gpucal::fleet {

struct JUnitCase {
  std::string classname, name;
  std::string failure;  // non-empty: the case failed, with this message
  std::string skipped;  // non-empty: the case was skipped (not measured), with this message
  std::string output;   // system-out: the figures behind the verdict
};

std::string junit_xml(const std::string& suite_name, const std::vector<JUnitCase>& cases);

// Numbers in reports: 4 significant digits, "-" for none.
std::string format_value(double value);

}  // namespace gpucal::fleet
