#include "app/fit/comm_forms.h"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "app/fit/fit_regime.h"
#include "app/fit/fit_table.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

double number(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number() || !std::isfinite(j[key].get<double>()))
    throw std::invalid_argument(std::string("model parameters: '") + key + "' missing or not a finite number");
  return j[key].get<double>();
}

void require(bool ok, const std::string& what) {
  if (!ok) throw std::invalid_argument("model parameters: " + what);
}

json to_json(const AlphaBetaParams& p) {
  return {{"alpha_us", p.alpha_us}, {"beta_gbps", p.beta_gbps}};
}
AlphaBetaParams alpha_beta_from(const json& j) {
  return {number(j, "alpha_us"), number(j, "beta_gbps")};
}

json to_json(const SigmoidParams& p) {
  return {{"H_gbps", p.height_gbps},
          {"k_per_log2_byte", p.steepness},
          {"x0_log2_bytes", p.midpoint_log2_bytes},
          {"y0_gbps", p.offset_gbps}};
}
SigmoidParams sigmoid_from(const json& j) {
  return {number(j, "H_gbps"), number(j, "k_per_log2_byte"), number(j, "x0_log2_bytes"),
          number(j, "y0_gbps")};
}

json to_json(const PiecewiseParams& p) {
  return {{"floor_us", p.floor_us},
          {"knee_bus_bytes", p.knee_bus_bytes},
          {"sat_bus_bytes", p.sat_bus_bytes},
          {"bw_max_gbps", p.bw_max_gbps},
          {"overhead_us", p.overhead_us}};
}
PiecewiseParams piecewise_from(const json& j) {
  return {number(j, "floor_us"), number(j, "knee_bus_bytes"), number(j, "sat_bus_bytes"),
          number(j, "bw_max_gbps"), number(j, "overhead_us")};
}

json to_json(const RegimeParams& p) {
  json segments = json::array(), gaps = json::array();
  for (const auto& s : p.segments)
    segments.push_back(
        {{"from_bus_bytes", s.from_bus_bytes},
         {"to_bus_bytes", s.to_bus_bytes},
         {"alpha_us", s.alpha_us},
         {"beta_gbps", s.us_per_bus_byte > 0 ? json(1.0 / (s.us_per_bus_byte * 1e3)) : json(nullptr)},
         {"sizes", s.sizes},
         {"label", s.label}});
  for (const auto& g : p.gaps)
    gaps.push_back({{"from_bus_bytes", g.from_bus_bytes},
                    {"to_bus_bytes", g.to_bus_bytes},
                    {"rule", g.intersection ? "intersection" : p.gap_rule},
                    {"switch_bus_bytes", g.intersection ? json(g.switch_bus_bytes) : json(nullptr)},
                    {"decreasing", g.decreasing}});
  json rules = json::object();
  for (const auto& [rule, mape] : p.gap_rule_loo_mape_pct) rules[rule] = mape;
  return {{"breakpoints_from", p.breakpoints_from},
          {"gap_rule", p.gap_rule},
          {"gap_rule_loo_mape_pct", rules},
          {"segments", segments},
          {"gaps", gaps}};
}
RegimeParams regime_from(const json& j) {
  if (!j.is_object() || !j.contains("segments") || !j["segments"].is_array() || j["segments"].empty())
    throw std::invalid_argument("regime parameters: no segments");
  RegimeParams p;
  for (const auto& s : j["segments"]) {
    RegimeSegment seg;
    seg.from_bus_bytes = number(s, "from_bus_bytes");
    seg.to_bus_bytes = number(s, "to_bus_bytes");
    seg.alpha_us = number(s, "alpha_us");
    seg.us_per_bus_byte = s.contains("beta_gbps") && s["beta_gbps"].is_number()
                              ? 1.0 / (s["beta_gbps"].get<double>() * 1e3)
                              : 0.0;
    p.segments.push_back(seg);
  }
  p.gap_rule = j.value("gap_rule", "bridge");
  const auto& rules = regime_gap_rules();
  if (std::find(rules.begin(), rules.end(), p.gap_rule) == rules.end())
    throw std::invalid_argument("regime parameters: unknown gap_rule '" + p.gap_rule + "'");
  const json gaps = j.value("gaps", json::array());
  if (gaps.size() + 1 != p.segments.size())
    throw std::invalid_argument("regime parameters: one gap between segments");
  for (const auto& g : gaps) {
    RegimeGap gap;
    gap.from_bus_bytes = number(g, "from_bus_bytes");
    gap.to_bus_bytes = number(g, "to_bus_bytes");
    gap.intersection = g.is_object() && g.value("rule", "") == "intersection";
    if (gap.intersection) gap.switch_bus_bytes = number(g, "switch_bus_bytes");
    const std::size_t i = p.gaps.size();
    require(gap.from_bus_bytes == p.segments[i].to_bus_bytes && gap.to_bus_bytes == p.segments[i + 1].from_bus_bytes,
            "each regime gap must span from one segment's end to the next one's start");
    p.gaps.push_back(gap);
  }
  return p;
}

