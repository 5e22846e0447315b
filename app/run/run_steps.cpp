#include "app/run/run_steps.h"

#include <algorithm>
#include <sys/wait.h>

#include <CLI/CLI.hpp>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "app/common/calibration_json.h"
#include "app/fit/calibration_build.h"
#include "app/common/results_dir.h"
#include "app/export/export_figures.h"
#include "app/export/export_registry.h"
#include "app/export/export_workload_flags.h"
#include "app/run/bench_runner.h"
#include "app/run/verdict.h"
#include "core/output/file_io.h"
#include "core/registry/registry.h"

#ifndef GPUCAL_SOURCE_PLOTS_DIR
#define GPUCAL_SOURCE_PLOTS_DIR ""
#endif

namespace gpucal::calibration {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

int exit_status(int system_result) {
  if (system_result == -1) return 127;
  return WIFEXITED(system_result) ? WEXITSTATUS(system_result) : 128 + WTERMSIG(system_result);
}

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string last_line(const std::string& path) {
  std::istringstream lines(read_text(path));
  std::string line, last;
  while (std::getline(lines, line))
    if (!line.empty()) last = line;
  return last;
}

std::string step_label(const std::string& name) {
  return "  " + name + std::string(13 - name.size(), ' ');
}

}  // namespace

void fit_step(RunRecord& r, std::ostream& log) {
  try {
    const ResultsDir results = load_results_dir(r.out_dir, r.allow_suspect);
    for (const auto& [name, b] : results.benches) r.suspect_rows += b.suspect_rows.size();
    r.calibration = build_calibration(results);
    write_json_file(r.calibration, (fs::path(r.out_dir) / "calibration.json").string());
    const json& comm = member(r.calibration, "communication");
    std::ostringstream line;
    line << step_label("fit") << "calibration.json: " << member(comm, "collectives").size()
         << " collective and " << member(comm, "p2p").size() << " p2p groups";
    for (const auto& [dtype, t] : member(member(r.calibration, "compute"), "gemm").items())
      line << ", GEMM " << dtype;
    if (const auto bw = memory_bandwidth_gbps(r.calibration, ExportSettings{}))
      line << ", memory " << format_number(std::round(bw->value * 10) / 10) << " GB/s";
    log << line.str() << "\n";
  } catch (const std::exception& e) {
    r.fit_error = e.what();
    log << step_label("fit") << "nothing to fit: " << e.what() << "\n";
  }
}

// The workload targets' step: the suite's predicted model and layout (Suite::predict), read as
// `gpucal export --model ...` reads them; null when the suite predicts nothing.
std::shared_ptr<const ExportWorkload> suite_workload(const RunRecord& r) {
  if (r.predict_args.empty()) return nullptr;
  CLI::App flags;
  flags.allow_extras();  // the prediction's own flags (--quiet, --allow-missing)
  ExportWorkloadFlags workload;
  workload.add(flags);
  std::vector<std::string> args(r.predict_args.rbegin(), r.predict_args.rend());  // CLI11 pops from the back
  flags.parse(args);
  return workload.resolve(r.out_dir, nullptr, r.calibration);
}

