// One validation path for every numeric flag of the benches and gpucal: the text must be
// a number of the flag's type (an integer that fits it; a finite real: no nan, no inf)
// within the flag's bounds. Anything else is one line naming the flag, and exit 2.
// Lists and axes go through core/driver/sweep.h (parse_axis, parse_word_list), one path too.
#pragma once

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>

namespace gpucal {

struct NumberBounds {
  double min = -std::numeric_limits<double>::max();
  double max = std::numeric_limits<double>::max();
  bool min_exclusive = false;  // (min, max] instead of [min, max]
};

// "" when `text` is a valid number for the bounds, else why not ("expected ..., got '...'").
// `integer`: whole decimal digits with an optional sign; the bounds then also hold the type's range.
std::string check_number_text(const std::string& text, bool integer, const NumberBounds& bounds);

template <typename T>
CLI::Validator number_check(NumberBounds bounds) {
  static_assert(std::is_arithmetic_v<T>, "numeric flags only");
  constexpr bool integer = std::is_integral_v<T>;
  if constexpr (integer) {
    bounds.min = std::max(bounds.min, static_cast<double>(std::numeric_limits<T>::min()));
    // Parsed as long long: unsigned 64-bit flags stop at 2^63 - 1.
    bounds.max = std::min({bounds.max, static_cast<double>(std::numeric_limits<T>::max()),
                           static_cast<double>(std::numeric_limits<long long>::max())});
  }
  return CLI::Validator([bounds](std::string& text) { return check_number_text(text, integer, bounds); },
                        integer ? "INT" : "NUMBER");
}

// Adds a numeric option checked by number_check<T>.
template <typename T>
CLI::Option* add_number(CLI::App& app, const std::string& name, T& value, const std::string& help,
                        NumberBounds bounds = {}) {
  return app.add_option(name, value, help)->check(number_check<T>(bounds));
}

}  // namespace gpucal

namespace gpucal {
// CLI11 reads `--m --backend host` as --m without a value and then "host" as "not
// expected"; name the real problem instead: "--m: expected a value". Checks the options of
// `app` and of its subcommands; "" when every option that takes a value has one.
std::string missing_option_value(const CLI::App& app, int argc, const char* const* argv);
}  // namespace gpucal
