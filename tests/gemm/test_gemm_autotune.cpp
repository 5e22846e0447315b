// Autotune bookkeeping and the run's best-so-far, without a GPU.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "bench_gemm/gemm_autotune.h"

using namespace gpucal::gemm;

TEST(ChooseBest, KeepsTheFastestAndReportsTheGain) {
  // Heuristic 10 us, candidate 2 at 8 us: best index 2, gain 1.25.
  auto c = choose_best({{0, 10e-6, true, ""}, {1, 12e-6, true, ""}, {2, 8e-6, true, ""}});
  EXPECT_EQ(c.best_index, 2);
  EXPECT_DOUBLE_EQ(c.best_seconds, 8e-6);
  EXPECT_DOUBLE_EQ(c.heuristic_seconds, 10e-6);
  EXPECT_DOUBLE_EQ(c.gain, 1.25);
  EXPECT_EQ(c.timed, 3);
  EXPECT_EQ(c.valid, 3);
}

TEST(ChooseBest, HeuristicAlreadyBestAndTies) {
  auto c = choose_best({{0, 5e-6, true, ""}, {1, 5e-6, true, ""}, {2, 7e-6, true, ""}});
  EXPECT_EQ(c.best_index, 0);  // a tie keeps the heuristic's order
  EXPECT_DOUBLE_EQ(c.gain, 1.0);
  auto single = choose_best({{0, 3e-6, true, ""}});
  EXPECT_EQ(single.best_index, 0);
  EXPECT_DOUBLE_EQ(single.gain, 1.0);
}

TEST(ChooseBest, InvalidCandidatesAreSkipped) {
  auto c = choose_best({{0, 9e-6, true, ""}, {1, 0, false, "not supported"}, {2, 6e-6, true, ""}});
  EXPECT_EQ(c.best_index, 2);
  EXPECT_EQ(c.timed, 3);
  EXPECT_EQ(c.valid, 2);
  EXPECT_DOUBLE_EQ(c.gain, 1.5);
  // The heuristic's own choice failed: the best still wins, the gain is unknown (NaN).
  auto h = choose_best({{0, 0, false, "launch failed"}, {1, 4e-6, true, ""}});
  EXPECT_EQ(h.best_index, 1);
  EXPECT_TRUE(std::isnan(h.heuristic_seconds));
  EXPECT_TRUE(std::isnan(h.gain));
}

TEST(ChooseBest, Errors) {
  EXPECT_THROW(choose_best({}), std::invalid_argument);
  EXPECT_THROW(choose_best({{1, 1e-6, true, ""}}), std::invalid_argument);
  EXPECT_THROW(choose_best({{0, 0, true, ""}}), std::invalid_argument);
  try {
    choose_best({{0, 0, false, "nope"}, {1, 0, false, "also"}});
    FAIL() << "expected runtime_error";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("candidate 0: nope"), std::string::npos);
  }
}

TEST(BestSoFar, EfficiencyAgainstTheBestSoFarPerKey) {
  BestSoFar b;
  EXPECT_DOUBLE_EQ(b.update("bf16->bf16", 500, "p1"), 1.0);  // first row is its own best
  EXPECT_DOUBLE_EQ(b.update("bf16->bf16", 250, "p2"), 0.5);
  EXPECT_DOUBLE_EQ(b.update("bf16->bf16", 800, "p3"), 1.0);  // a new best
  EXPECT_DOUBLE_EQ(b.update("bf16->bf16", 400, "p4"), 0.5);
  EXPECT_DOUBLE_EQ(b.update("fp16->fp16", 100, "q1"), 1.0);  // keys are independent
  EXPECT_EQ(b.entries().at("bf16->bf16").point, "p3");
  EXPECT_EQ(b.entries().at("bf16->bf16").rows, 4);
  const std::string path = ::testing::TempDir() + "gemm_best_test.csv";
  b.write_csv(path);
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(),
            "schema_version,bench,key,best_tflops,best_point,rows\n"
            "2,gemm,bf16->bf16,800,p3,4\n"  // the calibration CSV's schema version (2)
            "2,gemm,fp16->fp16,100,q1,1\n");
  EXPECT_THROW(b.write_csv("/nonexistent-dir/x.csv"), std::runtime_error);
}
