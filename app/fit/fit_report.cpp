#include "app/fit/fit_report.h"

#include <cstdio>
#include <sstream>

#include "app/fit/comm_forms.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

std::string pct(const json& error) {
  if (!error.is_object() || !error.value("computed", false)) return "-";
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.2f", error["mape_pct"].get<double>());
  return buf;
}

std::string group_name(const json& g, const std::string& kind) {
  std::ostringstream o;
  if (kind == "collectives")
    o << g.value("collective", "?") << "/" << g.value("dtype", "?") << "/n" << g.value("nranks", 0)
      << "/nodes" << (g.value("nnodes", 0) > 0 ? std::to_string(g.value("nnodes", 0)) : std::string("?"));
  else
    o << g.value("pattern", "?") << "/" << g.value("direction", "?") << "/" << g.value("link_class", "?");
  return o.str();
}

// Median (worst) held-out error of one rule: "1.8 (48.7)".
std::string median_worst(const json& e) {
  if (!e.is_object() || !e.contains("median_pct")) return "-";
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.1f (%.0f)", e["median_pct"].get<double>(), e["max_pct"].get<double>());
  return buf;
}

// GEMM: each dtype's held-out splits, the surface predict uses beside its two baselines.
std::string gemm_report(const json& calibration) {
  const json* gemm = calibration.contains("compute") && calibration["compute"].contains("gemm")
                         ? &calibration["compute"]["gemm"]
                         : nullptr;
  if (!gemm || gemm->empty()) return "";
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "\n%-10s %-26s %6s  %-16s %-16s %-16s\n", "gemm", "held out", "shapes",
                "surface%", "loglog-flops%", "xla-rule%");
  out << line;
  for (const auto& [dtype, table] : gemm->items()) {
    if (!table.contains("heldout")) continue;
    for (const json& s : table["heldout"]["splits"]) {
      std::snprintf(line, sizeof line, "%-10s %-26s %6d  %-16s %-16s %-16s\n", dtype.c_str(),
                    s["split"].get<std::string>().c_str(), s["held_out"].get<int>(),
                    median_worst(s["surface"]).c_str(), median_worst(s["loglog_flops"]).c_str(),
                    median_worst(s["xla_rule"]).c_str());
      out << line;
    }
  }
  out << "(median (worst) absolute error of the held-out shapes' TFLOP/s; surface: what gpucal predict uses)\n";
  return out.str();
}

}  // namespace

std::string format_fit_report(const json& calibration) {
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof line, "%-12s %-36s %5s  %-10s %8s %8s %8s %6s  %-10s |", "kind", "group",
                "sizes", "best", "heldout%", "loo%", "loglog%", "ratio", "pick");
  out << line;
  for (const auto& form : comm_form_names()) out << " " << form << "%";
  out << "\n";
  for (const std::string kind : {"collectives", "p2p"}) {
    if (!calibration.contains("communication") || !calibration["communication"].contains(kind)) continue;
    for (const json& g : calibration["communication"][kind]) {
      const json& best = g.value("best", json::object());
      const std::string form =
          best.contains("form") && best["form"].is_string() ? best["form"].get<std::string>() : "-";
      const json none;
      // The choice's own held-out error: the form picked on the training sizes (cv_selection.h).
      const json& heldout = best.value("selection_heldout", none);
      const std::string pick = heldout.is_object() && heldout.value("form", json()).is_string()
                                   ? heldout["form"].get<std::string>()
                                   : "-";
      const json& loo = form != "-" ? g[form].value("loo", none) : none;
      const json& base = g.contains("baseline_loglog") ? g["baseline_loglog"]["heldout"] : none;
      std::string ratio = "-";
      if (pct(heldout) != "-" && pct(base) != "-" && base["mape_pct"].get<double>() > 0) {
        char buf[16];
        std::snprintf(buf, sizeof buf, "%.2f",
                      heldout["mape_pct"].get<double>() / base["mape_pct"].get<double>());
        ratio = buf;
      }
      std::size_t sizes = 0;
      if (g.contains("table") && g["table"].contains("knots_size_bytes"))
        sizes = g["table"]["knots_size_bytes"].size();
      std::snprintf(line, sizeof line, "%-12s %-36s %5zu  %-10s %8s %8s %8s %6s  %-10s |", kind.c_str(),
                    group_name(g, kind).c_str(), sizes, form.c_str(), pct(heldout).c_str(), pct(loo).c_str(),
                    pct(base).c_str(), ratio.c_str(), pick.c_str());
      out << line;
      for (const auto& f : comm_form_names()) out << " " << pct(g[f].value("heldout", none));
      out << "\n";
    }
  }
  out << gemm_report(calibration);
  return out.str();
}

}  // namespace gpucal::calibration
