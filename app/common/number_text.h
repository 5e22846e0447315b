// Numbers as text for notes, methods and reports: `digits` significant digits in the stream's
// default notation (0.000123, 1.5e+09), or `decimals` digits after the point (12.50).
#pragma once

#include <sstream>
#include <string>

namespace gpucal::calibration {

inline std::string significant(double v, int digits) {
  std::ostringstream s;
  s.precision(digits);
  s << v;
  return s.str();
}

inline std::string with_decimals(double v, int decimals) {
  std::ostringstream s;
  s.setf(std::ios::fixed);
  s.precision(decimals);
  s << v;
  return s.str();
}

}  // namespace gpucal::calibration
