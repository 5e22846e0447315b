// The message of the UsageError `f` throws, or "" when it throws none (model unit tests).
#pragma once
#include <functional>
#include <string>

#include "core/errors.h"

namespace gpucal::model {

inline std::string usage_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "";
}

}  // namespace gpucal::model
