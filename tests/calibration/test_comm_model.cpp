// comm_model.h: predictions for any rank count, node count and size, with their provenance.
#include <gtest/gtest.h>

#include <cmath>

#include "app/fit/comm_fits.h"
#include "app/fit/comm_model.h"
#include "core/formulas/collective_formulas.h"
#include "core/output/csv_sink.h"
#include "core/output/result_columns.h"
#include "app/common/results_dir.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

// allreduce time of a two-tier system: alpha = 5 us per log2(rank), bus bandwidth 300 GB/s
// inside a node and 100 GB/s across nodes.
double truth_us(double size, int n, int nodes) {
  const double beta = nodes > 1 ? 100.0 : 300.0;
  return 5.0 * std::log2(n) + size * allreduce_bus_factor(n) / (beta * 1e3);
}

nlohmann::json calibration_of(const std::string& dir, const std::vector<std::pair<int, int>>& groups) {
  {
    CsvSink sink(dir + "/collectives.csv", collectives_columns());
    for (const auto& [n, nodes] : groups)
      for (int e = 10; e <= 30; e += 2) {
        const double s = std::exp2(e), t = truth_us(s, n, nodes);
        Row row;
        row.set("bench", "collectives")
            .set("impl", "nccl")
            .set("point", "p/" + std::to_string(n) + "/" + std::to_string(e));
        row.set("status", "ok").set("regime", "hot").set("samples", 10).set("time_us_median", t);
        row.set("time_us_p10", t).set("time_us_p90", t).set("collective", "allreduce").set("dtype", "fp32");
        row.set("nranks", n)
            .set("nnodes", nodes)
            .set("ranks_per_node", n / nodes)
            .set("spans_nodes", nodes > 1);
        row.set("size_bytes", s).set("bus_factor", allreduce_bus_factor(n));
        sink.write(row);
      }
    sink.close();
  }
  return {{"communication", fit_communication(load_results_dir(dir))}};
}

TEST(CommModel, MeasuredInterpolatedAndExtrapolatedSizes) {
  const std::string dir = testing::fresh_temp_dir();
  const CommModel model(calibration_of(dir, {{16, 2}}));
  CommQuery q{"allreduce", 16, 2, 0, std::exp2(20), ""};
  CommPrediction p = model.predict(q);
  EXPECT_EQ(p.provenance, Provenance::measured);
  EXPECT_NEAR(p.time_us, truth_us(std::exp2(20), 16, 2), 1e-3);
  EXPECT_NEAR(p.time_s, p.time_us * 1e-6, 1e-15);
  EXPECT_NEAR(p.busbw_gbps, p.algbw_gbps * allreduce_bus_factor(16), 1e-9);
  q.size_bytes = std::exp2(21);
  p = model.predict(q);
  EXPECT_EQ(p.provenance, Provenance::interpolated);
  EXPECT_NEAR(p.time_us / truth_us(q.size_bytes, 16, 2), 1.0, 0.02);
  q.size_bytes = std::exp2(34);
  p = model.predict(q);
  EXPECT_EQ(p.provenance, Provenance::extrapolated);
  EXPECT_EQ(p.form, "regime");
  EXPECT_NEAR(p.time_us / truth_us(q.size_bytes, 16, 2), 1.0, 0.02);
  EXPECT_EQ(p.groups, std::vector<std::string>{"allreduce/fp32/n16/rpn8/nodes2"});
}

TEST(CommModel, RankCountsBetweenAndBeyondTheMeasuredOnes) {
  const std::string dir = testing::fresh_temp_dir();
  const CommModel model(calibration_of(dir, {{8, 1}, {16, 2}, {64, 8}}));
  EXPECT_EQ(model.groups().size(), 3u);
  // Between 16 and 64 ranks on 8 ranks per node: interpolated, within 10% of the truth.
  CommPrediction p = model.predict({"allreduce", 32, 4, 0, std::exp2(26), ""});
  EXPECT_EQ(p.provenance, Provenance::interpolated);
  EXPECT_EQ(p.groups.size(), 2u);
  EXPECT_NEAR(p.time_us / truth_us(std::exp2(26), 32, 4), 1.0, 0.10);
  // Beyond 64 ranks: extrapolated from the 64-rank group, its bus bandwidth carried at its change
  // per octave from 16 ranks (none here: the truth's inter-node bandwidth does not change), the
  // interval at least as wide as the gap to the bandwidth kept.
  p = model.predict({"allreduce", 256, 32, 0, std::exp2(28), ""});
  EXPECT_EQ(p.provenance, Provenance::extrapolated);
  EXPECT_EQ(p.groups, (std::vector<std::string>{"allreduce/fp32/n64/rpn8/nodes8", "allreduce/fp32/n16/rpn8/nodes2"}));
  EXPECT_NE(p.method.find("alpha x"), std::string::npos);
  EXPECT_NE(p.method.find("per octave from 16 to 64 measured ranks, over 2 octave(s)"), std::string::npos) << p.method;
  EXPECT_NEAR(p.busbw_gbps, 100.0, 10.0);
  EXPECT_TRUE(p.has_interval);
  // Inside one node: only the intra-node group is used, whatever the size.
  p = model.predict({"allreduce", 4, 1, 0, std::exp2(24), ""});
  EXPECT_EQ(p.groups, std::vector<std::string>{"allreduce/fp32/n8/rpn8/nodes1"});
  EXPECT_NEAR(p.busbw_gbps,
              300.0 * std::exp2(24) * allreduce_bus_factor(4) /
                  (std::exp2(24) * allreduce_bus_factor(4) + 5.0 * std::log2(4) * 300e3),
              40.0);
  // ranks_per_node instead of nnodes.
  EXPECT_EQ(model.predict({"allreduce", 16, 0, 8, std::exp2(20), ""}).provenance, Provenance::measured);
}

TEST(CommModel, RefusesWhatTheDataCannotAnswer) {
  const std::string dir = testing::fresh_temp_dir();
  const CommModel model(calibration_of(dir, {{16, 2}}));
  auto message = [&](const CommQuery& q) -> std::string {
    try {
      model.predict(q);
    } catch (const std::invalid_argument& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(message({"allreduce", 8, 1, 0, 1e6, ""}).find("no intra-node allreduce"), std::string::npos);
  EXPECT_NE(message({"allgather", 16, 2, 0, 1e6, ""}).find("no inter-node allgather"), std::string::npos);
  EXPECT_NE(message({"allreduce", 16, 2, 0, 1e6, "bf16"}).find("have: allreduce/fp32"), std::string::npos);
  EXPECT_NE(message({"allreduce", 1, 1, 0, 1e6, ""}).find("nranks"), std::string::npos);
  EXPECT_NE(message({"allreduce", 16, 2, 0, 0, ""}).find("size"), std::string::npos);
  EXPECT_NE(message({"allreduce", 16, 0, 0, 1e6, ""}).find("nnodes or ranks_per_node"), std::string::npos);
  EXPECT_NE(message({"allreduce", 16, 2, 4, 1e6, ""}).find("do not fit"), std::string::npos);
  EXPECT_NE(message({"alltoallv", 16, 2, 0, 1e6, ""}).find("unknown collective"), std::string::npos);
  EXPECT_THROW(CommModel(nlohmann::json::object()), std::invalid_argument);
}

}  // namespace
}  // namespace gpucal::calibration
