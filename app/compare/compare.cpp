#include "app/compare/compare.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>
#include <tuple>

#include "app/compare/mann_whitney.h"
#include "app/compare/process_compare.h"

namespace gpucal::calibration {

using nlohmann::json;

const char* verdict_name(Verdict v) {
  switch (v) {
    case Verdict::regression: return "REGRESSION";
    case Verdict::improvement: return "improvement";
    case Verdict::unchanged: return "unchanged";
    case Verdict::suspect: return "suspect";
    case Verdict::status_changed: return "status-changed";
    case Verdict::not_compared: return "not-compared";
    case Verdict::only_in_baseline: return "only-in-baseline";
    case Verdict::only_in_current: return "only-in-current";
  }
  return "?";
}

int CompareResult::count(Verdict v) const {
  return static_cast<int>(std::count_if(points.begin(), points.end(), [v](const auto& p) { return p.verdict == v; }));
}

int CompareResult::failures() const {
  return static_cast<int>(std::count_if(points.begin(), points.end(), [](const auto& p) { return p.is_failure; }));
}

std::string CompareResult::nothing_compared() const {
  if (count(Verdict::regression) + count(Verdict::improvement) + count(Verdict::unchanged) > 0) return "";
  if (points.empty()) return "nothing was compared: neither run has a row";
  if (count(Verdict::suspect) > 0)
    return "nothing was judged: every point ok in both runs has a suspect timing (" +
           std::to_string(count(Verdict::suspect)) + " suspect, not judged); rerun on a quiet machine";
  return "nothing was compared: no point is ok in both runs (" + std::to_string(count(Verdict::only_in_baseline)) +
         " only in the baseline, " + std::to_string(count(Verdict::only_in_current)) + " only in the current run, " +
         std::to_string(count(Verdict::status_changed)) + " ok in one run only, " +
         std::to_string(count(Verdict::not_compared)) + " ok in neither)";
}

namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Keys that describe the device and software stack; volatile ones are excluded.
bool is_environment_key(const std::string& path) {
  const std::string p = lower(path);
  static const char* volatile_words[] = {"time", "date", "clock", "temp", "power", "pid", "host", "command",
                                         "argv", "git", "duration", "throttl", "util", "elapsed", "seed"};
  for (const char* w : volatile_words)
    if (p.find(w) != std::string::npos) return false;
  static const char* environment_words[] = {"device", "gpu", "driver", "version", "librar", "cuda", "rocm",
                                            "hip", "nccl", "rccl", "blas", "cudnn", "miopen", "mpi", "compiler",
                                            "vbios", "firmware", "uuid", "backend", "arch", "sm_count", "memory"};
  for (const char* w : environment_words)
    if (p.find(w) != std::string::npos) return true;
  return false;
}

// An array whose entries are objects that each carry a distinct string `name`: keyed by it.
bool named_entries(const json& j) {
  std::set<std::string> names;
  for (const auto& e : j)
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string() || !names.insert(e["name"]).second)
      return false;
  return true;
}

void flatten(const json& j, const std::string& prefix, std::map<std::string, std::string>& out) {
  if (j.is_object()) {
    for (const auto& [key, value] : j.items()) flatten(value, prefix.empty() ? key : prefix + "." + key, out);
  } else if (j.is_array() && !j.empty() && named_entries(j)) {
    // By name, not position: one library more shifts no other. Where a file was found is not
    // what it is (a build folder's path), so an entry's path is left out.
    for (const auto& e : j) {
      const std::string key = prefix + "[" + e["name"].get<std::string>() + "]";
      json rest = e;
      rest.erase("name");
      rest.erase("path");
      out[key] = rest.empty() ? "present" : rest.dump();
    }
  } else if (j.is_array() && !j.empty() && (j.front().is_object() || j.front().is_array())) {
    for (std::size_t i = 0; i < j.size(); ++i) flatten(j[i], prefix + "[" + std::to_string(i) + "]", out);
  } else {
    out[prefix] = j.is_string() ? j.get<std::string>() : j.dump();
  }
}

std::set<std::string> column_values(const BenchResults& b, const std::string& column) {
  std::set<std::string> values;
  if (b.table.has_column(column))
    for (std::size_t r = 0; r < b.table.row_count(); ++r) values.insert(b.table.get_string(r, column));
  return values;
}

std::string join(const std::set<std::string>& values) {
  std::string s;
  for (const auto& v : values) s += (s.empty() ? "" : ", ") + v;
  return s;
}

