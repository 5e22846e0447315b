#include "app/run/verdict.h"

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "app/common/csv_table.h"

namespace gpucal::calibration {

using nlohmann::json;
namespace fs = std::filesystem;

const json& member(const json& j, const char* key) {
  static const json empty = json::object();
  return j.is_object() && j.contains(key) ? j[key] : empty;
}

std::string text_of(const json& j, const char* key, const std::string& fallback) {
  const json& v = member(j, key);
  return v.is_string() ? v.get<std::string>() : fallback;
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, fraction < 0.1 ? "%.2g%%" : "%.0f%%", 100 * fraction);
  return buf;
}

std::string number(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", value);
  return buf;
}

std::string error_pct(double pct) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g%%", pct);
  return buf;
}

std::string duration(double seconds) {
  char buf[32];
  if (seconds < 1)
    std::snprintf(buf, sizeof buf, "%.1f ms", seconds * 1e3);
  else
    std::snprintf(buf, sizeof buf, "%.4g s", seconds);
  return buf;
}

namespace {

double number_or_zero(const json& j, const char* key) {
  return j.is_object() && j.value(key, json()).is_number() ? j[key].get<double>() : 0.0;
}

bool computed(const json& error) {
  return error.is_object() && error.value("computed", false) && error.value("mape_pct", json()).is_number();
}

std::string group_name(const json& g, bool collective) {
  if (collective)
    return text_of(g, "collective", "?") + " " + text_of(g, "dtype", "?") + " n" +
           std::to_string(g.value("nranks", 0)) +
           (g.value("nnodes", 1) > 1 ? " on " + std::to_string(g.value("nnodes", 0)) + " nodes" : "");
  return text_of(g, "pattern", "?") + " " + text_of(g, "link_class", "?");
}

// The first peak_source of `dtype`'s rows in a bench CSV ("" when none).
std::string peak_source(const std::string& csv, const std::string& dtype) {
  if (!fs::exists(csv)) return "";
  try {
    const CsvTable t = CsvTable::read_file(csv);
    for (std::size_t r = 0; r < t.row_count(); ++r)
      if (t.get_string_or(r, "dtype", "") == dtype && !t.get_string_or(r, "peak_source", "").empty())
        return t.get_string(r, "peak_source");
  } catch (const std::exception&) {
  }
  return "";
}

// The best copy row's peak_gbps in memory.csv (0 when none is recorded).
double memory_peak_gbps(const std::string& csv, std::string& source) {
  if (!fs::exists(csv)) return 0;
  double peak = 0;
  try {
    const CsvTable t = CsvTable::read_file(csv);
    for (std::size_t r = 0; r < t.row_count(); ++r)
      if (t.get_string_or(r, "kernel", "") == "copy")
        if (const auto p = t.get_optional_double(r, "peak_gbps"); p && *p > peak)
          peak = *p, source = t.get_string_or(r, "peak_source", "");
  } catch (const std::exception&) {
  }
  return peak;
}

}  // namespace

std::vector<FitVerdict> fit_verdicts(const json& calibration) {
  std::vector<FitVerdict> out;
  if (!calibration.is_object() || !calibration.contains("communication")) return out;
  for (const bool collective : {true, false})
    for (const json& g : member(member(calibration, "communication"), collective ? "collectives" : "p2p")) {
      const json& best = member(g, "best");
      const json& held = best.value("selection_heldout", json());
      const json& base = member(g, "baseline_loglog").value("heldout", json());
      if (!computed(held) || !computed(base)) continue;
      FitVerdict v{.group = group_name(g, collective),
                   .form = text_of(held, "form", text_of(best, "form", "-")),
                   .exported_form = text_of(best, "form", "-"),
                   .sizes = static_cast<int>(member(g, "points").size()),
                   .fit_pct = held["mape_pct"].get<double>(),
                   .loglog_pct = base["mape_pct"].get<double>()};
      out.push_back(v);
    }
  return out;
}

