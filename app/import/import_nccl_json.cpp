// nccl-tests -J FILE.json (src/util.cu, JSON file versions 1-3): one object per run with
//   version, start_time, args [argv...], env [...], nccl_version,
//   config {nthreads, ngpus, minimum_bytes, maximum_bytes, step_factor|step_bytes, warmup_iters,
//           iterations, aggregated_iterations, validation, graph, ..., devices [{rank, group, pid,
//           hostname, device, device_hex, device_info}]},
//   results [{size, count, type, redop, root (a padded string), out_of_place {time|cpu_time,
//             alg_bw, bus_bw, nwrong (null without validation)} or null, in_place {...},
//             out_of_place_per_iter {min_us, max_us, p50_us, ...} (with -I 1), actual_iterations}],
//   out_of_bounds, average_bus_bandwidth, errors, end_time.
// Rows have no line numbers: errors name "results[i]".
#include <fstream>
#include <sstream>

#include "app/import/import_numbers.h"
#include "app/import/import_parsers.h"
#include "core/output/strict_json.h"

namespace gpucal::calibration {

namespace {

using nlohmann::json;

// A field of an object: present and a number, checked by `check` (import_numbers.h).
template <class Check>
auto number_at(const std::string& path, const json& j, const char* key, const std::string& where, Check check) {
  const FieldAt at{path, 0, where + "." + key};
  if (!j.is_object() || !j.contains(key)) throw ImportError(path, 0, at.field + ": missing");
  return check(at, number_token(at, j[key]));
}

std::string string_at(const std::string& path, const json& j, const char* key, const std::string& where,
                      const std::string& absent) {
  if (!j.contains(key)) return absent;
  if (!j[key].is_string())
    throw ImportError(path, 0, where + "." + key + ": expected a string, got " + std::string(j[key].type_name()));
  return j[key].get<std::string>();
}

int64_t whole_at(const std::string& path, const json& j, const char* key, const std::string& where, int64_t absent,
                 int64_t min, int64_t max) {
  if (!j.contains(key)) return absent;
  const FieldAt at{path, 0, where + "." + key};
  return whole_field(at, number_token(at, j[key]), min, max);
}

// args, nccl_version, config (iterations, graph, validation, devices): the run's facts.
int64_t read_header(const std::string& path, const json& doc, ImportedRun& run) {
  if (doc.contains("version")) run.tool_version = "nccl-tests JSON version " + doc["version"].dump();
  if (doc.contains("nccl_version")) run.hardware_lines.push_back("nccl_version " + doc["nccl_version"].dump());
  if (doc.contains("args") && doc["args"].is_array() && !doc["args"].empty()) {
    std::ostringstream cmd;
    for (std::size_t i = 0; i < doc["args"].size(); ++i) {
      if (!doc["args"][i].is_string())
        throw ImportError(path, 0, "args[" + std::to_string(i) + "]: expected a string, got " +
                                       std::string(doc["args"][i].type_name()));
      cmd << (i ? " " : "") << doc["args"][i].get<std::string>();
    }
    run.command_line = cmd.str();
    run.program = doc["args"][0].get<std::string>();
  }
  if (!doc.contains("config") || !doc["config"].is_object()) return 0;
  const json& c = doc["config"];
  const int64_t iterations = whole_at(path, c, "iterations", "config", 0, 0, kMaxIterations);
  run.graph = whole_at(path, c, "graph", "config", 0, 0, kMaxIterations) > 0;
  run.validated = whole_at(path, c, "validation", "config", 1, 0, kMaxIterations) != 0;
  if (c.contains("devices") && c["devices"].is_array())
    for (std::size_t i = 0; i < c["devices"].size(); ++i) {
      const json& d = c["devices"][i];
      const std::string where = "config.devices[" + std::to_string(i) + "]";
      if (!d.is_object()) throw ImportError(path, 0, where + ": expected an object");
      RankLine r{static_cast<int>(whole_at(path, d, "rank", where, 0, 0, kMaxRanks - 1)),
                 string_at(path, d, "hostname", where, ""),
                 static_cast<int>(whole_at(path, d, "device", where, 0, 0, kMaxDeviceIndex)),
                 string_at(path, d, "device_hex", where, ""), string_at(path, d, "device_info", where, "")};
      run.ranks.push_back(r);
      run.hardware_lines.push_back("rank " + std::to_string(r.rank) + " on " + r.host + " device " +
                                   std::to_string(r.device) + " [" + r.bus_id + "] " + r.device_name);
    }
  return iterations;
}

// One block (out_of_place or in_place) of results[i].
CollectivePoint read_block(const std::string& path, const json& r, const std::string& where, const char* block,
                           int64_t size, int64_t iterations, bool& cputime) {
  const json& b = r[block];
  const std::string at = where + "." + block;
  if (!b.is_object()) throw ImportError(path, 0, at + ": expected an object or null");
  CollectivePoint p;
  p.dtype = gpucal_dtype(string_at(path, r, "type", where, ""));
  const std::string op = string_at(path, r, "redop", where, "");
  p.op = op == "none" ? "" : op;
  const std::string root = trim(string_at(path, r, "root", where, "-1"));  // a padded string
  p.root = whole_field({path, 0, where + ".root"}, root, -1, kMaxRanks - 1);
  p.in_place = std::string(block) == "in_place";
  p.size_bytes = static_cast<double>(size);
  p.printed_count = number_at(path, r, "count", where, [&](const FieldAt& f, const std::string& t) {
    return whole_field(f, t, 0, size);
  });
  if (b.contains("cpu_time")) cputime = true;
  p.time_us = number_at(path, b, b.contains("cpu_time") ? "cpu_time" : "time", at,
                        [](const FieldAt& f, const std::string& t) { return time_field(f, t); });
  p.algbw_gbps = number_at(path, b, "alg_bw", at, rate_field);
  p.busbw_gbps = number_at(path, b, "bus_bw", at, rate_field);
  const auto half_unit = [&](const char* key) {
    return half_unit_of_last_digit(number_token({path, 0, at + "." + key}, b[key]));
  };
  p.time_half_unit = half_unit(b.contains("cpu_time") ? "cpu_time" : "time");
  p.algbw_half_unit = half_unit("alg_bw");
  p.busbw_half_unit = half_unit("bus_bw");
  if (b.contains("nwrong") && !b["nwrong"].is_null()) p.wrong = whole_at(path, b, "nwrong", at, 0, 0, kMaxSizeBytes);
  const std::string per_iter = std::string(block) + "_per_iter";
  if (r.contains(per_iter) && r[per_iter].is_object()) {
    const json& s = r[per_iter];
    const std::string in = where + "." + per_iter;
    auto time_or_zero = [](const FieldAt& f, const std::string& t) { return time_field(f, t, true); };
    if (s.contains("p50_us")) p.p50_us = number_at(path, s, "p50_us", in, time_or_zero);
    if (s.contains("min_us")) p.iter_min_us = number_at(path, s, "min_us", in, time_or_zero);
    if (s.contains("max_us")) p.iter_max_us = number_at(path, s, "max_us", in, time_or_zero);
  }
  p.iterations = whole_at(path, r, "actual_iterations", where, iterations, 0, kMaxIterations);
  p.line = 0;
  return p;
}

}  // namespace

std::vector<ImportedRun> parse_nccl_tests_json(const std::string& path, const json& doc,
                                               const ImportOptions& options) {
  ImportedRun run;
  run.source_file = path;
  run.first_line = 1;
  run.format = "nccl-tests-json";
  run.impl = "nccl-tests";
  run.backend = "cuda";
  const int64_t iterations = read_header(path, doc, run);
  run.collective = collective_from_program(run.program);
  if (!run.collective.empty()) run.collective_from = "args[0]";
  if (run.collective.empty() && !run.program.empty() && options.collective.empty())
    throw ImportError(path, 0, "args[0] '" + run.program + "' is no nccl-tests binary; pass --collective NAME");
  if (!doc["results"].is_array()) throw ImportError(path, 0, "'results' is not a list");
  bool cputime = false;
  int zero_rows = 0;
  for (std::size_t i = 0; i < doc["results"].size(); ++i) {
    const json& r = doc["results"][i];
    const std::string where = "results[" + std::to_string(i) + "]";
    if (!r.is_object()) throw ImportError(path, 0, where + ": expected an object");
    const int64_t size = number_at(path, r, "size", where, size_field);
    if (size == 0) {  // zero-byte rows, as in the text output
      ++zero_rows;
      continue;
    }
    for (const char* block : {"out_of_place", "in_place"})
      if (r.contains(block) && !r[block].is_null())
        run.collectives.push_back(read_block(path, r, where, block, size, iterations, cputime));
  }
  if (run.collectives.empty()) throw ImportError(path, 0, "no results with a size above zero");
  if (zero_rows > 0) run.notes.push_back(std::to_string(zero_rows) + " zero-byte result(s) skipped");
  if (cputime) run.notes.push_back("times are CPU time (-C 1), not GPU time");
  if (!run.validated) run.notes.push_back("validation was off (-c 0): nwrong is null");
  run.rank_combine = "average over ranks (nccl-tests -a 1, the default)";
  settle_collective(run, {}, options,
                    rank_list_complete(run.ranks) ? static_cast<int>(run.ranks.size()) : options.nranks.value_or(0));
  resolve_topology(run, options, 0);
  check_printed_bandwidths(run, cputime);
  return {run};
}

bool detects_nccl_tests_json(const std::string& line) { return line.rfind("{", 0) == 0; }

std::vector<ImportedRun> parse_nccl_tests_json_file(const std::string& path, const std::vector<LogLine>& lines,
                                                    const ImportOptions& options) {
  std::ifstream in(path);
  std::stringstream all;
  all << in.rdbuf();
  json doc;
  try {
    doc = parse_json_unique_keys(all.str());
  } catch (const std::exception& e) {
    throw ImportError(path, 0, "does not parse as JSON (nccl-tests -J output): " + json_parse_error_text(e));
  }
  if (!doc.is_object() || !doc.contains("results"))
    throw ImportError(path, lines.empty() ? 0 : lines.front().number,
                      "JSON without a 'results' list: not nccl-tests -J output");
  return parse_nccl_tests_json(path, doc, options);
}

}  // namespace gpucal::calibration
