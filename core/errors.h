// Errors at the harness boundary. A SkipPoint is an expected "cannot run this point here"
// (unsupported dtype, too little memory): the point becomes a recorded skip and the sweep
// goes on. Any other exception becomes a recorded error for that point.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace gpucal {

class SkipPoint : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Bad user input: one clear line on stderr and a non-zero exit, before anything runs.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

[[noreturn]] inline void throw_call_error(const char* lib, const std::string& what, const char* call,
                                          const char* file, int line) {
  std::ostringstream msg;
  msg << lib << " error '" << what << "' in " << call << " at " << file << ":" << line;
  throw std::runtime_error(msg.str());
}

}  // namespace gpucal

// For libraries whose status is an int-like enum with 0 = success (cuBLASLt, hipBLASLt).
#define GPUCAL_STATUS_CHECK(lib, call, to_string)                                              \
  do {                                                                                         \
    auto gpucal_status_ = (call);                                                              \
    if (static_cast<int>(gpucal_status_) != 0)                                                 \
      ::gpucal::throw_call_error(lib, to_string(gpucal_status_), #call, __FILE__, __LINE__);   \
  } while (0)
