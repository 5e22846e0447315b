#include "app/run/process_runs.h"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <tuple>

#include "app/common/csv_table.h"
#include "app/common/process_spread.h"
#include "app/run/bench_runner.h"
#include "app/run/run_suite.h"
#include "core/output/csv_format.h"
#include "core/output/csv_sink.h"
#include "core/output/file_io.h"

namespace gpucal::calibration {

namespace fs = std::filesystem;

namespace {

// (process, point, repetition in its process) -> repetition in the merged file.
using RepetitionMap = std::map<std::tuple<std::size_t, std::string, std::string>, std::string>;

std::string merge_rows(const std::vector<CsvTable>& runs, RepetitionMap& renumbered) {
  const std::vector<std::string>& columns = runs.front().columns();
  std::string text = csv_record(columns);
  std::map<std::string, int> next_repetition;  // by point
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const CsvTable& t = runs[k];
    if (t.columns() != columns)
      throw std::runtime_error(t.source() + ": its columns differ from " + runs.front().source() + "'s");
    for (std::size_t r = 0; r < t.row_count(); ++r) {
      const std::string& point = t.get_string(r, "point");
      const std::string repetition = std::to_string(next_repetition[point]++);
      renumbered[{k, point, t.get_string_or(r, "repetition", "0")}] = repetition;
      std::vector<std::string> cells;
      for (const auto& c : columns)
        cells.push_back(c == "process_run"  ? std::to_string(k)
                        : c == "repetition" ? repetition
                                            : t.get_string(r, c));
      text += csv_record(cells);
    }
  }
  return text;
}

std::string merge_samples(const std::vector<std::string>& run_csvs, const RepetitionMap& renumbered) {
  std::string text = "point,sample,time_us,repetition\n";
  for (std::size_t k = 0; k < run_csvs.size(); ++k) {
    const std::string path = sidecar_path(run_csvs[k], ".samples.csv");
    if (!fs::exists(path)) continue;
    const CsvTable s = CsvTable::read_file(path);
    for (std::size_t r = 0; r < s.row_count(); ++r) {
      const auto it = renumbered.find({k, s.get_string(r, "point"), s.get_string(r, "repetition")});
      if (it == renumbered.end()) continue;  // a point whose row the run did not write
      text += csv_record(
          {s.get_string(r, "point"), s.get_string(r, "sample"), s.get_string(r, "time_us"), it->second});
    }
  }
  return text;
}

std::string format(double v, const char* spec) {
  char buf[48];
  std::snprintf(buf, sizeof buf, spec, v);
  return buf;
}

std::string spread_table(const CsvTable& merged) {
  std::string text = csv_record({"point", "processes", "time_us_median_of_processes", "time_us_process_min",
                                 "time_us_process_max", "between_process_spread_rel",
                                 "within_process_spread_rel", "process_medians_us"});
  for (const auto& [point, s] : process_spreads(merged)) {
    std::string medians;
    for (double m : s.medians_us) medians += (medians.empty() ? "" : " ") + format(m, "%.7g");
    text += csv_record({point, std::to_string(s.processes()), format(s.median_us, "%.7g"),
                        format(s.medians_us.front(), "%.7g"), format(s.medians_us.back(), "%.7g"),
                        format(s.between_rel, "%.4g"), format(s.within_rel, "%.4g"), medians});
  }
  return text;
}

}  // namespace

void merge_process_runs(const std::vector<std::string>& run_csvs, const std::string& out_csv) {
  std::vector<CsvTable> runs;
  for (const auto& path : run_csvs) runs.push_back(CsvTable::read_file(path));
  RepetitionMap renumbered;
  write_file_atomic(out_csv, merge_rows(runs, renumbered));
  if (fs::exists(sidecar_path(run_csvs.front(), ".samples.csv")))
    write_file_atomic(sidecar_path(out_csv, ".samples.csv"), merge_samples(run_csvs, renumbered));
  if (const std::string json_path = sidecar_path(run_csvs.front(), ".json"); fs::exists(json_path)) {
    std::ifstream in(json_path);
    nlohmann::json sidecar = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (sidecar.is_object()) {
      sidecar["process_runs"] = {{"count", run_csvs.size()}, {"csv", run_csvs}};
      write_file_atomic(sidecar_path(out_csv, ".json"), sidecar.dump(2) + "\n");
    }
  }
  write_file_atomic(sidecar_path(out_csv, ".process_runs.csv"), spread_table(CsvTable::read_file(out_csv)));
}

ChildResult run_bench_processes(const std::function<std::string(const std::string& csv)>& command_writing,
                                const std::string& out_dir, const std::string& bench,
                                const std::string& log_path, int processes, std::ostream& log) {
  const fs::path runs_dir = fs::path(out_dir) / "process_runs";
  fs::create_directories(runs_dir);
  std::vector<std::string> csvs;
  for (int k = 0; k < processes; ++k) {
    const std::string csv = (runs_dir / (bench + "." + std::to_string(k) + ".csv")).string();
    // One log for all runs, each headed by its number: the runner reads the last error line.
    const std::string header =
        "echo '== process run " + std::to_string(k) + " of " + std::to_string(processes) + "'";
    const ChildResult child =
        run_shell_command(header + (k == 0 ? " >" : " >>") + shell_quote(log_path) + "; " +
                          command_writing(csv) + " </dev/null >>" + shell_quote(log_path) + " 2>&1");
    if (child.status != 0 || child.signal_received) return child;
    csvs.push_back(csv);
  }
  merge_process_runs(csvs, (fs::path(out_dir) / (bench + ".csv")).string());
  log << "    " << processes << " processes merged into " << bench << ".csv; spread between them in " << bench
      << ".process_runs.csv\n";
  return {};
}

}  // namespace gpucal::calibration
