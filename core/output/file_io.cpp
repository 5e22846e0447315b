#include "core/output/file_io.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <iostream>

namespace gpucal {

namespace {

std::string reason(int err) { return std::strerror(err); }

// write(2) until every byte is out; returns 0 or the errno of the failure.
int write_all(int fd, const char* data, size_t size) {
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd, data + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (n == 0) return ENOSPC;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// fsync where the file supports it (devices and pipes answer EINVAL/EROFS: nothing to sync).
int sync_fd(int fd) {
  if (::fsync(fd) == 0 || errno == EINVAL || errno == EROFS) return 0;
  return errno;
}

}  // namespace

std::string partial_path(const std::string& path) { return path + ".partial"; }

AppendFile::AppendFile(const std::string& path, Lock lock, Staging staging) : path_(path), written_(path) {
  struct stat target {};
  const bool exists = ::stat(path.c_str(), &target) == 0;
  if (exists && S_ISDIR(target.st_mode)) throw OpenError("cannot create '" + path + "': " + reason(EISDIR));
  // A device or a pipe is written in place: there is nothing to rename onto it.
  if (staging == Staging::partial && !(exists && !S_ISREG(target.st_mode))) written_ = partial_path(path);
  // No O_TRUNC: a second run must not empty the file before it learns that the first holds it.
  fd_ = ::open(written_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) throw OpenError("cannot create '" + path + "': " + reason(errno));
  if (lock == Lock::exclusive && ::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    if (err == EWOULDBLOCK)
      throw OpenError("'" + path + "' is being written by another run (same --out); choose another --out or wait");
    throw OpenError("cannot lock '" + path + "': " + reason(err));
  }
  struct stat st {};
  regular_ = ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode);
  if (regular_ && ::ftruncate(fd_, 0) != 0) {
    const int err = errno;
    ::close(fd_);
    fd_ = -1;
    throw OpenError("cannot truncate '" + written_ + "': " + reason(err));
  }
}

AppendFile::~AppendFile() {
  if (fd_ >= 0) ::close(fd_);
}

void AppendFile::fail(int err) {
  // Leave whole appends only: a row cut by a full disk is removed, and the next append
  // (if any) starts where that row started.
  if (regular_ && fd_ >= 0 && ::ftruncate(fd_, whole_bytes_) == 0) ::lseek(fd_, whole_bytes_, SEEK_SET);
  throw WriteError("cannot write '" + written_ + "': " + reason(err));
}

void AppendFile::append(const std::string& bytes) {
  if (fd_ < 0) throw WriteError("cannot write '" + written_ + "': already closed");
  if (const int err = write_all(fd_, bytes.data(), bytes.size())) fail(err);
  whole_bytes_ += static_cast<long long>(bytes.size());
}

void AppendFile::finish() {
  if (fd_ < 0) return;
  const int err = regular_ ? sync_fd(fd_) : 0;
  const int closed = ::close(fd_);
  const int close_err = closed != 0 ? errno : 0;
  fd_ = -1;
  if (err) throw WriteError("cannot write '" + written_ + "': " + reason(err));
  if (close_err) throw WriteError("cannot write '" + written_ + "': " + reason(close_err));
}

void AppendFile::close() {
  finish();
  if (written_.empty() || written_ == path_) return;
  if (std::rename(written_.c_str(), path_.c_str()) != 0)
    throw WriteError("cannot rename '" + written_ + "' to '" + path_ + "': " + reason(errno));
  written_ = path_;
}

void AppendFile::discard() {
  if (fd_ < 0 && written_ == path_) return;  // closed: complete, or written in place
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (!written_.empty() && written_ != path_) ::unlink(written_.c_str());
  written_.clear();
}

void write_file_atomic(const std::string& path, const std::string& content) {
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    AppendFile direct(path, AppendFile::Lock::none);
    direct.append(content);
    direct.close();
    return;
  }
  // Unique per process and call: threads of one process may write different sidecars.
  static std::atomic<unsigned> counter{0};
  const std::string tmp = path + ".tmp." + std::to_string(::getpid()) + "." + std::to_string(counter++);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw OpenError("cannot write '" + path + "': " + reason(errno));
  int err = write_all(fd, content.data(), content.size());
  if (!err) err = sync_fd(fd);
  if (::close(fd) != 0 && !err) err = errno;
  if (!err && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
  if (err) {
    ::unlink(tmp.c_str());
    throw WriteError("cannot write '" + path + "': " + reason(err) + " (the previous file, if any, is unchanged)");
  }
}

}  // namespace gpucal

namespace gpucal {
void write_stderr_line(const std::string& line) {
  const std::string text = line + "\n";
  (void)write_all(STDERR_FILENO, text.data(), text.size());  // nowhere to report a failed stderr
}

int stdout_written(int status, const std::string& program) {
  errno = 0;  // a reason from this last flush only: an earlier failed write left none to trust
  std::cout.flush();
  if (std::cout.good() && std::fflush(stdout) == 0 && !std::ferror(stdout)) return status;
  const int err = errno;
  write_stderr_line(program + ": error: could not write to standard output (" +
                    (err != 0 ? std::strerror(err) : "the write failed") + "): the command's output is incomplete");
  return status == 0 ? 1 : status;
}
}  // namespace gpucal

namespace gpucal {
std::string not_a_regular_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return "";  // absent or unreadable: the caller's open says so
  if (S_ISREG(st.st_mode)) return "";
  if (S_ISDIR(st.st_mode)) return "is a directory, not a file";
  if (S_ISFIFO(st.st_mode)) return "is a FIFO, not a regular file";
  if (S_ISSOCK(st.st_mode)) return "is a socket, not a regular file";
  return "is a device, not a regular file";
}
}  // namespace gpucal

namespace gpucal {
namespace {
// A path as a message shows it: whole up to 120 characters, else its start, its length and its end.
std::string shown_path(const std::string& path) {
  if (path.size() <= 120) return "'" + path + "'";
  return "'" + path.substr(0, 40) + "..." + path.substr(path.size() - 40) + "' (" + std::to_string(path.size()) +
         " characters)";
}
}  // namespace

std::string filesystem_error_text(const std::filesystem::filesystem_error& e) {
  std::string what = e.what();
  const std::string prefix = "filesystem error: ", reason = e.code().message();
  if (what.rfind(prefix, 0) == 0) what.erase(0, prefix.size());
  const auto cut = what.find(": " + reason);
  std::string op = what.substr(0, cut);  // the library's operation: "status", "cannot create directories"
  // The library's function names in words: what gpucal was doing with the path.
  static const std::pair<const char*, const char*> kWords[] = {
      {"status", "cannot read"}, {"symlink_status", "cannot read"}, {"directory_iterator::directory_iterator", "cannot list"},
      {"recursive_directory_iterator::recursive_directory_iterator", "cannot list"}, {"canonical", "cannot resolve"},
      {"weakly_canonical", "cannot resolve"}, {"file_size", "cannot read the size of"}, {"remove", "cannot remove"},
      {"remove_all", "cannot remove"}, {"rename", "cannot rename"}, {"copy_file", "cannot copy"}};
  for (const auto& [name, words] : kWords)
    if (op == name) op = words;
  std::string text = op;
  if (!e.path1().empty()) text += " " + shown_path(e.path1().string());
  if (!e.path2().empty()) text += " to " + shown_path(e.path2().string());
  std::string why = reason;
  if (e.code() == std::errc::too_many_symbolic_link_levels) why += " (a symbolic link that leads back to itself)";
  if (e.code() == std::errc::filename_too_long) why += " (a name longer than the file system allows)";
  return text + ": " + why;
}
}  // namespace gpucal
