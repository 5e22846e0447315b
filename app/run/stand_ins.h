// Figures an export needs that no bench of the run measured, supplied by `gpucal run` so that a
// one-node run writes every export. Each is a `gpucal export --set` value with where it comes
// from; summary.md lists them and each export's NOTES.md names the --set key it took. Rerun
// `gpucal export --set KEY=VALUE` with the figure of the machine you model to replace one.
//   processor_usage   (Calculon) no bench measures it: kProcessorUsage, assumed;
//   offload_gbps      (Calculon) the best host-to-device copy (bench_p2p copy h2d; on the host
//                     backend its host-memory copy, h2h);
//   offload_gib       (Calculon) this machine's memory (/proc/meminfo MemTotal);
//   inter_busbw_gbps, inter_alpha_us
//                     (NERSC only, which reads ib_* even for one node) when nothing was measured
//                     across nodes: the intra-node allreduce's bus bandwidth and alpha.
#pragma once
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/export/export_settings.h"

namespace gpucal::calibration {

constexpr double kProcessorUsage = 0.05;

struct StandIn {
  std::string key, value;  // an ExportSettings key and its value
  std::string source;      // where the value comes from, in words
  std::string consumer;    // the export that takes it
};

// `p2p_csv`: the run's p2p.csv (may be absent); `meminfo`: /proc/meminfo's text (may be empty).
std::vector<StandIn> stand_ins_for(const nlohmann::json& calibration, const std::string& p2p_csv,
                                   const std::string& meminfo);

// The settings one consumer's export takes from the stand-ins.
ExportSettings settings_for(const std::vector<StandIn>& stand_ins, const std::string& consumer);

// "key = value: source" lines of the stand-ins `consumer` took, for its NOTES.md and summary.md.
std::vector<std::string> stand_in_lines(const std::vector<StandIn>& stand_ins, const std::string& consumer);

}  // namespace gpucal::calibration
