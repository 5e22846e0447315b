// SimAI's workload and busbw.yaml read as SimAI reads them (aliyun/SimAI
// astra-sim-alibabacloud/astra-sim/workload/Workload.cc initialize_workload, the busbw.yaml
// parser of its AstraParamParse.hh before 2025-07): every rule its parser applies, as one line
// per violation.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace gpucal::calibration::testing {

struct SimaiLine {
  std::string name;
  int64_t dependency = 0;
  uint64_t compute_ns[3] = {0, 0, 0};  // forward, input gradient, weight gradient
  std::string type[3];                 // collective per column
  uint64_t size[3] = {0, 0, 0};
  uint64_t update_ns = 0;
};

struct SimaiWorkload {
  std::string policy;
  std::map<std::string, int64_t> header;  // model_parallel_NPU_group, ep, pp, vpp, ga, all_gpus, pp_comm
  std::vector<SimaiLine> lines;
};

// The workload's policy line, line count and lines, by SimAI's stream reads; `errors` gets a
// line per rule broken: an unknown policy, a missing or zero header field, pp_comm present
// exactly when pp > 1, a line count that is not a number or not the number of lines, a field
// that does not read as its type, a collective name SimAI's columns do not decode, a size with
// NONE or none without, DP not a whole number of GPUs (all_gpus / (tp x pp)) or not divisible
// by ep.
SimaiWorkload parse_simai_workload(const std::string& text, std::vector<std::string>& errors);

// busbw.yaml by SimAI's parser: the first line skipped; sections TP, DP, EP ("NAME:"); keys
// "<collective>,: value" with the part from the comma dropped; PP's "busbw: value"; "null" for
// none. Values by section.key; `errors` for a line in no section or a value std::stof rejects.
std::map<std::string, std::optional<double>> parse_simai_busbw(const std::string& text,
                                                               std::vector<std::string>& errors);

}  // namespace gpucal::calibration::testing
