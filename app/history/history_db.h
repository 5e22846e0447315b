// The history store: one SQLite file (the embedded default, `--history FILE`) with
//   runs(id, time, git_commit, suite, cluster, source)          one row per fleet run or results folder
//   measurements(run_id, node, metric, value, unit, status)    one row per node (or pair "a--b") and metric;
//                                                               metric "node_status" holds a node's status
// status: ok | suspect (named by the fleet report) | a node's status (hung, failed, timed out).
// Recording the same source with the same start time again replaces that run.
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

struct sqlite3;

namespace gpucal::history {

struct RunRecord {
  int64_t id = 0;
  std::string time, git_commit, suite, cluster, source;
};

struct Measurement {
  std::string node, metric;
  std::optional<double> value;
  std::string unit, status;
};

struct SeriesPoint {
  int64_t run_id = 0;
  std::string time;
  std::optional<double> value;
  std::string unit, status;
};

using SeriesKey = std::pair<std::string, std::string>;  // (metric, node)

class HistoryDb {
 public:
  // write: opens for recording, creating the file and tables when absent; read: opens an
  // existing history read-only and creates or alters nothing (the reading verbs: show,
  // regressions). Throws std::invalid_argument naming the file when it cannot be opened, does
  // not exist (read), or is not a gpucal history: another application's SQLite file is refused
  // in both modes, never given gpucal's tables.
  enum class Mode { write, read };
  explicit HistoryDb(const std::string& path, Mode mode = Mode::write);
  ~HistoryDb();
  HistoryDb(const HistoryDb&) = delete;
  HistoryDb& operator=(const HistoryDb&) = delete;

  // One transaction; returns the run's id.
  int64_t record(const RunRecord& run, const std::vector<Measurement>& rows);
  std::vector<RunRecord> runs() const;
  // Every (metric, node) series in run time order; empty filters match everything.
  std::map<SeriesKey, std::vector<SeriesPoint>> series(const std::string& metric, const std::string& node) const;
  // The metrics and nodes recorded, sorted (to check a --metric or --node against).
  std::vector<std::string> metrics() const;
  std::vector<std::string> nodes() const;

 private:
  void exec(const std::string& sql) const;
  std::string path_;
  sqlite3* db_ = nullptr;
};

}  // namespace gpucal::history
