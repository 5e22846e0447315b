#include "app/check/health_command.h"

#include <algorithm>
#include <unistd.h>

#include <cstdlib>
#include <iomanip>
#include <map>
#include <sstream>

#include "app/check/expectations.h"
#include "app/check/nvml_health.h"
#include "app/check/rsmi_health.h"
#include "app/check/xid_health.h"
#include "app/common/calibration_json.h"
#include "app/report/junit.h"
#include "app/report/prometheus.h"
#include "app/report/slurm_drain.h"
#include "core/output/file_io.h"

namespace gpucal::check {

namespace {

// Slurm's name for this node: SLURMD_NODENAME in HealthCheckProgram, prolog and epilog, else the
// short host name (Slurm's NodeName is the short name by default).
std::string this_node() {
  if (const char* n = std::getenv("SLURMD_NODENAME"); n && *n) return n;
  char host[256] = {};
  if (gethostname(host, sizeof host - 1) != 0) return "localhost";
  std::string name = host;
  return name.substr(0, name.find('.'));
}

// The scalar load the CPU clocks are read under: long enough for cpufreq's sample period (tens of
// milliseconds) and a power limit's averaging window to show, short enough for a Slurm prolog.
constexpr double kClockLoadSeconds = 0.5;

HealthReadings gather(const HealthOptions& o) {
  if (!o.from.empty() && !o.kernel_log.empty())
    throw std::invalid_argument("--kernel-log does not go with --health-from: recorded readings hold their own Xids");
  if (!o.from.empty()) {
    const nlohmann::json doc = calibration::read_json_document(o.from);
    return readings_from_json(doc.is_object() && doc.contains("readings") ? doc["readings"] : doc, o.from);
  }
  HealthReadings r;
  read_sysfs_health(o.sysfs, r);
  read_cpu_clocks_under_load(o.sysfs, r, kClockLoadSeconds);
  if (o.kernel_log.empty())
    read_kernel_xids(o.sysfs, r);
  else
    read_kernel_log_file(o.kernel_log, r);
  read_nvml_health(r);
  if (r.gpus.empty()) {  // no NVIDIA GPU: an AMD node's, through ROCm SMI
    const std::string nvml = r.gpu_source;
    read_rsmi_health(r);
    if (r.gpus.empty()) r.gpu_source = nvml + "; " + r.gpu_source;
  }
  return r;
}

// Every line that is not a pass, then one count per check of its passes.
std::string format_health(const std::vector<HealthLine>& lines) {
  std::ostringstream out;
  std::map<std::string, int> passes;
  int subject_width = 15;  // wider for a long subject (a cgroup's path), a space always after it
  for (const auto& l : lines)
    if (l.status != "pass") subject_width = std::max(subject_width, static_cast<int>(l.subject.size()) + 2);
  out << std::left << std::setw(22) << "check" << std::setw(subject_width) << "subject" << std::setw(15) << "status"
      << std::setw(42) << "value" << "detail\n";
  for (const auto& l : lines) {
    if (l.status == "pass") {
      ++passes[l.check];
      continue;
    }
    out << std::left << std::setw(22) << l.check << std::setw(subject_width) << l.subject << std::setw(15) << l.status
        << std::setw(42) << l.value << l.detail << "\n";
  }
  for (const auto& [check, n] : passes)
    out << std::left << std::setw(22) << check << std::setw(subject_width) << (std::to_string(n) + " subject(s)") << "pass\n";
  return out.str();
}

std::vector<fleet::JUnitCase> health_cases(const std::string& node, const std::vector<HealthLine>& lines) {
  std::vector<fleet::JUnitCase> cases;
  for (const auto& l : lines) {
    fleet::JUnitCase c{"gpucal.health." + node, l.check + " " + l.subject, l.value + (l.detail.empty() ? "" : "; " + l.detail), "", ""};
    if (l.status == "fail") c.failure = l.check + " " + l.subject + ": " + l.value + " (" + l.detail + ")";
    else if (l.status == "not available") c.skipped = "not available: " + l.detail;
    cases.push_back(std::move(c));
  }
  return cases;
}

fleet::PromText health_prometheus(const std::string& node, const std::vector<HealthLine>& lines, const std::string& verdict) {
  fleet::PromText p;
  for (const auto& l : lines)
    for (const char* status : {"pass", "warn", "fail", "not available"})
      p.gauge("health_status", "gpucal check --health per check and subject: 1 for its status, 0 for the others",
              {{"node", node}, {"check", l.check}, {"subject", l.subject}, {"status", status}}, l.status == status);
  p.gauge("health_ok", "1 when gpucal check --health passed (warnings allowed), 0 on a failure or when it checked nothing",
          {{"node", node}}, verdict == "pass");
  p.gauge("health_last_run_timestamp_seconds", "when gpucal check --health ran, seconds since the epoch", {{"node", node}},
          fleet::now_seconds());
  return p;
}

}  // namespace

int run_health(const HealthOptions& o, std::ostream& out) {
  const HealthReadings r = gather(o);
  std::vector<HealthLine> lines = judge_health(r);
  if (!r.gpus.empty()) {  // what the GPUs' SKUs should show (expectations/*.json "health")
    std::vector<Expectations> skus;
    std::string note;
    try {
      skus = read_expectations_dir(find_expectations_dir());
    } catch (const std::exception& e) {
      note = std::string("no SKU expectations: ") + e.what();
    }
    judge_against_skus(r, skus, note, lines);
  }
  const std::string verdict = health_verdict(lines);
  const std::string node = o.node.empty() ? this_node() : o.node;
  int counts[4] = {};
  for (const auto& l : lines)
    ++counts[l.status == "pass" ? 0 : l.status == "warn" ? 1 : l.status == "fail" ? 2 : 3];
  out << "gpucal check --health: " << node << " ("
      << (o.from.empty() ? "sysfs " + o.sysfs + "; GPUs: " + r.gpu_source : "recorded readings " + o.from) << ")\n"
      << format_health(lines) << "verdict: " << (verdict == "pass" ? "pass" : verdict == "fail" ? "FAIL" : "NOTHING CHECKED")
      << ": " << counts[2] << " fail, " << counts[1] << " warn, " << counts[0] << " pass, " << counts[3]
      << " not available\n";
  if (!o.json.empty())
    calibration::write_json_file({{"node", node}, {"verdict", verdict}, {"reason", health_reason(lines)}, {"readings", readings_to_json(r)},
                                  {"lines", [&] {
                                     nlohmann::json a = nlohmann::json::array();
                                     for (const auto& l : lines)
                                       a.push_back({{"check", l.check}, {"subject", l.subject}, {"status", l.status}, {"value", l.value}, {"detail", l.detail}});
                                     return a;
                                   }()}},
                                 o.json);
  if (!o.junit.empty()) write_file_atomic(o.junit, fleet::junit_xml("gpucal check --health " + node, health_cases(node, lines)));
  if (!o.prometheus.empty()) fleet::write_prometheus(o.prometheus, health_prometheus(node, lines, verdict));
  if (verdict == "pass") return 0;
  write_stderr_line("gpucal: error: check --health: " + health_reason(lines) +
                    (verdict == "nothing checked" ? " (this node exposes none of the checks; the table says why for each)" : ""));
  if (o.drain) fleet::drain_nodes({fleet::drain_action(node, "gpucal health: " + health_reason(lines), o.scontrol)}, out);
  return 1;
}

}  // namespace gpucal::check
