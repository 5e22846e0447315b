#include "app/run/stand_ins.h"

#include <filesystem>
#include <sstream>

#include "app/common/csv_table.h"
#include "app/export/export_comm.h"
#include "app/export/export_common.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

// The copy bandwidth over the host link (h2d), or of host memory on the host backend (h2h), at
// its largest measured size: the rate of offload-sized transfers (smaller host copies run in
// the caches).
std::optional<StandIn> offload_bandwidth(const std::string& p2p_csv) {
  if (p2p_csv.empty() || !std::filesystem::exists(p2p_csv)) return std::nullopt;
  const CsvTable t = CsvTable::read_file(p2p_csv);
  for (const char* col : {"status", "pattern", "direction", "size_bytes", "bandwidth_gbps"})
    if (!t.has_column(col)) return std::nullopt;
  for (const std::string direction : {"h2d", "h2h"}) {
    double size = 0, gbps = 0;
    for (std::size_t r = 0; r < t.row_count(); ++r) {
      if (t.get_string(r, "status") != "ok" || t.get_string(r, "pattern") != "copy" ||
          t.get_string(r, "direction") != direction)
        continue;
      const double s = t.get_double(r, "size_bytes"),
                   bw = t.get_optional_double(r, "bandwidth_gbps").value_or(0);
      if (s > size || (s == size && bw > gbps)) size = s, gbps = bw;
    }
    if (gbps > 0)
      return StandIn{
          "offload_gbps", format_number(gbps),
          std::string(direction == "h2d" ? "the host-to-device copy (bench_p2p copy h2d)"
                                         : "the host-memory copy (bench_p2p copy h2h: host backend)") +
              " at its largest size, " + std::to_string(static_cast<long long>(size)) + " B",
          "calculon"};
  }
  return std::nullopt;
}

std::optional<StandIn> offload_capacity(const std::string& meminfo) {
  std::istringstream lines(meminfo);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string name, unit;
    double kib = 0;
    if (words >> name >> kib >> unit && name == "MemTotal:" && unit == "kB" && kib > 0)
      return StandIn{"offload_gib", format_number(kib / (1024.0 * 1024.0)),
                     "this machine's memory (/proc/meminfo MemTotal), the host memory an offload tier uses",
                     "calculon"};
  }
  return std::nullopt;
}

// The allreduce time at the smallest measured size of the intra-node group of `nranks` (0: none).
double smallest_size_time_us(const json& calibration, int64_t nranks) {
  if (!calibration.contains("communication") || !calibration["communication"].contains("collectives"))
    return 0;
  for (const json& g : calibration["communication"]["collectives"])
    if (g.value("collective", "") == "allreduce" && g.value("nranks", int64_t{0}) == nranks &&
        g.value("nnodes", int64_t{1}) == 1)
      if (const auto curve = measured_curve(g); !curve.empty()) return curve.front().second;
  return 0;
}

// NERSC's tool reads ib_bandwidth and ib_latency even for one node; without an inter-node
// measurement the intra-node allreduce stands in (used by the tool only across nodes).
std::vector<StandIn> inter_node_for_nersc(const json& calibration) {
  if (measured_inter_node(calibration)) return {};
  const auto gpus = measured_gpus_per_node(calibration);
  if (!gpus || *gpus < 2) return {};
  const auto ar = collective_figure(calibration, "allreduce", *gpus, 0);
  if (!ar || !(ar->busbw_gbps > 0)) return {};
  const std::string why = "nothing measured across nodes: the intra-node allreduce at " +
                          std::to_string(*gpus) + " ranks stands in (the tool uses ib_* only across nodes)";
  // Its alpha is 0 where the bus bandwidth falls with size (caches): the smallest size's time then.
  const double alpha_us = ar->alpha_us > 0 ? ar->alpha_us : smallest_size_time_us(calibration, *gpus);
  if (!(alpha_us > 0)) return {};
  return {{"inter_busbw_gbps", format_number(ar->busbw_gbps), why, "nersc"},
          {"inter_alpha_us", format_number(alpha_us),
           why + (ar->alpha_us > 0 ? "" : "; alpha: the time at its smallest size, the fit's alpha being 0"),
           "nersc"}};
}

}  // namespace

std::vector<StandIn> stand_ins_for(const json& calibration, const std::string& p2p_csv,
                                   const std::string& meminfo) {
  std::vector<StandIn> out{
      {"processor_usage", format_number(kProcessorUsage),
       "assumed: the share of compute an overlapped collective takes; no bench measures it", "calculon"}};
  if (auto bw = offload_bandwidth(p2p_csv)) out.push_back(*bw);
  if (auto gib = offload_capacity(meminfo)) out.push_back(*gib);
  for (auto& s : inter_node_for_nersc(calibration)) out.push_back(s);
  return out;
}

ExportSettings settings_for(const std::vector<StandIn>& stand_ins, const std::string& consumer) {
  std::vector<std::string> items;
  for (const StandIn& s : stand_ins)
    if (s.consumer == consumer) items.push_back(s.key + "=" + s.value);
  return ExportSettings::parse(items);
}

std::vector<std::string> stand_in_lines(const std::vector<StandIn>& stand_ins, const std::string& consumer) {
  std::vector<std::string> lines;
  for (const StandIn& s : stand_ins)
    if (s.consumer == consumer) lines.push_back(s.key + " = " + s.value + ": " + s.source);
  return lines;
}

}  // namespace gpucal::calibration
