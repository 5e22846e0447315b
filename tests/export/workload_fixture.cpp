#include "tests/export/workload_fixture.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <tuple>

#include "tests/calibration/synthetic_results.h"
#include "tests/calibration/test_util.h"

#ifndef GPUCAL_BIN_RELATIVE
#error "GPUCAL_BIN_RELATIVE must name the gpucal executable relative to this test's binary"
#endif

namespace gpucal::calibration::testing {

namespace {

struct Csv {
  std::vector<std::string> cols;
  std::vector<std::vector<std::string>> rows;
  std::size_t col(const std::string& name) const {
    return static_cast<std::size_t>(std::find(cols.begin(), cols.end(), name) - cols.begin());
  }
};

Csv read_csv(const std::string& path) {
  std::ifstream in(path);
  Csv c;
  std::string line, cell;
  std::getline(in, line);
  for (std::stringstream h(line); std::getline(h, cell, ',');) c.cols.push_back(cell);
  while (std::getline(in, line)) {
    std::vector<std::string> cells;
    for (std::stringstream s(line); std::getline(s, cell, ',');) cells.push_back(cell);
    if (cells.size() == c.cols.size()) c.rows.push_back(cells);
  }
  return c;
}

void append_rows(const std::string& path, const std::vector<std::vector<std::string>>& rows) {
  std::ofstream out(path, std::ios::app);
  for (const auto& cells : rows)
    for (std::size_t i = 0; i < cells.size(); ++i) out << (i ? "," : "") << cells[i] << (i + 1 == cells.size() ? "\n" : "");
}

void replace_in(std::string& s, const std::string& from, const std::string& to) {
  const std::size_t at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
}

// The synthetic folder measures attention forward only: backward rows at 2.5x the time and
// flops (the fa2 convention's ratio) let the step's backward be costed.
void add_backward_attention(const std::string& path) {
  const Csv c = read_csv(path);
  std::vector<std::vector<std::string>> added;
  for (auto cells : c.rows) {
    if (cells[c.col("pass")] != "fwd" || cells[c.col("status")] != "ok") continue;
    for (const char* k : {"time_us_median", "time_us_p10", "time_us_p90", "time_us_min", "time_us_max", "time_us_mean",
                          "time_us_stdev", "flops"})
      cells[c.col(k)] = std::to_string(std::stod(cells[c.col(k)]) * 2.5);
    cells[c.col("pass")] = "bwd";
    replace_in(cells[c.col("point")], "fwd", "bwd");
    added.push_back(cells);
  }
  append_rows(path, added);
}

// The synthetic folder measures allreduce (fp32) and one allgather: the other collectives the
// layouts use, in bf16 and fp32 within a node, derived from the allreduce rows at the same
// ranks (0.6 x its time: half the bus traffic, the same latency's share).
void add_collectives(const std::string& path) {
  const Csv c = read_csv(path);
  std::set<std::tuple<std::string, std::string, std::string>> have;
  for (const auto& r : c.rows) have.insert({r[c.col("collective")], r[c.col("dtype")], r[c.col("nranks")]});
  std::vector<std::vector<std::string>> added;
  for (const auto& r : c.rows) {
    if (r[c.col("collective")] != "allreduce" || r[c.col("nnodes")] != "1" || r[c.col("status")] != "ok") continue;
    for (const char* collective : {"allreduce", "allgather", "reduce_scatter", "alltoall"})
      for (const char* dtype : {"bf16", "fp32"}) {
        if (have.count({collective, dtype, r[c.col("nranks")]})) continue;
        auto cells = r;
        for (const char* k : {"time_us_median", "time_us_p10", "time_us_p90", "time_us_min", "time_us_max",
                              "time_us_mean", "time_us_stdev"})
          cells[c.col(k)] = std::to_string(std::stod(r[c.col(k)]) * (std::string(collective) == "allreduce" ? 1 : 0.6));
        const double n = std::stod(r[c.col("nranks")]), t = std::stod(cells[c.col("time_us_median")]) * 1e-6;
        const double algbw = std::stod(r[c.col("size_bytes")]) / t / 1e9;
        cells[c.col("collective")] = collective;
        cells[c.col("dtype")] = dtype;
        cells[c.col("algbw_gbps")] = std::to_string(algbw);
        cells[c.col("bus_factor")] = std::to_string(std::string(collective) == "allreduce" ? 2 * (n - 1) / n : (n - 1) / n);
        cells[c.col("busbw_gbps")] = std::to_string(algbw * std::stod(cells[c.col("bus_factor")]));
        cells[c.col("in_place")] = std::string(collective) == "alltoall" ? "0" : "1";
        replace_in(cells[c.col("point")], "allreduce", collective);
        replace_in(cells[c.col("point")], "fp32", dtype);
        added.push_back(cells);
      }
  }
  append_rows(path, added);
}

}  // namespace

std::string workload_fixture_dir() {
  const std::string dir = fresh_temp_dir();
  write_synthetic_results(dir + "/results");
  add_backward_attention(dir + "/results/attention.csv");
  add_collectives(dir + "/results/collectives.csv");
  std::ofstream(dir + "/dense.json")
      << R"({"name": "test-dense", "source": "test fixture: a small Llama-style model", "layers": 4,
 "hidden": 512, "heads": 8, "kv_heads": 4, "ffn": 1536, "gated": true, "vocab": 4096,
 "tied_embeddings": true, "causal": false, "seq": 1024})";
  std::ofstream(dir + "/moe.json")
      << R"({"name": "test-moe", "source": "test fixture: a small Mixtral-style model", "layers": 4,
 "hidden": 512, "heads": 8, "kv_heads": 4, "ffn": 0, "gated": true, "vocab": 4096, "causal": false,
 "seq": 1024, "experts": 4, "top_k": 2, "expert_ffn": 1024})";
  return dir;
}

int run_gpucal(const std::string& args, std::string& output, const std::string& dir) {
  const std::string bin =
      (std::filesystem::canonical("/proc/self/exe").parent_path() / GPUCAL_BIN_RELATIVE).string();
  return run_command("cd " + dir + " && " + bin + " " + args, output, dir + "/gpucal.log");
}

std::vector<nlohmann::json> predict_stages(const std::string& dir, const std::string& model_flags, int pp) {
  std::vector<nlohmann::json> out;
  for (int s = 0; s < pp; ++s) {
    std::string log;
    const std::string path = dir + "/predict." + std::to_string(s) + ".json";
    const int rc = run_gpucal("predict results " + model_flags + " --pp-stage " + std::to_string(s) +
                                  " --quiet --output " + path,
                              log, dir);
    EXPECT_EQ(rc, 0) << log;
    out.push_back(rc == 0 ? nlohmann::json::parse(read_text(path)) : nlohmann::json());
  }
  return out;
}

}  // namespace gpucal::calibration::testing
