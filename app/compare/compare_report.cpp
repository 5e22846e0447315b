#include "app/compare/compare_report.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "core/output/file_io.h"

namespace gpucal::calibration {

namespace {

std::string fmt(const char* format, double value) {
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, format, value);
  return buffer;
}

std::string opt_us(const std::optional<double>& v) { return v ? fmt("%.3f", *v) : "-"; }
std::string change_pct(const PointComparison& p) { return p.ratio ? fmt("%+.1f%%", 100.0 * (*p.ratio - 1.0)) : "-"; }
std::string p_text(const PointComparison& p) {
  if (p.p_value) return fmt("%.3g", *p.p_value);
  if (!p.test.empty()) return p.significant ? "disjoint" : "overlap";
  return "-";
}

std::string where_text(const EnvironmentChange& c) {
  std::string s;
  for (const auto& w : c.where) s += (s.empty() ? "" : ", ") + w;
  return s;
}

std::string change_text(const EnvironmentChange& c) {
  return c.what + ": " + c.baseline + " -> " + c.current + " (" + where_text(c) + ")";
}

// Failures first, then suspect points and improvements, then the rest; stable within a group.
std::vector<const PointComparison*> ordered(const CompareResult& r) {
  std::vector<const PointComparison*> points;
  for (const auto& p : r.points) points.push_back(&p);
  auto rank = [](const PointComparison* p) {
    if (p->is_failure) return 0;
    if (p->verdict == Verdict::suspect) return 1;
    if (p->verdict == Verdict::improvement) return 1;
    if (p->verdict == Verdict::unchanged) return 3;
    return 2;
  };
  std::stable_sort(points.begin(), points.end(), [&](auto a, auto b) { return rank(a) < rank(b); });
  return points;
}

std::string summary_line(const CompareResult& r) {
  std::ostringstream s;
  s << r.count(Verdict::regression) << " regression(s), " << r.count(Verdict::improvement) << " improvement(s), "
    << r.count(Verdict::unchanged) << " unchanged, " << r.count(Verdict::suspect) << " suspect (not judged), "
    << r.count(Verdict::status_changed) << " status change(s), "
    << r.count(Verdict::only_in_baseline) << " only in baseline, " << r.count(Verdict::only_in_current)
    << " only in current (threshold " << fmt("%.1f%%", 100 * r.options.threshold) << ", alpha "
    << fmt("%.3g", r.options.alpha) << ")";
  return s.str();
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

void print_compare_console(const CompareResult& r, std::ostream& out) {
  out << "gpucal compare: baseline " << r.baseline_dir << " vs current " << r.current_dir << "\n";
  if (!r.environment_changes.empty()) {
    // A few lines: the device, driver and clock changes first; --markdown and --json list all.
    constexpr std::size_t kShown = 6;
    out << "WARNING: the runs differ in device or software (" << r.environment_changes.size() << " change(s)):\n";
    for (std::size_t i = 0; i < r.environment_changes.size() && i < kShown; ++i)
      out << "  " << change_text(r.environment_changes[i]) << "\n";
    if (r.environment_changes.size() > kShown)
      out << "  ... and " << r.environment_changes.size() - kShown << " more (--markdown or --json lists every one)\n";
  }
  std::size_t width = 5;
  for (const auto& p : r.points) width = std::max(width, p.point.size());  // points start with their bench
  char line[1024];
  std::snprintf(line, sizeof line, "%-16s %-*s %14s %14s %9s %-17s %9s\n", "verdict", static_cast<int>(width),
                "point", "base_us_median", "cur_us_median", "change", "test", "p");
  out << line;
  for (const PointComparison* p : ordered(r)) {
    std::snprintf(line, sizeof line, "%-16s %-*s %14s %14s %9s %-17s %9s", verdict_name(p->verdict),
                  static_cast<int>(width), p->point.c_str(), opt_us(p->baseline_median_us).c_str(),
                  opt_us(p->current_median_us).c_str(), change_pct(*p).c_str(), p->test.c_str(), p_text(*p).c_str());
    out << line << (p->detail.empty() ? "" : "  " + p->detail) << "\n";
  }
  out << summary_line(r) << "\n";
  if (!r.nothing_compared().empty()) out << "FAILED: " << r.nothing_compared() << "\n";
}

void write_compare_markdown(const CompareResult& r, const std::string& path) {
  std::ostringstream out;
  out << "# gpucal compare\n\nBaseline `" << r.baseline_dir << "`, current `" << r.current_dir << "`.\n\n";
  if (!r.environment_changes.empty()) {
    out << "> **The runs differ in device or software**: times may not be comparable.\n\n"
        << "| what | baseline | current | in |\n| --- | --- | --- | --- |\n";
    for (const auto& c : r.environment_changes)
      out << "| " << c.what << " | " << c.baseline << " | " << c.current << " | " << where_text(c) << " |\n";
    out << "\n";
  }
  out << "**" << summary_line(r) << "**\n\n";
  if (!r.nothing_compared().empty()) out << "**FAILED: " << r.nothing_compared() << "**\n\n";
  out << ""
      << "| verdict | bench | point | baseline time_us_median | current time_us_median | change | test | p | detail |\n"
      << "| --- | --- | --- | ---: | ---: | ---: | --- | ---: | --- |\n";
  for (const PointComparison* p : ordered(r))
    out << "| " << (p->is_failure ? "**" + std::string(verdict_name(p->verdict)) + "**" : verdict_name(p->verdict))
        << " | " << p->bench << " | `" << p->point << "` | " << opt_us(p->baseline_median_us) << " | "
        << opt_us(p->current_median_us) << " | " << change_pct(*p) << " | " << p->test << " | " << p_text(*p) << " | "
        << p->detail << " |\n";
  write_file_atomic(path, out.str());
}

void write_compare_junit(const CompareResult& r, const std::string& path) {
  std::ostringstream out;
  int skipped = 0;
  for (const auto& p : r.points)
    if (p.verdict == Verdict::only_in_baseline || p.verdict == Verdict::only_in_current ||
        p.verdict == Verdict::not_compared || p.verdict == Verdict::suspect)
      ++skipped;
  // A comparison of nothing is one failed test case of its own: CI must not read it as a pass.
  const std::string nothing = r.nothing_compared();
  const std::size_t tests = r.points.size() + (nothing.empty() ? 0 : 1);
  const int failures = r.failures() + (nothing.empty() ? 0 : 1);
  out << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      << "<testsuites name=\"gpucal compare\" tests=\"" << tests << "\" failures=\"" << failures << "\">\n"
      << "  <testsuite name=\"gpucal.compare\" tests=\"" << tests << "\" failures=\"" << failures
      << "\" errors=\"0\" skipped=\"" << skipped << "\">\n";
  if (!nothing.empty())
    out << "    <testcase classname=\"gpucal.compare\" name=\"points compared\" time=\"0\">\n"
        << "      <failure message=\"" << xml_escape(nothing) << "\" type=\"nothing-compared\"/>\n    </testcase>\n";
  if (!r.environment_changes.empty()) {
    out << "    <properties>\n";
    for (const auto& c : r.environment_changes)
      out << "      <property name=\"changed: " << xml_escape(c.what) << "\" value=\""
          << xml_escape(c.baseline + " -> " + c.current + " (" + where_text(c) + ")") << "\"/>\n";
    out << "    </properties>\n";
  }
  for (const auto& p : r.points) {
    const double time_s = p.current_median_us.value_or(0.0) * 1e-6;
    out << "    <testcase classname=\"gpucal." << xml_escape(p.bench) << "\" name=\"" << xml_escape(p.point)
        << "\" time=\"" << fmt("%.9f", time_s) << "\">";
    const std::string message = std::string(verdict_name(p.verdict)) + " " + change_pct(p) + " (" + p.test +
                                (p.p_value ? ", p=" + fmt("%.3g", *p.p_value) : "") + ")";
    if (p.is_failure) {
      out << "\n      <failure message=\"" << xml_escape(message) << "\" type=\"" << verdict_name(p.verdict) << "\">"
          << xml_escape("baseline time_us_median " + opt_us(p.baseline_median_us) + ", current " +
                        opt_us(p.current_median_us) + ". " + p.detail)
          << "</failure>\n    ";
    } else if (p.verdict == Verdict::only_in_baseline || p.verdict == Verdict::only_in_current ||
               p.verdict == Verdict::not_compared || p.verdict == Verdict::suspect) {
      out << "\n      <skipped message=\"" << xml_escape(std::string(verdict_name(p.verdict)) + ": " + p.detail)
          << "\"/>\n    ";
    } else {
      out << "<system-out>" << xml_escape(message) << "</system-out>";
    }
    out << "</testcase>\n";
  }
  out << "  </testsuite>\n</testsuites>\n";
  write_file_atomic(path, out.str());
}

nlohmann::json compare_to_json(const CompareResult& r) {
  nlohmann::json j{{"baseline_dir", r.baseline_dir},
                   {"current_dir", r.current_dir},
                   {"nothing_compared", r.nothing_compared().empty() ? nlohmann::json(nullptr)
                                                                     : nlohmann::json(r.nothing_compared())},
                   {"threshold", r.options.threshold},
                   {"alpha", r.options.alpha},
                   {"environment_changes", nlohmann::json::array()},
                   {"points", nlohmann::json::array()}};
  for (const auto& c : r.environment_changes)
    j["environment_changes"].push_back(
        {{"what", c.what}, {"baseline", c.baseline}, {"current", c.current}, {"where", c.where}});
  auto opt = [](const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); };
  for (const auto& p : r.points)
    j["points"].push_back({{"bench", p.bench},
                           {"point", p.point},
                           {"verdict", verdict_name(p.verdict)},
                           {"is_failure", p.is_failure},
                           {"baseline_time_us_median", opt(p.baseline_median_us)},
                           {"current_time_us_median", opt(p.current_median_us)},
                           {"ratio", opt(p.ratio)},
                           {"test", p.test},
                           {"p_value", opt(p.p_value)},
                           {"significant", p.significant},
                           {"detail", p.detail}});
  return j;
}

}  // namespace gpucal::calibration
