#include "core/driver/flag_checks.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace gpucal {

namespace {

std::string describe(bool integer, const NumberBounds& b) {
  std::string what = integer ? "an integer" : "a finite number";
  const bool has_min = b.min > -std::numeric_limits<double>::max() / 2;
  const bool has_max = b.max < std::numeric_limits<double>::max() / 2;
  auto num = [integer](double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, integer ? "%.0f" : "%.6f", v);
    std::string s = buf;
    if (integer) return s;
    s.erase(s.find_last_not_of('0') + 1);
    if (!s.empty() && s.back() == '.') s.pop_back();
    return s;
  };
  if (has_min && has_max) return what + " from " + num(b.min) + (b.min_exclusive ? " (exclusive)" : "") + " to " + num(b.max);
  if (has_min) return what + (b.min_exclusive ? " above " : " of at least ") + num(b.min);
  if (has_max) return what + " of at most " + num(b.max);
  return what;
}

}  // namespace

std::string check_number_text(const std::string& text, bool integer, const NumberBounds& b) {
  const std::string expected = "expected " + describe(integer, b) + ", got '" + text + "'";
  if (text.empty() || std::isspace(static_cast<unsigned char>(text[0]))) return expected;
  errno = 0;
  char* end = nullptr;
  double value = 0;
  if (integer) {
    const long long v = std::strtoll(text.c_str(), &end, 10);
    if (errno == ERANGE) return expected;
    // Exact comparison against the bounds for 64-bit values a double cannot hold.
    if (end == text.c_str() || *end != '\0') return expected;
    if (static_cast<long double>(v) < static_cast<long double>(b.min) ||
        static_cast<long double>(v) > static_cast<long double>(b.max))
      return expected;
    return "";
  }
  value = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || errno == ERANGE || !std::isfinite(value)) return expected;
  if (value < b.min || value > b.max || (b.min_exclusive && value == b.min)) return expected;
  return "";
}

}  // namespace gpucal

namespace gpucal {

std::string missing_option_value(const CLI::App& app, int argc, const char* const* argv) {
  // The root's options and those of the subcommand the command line names (another subcommand's
  // option of the same name is not this one).
  std::vector<const CLI::App*> apps{&app};
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    if (argc > 1 && sub->get_name() == argv[1]) apps.push_back(sub);
  auto takes_value = [&](const std::string& word) {
    for (const CLI::App* a : apps)
      for (const CLI::Option* opt : a->get_options())
        if (opt->get_items_expected_min() > 0)
          for (const auto& name : opt->get_lnames())
            if (word == "--" + name) return true;
    return false;
  };
  for (int i = 1; i < argc; ++i) {
    const std::string word = argv[i];
    if (!takes_value(word)) continue;
    if (i + 1 == argc || std::string(argv[i + 1]).rfind("--", 0) == 0) return word + ": expected a value";
    ++i;
  }
  return "";
}

}  // namespace gpucal
