// gpucal export --to simai end to end: the workload and busbw.yaml read by SimAI's parser rules
// (tests/export/simai_checks.h) and held against `gpucal predict` for the same stage: the same
// compute time, the same collective bytes per group and kind, and bus bandwidths that give each
// kind of collective predict's total time.
#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "core/formulas/collective_formulas.h"
#include "tests/calibration/test_util.h"
#include "tests/export/simai_checks.h"
#include "tests/export/workload_fixture.h"

namespace gpucal::calibration::testing {
namespace {

using nlohmann::json;

std::string error_lines(const std::vector<std::string>& errors) {
  std::string s;
  for (const auto& e : errors) s += e + "\n";
  return s;
}

std::string base_name(const std::string& collective) {
  if (collective == "allreduce") return "ALLREDUCE";
  if (collective == "allgather") return "ALLGATHER";
  if (collective == "reduce_scatter") return "REDUCESCATTER";
  return "ALLTOALL";
}

// The group SimAI gives a line's collective: forward and input-gradient columns TP (plain) or
// EP (_EP); the weight-gradient column DP (plain) or expert DP (_DP_EP).
std::string group_of(int column, const std::string& type) {
  const bool ep = type.size() > 3 && type.compare(type.size() - 3, 3, "_EP") == 0;
  const bool dp_ep = type.size() > 6 && type.compare(type.size() - 6, 6, "_DP_EP") == 0;
  const std::string base = type.substr(0, type.size() - (dp_ep ? 6 : ep ? 3 : 0));
  if (column < 2) return (ep ? "EP:" : "TP:") + base;
  return (dp_ep ? "DPEP:" : "DP:") + base;
}

// The same key for one of predict's operations (the embedding all-reduce sits in a TP column).
std::string group_of(const json& op) {
  const std::string g = op["shape"]["group"];
  const std::string prefix = g == "ep" ? "EP:" : g == "dp" ? "DP:" : g == "expert_dp" ? "DPEP:" : "TP:";
  return prefix + base_name(op["shape"]["collective"]);
}

// busbw.yaml's key for an operation, as SimAI looks them up.
std::string busbw_key(const json& op) {
  const std::string g = op["shape"]["group"];
  if (g == "pp") return "PP.busbw";
  const std::string c = op["shape"]["collective"];
  const std::string section = g == "dp" ? "DP" : g == "ep" || g == "expert_dp" ? "EP" : "TP";
  const std::string kind = c == "allreduce" ? "allreduce" : c == "alltoall" && section != "DP" ? "alltoall" : "allgather";
  return section + "." + kind;
}

void export_and_check(const std::string& model_flags, int pp, int64_t micro_batches) {
  const std::string dir = workload_fixture_dir();
  std::string log;
  ASSERT_EQ(run_gpucal("export results --to simai " + model_flags + " --out out", log, dir), 0) << log;
  std::vector<std::string> errors;
  const SimaiWorkload w = parse_simai_workload(read_text(dir + "/out/simai/workload.txt"), errors);
  const auto busbw = parse_simai_busbw(read_text(dir + "/out/simai/busbw.yaml"), errors);
  EXPECT_EQ(error_lines(errors), "");
  EXPECT_EQ(w.header.at("pp"), pp);
  EXPECT_EQ(w.header.at("ga"), micro_batches);
  const json predict = predict_stages(dir, model_flags, pp).back();  // the stage the lines are
  ASSERT_FALSE(predict.is_null());
  double compute_us = 0;
  std::map<std::string, int64_t> predicted_bytes, written_bytes;
  std::map<std::string, std::pair<double, double>> bus;  // key -> (bus bytes, seconds)
  for (const auto& op : predict["ops"]) {
    const double calls = op["calls_per_step"].get<double>();
    if (op["category"] == "compute") {
      compute_us += op["time_us_per_call"].get<double>() * calls;
      continue;
    }
    const int64_t size = op["shape"]["size_bytes"];
    const int n = op["shape"]["group_size"];
    const std::string c = op["shape"].value("collective", "sendrecv");
    if (op["shape"]["group"] == "pp") {
      EXPECT_EQ(w.header.at("pp_comm"), size);
    } else {
      predicted_bytes[group_of(op)] += size * op["calls_per_step"].get<int64_t>();
    }
    auto& [bytes, seconds] = bus[busbw_key(op)];
    bytes += static_cast<double>(size) * calls * (c == "sendrecv" ? 1.0 : bus_factor(c, n));
    seconds += op["time_s_per_step"].get<double>();
  }
  double written_ns = 0;
  for (const auto& l : w.lines)
    for (int c = 0; c < 3; ++c) {
      written_ns += static_cast<double>(l.compute_ns[c]);
      if (l.type[c] != "NONE") written_bytes[group_of(c, l.type[c])] += static_cast<int64_t>(l.size[c]);
    }
  EXPECT_NEAR(written_ns, compute_us * 1e3, 1.5);
  EXPECT_EQ(written_bytes, predicted_bytes);
  for (const auto& [key, total] : bus) {
    ASSERT_TRUE(busbw.count(key) && busbw.at(key)) << key;
    const double gib_per_s = *busbw.at(key) * 1024.0 * 1024.0 * 1024.0;
    EXPECT_NEAR(total.first / gib_per_s, total.second, 1e-5 * total.second) << key;
  }
}

TEST(SimaiExport, TensorAndDataParallel) {
  export_and_check("--model-config dense.json --dtype bf16 --tp 2 --dp 2", 1, 1);
}

TEST(SimaiExport, PipelineZeroOne) {
  export_and_check("--model-config dense.json --dtype bf16 --tp 2 --pp 2 --dp 2 --zero 1 --global-batch 8", 2, 4);
}

TEST(SimaiExport, ExpertParallel) {
  export_and_check("--model-config moe.json --dtype bf16 --tp 2 --dp 2 --ep 2 --sp", 1, 1);
}

TEST(SimaiExport, RefusesWhatSimaiCannotPlace) {
  const std::string dir = workload_fixture_dir();
  std::string log;
  EXPECT_EQ(run_gpucal("export results --to simai --model-config dense.json --dtype bf16 --cp 2 --out out", log, dir), 2);
  EXPECT_NE(log.find("no context-parallel group"), std::string::npos) << log;
  EXPECT_FALSE(std::filesystem::exists(dir + "/out/simai/workload.txt"));
}

}  // namespace
}  // namespace gpucal::calibration::testing
