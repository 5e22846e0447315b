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

std::string text(double x, double y, const std::string& body, const std::string& attributes = "") {
  const std::string size = attributes.find("font-size") == std::string::npos ? " font-size=\"10\"" : "";
  return "<text x=\"" + num(x) + "\" y=\"" + num(y) + "\"" + size + (attributes.empty() ? "" : " " + attributes) + ">" +
         xml_escape(body) + "</text>";
}

struct StripScale {
  double lo = 0, hi = 0, left = 0, right = 0, width = 0;
  double x(double v) const { return left + (v - lo) / (hi - lo) * (width - left - right); }
};

// Every value, the floor and the median, padded 5%; not below 0 for a figure that cannot be negative.
StripScale strip_scale(const MetricTable& t, double width, double margin) {
  StripScale sc{0, 0, margin, margin, width};
  bool first = true;
  auto widen = [&](double v) {
    if (!std::isfinite(v)) return;
    sc.lo = first ? v : std::min(sc.lo, v);
    sc.hi = first ? v : std::max(sc.hi, v);
    first = false;
  };
  for (const Ranked& r : t.rows) widen(r.value);
  if (t.floor) widen(*t.floor);
  if (t.reference) widen(t.reference->median);
  if (sc.hi <= sc.lo) sc.hi = sc.lo + (sc.lo == 0 ? 1 : std::fabs(sc.lo) * 0.1), sc.lo -= (sc.hi - sc.lo);
  const double pad = (sc.hi - sc.lo) * 0.05;
  const bool positive = sc.lo >= 0;
  sc.lo -= pad, sc.hi += pad;
  if (positive) sc.lo = std::max(sc.lo, 0.0);  // no negative bandwidth on the axis
  return sc;
}

// The axis line, five tick values, the axis title (metric and unit), and the median and floor
// lines each named at its top, so that a printed page reads without the hover titles.
void strip_axis(std::ostringstream& s, const MetricTable& t, const StripScale& sc, double axis_y) {
  s << "<line x1=\"" << sc.left << "\" y1=\"" << axis_y << "\" x2=\"" << sc.width - sc.right << "\" y2=\"" << axis_y
    << "\" stroke=\"#888\"/>";
  for (int i = 0; i <= 4; ++i) {
    const double v = sc.lo + (sc.hi - sc.lo) * i / 4;
    s << text(sc.x(v), axis_y + 14, format_value(v), "text-anchor=\"middle\"");
  }
  s << text(sc.width / 2, axis_y + 32, t.metric + " (" + t.unit + ", " + better_text(t.better) + ")",
            "class=\"axis-title\" font-weight=\"bold\" text-anchor=\"middle\"");
  auto marker = [&](double v, const std::string& colour, const std::string& dash, const std::string& name) {
    s << "<line x1=\"" << num(sc.x(v)) << "\" y1=\"14\" x2=\"" << num(sc.x(v)) << "\" y2=\"" << axis_y << "\" stroke=\"" << colour
      << "\"" << dash << "><title>" << xml_escape(name + " " + format_value(v)) << "</title></line>"
      << text(sc.x(v), 10, name + " " + format_value(v), "font-size=\"9\" fill=\"" + colour + "\" text-anchor=\"middle\"");
  };
  if (t.reference) marker(t.reference->median, "#36c", "", "fleet median");
  if (t.floor) marker(*t.floor, "#e80", " stroke-dasharray=\"4 3\"", "SKU floor");
}

}  // namespace

std::string svg_strip_plot(const MetricTable& t) {
  const double width = 720, height = 122, axis_y = 78;
  const StripScale sc = strip_scale(t, width, 60);
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" role=\"img\">";
  strip_axis(s, t, sc, axis_y);
  // The lowest and the highest value are named as well as the suspects.
  const Ranked *low = nullptr, *high = nullptr;
  for (const Ranked& r : t.rows) {
    if (!std::isfinite(r.value)) continue;
    if (!low || r.value < low->value) low = &r;
    if (!high || r.value > high->value) high = &r;
  }
  int i = 0;
  for (const Ranked& r : t.rows) {
    if (!std::isfinite(r.value)) continue;
    const double y = 32 + (i++ % 5) * 8;  // a little vertical spread so equal values stay apart
    s << "<circle cx=\"" << num(sc.x(r.value)) << "\" cy=\"" << num(y) << "\" r=\"5\" fill=\"" << (r.suspect ? "#d22" : "#777")
      << "\" fill-opacity=\"0.8\"><title>" << xml_escape(r.subject + ": " + format_value(r.value) + " " + t.unit + ", " + verdict_of(r))
      << "</title></circle>";
    // A suspect's name above it in red; the extremes' beside them, off the cluster of points.
    const std::string label = "class=\"node-label\" fill=\"" + std::string(r.suspect ? "#d22" : "#333") + "\" text-anchor=";
    if (r.suspect) s << text(sc.x(r.value), y - 8, r.subject, label + "\"middle\"");
    else if (&r == high) s << text(sc.x(r.value) + 8, y + 3, r.subject, label + "\"start\"");
    else if (&r == low) s << text(sc.x(r.value) - 8, y + 3, r.subject, label + "\"end\"");
  }
  s << "</svg>";
  return s.str();
}