namespace {

// The step's flags as `gpucal export` takes them: the suite's prediction's, less --quiet.
std::string step_flags(const RunRecord& r) {
  std::string flags;
  for (const auto& a : r.predict_args)
    if (a != "--quiet") flags += (flags.empty() ? "" : " ") + a;
  return flags;
}

bool written(const RunRecord& r, std::string_view target) {
  return std::any_of(r.exports.begin(), r.exports.end(),
                     [&](const ExportReport& e) { return e.consumer == target && e.ok(); });
}

// NOTES.md's paragraph under its title: the model and layout the export was written for, and
// whether the files a tool runs with it (ExportTarget::runs_with) are for the same step.
std::string written_for(const RunRecord& r, const ExportTarget& row) {
  const std::string target(row.name);
  if (std::find(r.exports_for_step.begin(), r.exports_for_step.end(), target) == r.exports_for_step.end())
    return "Written for no particular model or layout: the measured reference shapes' figures, not fitted to " +
           std::string(r.predict_args.empty() ? "a step" : "the suite's step (" + r.predict_label + ")") + ".";
  std::string s = "Written for the suite's step, the one predict.json predicts: " + r.predict_label + " (`" +
                  step_flags(r) + "`).";
  if (row.runs_with.empty()) return s;
  const std::string other(row.runs_with);
  if (!written(r, other)) return s + " export/" + other + "/ was not written (summary.md says why).";
  // The tool is the hardware target's (ASTRA-sim runs chakra's traces on astrasim's files).
  const ExportTarget& hardware = row.workload ? registry::lookup(export_targets(), other, "export target") : row;
  const std::string pair = row.workload ? other + "," + target : target + "," + other;
  return s + " export/" + other + "/ is for the same step: the two go together (" + std::string(hardware.tool) +
         " runs them together); for another model or layout re-export both: `gpucal export " + r.out_dir + " --to " +
         pair + " " + step_flags(r) + "`.";
}

// Each written export's NOTES.md: what it was written for, under the title, and the figures
// the run supplied (stand_ins.h), at the end.
void annotate_notes(const RunRecord& r, const std::string& dir) {
  for (const ExportTarget& row : export_targets()) {
    if (!written(r, row.name)) continue;
    const std::string target(row.name);
    const std::string notes = (fs::path(dir) / target / kExportNotesFile).string();
    std::string text = read_text(notes);
    const std::size_t title_end = text.find("\n\n");
    text.insert(title_end == std::string::npos ? text.size() : title_end + 2, written_for(r, row) + "\n\n");
    const auto lines = stand_in_lines(r.stand_ins, target);
    if (!lines.empty()) text += "\n## Supplied by gpucal run (not measured by this run)\n\n";
    for (const auto& l : lines) text += "- " + l + "\n";
    write_text_file(notes, text);
  }
}

}  // namespace

void export_step(RunRecord& r, std::ostream& log) {
  const std::string p2p_csv = (fs::path(r.out_dir) / "p2p.csv").string();
  r.stand_ins = stand_ins_for(r.calibration, p2p_csv, read_text("/proc/meminfo"));
  const std::string dir = (fs::path(r.out_dir) / "export").string();
  std::string written, refused;
  // A step the workload targets cannot take refuses them alone; the hardware targets still write.
  std::shared_ptr<const ExportWorkload> workload;
  std::string workload_error;
  try {
    workload = suite_workload(r);
  } catch (const std::exception& e) {
    workload_error = "the suite's step (" + r.predict_label + "): " + e.what();
  }
  try {
    for (const ExportTarget& row : export_targets()) {
      const std::string target(row.name);
      // A suite that predicts no step has no workload to write.
      if (row.workload && !workload && workload_error.empty()) continue;
      ExportSettings settings = settings_for(r.stand_ins, target);
      // The workload targets, and those a tool runs with them (ASTRA-sim's network and system
      // with chakra's traces), for the suite's step: the flags chakra and predict take.
      const bool for_step = workload && (row.workload || !row.runs_with.empty());
      if (for_step) settings.set_workload(workload);
      ExportReport report = row.workload && !workload
                                ? ExportReport{.consumer = target, .refused = {workload_error}}
                                : export_to(r.calibration, target, dir, settings).front();
      if (report.ok() && for_step) r.exports_for_step.push_back(target);
      if (report.ok())
        written += (written.empty() ? "" : ", ") + target;
      else if (row.needs_group && !r.single_rank.empty())
        r.exports_not_applicable.push_back(target);
      else if (row.gpu_only && r.device_field("backend") == "host") {
        r.exports_not_applicable.push_back(target);
        r.exports_not_for_host.push_back(target);
      }
      else
        refused += "; " + target + " refused (" + report.refused.front() + ")";
      r.exports.push_back(std::move(report));
    }
  } catch (const std::exception& e) {
    r.export_error = e.what();
    log << step_label("exports") << "failed: " << e.what() << "\n";
    return;
  }
  annotate_notes(r, dir);
  int ok = 0;
  for (const auto& e : r.exports) ok += e.ok();
  std::string not_applicable, not_for_host;
  for (const auto& t : r.exports_not_applicable)
    if (std::find(r.exports_not_for_host.begin(), r.exports_not_for_host.end(), t) == r.exports_not_for_host.end())
      not_applicable += (not_applicable.empty() ? "" : ", ") + t;
  for (const auto& t : r.exports_not_for_host) not_for_host += (not_for_host.empty() ? "" : ", ") + t;
  log << step_label("exports") << ok << " of " << r.exports.size() - r.exports_not_applicable.size() << " written"
      << (written.empty() ? "" : ": " + written) << refused
      << (not_applicable.empty() ? "" : "; not applicable with one rank: " + not_applicable)
      << (not_for_host.empty() ? "" : "; not applicable on the host backend: " + not_for_host)
      << (ok ? " (export/<tool>/NOTES.md: what fills each field)" : "") << "\n";
}

