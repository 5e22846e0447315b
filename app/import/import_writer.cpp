#include "app/import/import_writer.h"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "app/common/calibration_json.h"
#include "core/formulas/collective_formulas.h"
#include "core/output/csv_sink.h"
#include "core/output/file_io.h"
#include "core/output/result_columns.h"

namespace gpucal::calibration {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

std::string now_utc() {
  const std::time_t t = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&t));
  return buf;
}

std::string size_text(double s) {
  std::ostringstream o;
  o << static_cast<long long>(std::llround(s));
  return o.str();
}

// Keys are unique within a CSV: a repeat (a second log of the same kind, a second rccl-tests
// cycle) gets "/rep2", "/rep3", ... in reading order.
class PointKeys {
 public:
  std::string unique(const std::string& key) {
    const int n = ++seen_[key];
    return n == 1 ? key : key + "/rep" + std::to_string(n);
  }

 private:
  std::map<std::string, int> seen_;
};

// How the row's time was made, for status_detail.
std::string statistic(int64_t iterations, bool median) {
  return std::string(median ? "median of " : "mean of ") +
         (iterations > 0 ? std::to_string(iterations) + " iterations" : "its iterations");
}

Row common_row(const ImportedRun& run, const std::string& bench, int line, const std::string& detail) {
  Row row;
  row.set("bench", bench)
      .set("impl", run.impl)
      .set("backend", run.backend)
      .set("device", run.device)
      .set("regime", "hot")
      .set("samples", int64_t{1})
      .set("status_detail", "imported from " + fs::path(run.source_file).filename().string() + ":" +
                                std::to_string(line) + " (" + detail +
                                (run.source_ref.empty() ? "" : "; source: " + run.source_ref) + ")");
  return row;
}

Row collective_row(const ImportedRun& run, const CollectivePoint& p, PointKeys& keys) {
  const double time = p.p50_us ? *p.p50_us : p.time_us;
  const std::string detail = statistic(p.iterations, p.p50_us.has_value()) + ", " + run.rank_combine;
  Row row = common_row(run, "collectives", p.line, detail);
  const bool failed = p.wrong && *p.wrong > 0;
  std::string key = "collectives/" + run.impl + "/" + run.collective + "/" +
                    (p.dtype.empty() ? "-" : p.dtype) + "/" + (p.op.empty() ? "-" : p.op) + "/n" +
                    std::to_string(run.nranks) + "/" + (p.in_place ? "ip" : "oop") + "/" +
                    size_text(p.size_bytes);
  if (p.root >= 0) key += "/r" + std::to_string(p.root);
  if (run.graph) key += "/graph";
  row.set("point", keys.unique(key))
      .set("status", failed ? "error" : "ok")
      .set("verified", !p.wrong ? "skipped"
                       : failed ? "fail"
                                : "ok")
      .set("time_us_median", time)
      .set("time_us_p10", time)  // one sample: its percentiles are the figure itself
      .set("time_us_p90", time)
      .set("time_us_mean", p.time_us);
  if (failed)
    row.set("status_detail", "the source reported " + std::to_string(*p.wrong) + " wrong elements (" +
                                 fs::path(run.source_file).filename().string() + ":" +
                                 std::to_string(p.line) + ")");
  if (p.iterations > 0) row.set("launches_per_sample", p.iterations);
  if (p.iter_min_us) row.set("time_us_min", *p.iter_min_us);
  if (p.iter_max_us) row.set("time_us_max", *p.iter_max_us);
  if (p.rank_min_us && p.rank_max_us) row.set("time_us_rank_spread", *p.rank_max_us - *p.rank_min_us);
  const double factor = bus_factor(run.collective, run.nranks);
  const double algbw = p.size_bytes / time / 1e3;
  const int esize = dtype_size_bytes_of(p.dtype);
  row.set("collective", run.collective)
      .set("dtype", p.dtype)
      .set("op", p.op)
      .set("in_place", p.in_place)
      .set("nranks", run.nranks)
      .set("size_bytes", size_text(p.size_bytes))
      .set("algbw_gbps", algbw)
      .set("busbw_gbps", algbw * factor)
      .set("bus_factor", factor)
      .set("graph", run.graph);
  if (run.nnodes > 0)  // 0: the log names neither hosts nor counts; the cells stay empty
    row.set("nnodes", run.nnodes).set("ranks_per_node", run.ranks_per_node).set("spans_nodes", run.nnodes > 1);
  if (p.root >= 0) row.set("root", p.root);
  if (p.wrong) row.set("wrong", *p.wrong);
  if (esize > 0) {
    const int64_t elements = static_cast<int64_t>(std::llround(p.size_bytes)) / esize;
    const int64_t per_rank = elements / run.nranks;
    // As bench_collectives writes them: `count` is the count nccl-tests prints (per rank where
    // S is the total over ranks), `count_total` the whole S / sizeof.
    row.set("count", size_is_total_over_ranks(run.collective) ? per_rank : elements)
        .set("count_total", elements);
    if (run.collective == "allgather")
      row.set("send_count", per_rank).set("recv_count", elements);
    else if (run.collective == "reduce_scatter")
      row.set("send_count", elements).set("recv_count", per_rank);
    else
      row.set("send_count", elements).set("recv_count", elements);
  }
  return row;
}