json to_json(const TableParams& p) {
  return {
      {"interpolation", p.interpolation},
      {"interpolation_loo_mape_pct", p.interpolation_loo_mape_pct},
      {"knots_size_bytes", p.size_bytes},
      {"knots_time_us", p.time_us}};
}
TableParams table_from(const json& j) {
  if (!j.is_object() || !j.contains("knots_size_bytes") || !j.contains("knots_time_us"))
    throw std::invalid_argument("table parameters: no knots");
  TableParams p;
  require(j["knots_size_bytes"].is_array() && j["knots_time_us"].is_array(), "table knots must be lists");
  for (const auto& v : j["knots_size_bytes"]) p.size_bytes.push_back(v.is_number() ? v.get<double>() : NAN);
  for (const auto& v : j["knots_time_us"]) p.time_us.push_back(v.is_number() ? v.get<double>() : NAN);
  p.interpolation = j.value("interpolation", "pchip");
  require(p.size_bytes.size() >= 2 && p.size_bytes.size() == p.time_us.size(), "table needs matching knot lists");
  for (std::size_t i = 0; i < p.size_bytes.size(); ++i)
    require(std::isfinite(p.size_bytes[i]) && p.size_bytes[i] > 0 && std::isfinite(p.time_us[i]) && p.time_us[i] > 0 &&
                (i == 0 || p.size_bytes[i] > p.size_bytes[i - 1]),
            "table knots must be positive, finite and in increasing size");
  const auto& rules = table_interpolations();
  require(std::find(rules.begin(), rules.end(), p.interpolation) != rules.end(),
          "table interpolation must be pchip, loglog or size_linear");
  return p;
}

}  // namespace

const std::vector<std::string>& comm_form_names() {
  static const std::vector<std::string> names{"alpha_beta", "sigmoid", "piecewise", "regime", "table"};
  return names;
}

int comm_form_min_sizes(const std::string& form) {
  if (form == "alpha_beta") return kAlphaBetaMinSizes;
  if (form == "sigmoid") return kSigmoidMinSizes;
  if (form == "piecewise") return kPiecewiseMinSizes;
  if (form == "regime") return kRegimeMinSizes;
  if (form == "table") return kTableMinSizes + 1;  // an interpolation of two sizes predicts nothing new
  throw std::invalid_argument("unknown model form '" + form + "'");
}

json fit_comm_form(const std::string& form, const std::vector<SizeTimePoint>& points, double bus_factor) {
  if (form == "alpha_beta") return to_json(fit_alpha_beta(points, bus_factor));
  if (form == "sigmoid") return to_json(fit_sigmoid(points, bus_factor));
  if (form == "piecewise") return to_json(fit_piecewise(points, bus_factor));
  if (form == "regime") return to_json(fit_regime(points, bus_factor));
  if (form == "table") return to_json(fit_table(points));
  throw std::invalid_argument("unknown model form '" + form + "'");
}

namespace {
double evaluate(const std::string& form, const json& params, double size_bytes, double bus_factor) {
  if (form == "alpha_beta") return predict_time_us(alpha_beta_from(params), size_bytes, bus_factor);
  if (form == "sigmoid") return predict_time_us(sigmoid_from(params), size_bytes, bus_factor);
  if (form == "piecewise") return predict_time_us(piecewise_from(params), size_bytes, bus_factor);
  if (form == "regime") return predict_time_us(regime_from(params), size_bytes, bus_factor);
  if (form == "table") return predict_time_us(table_from(params), size_bytes);
  throw std::invalid_argument("unknown model form '" + form + "'");
}
}  // namespace

double predict_comm_form(const std::string& form, const json& params, double size_bytes, double bus_factor) {
  if (!(size_bytes > 0) || !(bus_factor > 0) || !std::isfinite(size_bytes) || !std::isfinite(bus_factor))
    throw std::invalid_argument("model evaluation: size and bus factor must be positive and finite");
  const double t = evaluate(form, params, size_bytes, bus_factor);
  if (!std::isfinite(t) || !(t > 0))
    throw std::invalid_argument(form + " parameters predict a time of " + std::to_string(t) + " us");
  return t;
}

}  // namespace gpucal::calibration