// A point's rows: one, or one per Google Benchmark repetition (`repetition` column),
// aggregated: the worst status; the median of the pooled samples (the samples file pools a
// point's repetitions) or, without it, the median of the repetitions' medians; the widest
// [p10, p90].
struct RowRef {
  const BenchResults* bench = nullptr;
  std::vector<std::size_t> rows;
  std::string status() const {
    std::string worst = "ok";
    for (std::size_t r : rows) {
      const std::string& s = bench->table.get_string(r, "status");
      if (s == "error" || (s != "ok" && worst == "ok")) worst = s;
    }
    return worst;
  }
  // The `suspect` reason of a row of the point (preempted, ...), "" when none is.
  std::string suspect() const {
    if (!bench->table.has_column("suspect")) return "";
    for (std::size_t r : rows)
      if (const std::string& s = bench->table.get_string(r, "suspect"); !s.empty()) return s;
    return "";
  }
  std::string status_detail() const {
    for (std::size_t r : rows)
      if (bench->table.get_string(r, "status") != "ok") return bench->table.get_string_or(r, "status_detail", "");
    return "";
  }
  double median(const std::string& point) const {
    if (rows.size() == 1) return bench->table.get_double(rows.front(), "time_us_median");
    std::vector<double> values;
    if (const auto* pooled = samples(point); pooled && !pooled->empty()) {
      values = *pooled;
    } else {
      for (std::size_t r : rows) values.push_back(bench->table.get_double(r, "time_us_median"));
    }
    std::sort(values.begin(), values.end());
    const std::size_t n = values.size();
    return n % 2 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
  }
  double p10() const { return extreme("time_us_p10", false); }
  double p90() const { return extreme("time_us_p90", true); }
  const std::vector<double>* samples(const std::string& point) const {
    if (!bench->samples_by_point) return nullptr;
    auto it = bench->samples_by_point->find(point);
    return it == bench->samples_by_point->end() ? nullptr : &it->second;
  }

 private:
  double extreme(const char* column, bool largest) const {
    double v = bench->table.get_double(rows.front(), column);
    for (std::size_t r : rows) {
      const double x = bench->table.get_double(r, column);
      v = largest ? std::max(v, x) : std::min(v, x);
    }
    return v;
  }
};

// Rows by point; a point may repeat only with distinct `repetition` cells.
std::map<std::string, RowRef> index_rows(const BenchResults& b) {
  std::map<std::string, RowRef> rows;
  std::set<std::pair<std::string, std::string>> seen;
  const bool has_repetition = b.table.has_column("repetition");
  for (std::size_t r = 0; r < b.table.row_count(); ++r) {
    const std::string& point = b.table.get_string(r, "point");
    const std::string repetition = has_repetition ? b.table.get_string(r, "repetition") : "";
    if (!seen.emplace(point, repetition).second)
      throw CsvError(b.table.source() + ":" + std::to_string(b.table.line_of(r)) + ": duplicate point '" + point + "'" +
                     (has_repetition ? " (repetition " + repetition + ")" : ""));
    RowRef& ref = rows[point];
    ref.bench = &b;
    ref.rows.push_back(r);
  }
  return rows;
}

PointComparison make_comparison(const std::string& bench, const std::string& point, Verdict verdict) {
  PointComparison c;
  c.bench = bench;
  c.point = point;
  c.verdict = verdict;
  return c;
}

// A preempted timing says nothing either way: the point is named as suspect, never passed as
// unchanged nor failed as a regression (rerun to judge it), whichever test judged it.
PointComparison judged_unless_suspect(PointComparison c, const RowRef& base, const RowRef& cur) {
  const std::string base_suspect = base.suspect(), cur_suspect = cur.suspect();
  if (base_suspect.empty() && cur_suspect.empty()) return c;
  c.verdict = Verdict::suspect;
  c.is_failure = false;
  c.detail = "suspect timing in the " +
             (base_suspect.empty() ? "current run: " + cur_suspect
              : cur_suspect.empty() ? "baseline: " + base_suspect
                                    : "baseline (" + base_suspect + ") and the current run: " + cur_suspect) +
             "; rerun to judge this point";
  return c;
}

