#include "core/driver/point_filter.h"

#include <regex>

#include "core/errors.h"

namespace gpucal {

bool matches_filter(const std::string& name, const std::string& filter) {
  if (filter.empty() || filter == "all" || filter == ".") return true;
  bool negate = filter[0] == '-';
  std::regex re(negate ? filter.substr(1) : filter, std::regex::extended);
  return std::regex_search(name, re) != negate;
}

void check_filter(const std::string& filter) {
  try {
    matches_filter("", filter);
  } catch (const std::regex_error& e) {
    throw UsageError("--benchmark_filter: '" + filter + "' is not a valid regular expression (" + e.what() +
                     ")");
  }
}

int count_selected(const std::vector<std::unique_ptr<Op>>& ops, const std::string& filter,
                   const std::string& source) {
  int selected = 0;
  for (const auto& op : ops) selected += matches_filter(op->point(), filter) ? 1 : 0;
  if (ops.empty()) throw UsageError("the options select no point to measure");
  if (selected == 0)
    throw UsageError(source + "=" + filter + (source.rfind("--", 0) == 0 ? "" : " (environment)") +
                     " matches none of the " + std::to_string(ops.size()) +
                     " point(s) (--benchmark_list_tests lists them)");
  return selected;
}

}  // namespace gpucal
