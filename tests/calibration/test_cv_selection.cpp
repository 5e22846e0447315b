// The choice of the best form by cross-validation, the held-out error of that choice (nested:
// chosen on the training sizes alone), the ranking's order, and the nonlinear fits' start sizes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "app/fit/comm_fits.h"
#include "app/fit/comm_forms.h"
#include "app/fit/cv_selection.h"
#include "app/fit/fit.h"
#include "app/fit/holdout.h"
#include "app/common/results_dir.h"
#include "tests/calibration/synthetic_results.h"
#include "tests/calibration/test_util.h"

namespace gpucal::calibration {
namespace {

// time = size at sizes 1..9: the every-3rd split holds out 2, 5, 8 and trains on 1, 3, 4, 6, 7, 9.
std::vector<SizeTimePoint> identity_points() {
  std::vector<SizeTimePoint> points;
  for (int s = 1; s <= 9; ++s) points.push_back({double(s), double(s)});
  return points;
}

// Predicts the mean of its training times everywhere.
Candidate mean_candidate() {
  return {"mean", 1, [](const std::vector<SizeTimePoint>& train, const std::vector<double>& sizes) {
            double sum = 0;
            for (const auto& p : train) sum += p.time_us;
            return std::vector<double>(sizes.size(), sum / double(train.size()));
          }};
}

// Exact at the sizes the every-3rd split holds out (2, 5, 8), twice the time everywhere else:
// a form that happens to suit the held-out sizes and nothing else.
Candidate suits_heldout_candidate() {
  return {"suits_heldout", 1, [](const std::vector<SizeTimePoint>&, const std::vector<double>& sizes) {
            std::vector<double> out;
            for (double s : sizes) out.push_back(s == 2 || s == 5 || s == 8 ? s : 2 * s);
            return out;
          }};
}

TEST(CvSelection, ScoringOnAllSizesWouldPickTheFormThatSuitsTheHeldOutSizes) {
  const auto points = identity_points();
  std::vector<std::pair<std::string, CandidateErrors>> errors;
  for (const auto& c : {suits_heldout_candidate(), mean_candidate()})
    errors.push_back({c.name, cross_validate(points, c)});
  const auto ranking = rank_candidates(errors);
  ASSERT_EQ(ranking.size(), 2u);
  // suits_heldout: held-out 0 %, leave-one-out 6 of 9 sizes at 100 % -> 66.67 %, score 33.33 %.
  EXPECT_EQ(ranking[0].name, "suits_heldout");
  EXPECT_NEAR(ranking[0].heldout_mape_pct, 0.0, 1e-12);
  EXPECT_NEAR(ranking[0].loo_mape_pct, 600.0 / 9, 1e-9);
  // mean: held-out |5-2|/2, 0, |5-8|/8 -> 62.5 %; leave-one-out sum_x |(45-x)/8 - x| / x / 9.
  double loo = 0;
  for (int x = 1; x <= 9; ++x) loo += std::abs((45.0 - x) / 8 - x) / x;
  EXPECT_NEAR(ranking[1].heldout_mape_pct, 62.5, 1e-9);
  EXPECT_NEAR(ranking[1].loo_mape_pct, 100 * loo / 9, 1e-9);
}

TEST(CvSelection, TheChoiceIsMadeOnTheTrainingSizesAndScoredOnTheHeldOutOnes) {
  const SelectionHeldOut s =
      heldout_error_of_selection(identity_points(), {suits_heldout_candidate(), mean_candidate()});
  ASSERT_TRUE(s.heldout.computed) << s.heldout.reason_not_computed;
  // On the training sizes 1, 3, 4, 6, 7, 9 (inner split: 3 and 7 held out of 1, 4, 6, 9):
  //   suits_heldout predicts 2x at every one of them: 100 % both ways, score 100 %;
  //   mean: inner held-out |5-3|/3, |5-7|/7; leave-one-out |(30-x)/5 - x| / x over the six sizes.
  ASSERT_EQ(s.ranking.size(), 2u);
  EXPECT_EQ(s.ranking[0].name, "mean");
  const double inner_heldout = 100 * (2.0 / 3 + 2.0 / 7) / 2;
  double loo = 0;
  for (int x : {1, 3, 4, 6, 7, 9}) loo += std::abs((30.0 - x) / 5 - x) / x;
  EXPECT_NEAR(s.ranking[0].heldout_mape_pct, inner_heldout, 1e-9);
  EXPECT_NEAR(s.ranking[0].loo_mape_pct, 100 * loo / 6, 1e-9);
  EXPECT_NEAR(s.ranking[1].score_pct, 100.0, 1e-9);
  // The mean of the training times (30 / 6 = 5) on 2, 5, 8: 150 %, 0 %, 37.5 %.
  EXPECT_EQ(s.choice.name, "mean");
  EXPECT_NEAR(s.heldout.mape_pct, 62.5, 1e-9);
  EXPECT_NEAR(s.heldout.max_abs_rel_err_pct, 150.0, 1e-9);
  EXPECT_EQ(s.heldout.heldout_sizes_bytes, (std::vector<double>{2, 5, 8}));
}

TEST(CvSelection, RankingIsByTheMeanOfTheTwoErrorsTiesKeepTheInputOrder) {
  auto errors_of = [](double heldout, double loo) {
    CandidateErrors e;
    e.heldout.computed = e.loo.computed = true;
    e.heldout.mape_pct = heldout;
    e.loo.mape_pct = loo;
    return e;
  };
  CandidateErrors not_computed = errors_of(0, 0);
  not_computed.loo.computed = false;
  const auto ranking = rank_candidates(
      {{"a", errors_of(2, 4)}, {"b", errors_of(4, 2)}, {"c", not_computed}, {"d", errors_of(1, 1.5)}});
  ASSERT_EQ(ranking.size(), 3u);  // c has no leave-one-out error
  EXPECT_EQ(ranking[0].name, "d");
  EXPECT_DOUBLE_EQ(ranking[0].score_pct, 1.25);
  EXPECT_EQ(ranking[1].name, "a");  // a and b tie at 3 %: input order
  EXPECT_EQ(ranking[2].name, "b");
  EXPECT_DOUBLE_EQ(ranking[2].score_pct, 3.0);
}

TEST(CvSelection, NotComputedWhenNoCandidateCanBeCrossValidatedOnTheTrainingSizes) {
  // 4 sizes: training sizes 1, 3, 4; a candidate needing 3 sizes can neither leave one of three
  // out nor fit the 2 left by the inner split.
  std::vector<SizeTimePoint> points{{1, 1}, {2, 2}, {3, 3}, {4, 4}};
  Candidate needs3 = mean_candidate();
  needs3.min_fit_sizes = 3;
  const SelectionHeldOut s = heldout_error_of_selection(points, {needs3});
  EXPECT_FALSE(s.heldout.computed);
  EXPECT_TRUE(s.choice.name.empty());
  EXPECT_NE(s.heldout.reason_not_computed.find("no candidate could be cross-validated"), std::string::npos)
      << s.heldout.reason_not_computed;
}

CandidateErrors errors_from(std::vector<double> heldout, std::vector<double> loo) {
  CandidateErrors e;
  e.heldout.computed = e.loo.computed = true;
  auto mean = [](const std::vector<double>& v) {
    double s = 0;
    for (double x : v) s += x;
    return s / double(v.size());
  };
  e.heldout.mape_pct = mean(heldout);
  e.loo.mape_pct = mean(loo);
  e.heldout.abs_rel_err_pct = std::move(heldout);
  e.loo.abs_rel_err_pct = std::move(loo);
  return e;
}

TEST(CvSelection, StandardErrorOfTheScoreDifferenceFromPairedPointErrors) {
  // Differences a - b: held out {1, 3} (mean 2, sample variance 2, over 2 points: 1), leave one
  // out {0, 2, 4} (mean 2, sample variance 4, over 3: 4/3). SE = 0.5 sqrt(1 + 4/3).
  const CandidateErrors a = errors_from({2, 4}, {1, 3, 5}), b = errors_from({1, 1}, {1, 1, 1});
  EXPECT_NEAR(score_difference_standard_error(a, b), 0.5 * std::sqrt(1 + 4.0 / 3), 1e-12);
  EXPECT_NEAR(score_difference_standard_error(b, a), 0.5 * std::sqrt(1 + 4.0 / 3), 1e-12);
  // Identical differences have no spread; one point per cross-validation adds nothing.
  EXPECT_DOUBLE_EQ(score_difference_standard_error(errors_from({2, 3}, {2, 3}), errors_from({1, 2}, {1, 2})), 0.0);
  EXPECT_DOUBLE_EQ(score_difference_standard_error(errors_from({5}, {5}), errors_from({1}, {1})), 0.0);
  EXPECT_THROW(score_difference_standard_error(errors_from({1, 2}, {1}), errors_from({1}, {1})), std::logic_error);
}

TEST(CvSelection, TheTableIsKeptUnlessBeatenByMoreThanOneStandardError) {
  // "shaped" scores 2 points below the table. Its per-point advantage is steady in `clear`
  // (differences -3, -2, -1 both ways: SE 0.5 sqrt(1/3 + 1/3) = 0.41) and erratic in `noisy`
  // (-8, -8, +10: one size goes the other way, SE 0.5 sqrt(36 + 36) = 4.24).
  const CandidateErrors table = errors_from({10, 10, 10}, {10, 10, 10});
  const CandidateErrors clear = errors_from({7, 8, 9}, {7, 8, 9});
  const CandidateErrors noisy = errors_from({2, 2, 20}, {2, 2, 20});
  for (const auto& [shaped, kept] : {std::pair{clear, false}, std::pair{noisy, true}}) {
    const std::vector<std::pair<std::string, CandidateErrors>> errors{{"shaped", shaped}, {"table", table}};
    const auto ranking = rank_candidates(errors);
    ASSERT_EQ(ranking.front().name, "shaped");
    const Choice c = choose_candidate(ranking, errors, "table");
    EXPECT_TRUE(c.compared);
    EXPECT_DOUBLE_EQ(c.advantage_pct, 2.0);
    EXPECT_NEAR(c.standard_error_pct, kept ? 0.5 * std::sqrt(72.0) : 0.5 * std::sqrt(2.0 / 3), 1e-12);
    EXPECT_EQ(c.name, kept ? "table" : "shaped");
    EXPECT_NE(c.rule.find(kept ? "within one standard error" : "more than one standard error"), std::string::npos)
        << c.rule;
    // Without a preferred candidate the lowest score wins, whatever its margin.
    EXPECT_EQ(choose_candidate(ranking, errors, "").name, "shaped");
  }
  // The preferred candidate first, or not ranked: the lowest score, nothing compared.
  const std::vector<std::pair<std::string, CandidateErrors>> table_first{{"table", clear}, {"shaped", table}};
  const Choice first = choose_candidate(rank_candidates(table_first), table_first, "table");
  EXPECT_EQ(first.name, "table");
  EXPECT_FALSE(first.compared);
  const std::vector<std::pair<std::string, CandidateErrors>> no_table{{"shaped", clear}};
  EXPECT_EQ(choose_candidate(rank_candidates(no_table), no_table, "table").name, "shaped");
  EXPECT_TRUE(choose_candidate({}, {}, "table").name.empty());
}

TEST(CvSelection, TheNestedChoiceUsesTheSameRule) {
  // On the training sizes 1, 3, 4, 6, 7, 9 of time = size, suits_heldout misses every size by
  // 100 % and "mean" scores 18 points better, but its errors swing from 10 % to 480 % (the
  // smallest sizes): the advantage is within one standard error. Named "table" and preferred,
  // suits_heldout is kept, and predicts the held-out sizes exactly; without a preferred
  // candidate the lowest score (mean) is chosen and misses them by 62.5 %.
  Candidate table = suits_heldout_candidate();
  table.name = "table";
  const SelectionHeldOut s = heldout_error_of_selection(identity_points(), {table, mean_candidate()}, "table");
  ASSERT_TRUE(s.heldout.computed) << s.heldout.reason_not_computed;
  ASSERT_EQ(s.ranking.front().name, "mean");
  EXPECT_EQ(s.choice.name, "table");
  EXPECT_TRUE(s.choice.compared);
  EXPECT_NEAR(s.choice.advantage_pct, 100.0 - s.ranking.front().score_pct, 1e-9);
  EXPECT_GT(s.choice.advantage_pct, 10.0);
  EXPECT_LE(s.choice.advantage_pct, s.choice.standard_error_pct);
  EXPECT_NEAR(s.heldout.mape_pct, 0.0, 1e-12);
  const SelectionHeldOut plain = heldout_error_of_selection(identity_points(), {table, mean_candidate()});
  EXPECT_EQ(plain.choice.name, "mean");
  EXPECT_EQ(plain.choice.rule, "lowest score");
  EXPECT_NEAR(plain.heldout.mape_pct, 62.5, 1e-9);
  // Identical errors under two names: advantage 0, the preferred one is kept.
  Candidate mean_as_table = mean_candidate();
  mean_as_table.name = "table";
  const SelectionHeldOut tie =
      heldout_error_of_selection(identity_points(), {mean_candidate(), mean_as_table}, "table");
  EXPECT_EQ(tie.choice.name, "table");
  EXPECT_NEAR(tie.heldout.mape_pct, 62.5, 1e-9);
}

TEST(MultistartSizes, AllDistinctSizesUpToTheCapThenEvenlySpacedByRank) {
  std::vector<SizeTimePoint> few;
  for (int e = 3; e < 3 + kMultistartSizes; ++e) few.push_back({std::exp2(e), 1.0});
  few.push_back({std::exp2(3), 2.0});  // a repeated size counts once
  std::vector<double> expected;
  for (int e = 3; e < 3 + kMultistartSizes; ++e) expected.push_back(e + 1.0);  // bus factor 2
  EXPECT_EQ(multistart_log2_sizes(few, 2.0), expected);

  std::vector<SizeTimePoint> many;
  for (int e = 0; e < 32; ++e) many.push_back({std::exp2(e), 1.0});
  // 8 of 32 ranks: round(i * 31 / 7), i = 0..7.
  ASSERT_EQ(kMultistartSizes, 8);
  EXPECT_EQ(multistart_log2_sizes(many, 1.0), (std::vector<double>{0, 4, 9, 13, 18, 22, 27, 31}));
}

// The report's numbers, recomputed here from their definitions.
TEST(CvSelection, FitCommunicationReportsTheNestedChoiceAndColdLeaveOneOut) {
  const std::string dir = testing::fresh_temp_dir();
  testing::write_synthetic_results(dir);
  const nlohmann::json comm = fit_communication(load_results_dir(dir));
  ASSERT_FALSE(comm["collectives"].empty());
  const nlohmann::json& g = comm["collectives"][0];
  const double bus_factor = g["bus_factor"];
  std::vector<SizeTimePoint> points;
  for (const auto& p : g["points"]) points.push_back({p["size_bytes"], p["time_us_median"]});

  // Leave-one-out of the piecewise form: each size predicted by a fresh fit on the others.
  std::set<double> sizes;
  for (const auto& p : points) sizes.insert(p.size_bytes);
  std::vector<double> predicted, measured;
  for (double out : sizes) {
    std::vector<SizeTimePoint> train;
    for (const auto& p : points)
      if (p.size_bytes != out) train.push_back(p);
    const nlohmann::json fold = fit_comm_form("piecewise", train, bus_factor);
    for (const auto& p : points)
      if (p.size_bytes == out) {
        predicted.push_back(predict_comm_form("piecewise", fold, out, bus_factor));
        measured.push_back(p.time_us);
      }
  }
  ASSERT_TRUE(g["piecewise"]["loo"]["computed"].get<bool>());
  EXPECT_NEAR(g["piecewise"]["loo"]["mape_pct"].get<double>(), relative_errors_pct(predicted, measured).first,
              1e-9);

  // The choice's held-out error: the form ranked first on the training sizes, fitted to them.
  const nlohmann::json& sel = g["best"]["selection_heldout"];
  ASSERT_TRUE(sel["computed"].get<bool>()) << sel.dump();
  const std::string form = sel["form"];
  EXPECT_EQ(sel["training_ranking"][0]["form"], form);
  const std::vector<std::size_t> held = heldout_indices(points);
  std::vector<SizeTimePoint> train;
  std::vector<double> held_predicted, held_measured;
  for (std::size_t i = 0; i < points.size(); ++i)
    if (std::find(held.begin(), held.end(), i) == held.end()) train.push_back(points[i]);
  const nlohmann::json params = fit_comm_form(form, train, bus_factor);
  for (std::size_t i : held) {
    held_predicted.push_back(predict_comm_form(form, params, points[i].size_bytes, bus_factor));
    held_measured.push_back(points[i].time_us);
  }
  EXPECT_NEAR(sel["mape_pct"].get<double>(), relative_errors_pct(held_predicted, held_measured).first, 1e-9);
}

}  // namespace
}  // namespace gpucal::calibration