PointComparison compare_point(const std::string& bench, const std::string& point, const RowRef& base,
                              const RowRef& cur, const CompareOptions& options) {
  PointComparison c = make_comparison(bench, point, Verdict::unchanged);
  const std::string base_status = base.status(), cur_status = cur.status();
  if (base_status != "ok" || cur_status != "ok") {
    c.verdict = (base_status != "ok" && cur_status != "ok") ? Verdict::not_compared : Verdict::status_changed;
    c.is_failure = base_status == "ok" && cur_status == "error";
    c.detail = "status " + base_status + " -> " + cur_status;
    if (cur_status != "ok") c.detail += ": " + cur.status_detail();
    return c;
  }
  if (compare_by_processes(base.bench->table, base.rows, cur.bench->table, cur.rows, options, c))
    return judged_unless_suspect(c, base, cur);
  c.baseline_median_us = base.median(point);
  c.current_median_us = cur.median(point);
  c.ratio = *c.current_median_us / *c.baseline_median_us;
  const auto* base_samples = base.samples(point);
  const auto* cur_samples = cur.samples(point);
  if (base_samples && cur_samples && base_samples->size() >= kMinSamplesForUTest &&
      cur_samples->size() >= kMinSamplesForUTest) {
    c.test = "mann-whitney-u";
    c.p_value = mann_whitney_u(*base_samples, *cur_samples).p_value;
    c.significant = *c.p_value < options.alpha;
  } else {
    c.test = "p10-p90-disjoint";
    const double b10 = base.p10(), b90 = base.p90();
    const double c10 = cur.p10(), c90 = cur.p90();
    c.significant = c10 > b90 || c90 < b10;
  }
  if (c.significant && *c.ratio - 1.0 > options.threshold) {
    c.verdict = Verdict::regression;
    c.is_failure = true;
  } else if (c.significant && 1.0 - *c.ratio > options.threshold) {
    c.verdict = Verdict::improvement;
  } else {
    c.verdict = Verdict::unchanged;
  }
  return judged_unless_suspect(c, base, cur);
}

}  // namespace

std::vector<EnvironmentChange> sidecar_changes(const std::string& label, const json& baseline, const json& current) {
  std::map<std::string, std::string> base, cur;
  flatten(baseline, "", base);
  flatten(current, "", cur);
  std::set<std::string> keys;
  for (const auto& [k, v] : base) keys.insert(k);
  for (const auto& [k, v] : cur) keys.insert(k);
  std::vector<EnvironmentChange> changes;
  for (const auto& key : keys) {
    if (!is_environment_key(key)) continue;
    const auto b = base.find(key), c = cur.find(key);
    const std::string bv = b == base.end() ? "(absent)" : b->second;
    const std::string cv = c == cur.end() ? "(absent)" : c->second;
    if (bv != cv) changes.push_back({key, bv, cv, {label}});
  }
  return changes;
}

std::vector<EnvironmentChange> merge_changes(const std::vector<EnvironmentChange>& changes) {
  std::vector<EnvironmentChange> merged;
  std::map<std::tuple<std::string, std::string, std::string>, std::size_t> index;
  for (const auto& c : changes) {
    const auto [it, added] = index.emplace(std::tuple{c.what, c.baseline, c.current}, merged.size());
    if (added) merged.push_back({c.what, c.baseline, c.current, {}});
    auto& where = merged[it->second].where;
    for (const auto& w : c.where)
      if (std::find(where.begin(), where.end(), w) == where.end()) where.push_back(w);
  }
  return merged;
}

CompareResult compare_runs(const ResultsDir& baseline, const ResultsDir& current, const CompareOptions& options) {
  CompareResult result;
  result.options = options;
  result.baseline_dir = baseline.path;
  result.current_dir = current.path;
  for (const auto& bench : known_benches()) {
    const BenchResults* b = baseline.find(bench);
    const BenchResults* c = current.find(bench);
    if (!b && !c) continue;
    if (b && c) {
      for (const char* column : {"device", "backend"}) {
        const auto bv = column_values(*b, column), cv = column_values(*c, column);
        if (bv != cv) result.environment_changes.push_back({column, join(bv), join(cv), {bench + ".csv"}});
      }
      const auto changes = sidecar_changes(bench + ".json", b->sidecar, c->sidecar);
      result.environment_changes.insert(result.environment_changes.end(), changes.begin(), changes.end());
    }
    const auto base_rows = b ? index_rows(*b) : std::map<std::string, RowRef>{};
    const auto cur_rows = c ? index_rows(*c) : std::map<std::string, RowRef>{};
    for (const auto& [point, base_row] : base_rows) {
      auto it = cur_rows.find(point);
      if (it == cur_rows.end()) {
        PointComparison only = make_comparison(bench, point, Verdict::only_in_baseline);
        if (base_row.status() == "ok") only.baseline_median_us = base_row.median(point);
        only.detail = c ? "point absent from current run" : bench + ".csv absent from current run";
        result.points.push_back(only);
      } else {
        result.points.push_back(compare_point(bench, point, base_row, it->second, options));
      }
    }
    for (const auto& [point, cur_row] : cur_rows) {
      if (base_rows.count(point)) continue;
      PointComparison only = make_comparison(bench, point, Verdict::only_in_current);
      if (cur_row.status() == "ok") only.current_median_us = cur_row.median(point);
      only.detail = b ? "point absent from baseline run" : bench + ".csv absent from baseline run";
      result.points.push_back(only);
    }
  }
  result.environment_changes = merge_changes(result.environment_changes);
  return result;
}

}  // namespace gpucal::calibration