Row p2p_row(const ImportedRun& run, const P2pPoint& p, PointKeys& keys) {
  const double time = p.p50_us ? *p.p50_us : p.time_us;
  Row row = common_row(run, "p2p", p.line, statistic(p.iterations, p.p50_us.has_value()));
  const bool spans = run.nnodes > 1;
  const std::string direction = run.p2p_pattern == "pingpong" ? "pingpong"
                                : run.p2p_pattern == "bidir"  ? "bi"
                                                              : "uni";
  const double counted = run.p2p_pattern == "sendrecv" ? p.size_bytes : 2.0 * p.size_bytes;
  const int device = run.memory == "device" ? 0 : -1;
  const bool failed = p.validation_passed && !*p.validation_passed;
  row.set("point", keys.unique("p2p/" + run.impl + "/" + run.p2p_pattern + "/" + run.memory + "/" +
                               (spans ? "inter" : "intra") + "/" + size_text(p.size_bytes)))
      .set("status", failed ? "error" : "ok")
      .set("verified", !p.validation_passed ? "skipped"
                       : failed             ? "fail"
                                            : "ok")
      .set("time_us_median", time)
      .set("time_us_p10", time)  // one sample: its percentiles are the figure itself
      .set("time_us_p90", time)
      .set("time_us_mean", p.time_us)
      .set("pattern", run.p2p_pattern)
      .set("direction", direction)
      .set("engine", "mpi")
      .set("src_rank", int64_t{0})
      .set("dst_rank", int64_t{1})
      .set("src_device", device)
      .set("dst_device", device)
      .set("src_node", "node0")
      .set("dst_node", spans ? "node1" : "node0")
      .set("link_class", spans                    ? "network"
                         : run.memory == "device" ? "intra-node"
                                                  : "shm")
      .set("memory", run.memory)
      .set("size_bytes", size_text(p.size_bytes))
      .set("bytes_counted", size_text(counted))
      .set("bytes_counted_rule", run.p2p_pattern == "pingpong" ? "round-trip"
                                 : run.p2p_pattern == "bidir"  ? "both-directions"
                                                               : "size")
      .set("concurrent", int64_t{1})
      .set("bandwidth_gbps", counted / time / 1e3);
  if (p.iterations > 0) row.set("launches_per_sample", p.iterations);
  if (p.latency_us) row.set("latency_us", time / 2.0);
  if (failed)
    row.set("status_detail", "the source's validation failed (" +
                                 fs::path(run.source_file).filename().string() + ":" +
                                 std::to_string(p.line) + ")");
  return row;
}

