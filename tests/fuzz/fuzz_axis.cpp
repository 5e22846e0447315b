// libFuzzer target: the axis syntax (core/driver/sweep.h). Every input either parses into
// values inside the bounds, without duplicates, or throws UsageError; nothing else.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "core/errors.h"
#include "core/driver/sweep.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  try {
    const auto values = gpucal::parse_axis(text, "m", {.min = 1, .max = int64_t{1} << 40});
    if (values.empty()) std::abort();
    for (int64_t v : values)
      if (v < 1 || v > (int64_t{1} << 40)) std::abort();
  } catch (const gpucal::UsageError&) {
  }
  try {
    gpucal::parse_word_list(text, "layout", {"NN", "NT", "TN", "TT"});
  } catch (const gpucal::UsageError&) {
  }
  try {
    gpucal::parse_size(text, "sizes");
  } catch (const gpucal::UsageError&) {
  }
  return 0;
}
