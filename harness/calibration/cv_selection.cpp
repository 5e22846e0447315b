#include "cv_selection.h"

#include <algorithm>
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

SelectionHeldOut heldout_error_of_selection(const std::vector<SizeTimePoint>& points,
                                            const std::vector<Candidate>& candidates) {
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
    out.chosen = out.ranking.front().name;
    const auto winner = std::find_if(candidates.begin(), candidates.end(),
                                     [&](const Candidate& c) { return c.name == out.chosen; });
    return winner->fit_and_predict(train, heldout_sizes);
  };
  out.heldout = heldout_error(points, min_fit_sizes, choose_then_predict);
  if (!out.heldout.computed) out.chosen.clear();
  return out;
}

}  // namespace gpucal::calibration