namespace {

double value_at(double q, double median, Better better) { return better == Better::higher ? q * median : median / q; }

// The heatmap's colour scale: the hue steps of colour() from half the median to 90% of it, with
// the figure each end stands for, and the measured range.
void colour_bar(std::ostringstream& s, const MetricTable& t, double x0, double y0) {
  const double median = t.reference ? t.reference->median : 0, step = 24;
  s << "<g class=\"colorbar\">";
  for (int k = 0; k <= 8; ++k)
    s << "<rect x=\"" << num(x0 + step * k) << "\" y=\"" << num(y0) << "\" width=\"" << step << "\" height=\"12\" fill=\""
      << colour(0.5 + 0.05 * k) << "\"/>";
  const std::string worse = t.better == Better::higher ? "<= " : ">= ", better = t.better == Better::higher ? ">= " : "<= ";
  s << text(x0, y0 + 24, worse + format_value(value_at(0.5, median, t.better)) + " " + t.unit)
    << text(x0 + step * 9, y0 + 24, better + format_value(value_at(0.9, median, t.better)) + " " + t.unit, "text-anchor=\"end\"")
    << text(x0 + step * 9 + 8, y0 + 10, "colour: " + t.metric + " vs the median " + format_value(median) + " " + t.unit);
  double lo = 0, hi = 0;
  bool any = false;
  for (const Ranked& r : t.rows)
    if (std::isfinite(r.value)) lo = any ? std::min(lo, r.value) : r.value, hi = any ? std::max(hi, r.value) : r.value, any = true;
  if (any)
    s << text(x0 + step * 9 + 8, y0 + 24, "pairs: min " + format_value(lo) + ", max " + format_value(hi) + " " + t.unit +
                                             "; grey: not measured");
  s << "</g>";
}

}  // namespace

std::string svg_pair_heatmap(const MetricTable& t, const std::vector<std::string>& nodes) {
  const double n = static_cast<double>(nodes.size());
  const double cell = std::clamp(560.0 / std::max(1.0, n), 6.0, 28.0);
  const bool labels = nodes.size() <= 32, values = nodes.size() <= 16;
  const double margin = labels ? 90 : 10;
  const double size = margin + cell * n + 10, width = std::max(size, 620.0), height = size + 40;
  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\"" << num(height) << "\" role=\"img\">";
  for (std::size_t i = 0; i < nodes.size() && labels; ++i) {
    const double c = margin + cell * static_cast<double>(i) + cell / 2;
    s << text(margin - 4, c + 3, nodes[i], "text-anchor=\"end\"") << "<text transform=\"translate(" << num(c + 3) << ","
      << num(margin - 4) << ") rotate(-60)\" font-size=\"10\">" << xml_escape(nodes[i]) << "</text>";
  }
  const double median = t.reference ? t.reference->median : 0;
  const PairIndex index(t);
  for (std::size_t i = 0; i < nodes.size(); ++i)
    for (std::size_t j = 0; j < nodes.size(); ++j) {
      const Ranked* found = index.find(nodes[i], nodes[j]);
      const double x = margin + cell * static_cast<double>(j), y = margin + cell * static_cast<double>(i);
      const std::string fill = found ? colour(quality(found->value, median, t.better)) : (i == j ? "#fff" : "#ddd");
      s << "<rect x=\"" << num(x) << "\" y=\"" << num(y) << "\" width=\"" << num(cell - 1) << "\" height=\"" << num(cell - 1)
        << "\" fill=\"" << fill << "\"" << (found && found->suspect ? " stroke=\"#000\"" : "") << ">";
      if (found)
        s << "<title>" << xml_escape(found->subject + ": " + format_value(found->value) + " " + t.unit + ", " + deviation_text(*found) +
                                     " vs median " + format_value(median))
          << "</title>";
      s << "</rect>";
      if (found && values)
        s << text(x + (cell - 1) / 2, y + cell / 2 + 2.5, format_value(found->value),
                  "class=\"cell-value\" font-size=\"" + num(std::min(9.0, cell * 0.32)) + "\" text-anchor=\"middle\"");
    }
  colour_bar(s, t, 10, size + 4);
  s << "</svg>";
  return s.str();
}

}  // namespace gpucal::fleet
