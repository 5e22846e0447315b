#include "core/driver/gbench_flags.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <initializer_list>
#include <utility>

#include "core/errors.h"

namespace gpucal {

namespace {

// The value of `--name` in `arg`: "" for a bare flag where `bare_ok`, nullopt when `arg`
// is not this flag (Google Benchmark's ParseFlagValue).
std::optional<std::string> flag_value(const std::string& arg, const std::string& name, bool bare_ok) {
  const std::string flag = "--" + name;
  if (arg.compare(0, flag.size(), flag) != 0) return std::nullopt;
  if (arg.size() == flag.size()) return bare_ok ? std::optional<std::string>("") : std::nullopt;
  if (arg[flag.size()] != '=') return std::nullopt;
  return arg.substr(flag.size() + 1);
}

std::string env_name(const std::string& flag) {
  std::string s = flag;
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

double parse_seconds(const std::string& text, const std::string& flag) {
  std::string number = text;
  if (!number.empty() && number.back() == 's') number.pop_back();
  char* end = nullptr;
  const double v = std::strtod(number.c_str(), &end);
  if (number.empty() || end != number.c_str() + number.size() || !std::isfinite(v) || v < 0)
    throw UsageError("--" + flag + ": expected seconds (0.5 or 0.5s), got '" + text + "'");
  return v;
}

// A flag the library reads as a string and the driver only checks: its winning value and
// where it came from ("--name" or "NAME").
struct Checked {
  std::optional<std::string> value;
  std::string source;
};

std::string origin(const Checked& c) {
  return c.source.front() == '-' ? c.source + "=" + *c.value : c.source + "=" + *c.value + " (environment)";
}

void check_one_of(const Checked& c, std::initializer_list<const char*> allowed) {
  if (!c.value) return;
  std::string list;
  for (const char* a : allowed) {
    if (*c.value == a) return;
    list += (list.empty() ? "" : "|") + std::string(a);
  }
  throw UsageError(origin(c) + ": expected " + list);
}

// Google Benchmark 1.7.1 reserves `repetitions` entries (a negative count ends in
// "vector::reserve"), and runs nothing at 0 while reporting success.
constexpr long kMaxRepetitions = 100000;
int check_repetitions(const Checked& c, bool listing) {
  if (!c.value) return 1;
  char* end = nullptr;
  const std::string& v = *c.value;
  const long n = std::strtol(v.c_str(), &end, 10);
  if (v.empty() || end != v.c_str() + v.size() || n < 0 || n > kMaxRepetitions)
    throw UsageError(origin(c) + ": expected a count of repetitions from 1 to " + std::to_string(kMaxRepetitions));
  if (n == 0 && !listing) throw UsageError(origin(c) + " would measure no point: give 1 or more repetitions");
  return static_cast<int>(n);
}

}  // namespace

bool gbench_truthy(const std::string& value) {
  if (value.empty()) return true;
  if (value.size() == 1) {
    const char v = value[0];
    return std::isalnum(static_cast<unsigned char>(v)) &&
           !(v == '0' || v == 'f' || v == 'F' || v == 'n' || v == 'N');
  }
  std::string lower = value;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); });
  return !(lower == "false" || lower == "no" || lower == "off");
}

void parse_gbench_min_time(const std::string& value, GbenchFlags& flags) {
  if (!value.empty() && value.back() == 'x') {
    const std::string digits = value.substr(0, value.size() - 1);
    char* end = nullptr;
    const long n = std::strtol(digits.c_str(), &end, 10);
    if (digits.empty() || end != digits.c_str() + digits.size() || n < 1 || n > 100000000)
      throw UsageError("--benchmark_min_time: expected seconds (0.5 or 0.5s) or iterations (100x), got '" +
                       value + "'");
    flags.min_iterations = static_cast<int>(n);
    flags.min_time_s.reset();
    return;
  }
  flags.min_time_s = parse_seconds(value, "benchmark_min_time");
  flags.min_iterations.reset();
}

GbenchFlags take_gbench_flags(std::vector<std::string>& args,
                              const std::function<const char*(const char*)>& getenv_fn) {
  GbenchFlags f;
  auto checked = [&](auto&& parse) {
    try {
      parse();
    } catch (const UsageError& e) {
      if (f.error.empty()) f.error = e.what();
    }
  };
  auto min_time = [&](const std::string& v) { checked([&] { parse_gbench_min_time(v, f); }); };
  auto min_warmup = [&](const std::string& v) {
    checked([&] { f.min_warmup_time_s = parse_seconds(v, "benchmark_min_warmup_time"); });
  };
  auto env = [&](const char* flag) -> std::optional<std::string> {
    const char* v = getenv_fn ? getenv_fn(env_name(flag).c_str()) : nullptr;
    return v ? std::optional<std::string>(v) : std::nullopt;
  };
  // Checked only: the library reads these itself.
  Checked repetitions, format, out_format, time_unit, color;
  const std::vector<std::pair<const char*, Checked*>> checked_flags = {{"benchmark_repetitions", &repetitions},
                                                                       {"benchmark_format", &format},
                                                                       {"benchmark_out_format", &out_format},
                                                                       {"benchmark_time_unit", &time_unit},
                                                                       {"benchmark_color", &color}};
  for (const auto& [name, c] : checked_flags)
    if (auto v = env(name)) *c = Checked{*v, env_name(name)};
  if (auto v = env("benchmark_list_tests")) f.list_tests = gbench_truthy(*v);
  if (auto v = env("benchmark_filter")) f.filter = *v, f.filter_source = "BENCHMARK_FILTER";
  if (auto v = env("benchmark_out")) f.out = *v;
  if (auto v = env("benchmark_min_time")) min_time(*v);
  if (auto v = env("benchmark_min_warmup_time")) min_warmup(*v);

  std::vector<std::string> kept;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (i > 0) {
      if (auto v = flag_value(a, "benchmark_list_tests", true)) f.list_tests = gbench_truthy(*v);
      if (auto v = flag_value(a, "benchmark_filter", false)) f.filter = *v, f.filter_source = "--benchmark_filter";
      for (const auto& [name, c] : checked_flags)
        if (auto v = flag_value(a, name, false)) *c = Checked{*v, std::string("--") + name};
      if (auto v = flag_value(a, "benchmark_out", false)) f.out = *v;
      if (auto v = flag_value(a, "benchmark_min_time", false)) {
        min_time(*v);
        continue;
      }
      if (auto v = flag_value(a, "benchmark_min_warmup_time", false)) {
        min_warmup(*v);
        continue;
      }
    }
    kept.push_back(a);
  }
  if (f.list_tests) kept.push_back("--benchmark_out=");  // the library opens no file while listing
  checked([&] { f.repetitions = check_repetitions(repetitions, f.list_tests); });
  checked([&] { check_one_of(format, {"console", "json", "csv"}); });
  checked([&] { check_one_of(out_format, {"json", "console", "csv"}); });
  checked([&] {  // empty: the library's default unit
    if (time_unit.value && !time_unit.value->empty()) check_one_of(time_unit, {"ns", "us", "ms", "s"});
  });
  checked([&] {
    if (color.value && color.value->empty()) throw UsageError(origin(color) + ": expected auto, true or false");
  });
  args = std::move(kept);
  return f;
}

}  // namespace gpucal
