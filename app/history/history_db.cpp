#include "app/history/history_db.h"

#include <sqlite3.h>

#include <filesystem>
#include <stdexcept>

#include "core/output/file_io.h"

namespace gpucal::history {

namespace {

constexpr int kHistorySchemaVersion = 1;

constexpr const char* kSchema = R"(
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS runs(
  id INTEGER PRIMARY KEY, time TEXT NOT NULL, git_commit TEXT, suite TEXT, cluster TEXT, source TEXT NOT NULL,
  UNIQUE(source, time));
CREATE TABLE IF NOT EXISTS measurements(
  run_id INTEGER NOT NULL REFERENCES runs(id) ON DELETE CASCADE, node TEXT NOT NULL, metric TEXT NOT NULL,
  value REAL, unit TEXT, status TEXT NOT NULL, PRIMARY KEY(run_id, node, metric));
CREATE INDEX IF NOT EXISTS measurements_by_series ON measurements(metric, node);
)";

// A prepared statement, finalized on scope exit.
class Statement {
 public:
  Statement(sqlite3* db, const std::string& sql, const std::string& path) : db_(db), path_(path) {
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt_, nullptr) != SQLITE_OK) fail("prepare");
  }
  ~Statement() { sqlite3_finalize(stmt_); }
  Statement& text(int i, const std::string& v) {
    sqlite3_bind_text(stmt_, i, v.c_str(), -1, SQLITE_TRANSIENT);
    return *this;
  }
  Statement& number(int i, const std::optional<double>& v) {
    if (v) sqlite3_bind_double(stmt_, i, *v);
    else sqlite3_bind_null(stmt_, i);
    return *this;
  }
  Statement& integer(int i, int64_t v) {
    sqlite3_bind_int64(stmt_, i, v);
    return *this;
  }
  bool step() {  // true: a row is there
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc != SQLITE_DONE) fail("step");
    return false;
  }
  void run() {
    step();
    sqlite3_reset(stmt_);
    sqlite3_clear_bindings(stmt_);
  }
  std::string column_text(int i) const {
    const unsigned char* t = sqlite3_column_text(stmt_, i);
    return t ? reinterpret_cast<const char*>(t) : "";
  }
  std::optional<double> column_number(int i) const {
    if (sqlite3_column_type(stmt_, i) == SQLITE_NULL) return std::nullopt;
    return sqlite3_column_double(stmt_, i);
  }
  int64_t column_integer(int i) const { return sqlite3_column_int64(stmt_, i); }

 private:
  [[noreturn]] void fail(const char* what) const {
    throw std::invalid_argument("--history: " + path_ + ": " + what + ": " + sqlite3_errmsg(db_));
  }
  sqlite3* db_;
  sqlite3_stmt* stmt_ = nullptr;
  std::string path_;
};

}  // namespace

HistoryDb::HistoryDb(const std::string& path, Mode mode) : path_(path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const bool exists = fs::exists(path, ec);
  if (mode == Mode::read && !exists)
    throw std::invalid_argument("--history: '" + path +
                                "' does not exist (give the file that gpucal history import or fleet report --history "
                                "wrote)");
  if (exists && !fs::is_regular_file(path, ec))
    throw std::invalid_argument("--history: '" + path + "' is not a file");
  const int flags = mode == Mode::read ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  if (sqlite3_open_v2(path.c_str(), &db_, flags, nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "out of memory";
    sqlite3_close(db_);
    db_ = nullptr;
    throw std::invalid_argument("--history: cannot open '" + path + "': " + why);
  }
  sqlite3_busy_timeout(db_, 10000);  // a second writer waits instead of failing at once
  try {
    // What is there already: a gpucal history (its meta table and version), nothing (a new or
    // empty file, write mode only), or another application's tables (refused, untouched).
    char* error = nullptr;
    int tables = 0;
    const int rc = sqlite3_exec(
        db_, "SELECT count(*) FROM sqlite_master WHERE type = 'table'",
        [](void* n, int, char** v, char**) { *static_cast<int*>(n) = v[0] ? std::atoi(v[0]) : 0; return 0; }, &tables,
        &error);
    if (rc != SQLITE_OK) {
      const std::string why = error ? error : "unknown error";
      sqlite3_free(error);
      throw std::invalid_argument("--history: '" + path + "' is not a gpucal history file (" + why + ")");
    }
    std::string version;
    if (tables > 0) {
      Statement has_meta(db_, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'", path_);
      if (has_meta.step() && has_meta.column_integer(0) == 1) {
        Statement v(db_, "SELECT value FROM meta WHERE key = 'history_schema_version'", path_);
        if (v.step()) version = v.column_text(0);
      }
      if (version.empty())
        throw std::invalid_argument("--history: '" + path + "' is an SQLite file of another application (" +
                                    std::to_string(tables) +
                                    " table(s), no gpucal history_schema_version); give a gpucal history file or a "
                                    "new path");
      if (version != std::to_string(kHistorySchemaVersion))
        throw std::invalid_argument("--history: " + path + ": history_schema_version " + version +
                                    ", this gpucal reads " + std::to_string(kHistorySchemaVersion));
    } else if (mode == Mode::read) {
      throw std::invalid_argument("--history: '" + path + "' holds no gpucal history (an empty SQLite file)");
    }
    if (mode == Mode::write) {
      exec("PRAGMA foreign_keys = ON;");
      exec(kSchema);
      if (version.empty())
        exec("INSERT INTO meta(key, value) VALUES('history_schema_version', '" + std::to_string(kHistorySchemaVersion) +
             "');");
    }
  } catch (...) {
    sqlite3_close(db_);
    db_ = nullptr;
    throw;
  }
}

HistoryDb::~HistoryDb() { sqlite3_close(db_); }

void HistoryDb::exec(const std::string& sql) const {
  char* error = nullptr;
  if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &error) != SQLITE_OK) {
    const std::string why = error ? error : "unknown error";
    sqlite3_free(error);
    throw std::invalid_argument("--history: " + path_ + ": " + why + " (is it a gpucal history file?)");
  }
}

