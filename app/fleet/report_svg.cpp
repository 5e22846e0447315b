// Inline SVG for report.html: no script, no external file, so the page is one self-contained file.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "app/compare/compare_report.h"
#include "app/fleet/report.h"

namespace gpucal::fleet {

using calibration::xml_escape;

namespace {

std::string num(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f", v);
  return text;
}

// Quality of a value against the median as 0 (bad) .. 1 (at or better than the median).
double quality(double value, double median, Better better) {
  if (median <= 0 || value <= 0) return 0;
  const double ratio = better == Better::higher ? value / median : median / value;
  return std::clamp(ratio, 0.0, 1.0);
}

std::string colour(double q) {
  // 0 red, 0.5 orange, 0.9+ green: a 10% loss already shows.
  const double hue = 120 * std::clamp((q - 0.5) / 0.4, 0.0, 1.0);
  return "hsl(" + num(hue) + ",70%,50%)";
}

}  // namespace

std::string svg_strip_plot(const MetricTable& t) {
  const double width = 720, height = 110, left = 20, right = 20, axis_y = 80;
  double lo = 0, hi = 0;
  bool first = true;
  auto widen = [&](double v) {
    if (!std::isfinite(v)) return;
    lo = first ? v : std::min(lo, v);
    hi = first ? v : std::max(hi, v);
    first = false;
  };
  for (const Ranked& r : t.rows) widen(r.value);
  if (t.floor) widen(*t.floor);
  if (t.reference) widen(t.reference->median);
  if (hi <= lo) hi = lo + (lo == 0 ? 1 : std::fabs(lo) * 0.1), lo -= (hi - lo);
  const double pad = (hi - lo) * 0.05;
  const bool positive = lo >= 0;
  lo -= pad, hi += pad;
  if (positive) lo = std::max(lo, 0.0);  // no negative bandwidth on the axis
  auto x_of = [&](double v) { return left + (v - lo) / (hi - lo) * (width - left - right); };
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" role=\"img\">"
    << "<line x1=\"" << left << "\" y1=\"" << axis_y << "\" x2=\"" << width - right << "\" y2=\"" << axis_y
    << "\" stroke=\"#888\"/>";
  for (int i = 0; i <= 4; ++i) {
    const double v = lo + (hi - lo) * i / 4;
    s << "<text x=\"" << num(x_of(v)) << "\" y=\"" << axis_y + 16 << "\" font-size=\"10\" text-anchor=\"middle\">"
      << xml_escape(format_value(v)) << "</text>";
  }
  if (t.reference)
    s << "<line x1=\"" << num(x_of(t.reference->median)) << "\" y1=\"10\" x2=\"" << num(x_of(t.reference->median)) << "\" y2=\""
      << axis_y << "\" stroke=\"#36c\"><title>fleet median " << xml_escape(format_value(t.reference->median)) << "</title></line>";
  if (t.floor)
    s << "<line x1=\"" << num(x_of(*t.floor)) << "\" y1=\"10\" x2=\"" << num(x_of(*t.floor)) << "\" y2=\"" << axis_y
      << "\" stroke=\"#e80\" stroke-dasharray=\"4 3\"><title>SKU floor " << xml_escape(format_value(*t.floor)) << "</title></line>";
  int i = 0;
  for (const Ranked& r : t.rows) {
    if (!std::isfinite(r.value)) continue;
    const double y = 30 + (i++ % 5) * 9;  // a little vertical spread so equal values stay apart
    s << "<circle cx=\"" << num(x_of(r.value)) << "\" cy=\"" << num(y) << "\" r=\"5\" fill=\"" << (r.suspect ? "#d22" : "#777")
      << "\" fill-opacity=\"0.8\"><title>" << xml_escape(r.subject + ": " + format_value(r.value) + " " + t.unit + ", " + verdict_of(r))
      << "</title></circle>";
    if (r.suspect)
      s << "<text x=\"" << num(x_of(r.value)) << "\" y=\"" << num(y - 8) << "\" font-size=\"10\" fill=\"#d22\" text-anchor=\"middle\">"
        << xml_escape(r.subject) << "</text>";
  }
  s << "</svg>";
  return s.str();
}

std::string svg_pair_heatmap(const MetricTable& t, const std::vector<std::string>& nodes) {
  const double n = static_cast<double>(nodes.size());
  const double cell = std::clamp(560.0 / std::max(1.0, n), 6.0, 28.0);
  const bool labels = nodes.size() <= 32;
  const double margin = labels ? 90 : 10;
  const double size = margin + cell * n + 10;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(size) << "\" height=\"" << num(size) << "\" role=\"img\">";
  for (std::size_t i = 0; i < nodes.size() && labels; ++i) {
    const double c = margin + cell * static_cast<double>(i) + cell / 2;
    s << "<text x=\"" << num(margin - 4) << "\" y=\"" << num(c + 3) << "\" font-size=\"10\" text-anchor=\"end\">"
      << xml_escape(nodes[i]) << "</text><text transform=\"translate(" << num(c + 3) << "," << num(margin - 4)
      << ") rotate(-60)\" font-size=\"10\">" << xml_escape(nodes[i]) << "</text>";
  }
  const double median = t.reference ? t.reference->median : 0;
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (std::size_t j = 0; j < nodes.size(); ++j) {
      const Ranked* found = nullptr;
      for (const Ranked& r : t.rows)
        if (r.subject == nodes[i] + "--" + nodes[j] || r.subject == nodes[j] + "--" + nodes[i]) found = &r;
      const std::string fill = found ? colour(quality(found->value, median, t.better)) : (i == j ? "#fff" : "#ddd");
      s << "<rect x=\"" << num(margin + cell * static_cast<double>(j)) << "\" y=\"" << num(margin + cell * static_cast<double>(i))
        << "\" width=\"" << num(cell - 1) << "\" height=\"" << num(cell - 1) << "\" fill=\"" << fill << "\""
        << (found && found->suspect ? " stroke=\"#000\"" : "") << ">";
      if (found)
        s << "<title>" << xml_escape(found->subject + ": " + format_value(found->value) + " " + t.unit + ", " + deviation_text(*found) +
                                     " vs median " + format_value(median))
          << "</title>";
      s << "</rect>";
    }
  s << "</svg>";
  return s.str();
}

}  // namespace gpucal::fleet
