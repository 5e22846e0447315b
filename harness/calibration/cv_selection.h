// Choosing among fitted forms by cross-validation, and measuring how well that choice predicts.
//
// The criterion (issue 16): a candidate's score on the points it is given is the mean of its
// every-3rd-size held-out MAPE and its leave-one-out MAPE (holdout.h); the lowest score wins,
// ties to the earlier candidate (the simpler form, in comm_form_names() order).
//
// The error of the choice is measured by nesting the whole choice inside the every-3rd split:
// the candidates are scored on the training sizes alone (both cross-validations run inside
// them), the winner is fitted to the training sizes and predicts the held-out sizes. Scoring the
// candidates on the held-out sizes and then reporting the winner's error on those same sizes
// would flatter the choice (the winner is the minimum of several noisy estimates, and a form that
// happens to fit the held-out sizes gets picked for it); the nested error does not see them.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "holdout.h"

namespace gpucal::calibration {

struct Candidate {
  std::string name;
  int min_fit_sizes = 0;  // distinct sizes its fit needs
  FitAndPredict fit_and_predict;
};

struct CandidateErrors {
  HeldOutError heldout;  // every-3rd size held out
  HeldOutError loo;      // leave-one-out
};

struct CandidateScore {
  std::string name;
  double heldout_mape_pct = 0, loo_mape_pct = 0;
  double score_pct = 0;  // their mean
};

CandidateErrors cross_validate(const std::vector<SizeTimePoint>& points, const Candidate& candidate);

// The candidates whose two errors were computed, lowest score first (ties keep the input order).
std::vector<CandidateScore> rank_candidates(
    const std::vector<std::pair<std::string, CandidateErrors>>& errors);

struct SelectionHeldOut {
  HeldOutError heldout;                 // of the chosen candidate on the held-out sizes
  std::string chosen;                   // chosen on the training sizes ("" when not computed)
  std::vector<CandidateScore> ranking;  // the scores on the training sizes
};

// The every-3rd held-out error of "rank the candidates on the training sizes, fit the winner to
// them". Not computed when no candidate can be cross-validated on the training sizes.
SelectionHeldOut heldout_error_of_selection(const std::vector<SizeTimePoint>& points,
                                            const std::vector<Candidate>& candidates);

}  // namespace gpucal::calibration
