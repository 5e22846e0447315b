// The SVG line chart of `gpucal history show --html`: x = run order, y = the figure, one line per node.
#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "app/compare/compare_report.h"
#include "app/report/junit.h"
#include "app/history/history_commands.h"

namespace gpucal::history {

std::string svg_trend_chart(const std::string& metric, const std::map<SeriesKey, std::vector<SeriesPoint>>& series) {
  std::set<std::string> times;
  double lo = 0, hi = 0;
  bool first = true;
  for (const auto& [key, points] : series)
    for (const auto& p : points) {
      times.insert(p.time);
      if (!p.value) continue;
      lo = first ? *p.value : std::min(lo, *p.value);
      hi = first ? *p.value : std::max(hi, *p.value);
      first = false;
    }
  if (hi <= lo) hi = lo + 1;
  const std::vector<std::string> order(times.begin(), times.end());
  const double width = 720, height = 240, left = 60, bottom = 30, top = 10, right = 150;
  auto x_of = [&](const std::string& t) {
    const auto i = static_cast<double>(std::lower_bound(order.begin(), order.end(), t) - order.begin());
    return left + (order.size() > 1 ? i / static_cast<double>(order.size() - 1) : 0.5) * (width - left - right);
  };
  auto y_of = [&](double v) { return top + (hi - v) / (hi - lo) * (height - top - bottom); };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" role=\"img\">"
    << "<text x=\"4\" y=\"" << y_of(hi) + 4 << "\" font-size=\"10\">" << fleet::format_value(hi) << "</text><text x=\"4\" y=\""
    << y_of(lo) << "\" font-size=\"10\">" << fleet::format_value(lo) << "</text>";
  int index = 0;
  for (const auto& [key, points] : series) {
    const std::string colour = "hsl(" + std::to_string((index * 67) % 360) + ",65%,45%)";
    std::ostringstream line;
    for (const auto& p : points)
      if (p.value) line << x_of(p.time) << "," << y_of(*p.value) << " ";
    s << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"1.5\" points=\"" << line.str() << "\"><title>"
      << calibration::xml_escape(key.second + " " + metric) << "</title></polyline>";
    for (const auto& p : points)
      if (p.value && p.status != "ok")
        s << "<circle cx=\"" << x_of(p.time) << "\" cy=\"" << y_of(*p.value) << "\" r=\"4\" fill=\"#d22\"><title>"
          << calibration::xml_escape(key.second + " " + p.time + ": " + p.status) << "</title></circle>";
    s << "<text x=\"" << width - right + 8 << "\" y=\"" << top + 12 * (index + 1) << "\" font-size=\"10\" fill=\"" << colour << "\">"
      << calibration::xml_escape(key.second) << "</text>";
    ++index;
  }
  s << "</svg>";
  return s.str();
}

}  // namespace gpucal::history
