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
#include <sstream>

#include "app/import/import_parsers.h"

namespace gpucal::calibration {

namespace {

using nlohmann::json;

double number_at(const std::string& path, const json& j, const char* key, const std::string& where) {
  if (!j.contains(key) || !j[key].is_number())
    throw ImportError(path, 0, where + ": '" + key + "' missing or not a number");
  return j[key].get<double>();
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
  if (doc.contains("version")) run.tool_version = "nccl-tests JSON version " + doc["version"].dump();
  if (doc.contains("nccl_version"))
    run.hardware_lines.push_back("nccl_version " + doc["nccl_version"].dump());
  if (doc.contains("args") && doc["args"].is_array() && !doc["args"].empty()) {
    std::ostringstream cmd;
    for (const auto& a : doc["args"]) cmd << (cmd.tellp() > 0 ? " " : "") << a.get<std::string>();
    run.command_line = cmd.str();
    run.program = doc["args"][0].get<std::string>();
  }
  run.collective = collective_from_program(run.program);
  if (run.collective.empty()) {
    if (options.collective.empty())
      throw ImportError(path, 0,
                        "args[0] '" + run.program + "' is no nccl-tests binary; pass --collective NAME");
    run.collective = options.collective;
  }
  int64_t iterations = 0;
  if (doc.contains("config") && doc["config"].is_object()) {
    const json& c = doc["config"];
    iterations = c.value("iterations", int64_t{0});
    run.graph = c.value("graph", 0) > 0;
    run.validated = c.value("validation", 1) != 0;
    if (c.contains("devices") && c["devices"].is_array())
      for (const auto& d : c["devices"]) {
        RankLine r{d.value("rank", 0), d.value("hostname", ""), d.value("device", 0),
                   d.value("device_hex", ""), d.value("device_info", "")};
        run.ranks.push_back(r);
        run.hardware_lines.push_back("rank " + std::to_string(r.rank) + " on " + r.host + " device " +
                                     std::to_string(r.device) + " [" + r.bus_id + "] " + r.device_name);
      }
  }
  if (!doc["results"].is_array()) throw ImportError(path, 0, "'results' is not a list");
  bool cputime = false;
  for (std::size_t i = 0; i < doc["results"].size(); ++i) {
    const json& r = doc["results"][i];
    const std::string where = "results[" + std::to_string(i) + "]";
    const double size = number_at(path, r, "size", where);
    if (size <= 0) continue;  // zero-byte rows, as in the text output
    for (const char* block : {"out_of_place", "in_place"}) {
      if (!r.contains(block) || r[block].is_null()) continue;
      const json& b = r[block];
      CollectivePoint p;
      p.dtype = gpucal_dtype(r.value("type", ""));
      const std::string op = r.value("redop", "");
      p.op = op == "none" ? "" : op;
      const std::string root = trim(r.value("root", std::string("-1")));
      p.root = parse_integer(root).value_or(-1);
      p.in_place = std::string(block) == "in_place";
      p.size_bytes = size;
      p.printed_count = static_cast<int64_t>(number_at(path, r, "count", where));
      if (b.contains("cpu_time")) cputime = true;
      p.time_us = number_at(path, b, b.contains("cpu_time") ? "cpu_time" : "time", where + "." + block);
      if (!(p.time_us > 0)) throw ImportError(path, 0, where + "." + block + ": time must be > 0");
      p.algbw_gbps = number_at(path, b, "alg_bw", where + "." + block);
      p.busbw_gbps = number_at(path, b, "bus_bw", where + "." + block);
      if (b.contains("nwrong") && b["nwrong"].is_number()) p.wrong = b["nwrong"].get<int64_t>();
      const std::string per_iter = std::string(block) + "_per_iter";
      if (r.contains(per_iter) && r[per_iter].is_object()) {
        const json& s = r[per_iter];
        if (s.contains("p50_us")) p.p50_us = s["p50_us"].get<double>();
        if (s.contains("min_us")) p.iter_min_us = s["min_us"].get<double>();
        if (s.contains("max_us")) p.iter_max_us = s["max_us"].get<double>();
      }
      p.iterations = r.value("actual_iterations", iterations);
      p.line = 0;
      run.collectives.push_back(p);
    }
  }
  if (run.collectives.empty()) throw ImportError(path, 0, "no results with a size above zero");
  if (cputime) run.notes.push_back("times are CPU time (-C 1), not GPU time");
  if (!run.validated) run.notes.push_back("validation was off (-c 0): nwrong is null");
  run.rank_combine = "average over ranks (nccl-tests -a 1, the default)";
  resolve_topology(run, options, 0);
  check_printed_bandwidths(run, cputime);
  return {run};
}

}  // namespace gpucal::calibration
