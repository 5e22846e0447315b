#include "app/export/export_settings.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <stdexcept>

#include "core/driver/sweep.h"

namespace gpucal::calibration {

const std::vector<ExportSettingSpec>& export_setting_specs() {
  using K = SettingKind;
  static const std::vector<ExportSettingSpec> specs{
      {"memory_gbps", K::kPositive, "GB/s (read + write bytes, STREAM's count)",
       "Calculon mem1.GBps, NERSC hbm_bandwidth, ASTRA-sim local-mem-bw"},
      {"memory_gib", K::kPositive, "GiB", "Calculon mem1.GiB, NERSC hbm_capacity (written in GB)"},
      {"offload_gbps", K::kPositive, "GB/s",
       "Calculon mem2.GBps (the offload tier: host memory over the host link)"},
      {"offload_gib", K::kPositive, "GiB", "Calculon mem2.GiB"},
      {"vector_tflops", K::kPositive, "TFLOP/s", "Calculon vector.<dtype>.tflops, NERSC vector_flops_fp16"},
      {"processor_usage", K::kFraction, "fraction of the processor",
       "Calculon networks[].processor_usage (compute a collective takes while overlapped)"},
      {"gpus_per_node", K::kCount, "GPUs",
       "the intra-node tier: Calculon networks[0].size, ASTRA-sim npus_count[0], NERSC nvlink_size, vTrain "
       "node_size"},
      {"nodes", K::kCount, "nodes",
       "the modelled machine: Calculon networks[1].size = nodes x gpus_per_node, ASTRA-sim npus_count[1] (1: one "
       "dimension, no inter-node figure used)"},
      {"intra_group", K::kCount, "GPUs",
       "group size the intra-node collective figures are taken at (default gpus_per_node)"},
      {"inter_group", K::kCount, "GPUs",
       "group size the inter-node collective figures are taken at (default: Calculon the modelled machine, nodes x gpus_per_node; others the measured inter-node group)"},
      {"comm_bytes", K::kBytes, "bytes",
       "the message size the modelled collectives have: the alpha-beta exported to Calculon, NERSC and "
       "ASTRA-sim "
       "is the measured curve's secant there (default: collectives the line through the two largest measured "
       "sizes, p2p a fit over every size >= 1 MiB)"},
      {"inter_busbw_gbps", K::kPositive, "GB/s (allreduce bus bandwidth across nodes)",
       "an inter-node tier by hand when none was measured: Calculon networks[1], NERSC ib_bandwidth, "
       "ASTRA-sim "
       "dimension 1"},
      {"inter_alpha_us", K::kPositive, "µs", "its latency (allreduce α across nodes)"},
      {"nic_factor", K::kPositive, "NICs per GPU", "NERSC nic_factor"},
      {"nersc_comm_op",
       K::kWord,
       "collective",
       "which measured collective NERSC's one-node formula reproduces (it has no x2 for allreduce): "
       "allgather_reducescatter (default: an allgather and a reduce-scatter of one volume together), "
       "allgather, allreduce",
       {"allgather_reducescatter", "allgather", "allreduce"}},
      {"vtrain_gpu_name", K::kText, "name",
       "vTrain gpu_name and the LUT folder <trace_path>/<name lowercased>/"},
      {"xla_device_key", K::kText, "key",
       "XLA's name of the device in its perf tables (sm_90, sm_100_B200, gfx950, ...; default from the device name)"},
  };
  return specs;
}

namespace {

constexpr double kMinFigure = 1e-6, kMaxFigure = 1e9;

const ExportSettingSpec* find_spec(const std::string& key) {
  for (const auto& s : export_setting_specs())
    if (s.key == key) return &s;
  return nullptr;
}

std::string known_keys() {
  std::string out;
  for (const auto& s : export_setting_specs()) out += (out.empty() ? "" : ", ") + s.key;
  return out;
}

void check_value(const ExportSettingSpec& spec, const std::string& item, const std::string& value) {
  auto fail = [&](const std::string& why) { throw std::invalid_argument("--set " + item + ": " + why); };
  if (spec.kind == SettingKind::kWord) {
    if (std::find(spec.words.begin(), spec.words.end(), value) == spec.words.end()) {
      std::string allowed;
      for (const auto& w : spec.words) allowed += (allowed.empty() ? "" : " | ") + w;
      fail("expected " + allowed);
    }
    return;
  }
  if (spec.kind == SettingKind::kText) {
    const bool ok = !value.empty() && std::all_of(value.begin(), value.end(), [](unsigned char c) {
      return std::isalnum(c) || c == '.' || c == '_' || c == '-';
    });
    if (!ok) fail("expected a name of letters, digits, '.', '_' or '-'");
    // The name becomes a folder inside the export: "." and ".." would name the export's own
    // folder or the one above it.
    if (value.find_first_not_of('.') == std::string::npos) fail("expected a name, not '" + value + "' (a folder is named after it)");
    return;
  }
  if (spec.kind == SettingKind::kBytes) {
    try {
      parse_size(value, "set " + spec.key, {.min = 1});  // parse_size adds the "--"
    } catch (const std::exception& e) {
      fail(std::string("expected a size in bytes from 1 to 2^52, suffixes K M G T (") + e.what() + ")");
    }
    return;
  }
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(value, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != value.size() || value.empty() || !std::isfinite(v)) fail("not a number");
  if (spec.kind == SettingKind::kFraction && !(v >= 0 && v < 1)) fail("expected a fraction, 0 <= value < 1");
  // No machine has a figure outside [1e-6, 1e9] in these units: 1e308 or 1e-300 is a typo.
  if (spec.kind == SettingKind::kPositive && !(v >= kMinFigure && v <= kMaxFigure))
    fail("expected a number from 1e-6 to 1e9 (" + spec.unit + ")");
  if (spec.kind == SettingKind::kCount && !(v >= 1 && v == std::floor(v) && v < 1e9))
    fail("expected an integer >= 1");
}

}  // namespace

ExportSettings ExportSettings::parse(const std::vector<std::string>& items) {
  ExportSettings settings;
  for (const std::string& item : items) {
    const auto eq = item.find('=');
    if (eq == std::string::npos || eq == 0)
      throw std::invalid_argument("--set " + item + ": expected KEY=VALUE (keys: " + known_keys() + ")");
    const std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    const ExportSettingSpec* spec = find_spec(key);
    if (!spec)
      throw std::invalid_argument("--set " + item + ": unknown key '" + key + "' (keys: " + known_keys() +
                                  ")");
    check_value(*spec, item, value);
    if (!settings.values_.emplace(key, value).second)
      throw std::invalid_argument("--set " + item + ": '" + key + "' given twice");
  }
  return settings;
}

std::optional<double> ExportSettings::number(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  const ExportSettingSpec* spec = find_spec(key);
  if (spec && spec->kind == SettingKind::kBytes) return static_cast<double>(parse_size(it->second, "set " + key));
  return std::stod(it->second);
}

std::optional<std::string> ExportSettings::word(const std::string& key) const {
  const auto it = values_.find(key);
  if (it == values_.end()) return std::nullopt;
  return it->second;
}

std::string missing_figure(const std::string& field, const std::string& why, const std::string& run,
                           const std::string& key, const std::string& example) {
  std::string line = field + ": " + why + ";";
  if (!run.empty()) line += " measure it with " + run + (key.empty() ? "" : ",");
  if (!key.empty()) line += (run.empty() ? " pass --set " : " or pass --set ") + key + "=" + example;
  return line;
}

}  // namespace gpucal::calibration
