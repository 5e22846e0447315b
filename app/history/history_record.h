// What a fleet folder or a results folder puts into the history store (app/history/history_db.h).
#pragma once
#include <string>
#include <vector>

#include "app/history/diagnosis.h"
#include "app/history/history_db.h"

namespace gpucal::history {

struct Recording {
  RunRecord run;
  std::vector<Measurement> rows;
};

// A fleet folder with its diagnosis: every node's figures (status ok or suspect), every pair's,
// and each node's status.
Recording recording_of(const fleet::FleetDir& fleet, const fleet::Diagnosis& d, const std::string& cluster);

// A results folder (one node): its figures, the node named by the sidecars' hostname (else the
// folder's name).
Recording recording_of_results(const std::string& results_dir, const std::string& cluster);

// Either kind of folder, recorded; returns a one-line summary.
std::string import_folder(HistoryDb& db, const std::string& path, const std::string& cluster,
                          const fleet::DiagnosisOptions& options);

}  // namespace gpucal::history