std::vector<PeakVerdict> peak_verdicts(const json& calibration, const std::string& results_dir) {
  std::vector<PeakVerdict> out;
  if (!calibration.is_object()) return out;
  const auto csv = [&](const char* bench) { return (fs::path(results_dir) / bench).string(); };
  const json compute = member(calibration, "compute");
  for (const auto& [dtype, t] : member(compute, "gemm").items())
    out.push_back({.figure = "GEMM " + dtype,
                   .unit = "TFLOP/s",
                   .peak_source = peak_source(csv("gemm.csv"), dtype),
                   .best = number_or_zero(t, "best_tflops"),
                   .peak = number_or_zero(t, "peak_tflops")});
  for (const json& a : member(compute, "attention")) {
    PeakVerdict v{.figure = "attention " + text_of(a, "dtype", "?") + " " + text_of(a, "pass", "?") + " head dim " +
                            std::to_string(a.value("head_dim", 0)),
                  .unit = "TFLOP/s",
                  .peak_source = peak_source(csv("attention.csv"), text_of(a, "dtype", ""))};
    for (const json& s : member(a, "by_seq"))
      if (number_or_zero(s, "tflops") > v.best) {
        v.best = number_or_zero(s, "tflops");
        const double efficiency = number_or_zero(s, "efficiency");
        v.peak = efficiency > 0 ? v.best / efficiency : 0;
      }
    out.push_back(v);
  }
  const json memory = member(calibration, "memory");
  for (const auto& [dtype, v] : member(memory, "vector").items())
    out.push_back({.figure = "vector " + dtype,
                   .unit = "TFLOP/s",
                   .peak_source = text_of(v, "peak_source", ""),
                   .best = number_or_zero(v, "best_tflops"),
                   .peak = number_or_zero(v, "peak_tflops")});
  if (number_or_zero(memory, "device_bandwidth_gbps") > 0) {
    PeakVerdict m{
        .figure = "memory bandwidth (copy)", .unit = "GB/s", .best = memory["device_bandwidth_gbps"]};
    m.peak = memory_peak_gbps(csv("memory.csv"), m.peak_source);
    out.push_back(m);
  }
  return out;
}

namespace {

void add_item(std::string& list, const std::string& item) {
  list += (list.empty() ? "" : ", ") + item;
}

std::string benches_sentence(const RunRecord& r) {
  int ok = 0;
  std::string not_ok;
  for (const auto& b : r.benches) {
    ok += b.ok();
    if (!b.ok()) not_ok += (not_ok.empty() ? "; " : ", ") + b.bench + " " + b.status;
  }
  return "benches: " + std::to_string(ok) + " of " + std::to_string(r.benches.size()) + " ok" + not_ok;
}

std::string exports_sentence(const RunRecord& r) {
  if (!r.suite->exports) return "exports: none (suite " + r.suite->name + " makes none)";
  if (!r.export_error.empty()) return "exports: failed: " + r.export_error;
  if (r.exports.empty()) return "exports: none (nothing was fitted)";
  int ok = 0;
  std::string written, refused, not_applicable, not_for_host;
  const auto listed = [](const std::vector<std::string>& list, const std::string& name) {
    return std::find(list.begin(), list.end(), name) != list.end();
  };
  for (const auto& e : r.exports) {
    ok += e.ok();
    if (e.ok())
      add_item(written, e.consumer);
    else if (listed(r.exports_not_for_host, e.consumer))
      add_item(not_for_host, e.consumer);
    else if (listed(r.exports_not_applicable, e.consumer))
      add_item(not_applicable, e.consumer);
    else
      refused += (refused.empty() ? "; refused: " : ", ") + e.consumer + " (" + e.refused.front() + ")";
  }
  const size_t applicable = r.exports.size() - r.exports_not_applicable.size();
  std::string s = "exports: " + std::to_string(ok) + " of " + std::to_string(applicable) + " written" +
                  (written.empty() ? "" : " (" + written + ")") + refused +
                  (not_applicable.empty() ? ""
                                          : "; not applicable with one rank (they describe the network between "
                                            "GPUs): " + not_applicable) +
                  (not_for_host.empty() ? "" : "; not applicable on the host backend (they describe a GPU): " + not_for_host);
  if (!r.stand_ins.empty())
    s += "; " + std::to_string(r.stand_ins.size()) +
         " figures no bench measures were supplied by gpucal run (summary.md: Stand-ins)";
  return s;
}

std::string predict_sentence(const RunRecord& r) {
  if (r.predict.path.empty()) return "predicted step: none: " + r.predict.why_not;
  const json& b = r.predict.result["breakdown"];
  std::string by;
  for (const auto& [provenance, n] : member(b["step"], "ops_by_provenance").items())
    by += (by.empty() ? "" : ", ") + std::to_string(n.get<int>()) + " " + provenance;
  return "predicted step: " + duration(b["step"]["time_s"].get<double>()) + ", " +
         tokens_per_s_text(b) + " for " + r.predict_label +
         " (op costs: " + by + "; predict.json)";
}

std::string fits_sentence(const RunRecord& r) {
  const auto fits = fit_verdicts(r.calibration);
  if (fits.empty()) return "fits: no communication group with held-out sizes to judge";
  int good = 0, listed = 0;
  std::string worse;
  std::vector<double> fit, interp;
  for (const auto& f : fits) {
    good += f.as_good();
    fit.push_back(f.fit_pct);
    interp.push_back(f.loglog_pct);
    if (!f.as_good() && ++listed <= 3)  // the rest are in summary.md's table
      add_item(worse, f.group + " (" + error_pct(f.fit_pct) + " vs " + error_pct(f.loglog_pct) + ")");
  }
  const int bad = static_cast<int>(fits.size()) - good;
  if (bad > 3) worse += " and " + std::to_string(bad - 3) + " more";
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  return "fits: " + std::to_string(good) + " of " + std::to_string(fits.size()) +
         " communication groups predict sizes they were not fitted to at least as well as log-log "
         "interpolation of their own points (median held-out error " +
         error_pct(median(fit)) + " vs " + error_pct(median(interp)) + " for interpolation)" +
         (worse.empty() ? "" : "; worse: " + worse);
}

std::string peaks_sentence(const RunRecord& r) {
  std::string below, fine, unknown;
  for (const auto& p : peak_verdicts(r.calibration, r.out_dir)) {
    if (p.peak <= 0)
      add_item(unknown, p.figure + " " + number(p.best) + " " + p.unit);
    else
      add_item(p.below_half() ? below : fine,
               p.figure + " " + percent(p.best / p.peak) + " of " + number(p.peak) + " " + p.unit);
  }
  if (below.empty() && fine.empty() && unknown.empty()) return "peaks: nothing measured to compare";
  return "below half of this device's peak: " + (below.empty() ? std::string("nothing") : below) +
         (fine.empty() ? "" : "; at half or more: " + fine) +
         (unknown.empty() ? "" : "; no peak recorded: " + unknown);
}

}  // namespace