int64_t HistoryDb::record(const RunRecord& run, const std::vector<Measurement>& rows) {
  exec("BEGIN IMMEDIATE;");
  try {
    Statement(db_, "DELETE FROM runs WHERE source = ?1 AND time = ?2", path_).text(1, run.source).text(2, run.time).run();
    Statement(db_, "INSERT INTO runs(time, git_commit, suite, cluster, source) VALUES(?1, ?2, ?3, ?4, ?5)", path_)
        .text(1, run.time).text(2, run.git_commit).text(3, run.suite).text(4, run.cluster).text(5, run.source).run();
    const int64_t id = sqlite3_last_insert_rowid(db_);
    Statement insert(db_, "INSERT OR REPLACE INTO measurements(run_id, node, metric, value, unit, status) VALUES(?1, ?2, ?3, ?4, ?5, ?6)", path_);
    for (const auto& m : rows) insert.integer(1, id).text(2, m.node).text(3, m.metric).number(4, m.value).text(5, m.unit).text(6, m.status).run();
    if (sqlite3_exec(db_, "COMMIT;", nullptr, nullptr, nullptr) != SQLITE_OK)
      throw WriteError("--history: cannot write '" + path_ + "': " + sqlite3_errmsg(db_) +
                       "; the history is as it was before this run");
    return id;
  } catch (const std::invalid_argument& e) {
    // A failed statement inside the transaction is a failed write (a full disk, a read-only
    // file), not bad input; SQLite may have rolled back already, and then there is nothing to end.
    if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    throw WriteError(std::string(e.what()) + "; the history is as it was before this run");
  } catch (...) {
    if (!sqlite3_get_autocommit(db_)) sqlite3_exec(db_, "ROLLBACK;", nullptr, nullptr, nullptr);
    throw;
  }
}

std::vector<RunRecord> HistoryDb::runs() const {
  Statement q(db_, "SELECT id, time, git_commit, suite, cluster, source FROM runs ORDER BY time, id", path_);
  std::vector<RunRecord> out;
  while (q.step())
    out.push_back({q.column_integer(0), q.column_text(1), q.column_text(2), q.column_text(3), q.column_text(4), q.column_text(5)});
  return out;
}

std::map<SeriesKey, std::vector<SeriesPoint>> HistoryDb::series(const std::string& metric, const std::string& node) const {
  Statement q(db_,
              "SELECT m.metric, m.node, r.id, r.time, m.value, m.unit, m.status FROM measurements m JOIN runs r ON r.id = m.run_id "
              "WHERE (?1 = '' OR m.metric = ?1) AND (?2 = '' OR m.node = ?2) ORDER BY m.metric, m.node, r.time, r.id",
              path_);
  q.text(1, metric).text(2, node);
  std::map<SeriesKey, std::vector<SeriesPoint>> out;
  while (q.step())
    out[{q.column_text(0), q.column_text(1)}].push_back(
        {q.column_integer(2), q.column_text(3), q.column_number(4), q.column_text(5), q.column_text(6)});
  return out;
}

namespace {
std::vector<std::string> distinct(sqlite3* db, const std::string& column, const std::string& path) {
  Statement q(db, "SELECT DISTINCT " + column + " FROM measurements ORDER BY " + column, path);
  std::vector<std::string> out;
  while (q.step()) out.push_back(q.column_text(0));
  return out;
}
}  // namespace

std::vector<std::string> HistoryDb::metrics() const { return distinct(db_, "metric", path_); }
std::vector<std::string> HistoryDb::nodes() const { return distinct(db_, "node", path_); }

}  // namespace gpucal::history