// One shape of a GEMM table: its time is the FLOP count over the source's FLOP/s.
Row gemm_row(const ImportedRun& run, const GemmPoint& p, PointKeys& keys) {
  Row row = common_row(run, "gemm", p.line, "the source's FLOP/s for this shape and types, one figure");
  const int64_t flops = 2 * p.b * p.m * p.n * p.k;  // the reader bounds each dimension
  const double time = static_cast<double>(flops) / p.flops_per_s * 1e6;
  const std::string types = p.dtype + (p.b_dtype == p.dtype ? "" : "x" + p.b_dtype) + "->" + p.out_dtype;
  row.set("point", keys.unique("gemm/" + run.impl + "/" + types + "/b" + std::to_string(p.b) + "/" +
                               std::to_string(p.m) + "x" + std::to_string(p.n) + "x" + std::to_string(p.k)))
      .set("status", "ok")
      .set("verified", "skipped")
      .set("time_us_median", time)
      .set("time_us_p10", time)
      .set("time_us_p90", time)
      .set("time_us_mean", time)
      .set("dtype", p.dtype)
      .set("b_dtype", p.b_dtype)
      .set("out_dtype", p.out_dtype)
      .set("m", p.m)
      .set("n", p.n)
      .set("k", p.k)
      .set("batch", p.b)
      .set("flops", flops)
      .set("flop_convention", "2mnk")
      .set("tflops", p.flops_per_s / 1e12)
      .set("algo_source", p.source_key);
  return row;
}

json source_json(const ImportedRun& run, int rows) {
  json ranks = json::array();
  for (const auto& r : run.ranks)
    ranks.push_back({{"rank", r.rank},
                     {"host", r.host},
                     {"device", r.device},
                     {"bus_id", r.bus_id},
                     {"device_name", r.device_name}});
  return {{"file", fs::absolute(run.source_file).string()},
          {"first_line", run.first_line},
          {"format", run.format},
          {"tool_version", run.tool_version},
          {"program", run.program},
          {"command_line", run.command_line},
          {"collective", run.collective},
          {"collective_from", run.collective_from},
          {"table_candidates", run.table_candidates},
          {"p2p_pattern", run.p2p_pattern},
          {"hardware_lines", run.hardware_lines},
          {"ranks", ranks},
          {"nranks", run.nranks},
          {"nranks_from", run.nranks_from},
          {"nnodes", run.nnodes},
          {"ranks_per_node", run.ranks_per_node},
          {"nodes_from", run.nodes_from},
          {"device", run.device},
          {"memory", run.memory},
          {"graph", run.graph},
          {"validated", run.validated},
          {"rank_combine", run.rank_combine},
          {"rows", rows},
          {"source_ref", run.source_ref},
          {"unknown", run.unknown},
          {"notes", run.notes}};
}

json sidecar(const std::string& bench, const std::vector<std::string>& command_line, const json& sources,
             int rows, int failed) {
  return {
      {"metadata_schema_version", 1},
      {"csv_schema_version", kCsvSchemaVersion},
      {"bench", bench},
      {"command_line", command_line},
      {"imported", true},
      {"start_time", now_utc()},
      {"end_time", now_utc()},
      {"conventions",
       {{"size_bytes",
         "nccl-tests' S: the total over ranks for allgather, reduce_scatter, alltoall (OSU Size x "
         "ranks for allgather and alltoall)"},
        {"time_us_median",
         "the source's median where it prints one (nccl-tests -I, OSU -f P50), else its mean; "
         "time_us_mean is its mean"},
        {"samples",
         "1: a source prints one averaged figure per size; launches_per_sample is the iterations in it"}}},
      {"sources", sources},
      {"rows", rows},
      {"failed_rows", failed},
      {"exit_code", 0}};
}

// Writes one bench's CSV and sidecar into `dir`; returns the rows written.
template <class Point, class MakeRow>
int write_bench(const std::string& dir, const std::string& bench, const std::vector<std::string>& columns,
                const std::vector<ImportedRun>& runs, const std::vector<std::string>& command_line,
                std::vector<Point> ImportedRun::*points, MakeRow make_row) {
  int total = 0, failed = 0;
  json sources = json::array();
  std::optional<CsvSink> sink;
  PointKeys keys;
  for (const auto& run : runs) {
    if ((run.*points).empty()) continue;
    if (!sink) sink.emplace(dir + "/" + bench + ".csv", columns);
    for (const auto& p : run.*points) {
      Row row = make_row(run, p, keys);
      if (row.get("status") != "ok") ++failed;
      sink->write(row);
      ++total;
    }
    sources.push_back(source_json(run, static_cast<int>((run.*points).size())));
  }
  if (sink) {
    sink->close();
    write_json_file(sidecar(bench, command_line, sources, total, failed), dir + "/" + bench + ".json");
  }
  return total;
}

