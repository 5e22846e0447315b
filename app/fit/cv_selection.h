// Choosing among fitted forms by cross-validation, and measuring how well that choice predicts.
//
// The criterion: a candidate's score on the points it is given is the mean of its
// every-3rd-size held-out MAPE and its leave-one-out MAPE (holdout.h); the lowest score wins,
// ties to the earlier candidate (the simpler form, in comm_form_names() order). With a preferred
// candidate (the communication fits prefer `table`, monotone log-log interpolation between the
// measured sizes, which assumes no shape), the lowest score replaces the preferred candidate
// only when it is lower by more than one standard error of the paired difference: the
// one-standard-error rule of cross-validated model selection (Breiman et al. 1984; Hastie,
// Tibshirani and Friedman, The Elements of Statistical Learning, 7.10). The scores of forms fitted
// to 10-30 sizes are noisy (one size on a protocol step moves a score by points), and a shaped
// form that wins by less than that noise was seen to miss the held-out sizes by 3x the table's
// error (gpucal's own reduce sweep, docs/fidelity.md).
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

#include "app/fit/holdout.h"

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

struct Choice {
  std::string name;  // "" when the ranking is empty
  // "lowest score" (no preferred candidate, or it ranked first, or it was not ranked),
  // "preferred P: within one standard error of the lowest score" or "lowest score: beats P by
  // more than one standard error".
  std::string rule;
  // Against the preferred candidate, when both ranked and differ: its score minus the lowest
  // score, and the standard error of that difference (percentage points).
  bool compared = false;
  double advantage_pct = 0, standard_error_pct = 0;
};

// The standard error of score(a) - score(b) from their paired per-point errors: the score is the
// mean of two MAPEs, so the variance is var(dh) / 4 nh + var(dl) / 4 nl (sample variances of the
// per-point differences; a cross-validation with fewer than two points adds nothing).
double score_difference_standard_error(const CandidateErrors& a, const CandidateErrors& b);

// The choice from a ranking (rank_candidates) and the errors it was made from; `preferred` ""
// takes the lowest score.
Choice choose_candidate(const std::vector<CandidateScore>& ranking,
                        const std::vector<std::pair<std::string, CandidateErrors>>& errors,
                        const std::string& preferred);

struct SelectionHeldOut {
  HeldOutError heldout;                 // of the chosen candidate on the held-out sizes
  Choice choice;                        // made on the training sizes (name "" when not computed)
  std::vector<CandidateScore> ranking;  // the scores on the training sizes
};

// The every-3rd held-out error of "rank the candidates on the training sizes, choose (with the
// same rule and preferred candidate), fit the choice to them". Not computed when no candidate can
// be cross-validated on the training sizes.
SelectionHeldOut heldout_error_of_selection(const std::vector<SizeTimePoint>& points,
                                            const std::vector<Candidate>& candidates,
                                            const std::string& preferred = "");

}  // namespace gpucal::calibration
