// Checked file output, in one place for the benches and gpucal: every write, sync, close
// and rename is checked, and a failure throws with the file and the reason in one line.
// No output is ever replaced by a partial one: a file appears under its name only whole.
//   AppendFile         a file that grows as a run goes (the calibration CSV, the samples
//                      file): each append() is one write(2) of whole lines, so a killed run
//                      leaves whole lines; a failed append (disk full) is cut back to the end
//                      of the last whole append before it throws. Staged (Staging::partial),
//                      it grows under partial_path(X) and close() renames it onto X: X stays
//                      the previous file until then, and a killed run's rows stay in X.partial.
//                      With Lock::exclusive the file is locked (flock) before it is truncated:
//                      a second run with the same --out is refused instead of interleaving.
//   write_file_atomic  a file replaced whole (the JSON sidecar, calibration.json, reports):
//                      written to a temporary beside it, synced, and renamed over it only
//                      when all of it is written; on failure the previous file stays.
// Targets that are not regular files (/dev/stdout, /dev/full, a pipe) are written in place.
// Exit codes follow the two kinds: OpenError (the path cannot be created, or another run
// holds it) is bad input, 2; WriteError (I/O failed after the output was open) is 1.
#pragma once

#include <filesystem>
#include <stdexcept>
#include <string>

namespace gpucal {

class OpenError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

class WriteError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// "X.csv" -> "X.csv.partial": where a staged file grows until it is complete.
std::string partial_path(const std::string& path);

class AppendFile {
 public:
  enum class Lock { none, exclusive };
  enum class Staging { in_place, partial };
  // Creates (or truncates) `path`, or partial_path(path) when staged; throws OpenError.
  AppendFile(const std::string& path, Lock lock, Staging staging = Staging::in_place);
  ~AppendFile();
  AppendFile(const AppendFile&) = delete;
  AppendFile& operator=(const AppendFile&) = delete;

  // One write(2) of `bytes` (retried only for what a partial write left); throws WriteError.
  void append(const std::string& bytes);
  // Flushes to stable storage (where the file supports it) and closes, under the name it was
  // written to; throws WriteError. The destructor closes without checking and renames nothing.
  void finish();
  // finish(), then, when staged, renames the partial file onto path(); throws WriteError (the
  // partial file then stays).
  void close();
  // Closes and removes the partial file of a staged file that was not renamed (a run that
  // wrote nothing worth keeping); path() is untouched. No-op once renamed or written in place.
  void discard();
  const std::string& path() const { return path_; }          // the name it has when complete
  const std::string& written_path() const { return written_; }  // where its bytes are until then

 private:
  [[noreturn]] void fail(int err);
  std::string path_, written_;
  int fd_ = -1;
  bool regular_ = false;
  long long whole_bytes_ = 0;  // end of the last complete append
};

// Throws OpenError when the temporary cannot be created, WriteError when writing fails.
void write_file_atomic(const std::string& path, const std::string& content);

}  // namespace gpucal

namespace gpucal {
// "" when `path` is a regular file (or a link to one) or cannot be looked at (its open then
// fails and says so), else why it is not ("is a directory", "is a FIFO", ...). Inputs are
// checked with it before they are opened:
// opening a FIFO for reading blocks until a writer comes, and a directory reads as an error
// text of the C++ library.
std::string not_a_regular_file(const std::string& path);

// std::filesystem's "filesystem error: cannot create directories: Not a directory [a/b]" as a
// line a user reads: "cannot create directories 'a/b': Not a directory".
std::string filesystem_error_text(const std::filesystem::filesystem_error& e);

// One line on stderr in one write(2): lines from several ranks or threads never interleave
// mid-line. A line end is added.
void write_stderr_line(const std::string& line);

// What a program printed must have reached standard output: a full disk or a closed pipe behind
// it (SIGPIPE ignored) is a failed command, not output nobody read. `status` when it did; else
// one line naming `program` on stderr and 1 (or `status` when that is already a failure).
int stdout_written(int status, const std::string& program);
}  // namespace gpucal
