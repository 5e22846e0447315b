#include "tests/export/simai_checks.h"

#include <algorithm>
#include <sstream>

namespace gpucal::calibration::testing {

namespace {

// The names SimAI's columns decode (Workload.cc: ALLREDUCE, ALLTOALL, ALLREDUCEALLTOALL, ALLGATHER,
// REDUCESCATTER, each plain or with _EP / _DP_EP).
bool known_collective(const std::string& t) {
  if (t == "NONE") return true;
  for (const char* base : {"ALLREDUCE", "ALLTOALL", "ALLREDUCEALLTOALL", "ALLGATHER", "REDUCESCATTER"})
    for (const char* suffix : {"", "_EP", "_DP_EP"})
      if (t == std::string(base) + suffix) return true;
  return false;
}

void parse_header(const std::string& first, SimaiWorkload& w, std::vector<std::string>& errors) {
  std::istringstream tokens(first);
  std::vector<std::string> t;
  for (std::string s; tokens >> s;) t.push_back(s);
  if (t.empty() || t[0] != "HYBRID_TRANSFORMER_FWD_IN_BCKWD") {
    errors.push_back("policy line: expected HYBRID_TRANSFORMER_FWD_IN_BCKWD first");
    return;
  }
  w.policy = t[0];
  for (std::size_t i = 1; i + 1 < t.size(); ++i) {
    std::string key = t[i];
    if (key.back() != ':' && key != "pp_comm") continue;
    if (key.back() == ':') key.pop_back();
    try {
      std::size_t used = 0;
      w.header[key] = std::stoi(t[i + 1], &used);
      if (used != t[i + 1].size()) errors.push_back("policy line: " + key + " is not an integer");
    } catch (const std::exception&) {
      errors.push_back("policy line: " + key + " is not an integer");
    }
  }
  for (const char* key : {"model_parallel_NPU_group", "ep", "pp", "vpp", "ga", "all_gpus"})
    if (w.header[key] == 0) errors.push_back(std::string("policy line: ") + key + " missing or 0");
  const int64_t pp = w.header["pp"], pp_comm = w.header.count("pp_comm") ? w.header["pp_comm"] : 0;
  if ((pp != 1 && pp_comm == 0) || (pp == 1 && pp_comm != 0)) errors.push_back("policy line: pp_comm with pp 1 or none with pp > 1");
  const int64_t tp = w.header["model_parallel_NPU_group"], gpus = w.header["all_gpus"], ep = w.header["ep"];
  if (tp > 0 && pp > 0 && (gpus % (tp * pp) != 0 || (ep > 0 && gpus / (tp * pp) % ep != 0)))
    errors.push_back("policy line: all_gpus / (tp x pp) is not a whole DP group divisible by ep");
}

}  // namespace

SimaiWorkload parse_simai_workload(const std::string& text, std::vector<std::string>& errors) {
  SimaiWorkload w;
  std::istringstream in(text);
  std::string first, second;
  std::getline(in, first);
  parse_header(first, w, errors);
  std::getline(in, second);
  int64_t count = 0;
  try {
    count = std::stoi(second);
  } catch (const std::exception&) {
    errors.push_back("line 2: not a line count");
    return w;
  }
  for (int64_t i = 0; i < count; ++i) {
    SimaiLine l;
    in >> l.name >> l.dependency;
    for (int c = 0; c < 3; ++c) in >> l.compute_ns[c] >> l.type[c] >> l.size[c];
    in >> l.update_ns;
    if (!in) {
      errors.push_back("line " + std::to_string(i + 3) + ": fields do not read as SimAI's types");
      return w;
    }
    for (int c = 0; c < 3; ++c) {
      if (!known_collective(l.type[c]))
        errors.push_back(l.name + ": collective '" + l.type[c] + "' is not one SimAI decodes");
      if ((l.type[c] == "NONE") != (l.size[c] == 0)) errors.push_back(l.name + ": a size with NONE or none without");
    }
    w.lines.push_back(l);
  }
  std::string rest;
  if (in >> rest) errors.push_back("text after the " + std::to_string(count) + " lines the count announces");
  return w;
}

std::map<std::string, std::optional<double>> parse_simai_busbw(const std::string& text,
                                                               std::vector<std::string>& errors) {
  std::map<std::string, std::optional<double>> out;
  std::istringstream in(text);
  std::string line, section;
  std::getline(in, line);
  while (std::getline(in, line)) {
    line.erase(0, line.find_first_not_of(' '));
    line.erase(line.find_last_not_of(' ') + 1);
    if (line.empty() || line[0] == '#') continue;
    if (line.back() == ':') {
      section = line.substr(0, line.size() - 1);
      continue;
    }
    std::istringstream ss(line);
    std::string key, value;
    if (!std::getline(ss, key, ':') || !(ss >> value)) continue;
    key = key.substr(0, key.find(','));
    if (section.empty()) errors.push_back("busbw.yaml: '" + line + "' in no section");
    if (value == "null") {
      out[section + "." + key] = std::nullopt;
      continue;
    }
    try {
      out[section + "." + key] = std::stof(value);
    } catch (const std::exception&) {
      errors.push_back("busbw.yaml: '" + value + "' is not a number");
    }
  }
  return out;
}

}  // namespace gpucal::calibration::testing