void predict_step(RunRecord& r, const RunOptions& o, std::ostream& log) {
  if (r.predict_args.empty()) return;
  const std::string out = (fs::path(r.out_dir) / "predict.json").string();
  const std::string plog = (fs::path(r.out_dir) / "logs" / "predict.log").string();
  std::string cmd = shell_quote(gpucal_executable(o.gpucal_path)) + " predict " + shell_quote(r.out_dir);
  for (const auto& a : r.predict_args) cmd += " " + shell_quote(a);
  cmd += " --output " + shell_quote(out);
  r.predict.command = cmd;
  const int status = exit_status(std::system((cmd + " </dev/null >" + shell_quote(plog) + " 2>&1").c_str()));
  if (status == 0 && fs::exists(out)) {
    r.predict.path = out;
    r.predict.result = json::parse(read_text(out));
    const json& b = r.predict.result["breakdown"];
    std::ostringstream line;
    line << step_label("predict") << "step " << duration(b["step"]["time_s"].get<double>()) << ", "
         << tokens_per_s_text(b) << " (predict.json)";
    log << line.str() << "\n";
  } else {
    r.predict.why_not = "gpucal predict exited " + std::to_string(status) + ": " + last_line(plog);
    log << step_label("predict") << "no step predicted: " << r.predict.why_not << "\n";
  }
}

std::string find_python_with_matplotlib(std::string& why_not) {
  for (const char* python : {"/usr/bin/python3", "python3"}) {
    const std::string probe = std::string(python) + " -c 'import matplotlib' >/dev/null 2>&1";
    if (exit_status(std::system(probe.c_str())) == 0) return python;
  }
  why_not = "neither /usr/bin/python3 nor python3 on PATH can import matplotlib";
  return "";
}

std::string find_plots_dir(const std::string& gpucal_path) {
  if (const char* env = std::getenv("GPUCAL_PLOTS_DIR"); env && *env) return env;
  const fs::path bin = fs::path(gpucal_executable(gpucal_path)).parent_path();
  // Beside the binary (the build tree), or an install's PREFIX/share/gpucal/plots.
  for (const fs::path& dir : {bin / "plots", bin.parent_path() / "share" / "gpucal" / "plots"})
    if (fs::exists(dir / "plot_results.py")) return dir.string();
  return GPUCAL_SOURCE_PLOTS_DIR;
}

void plots_step(RunRecord& r, const RunOptions& o, std::ostream& log) {
  std::string why_not;
  const std::string python = o.plots ? find_python_with_matplotlib(why_not) : "";
  if (!o.plots) {
    r.plots = "skipped (--no-plots)";
  } else if (python.empty()) {
    r.plots = "skipped: " + why_not;
  } else if (r.calibration.is_null()) {
    r.plots = "skipped: no results";
  } else {
    const std::string dir = (fs::path(r.out_dir) / "plots").string();
    const std::string script = (fs::path(find_plots_dir(o.gpucal_path)) / "plot_results.py").string();
    const std::string plog = (fs::path(r.out_dir) / "logs" / "plots.log").string();
    const int status =
        exit_status(std::system((python + " " + shell_quote(script) + " " + shell_quote(r.out_dir) + " -o " +
                                 shell_quote(dir) + " </dev/null >" + shell_quote(plog) + " 2>&1")
                                    .c_str()));
    if (fs::is_directory(dir))
      for (const auto& f : fs::directory_iterator(dir)) r.plot_files += f.path().extension() == ".png";
    r.plots = status == 0 ? std::to_string(r.plot_files) + " figures in plots/ (.png and .svg)"
                          : "plot_results.py failed (exit " + std::to_string(status) + ", see " + plog + ")";
  }
  log << step_label("plots") << r.plots << "\n";
}

}  // namespace gpucal::calibration
