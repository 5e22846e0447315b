// The few ways gpucal predict writes figures on standard output, shared by its step table and
// its sweep's ranking.
#pragma once
#include <cstdio>
#include <string>

namespace gpucal::predict {

// Seconds as right-aligned milliseconds with 3 decimals ("    12.345 ms").
inline std::string ms(double s, int width = 10) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%*.3f ms", width, s * 1e3);
  return buf;
}

// A fraction as a percentage with one decimal ("32.7%").
inline std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", 100 * fraction);
  return buf;
}

// Text padded with spaces on the right to `width` (longer text as it is).
inline std::string r_pad(const std::string& text, std::size_t width) {
  return text.size() < width ? text + std::string(width - text.size(), ' ') : text;
}

}  // namespace gpucal::predict