std::string describe(const ImportedRun& run) {
  std::ostringstream o;
  o << fs::path(run.source_file).filename().string() << ":" << run.first_line << ": " << run.format << " ";
  if (!run.gemms.empty()) {
    o << run.program << ", " << (run.device.empty() ? "device unknown" : run.device) << ", " << run.gemms.size()
      << " rows";
    return o.str();
  }
  o << (run.program.empty() ? (run.collective.empty() ? run.p2p_pattern : run.collective) : run.program) << ", "
    << run.nranks << " ranks (" << run.nranks_from << ") on "
    << (run.nnodes > 0 ? std::to_string(run.nnodes) + " node(s) (" + run.nodes_from + ")" : "an unknown number of nodes") << ", " << (run.device.empty() ? "device unknown" : run.device) << ", "
    << (!run.collectives.empty() ? run.collectives.size() : run.p2p.size()) << " rows";
  return o.str();
}

}  // namespace

ImportSummary write_imported_results(const std::vector<ImportedRun>& runs, const std::string& out_dir,
                                     const std::vector<std::string>& command_line) {
  std::error_code ec;
  if (fs::exists(out_dir, ec) && !(fs::is_directory(out_dir, ec) && fs::is_empty(out_dir, ec)))
    throw std::runtime_error(out_dir +
                             ": exists and is not empty; gpucal import writes a new results folder");
  const fs::path target = fs::absolute(out_dir);
  const fs::path staging =
      target.parent_path() / ("." + target.filename().string() + ".import-" + std::to_string(::getpid()));
  ImportSummary summary;
  std::error_code ignored;
  try {
    fs::remove_all(staging, ignored);
    fs::create_directories(staging);
    summary.collective_rows = write_bench(staging.string(), "collectives", collectives_columns(), runs,
                                          command_line, &ImportedRun::collectives, collective_row);
    summary.p2p_rows =
        write_bench(staging.string(), "p2p", p2p_columns(), runs, command_line, &ImportedRun::p2p, p2p_row);
    summary.gemm_rows =
        write_bench(staging.string(), "gemm", gemm_columns(), runs, command_line, &ImportedRun::gemms, gemm_row);
    // rename(2) replaces an empty folder in one step and refuses a non-empty one: another
    // import that finished first into the same --out wins, and this one writes nothing.
    std::error_code renamed;
    fs::rename(staging, target, renamed);
    if (renamed == std::errc::directory_not_empty || renamed == std::errc::file_exists) {
      fs::remove_all(staging, ignored);
      throw std::runtime_error("--out " + out_dir +
                               ": another gpucal import wrote it while this one ran; it is not empty now, and this "
                               "import wrote nothing (give a new --out)");
    }
    if (renamed) throw fs::filesystem_error("rename", staging, target, renamed);
  } catch (const fs::filesystem_error& e) {
    fs::remove_all(staging, ignored);
    throw std::runtime_error("--out " + out_dir + ": " + filesystem_error_text(e));
  } catch (...) {
    fs::remove_all(staging, ignored);
    throw;
  }
  std::map<std::string, std::set<std::string>> groups;
  for (const auto& run : runs) {
    summary.messages.push_back(describe(run));
    for (const auto& u : run.unknown) summary.messages.push_back("  not in the log: " + u);
    for (const auto& p : run.collectives)
      groups[run.collective + " " + p.dtype + " n=" + std::to_string(run.nranks) +
             " nodes=" + (run.nnodes > 0 ? std::to_string(run.nnodes) : "?")]
          .insert(run.source_file);
  }
  for (const auto& [group, files] : groups)
    if (files.size() > 1)
      summary.messages.push_back("note: " + std::to_string(files.size()) + " logs give " + group +
                                 "; gpucal fit treats them as one group (import one system per folder)");
  return summary;
}

}  // namespace gpucal::calibration
