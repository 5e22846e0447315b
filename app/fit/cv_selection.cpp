#include "app/fit/cv_selection.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>

namespace gpucal::calibration {

CandidateErrors cross_validate(const std::vector<SizeTimePoint>& points, const Candidate& candidate) {
  return {heldout_error(points, candidate.min_fit_sizes, candidate.fit_and_predict),
          leave_one_out_error(points, candidate.min_fit_sizes, candidate.fit_and_predict)};
}

std::vector<CandidateScore> rank_candidates(
    const std::vector<std::pair<std::string, CandidateErrors>>& errors) {
  std::vector<CandidateScore> ranking;
  for (const auto& [name, e] : errors) {
    if (!e.heldout.computed || !e.loo.computed) continue;
    ranking.push_back({name, e.heldout.mape_pct, e.loo.mape_pct, (e.heldout.mape_pct + e.loo.mape_pct) / 2});
  }
  std::stable_sort(ranking.begin(), ranking.end(), [](const CandidateScore& a, const CandidateScore& b) {
    return a.score_pct < b.score_pct;
  });
  return ranking;
}

namespace {

// Sample variance of a - b over paired points, divided by the count: the squared standard error
// of mean(a - b). 0 with fewer than two points.
double paired_variance_of_mean(const std::vector<double>& a, const std::vector<double>& b) {
  if (a.size() != b.size())
    throw std::logic_error("score_difference_standard_error: the candidates were evaluated on different points");
  const std::size_t n = a.size();
  if (n < 2) return 0;
  double mean = 0;
  for (std::size_t i = 0; i < n; ++i) mean += a[i] - b[i];
  mean /= static_cast<double>(n);
  double ss = 0;
  for (std::size_t i = 0; i < n; ++i) ss += (a[i] - b[i] - mean) * (a[i] - b[i] - mean);
  return ss / static_cast<double>(n - 1) / static_cast<double>(n);
}

}  // namespace

double score_difference_standard_error(const CandidateErrors& a, const CandidateErrors& b) {
  return 0.5 * std::sqrt(paired_variance_of_mean(a.heldout.abs_rel_err_pct, b.heldout.abs_rel_err_pct) +
                         paired_variance_of_mean(a.loo.abs_rel_err_pct, b.loo.abs_rel_err_pct));
}

Choice choose_candidate(const std::vector<CandidateScore>& ranking,
                        const std::vector<std::pair<std::string, CandidateErrors>>& errors,
                        const std::string& preferred) {
  Choice c;
  if (ranking.empty()) return c;
  const CandidateScore& top = ranking.front();
  c.name = top.name;
  c.rule = "lowest score";
  const auto ranked = std::find_if(ranking.begin(), ranking.end(),
                                   [&](const CandidateScore& r) { return r.name == preferred; });
  if (preferred.empty() || ranked == ranking.end() || ranked == ranking.begin()) return c;
  auto errors_of = [&](const std::string& name) -> const CandidateErrors& {
    for (const auto& [n, e] : errors)
      if (n == name) return e;
    throw std::logic_error("choose_candidate: no errors for ranked candidate " + name);
  };
  c.compared = true;
  c.advantage_pct = ranked->score_pct - top.score_pct;
  c.standard_error_pct = score_difference_standard_error(errors_of(top.name), errors_of(preferred));
  if (c.advantage_pct > c.standard_error_pct) {
    c.rule = "lowest score: beats " + preferred + " by more than one standard error";
  } else {
    c.name = preferred;
    c.rule = "preferred " + preferred + ": within one standard error of the lowest score";
  }
  return c;
}

SelectionHeldOut heldout_error_of_selection(const std::vector<SizeTimePoint>& points,
                                            const std::vector<Candidate>& candidates,
                                            const std::string& preferred) {
  if (candidates.empty()) throw std::invalid_argument("heldout_error_of_selection: no candidates");
  SelectionHeldOut out;
  int min_fit_sizes = std::numeric_limits<int>::max();
  for (const auto& c : candidates) min_fit_sizes = std::min(min_fit_sizes, c.min_fit_sizes);
  // heldout_error() hands this the training sizes only; nothing here sees the held-out times.
  const FitAndPredict choose_then_predict = [&](const std::vector<SizeTimePoint>& train,
                                                const std::vector<double>& heldout_sizes) {
    std::vector<std::pair<std::string, CandidateErrors>> errors;
    for (const auto& c : candidates) errors.push_back({c.name, cross_validate(train, c)});
    out.ranking = rank_candidates(errors);
    if (out.ranking.empty())
      throw std::runtime_error("no candidate could be cross-validated on the training sizes");
    out.choice = choose_candidate(out.ranking, errors, preferred);
    const auto winner = std::find_if(candidates.begin(), candidates.end(),
                                     [&](const Candidate& c) { return c.name == out.choice.name; });
    return winner->fit_and_predict(train, heldout_sizes);
  };
  out.heldout = heldout_error(points, min_fit_sizes, choose_then_predict);
  if (!out.heldout.computed) out.choice = Choice{};
  return out;
}

}  // namespace gpucal::calibration
