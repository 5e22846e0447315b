#include "app/report/prometheus.h"

#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>

#include "core/output/file_io.h"

namespace gpucal::fleet {

std::string prom_name(const std::string& metric) {
  std::string name = "gpucal_" + metric;
  for (char& c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == ':')) c = '_';
  return name;
}

std::string prom_escape(const std::string& value) {
  std::string out;
  for (char c : value) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

namespace {

std::string help_escape(const std::string& text) {
  std::string out;
  for (char c : text) out += c == '\\' ? "\\\\" : c == '\n' ? "\\n" : std::string(1, c);
  return out;
}

// Prometheus spells the non-finite values NaN, +Inf, -Inf; 15 digits keep a timestamp whole.
std::string number_text(double v) {
  if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : v > 0 ? "+Inf" : "-Inf";
  char buffer[40];
  std::snprintf(buffer, sizeof buffer, "%.15g", v);
  return buffer;
}

}  // namespace

void PromText::gauge(const std::string& metric, const std::string& help, const PromLabels& labels, double value) {
  const std::string name = prom_name(metric);
  Family* family = nullptr;
  for (auto& f : families_)
    if (f.name == name) family = &f;
  if (family == nullptr) family = &families_.emplace_back(Family{name, help, {}});
  std::string sample = name, sep = "{";
  for (const auto& [label, text] : labels) {
    if (text.empty()) continue;
    sample += sep + label + "=\"" + prom_escape(text) + "\"";
    sep = ",";
  }
  if (sep == ",") sample += "}";
  family->samples.push_back(sample + " " + number_text(value));
}

std::string PromText::text() const {
  std::string out;
  for (const auto& f : families_) {
    out += "# HELP " + f.name + " " + help_escape(f.help) + "\n# TYPE " + f.name + " gauge\n";
    for (const auto& s : f.samples) out += s + "\n";
  }
  return out;
}

std::optional<double> unix_seconds(const std::string& iso) {
  std::tm t{};
  char zone = 0;
  if (std::sscanf(iso.c_str(), "%4d-%2d-%2dT%2d:%2d:%2d%c", &t.tm_year, &t.tm_mon, &t.tm_mday, &t.tm_hour, &t.tm_min,
                  &t.tm_sec, &zone) != 7 || zone != 'Z')
    return std::nullopt;
  t.tm_year -= 1900;
  t.tm_mon -= 1;
  return static_cast<double>(timegm(&t));
}

double now_seconds() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

void write_prometheus(const std::string& path, const PromText& text) {
  try {
    write_file_atomic(path, text.text());
  } catch (const OpenError& e) {
    throw OpenError(std::string("--prometheus: ") + e.what());
  } catch (const WriteError& e) {
    throw WriteError(std::string("--prometheus: ") + e.what());
  }
}

PromLabels subject_labels(const std::string& subject) {
  const auto dash = subject.find("--");
  if (dash == std::string::npos) return {{"node", subject}};
  return {{"node", subject.substr(0, dash)}, {"peer", subject.substr(dash + 2)}};
}

}  // namespace gpucal::fleet