Completeness completeness(const RunRecord& r) {
  Completeness c;
  int ok_rows = 0;
  for (const auto& b : r.benches) {
    ok_rows += b.ok_rows;
    if (b.status.rfind("failed", 0) == 0 || b.status == "not built") {
      c.bench_failed = true;
      c.missing.push_back(b.bench + " " + b.status);
    }
  }
  if (ok_rows == 0) {
    c.bench_failed = true;
    c.missing.insert(c.missing.begin(), "measured nothing (no bench wrote an ok row)");
  }
  if (r.calibration.is_null() && ok_rows > 0)
    c.missing.push_back("no calibration.json" + (r.fit_error.empty() ? std::string() : " (" + r.fit_error + ")"));
  if (!r.export_error.empty()) c.missing.push_back("exports failed");
  int refused = 0;
  for (const auto& e : r.exports)
    refused += !e.ok() && std::find(r.exports_not_applicable.begin(), r.exports_not_applicable.end(), e.consumer) ==
                              r.exports_not_applicable.end();
  if (refused > 0) c.missing.push_back(std::to_string(refused) + " export(s) refused");
  if (!r.predict_args.empty() && r.predict.path.empty() && !r.calibration.is_null())
    c.missing.push_back("no predicted step");
  c.spoiled = !c.missing.empty() && !c.bench_failed && r.suspect_rows > 0 && !r.allow_suspect;
  return c;
}

int run_exit_code(const Completeness& c) {
  if (c.complete()) return 0;
  return c.spoiled ? kExitRunSpoiled : 1;
}

std::vector<std::string> verdict_lines(const RunRecord& r) {
  const Completeness c = completeness(r);
  std::string headline = c.complete() ? "complete: every bench, export" +
                                            std::string(r.predict_args.empty() ? "" : " and the predicted step") +
                                            " this run can make"
                                      : "INCOMPLETE: ";
  for (size_t i = 0; i < c.missing.size(); ++i) headline += (i ? ", " : "") + c.missing[i];
  if (c.spoiled)
    headline += " (" + std::to_string(r.suspect_rows) +
                " suspect row(s) were left out: the machine was busy; rerun on a quiet machine)";
  if (!r.single_rank.empty()) headline += "; one rank: " + r.single_rank;
  std::vector<std::string> lines{headline, benches_sentence(r)};
  // Rows a busy machine spoiled are left out of everything after the benches: say it first.
  if (r.suspect_rows > 0)
    lines.push_back("suspect timings: " + std::to_string(r.suspect_rows) + " ok row(s) preempted by other work " +
                    (r.allow_suspect ? "and used anyway (--allow-suspect)"
                                     : "were left out of the fits and exports; rerun on a quiet machine, or pass "
                                       "--allow-suspect to use them"));
  lines.push_back(exports_sentence(r));
  if (!r.predict_args.empty()) lines.push_back(predict_sentence(r));
  if (!r.calibration.is_null()) {
    lines.push_back(fits_sentence(r));
    lines.push_back(peaks_sentence(r));
  }
  if (r.device_field("backend") == "host")
    lines.push_back(
        "host backend: every figure is this CPU's, a host-scale stand-in for a GPU's (summary.md: "
        "Stand-ins)");
  return lines;
}

std::string tokens_per_s_text(const nlohmann::json& breakdown) {
  const nlohmann::json t = breakdown.value("tokens_per_s", nlohmann::json());
  return t.is_number() ? number(t.get<double>()) + " tokens/s" : "no tokens/s (operations left out)";
}

std::string mfu_text(const nlohmann::json& breakdown) {
  const nlohmann::json m = breakdown.value("mfu", nlohmann::json());
  return m.is_number() ? percent(m.get<double>()) : "n/a";
}

}  // namespace gpucal::calibration
