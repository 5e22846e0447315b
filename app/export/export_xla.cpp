// XLA's GPU performance tables (openxla/xla xla/service/gpu/model/): what a JAX/XLA user points
// --xla_gpu_experimental_matmul_perf_table_path and --xla_gpu_experimental_collective_perf_table_path
// at, made from this calibration instead of the tables XLA ships:
//   <out>/xla/matmul_perf_table.txtpb      xla.GemmPerfTable
//   <out>/xla/collective_perf_table.txtpb  xla.gpu.DeviceHloInstructionProfiles
// written with protobuf's text format from app/import/xla_perf_table.proto (XLA's message names,
// field names and numbers), so `gpucal import` reads them back.
//
// XLA reads them through interpolators that look up grid points and fail on a missing one:
// matmul_interpolator.cc asks the corners of the power-of-two box around a shape (batch 1 to 4;
// m, n, k 256 to 4096), and collective_interpolator.cc a collective's power-of-two transfer sizes
// from 1 KiB to 1 GiB. So every grid point is written: GEMMs from the GEMM surface
// (app/fit/gemm_surface.h; the measured figure where the shape was measured), collectives from
// the communication models (comm_model.h; the measured median where measured); the notes count
// each kind. Collectives: every measured group within one node (XLA's tables are one host's
// devices), as one group of n devices; S and the throughput are XLA's (tensor size / time, the
// tensor being nccl-tests' S).
// The device key is XLA's name for the device (HloOpProfiles::GetDeviceSpecificProfileName:
// sm_90 for Hopper, sm_100_<last word of the name> for Blackwell, the gfx name for AMD), from
// the measured device's name, or --set xla_device_key.
#include <google/protobuf/text_format.h>

#include <array>
#include <cmath>
#include <optional>
#include <map>
#include <set>

#include "app/export/export_common.h"
#include "app/export/export_settings.h"
#include "app/fit/comm_model.h"
#include "app/fit/gemm_surface.h"
#include "app/import/xla_names.h"
#include "app/import/xla_perf_table.pb.h"

namespace gpucal::calibration {

using nlohmann::json;

namespace {

// XLA's device key for a device name; "" when this table does not know it.
std::string xla_key_of(const std::string& name) {
  const auto has = [&](const char* s) { return name.find(s) != std::string::npos; };
  if (has("H100") || has("H200") || has("H800") || has("H20")) return "sm_90";
  if (has("B200") || has("B100") || has("GB200") || has("B300")) {
    const auto space = name.find_last_of(' ');
    return "sm_100_" + (space == std::string::npos ? name : name.substr(space + 1));
  }
  if (has("A100") || has("A800") || has("A30")) return "sm_80";
  if (has("L40") || has("L4") || has("4090") || has("Ada")) return "sm_89";
  if (has("MI355") || has("MI350")) return "gfx950";
  if (has("MI300") || has("MI325")) return "gfx942";
  return "";
}

// gpucal's GEMM dtype -> XLA's type triple as its tables name it; "" for a type XLA's tables lack.
std::string xla_triple(const std::string& dtype) {
  static const std::map<std::string, std::string> triples{
      {"bf16", "bf16xbf16->bf16"},          {"fp16", "f16xf16->f16"},   {"fp32", "f32xf32->f32"},
      {"fp64", "f64xf64->f64"},             {"fp8_e4m3", "f8e4m3fnxf8e4m3fn->bf16"},
      {"fp8_e5m2", "f8e5m2xf8e5m2->bf16"}};
  const auto it = triples.find(dtype);
  return it == triples.end() ? "" : it->second;
}

::xla::PrimitiveType element_type_of(const std::string& dtype) {
  if (dtype == "fp32") return ::xla::F32;
  if (dtype == "bf16") return ::xla::BF16;
  if (dtype == "fp16") return ::xla::F16;
  if (dtype == "fp64") return ::xla::F64;
  if (dtype == "int32") return ::xla::S32;
  if (dtype == "int8") return ::xla::S8;
  return ::xla::PRIMITIVE_TYPE_INVALID;
}

std::string xla_opcode_of(const std::string& collective) {
  for (const auto& [name, opcode] : xla_collective_opcodes())
    if (name == collective) return opcode;
  return "";
}

std::string text_of(const google::protobuf::Message& m) {
  std::string text;
  google::protobuf::TextFormat::Printer printer;
  printer.PrintToString(m, &text);
  return text;
}

// The GEMM table: every dtype with measured shapes, every shape of XLA's grid.
std::string matmul_table(const json& calibration, const std::string& key, ExportReport& report) {
  ::xla::GemmPerfTable table;
  auto* device = table.add_entries();
  device->set_key(key);
  const json gemm = calibration.contains("compute") ? calibration["compute"].value("gemm", json::object()) : json();
  int measured = 0, modelled = 0;
  std::map<std::array<int64_t, 4>, int> entry_of;  // (b, m, n, k) -> its entry: one per shape, every dtype in it
  for (const auto& [dtype, t] : gemm.items()) {
    const std::string triple = xla_triple(dtype);
    if (triple.empty()) {
      report.notes.push_back("gemm " + dtype + " left out: XLA's tables have no such type");
      continue;
    }
    const std::vector<GemmSample> samples = gemm_samples_of(t);
    if (samples.empty()) continue;
    for (int64_t b : {1, 2, 4})
      for (int64_t m = 256; m <= 4096; m *= 2)
        for (int64_t n = 256; n <= 4096; n *= 2)
          for (int64_t k = 256; k <= 4096; k *= 2) {
            const GemmEstimate e = gemm_surface(samples, static_cast<double>(b), static_cast<double>(m),
                                                static_cast<double>(n), static_cast<double>(k));
            (e.rule == "the measured shape" ? measured : modelled) += 1;
            auto [at, fresh] = entry_of.try_emplace({b, m, n, k}, device->value().entries_size());
            if (fresh) {
              auto* added = device->mutable_value()->add_entries();
              added->set_b(b);
              added->set_m(m);
              added->set_n(n);
              added->set_k(k);
            }
            auto* entry = device->mutable_value()->mutable_entries(at->second);
            auto* flops = entry->add_flops();
            flops->set_key(triple);
            flops->set_value(static_cast<int64_t>(std::llround(e.tflops * 1e12)));
          }
    if (dtype.rfind("fp8", 0) == 0)
      report.assumed.push_back("gemm " + dtype + " = " + triple + ": the output type is not recorded per shape");
  }
  if (device->value().entries_size() == 0) return "";
  report.notes.push_back("matmul_perf_table.txtpb: " + std::to_string(measured) + " figure(s) measured at their shape, " +
                         std::to_string(modelled) +
                         " from the GEMM surface (gemm_surface.h) at XLA's grid: batch 1, 2, 4; m, n, k 256 to 4096");
  return text_of(table);
}

// The collective table: every measured group within one node, every power-of-two size XLA looks up.
std::string collective_table(const json& calibration, const std::string& key, ExportReport& report) {
  std::optional<CommModel> model;
  try {
    model.emplace(calibration);
  } catch (const std::invalid_argument&) {
    return "";
  }
  ::xla::DeviceHloInstructionProfiles table;
  auto* device = table.add_entries();
  device->set_key(key);
  int measured = 0, modelled = 0;
  std::set<std::string> done;
  for (const CommGroupInfo& g : model->groups()) {
    const std::string opcode = xla_opcode_of(g.collective);
    const ::xla::PrimitiveType type = element_type_of(g.dtype);
    const int esize = dtype_size_bytes(g.dtype).value_or(0);
    if (opcode.empty() || type == ::xla::PRIMITIVE_TYPE_INVALID || esize == 0) {
      report.notes.push_back(g.key + " left out: XLA's collective table has no " + g.collective + " of " + g.dtype);
      continue;
    }
    if (g.nnodes != 1) {
      report.notes.push_back(g.key + " left out: XLA's collective table holds one host's devices");
      continue;
    }
    if (!done.insert(g.collective + "/" + g.dtype + "/" + std::to_string(g.nranks)).second) continue;
    for (double size = 1024; size <= 1024.0 * 1024 * 1024; size *= 2) {
      // The shape is the instruction's output: S / n elements for reduce-scatter, else S.
      const double elements = size / esize / (g.collective == "reduce_scatter" ? static_cast<double>(g.nranks) : 1.0);
      if (elements < 1 || elements != std::floor(elements)) continue;
      const CommPrediction p = model->predict({.collective = g.collective,
                                               .nranks = g.nranks,
                                               .nnodes = 1,
                                               .ranks_per_node = g.nranks,
                                               .size_bytes = size,
                                               .dtype = g.dtype});
      (p.form == "measured" ? measured : modelled) += 1;
      auto* profile = device->mutable_value()->add_entries();
      auto* instr = profile->mutable_instruction();
      instr->set_name("_");
      instr->set_opcode(opcode);
      instr->mutable_shape()->set_element_type(type);
      instr->mutable_shape()->add_dimensions(static_cast<int64_t>(elements));
      instr->mutable_shape()->add_is_dynamic_dimension(false);
      instr->set_channel_id(1);
      instr->set_use_global_device_ids(true);
      auto* groups = instr->mutable_iota_collective_device_list();
      groups->set_num_replica_groups(1);
      groups->set_num_devices_per_group(g.nranks);
      groups->add_iota_reshape_dims(g.nranks);
      groups->add_iota_transpose_perm(0);
      profile->set_network_throughput_bytes_per_sec(static_cast<int64_t>(std::llround(size / p.time_s)));
    }
  }
  if (device->value().entries_size() == 0) return "";
  report.notes.push_back("collective_perf_table.txtpb: " + std::to_string(measured) + " size(s) measured, " +
                         std::to_string(modelled) +
                         " from the communication models, at every power of two from 1 KiB to 1 GiB (XLA's "
                         "lookup range), one group of n devices each");
  return text_of(table);
}

}  // namespace

ExportReport export_xla(const json& calibration, const ExportSettings& settings, const std::string& out_dir) {
  ExportReport report;
  report.consumer = "xla";
  std::string key;
  if (const auto w = settings.word("xla_device_key")) {
    key = *w;
  } else {
    const std::string name = calibration_device_name(calibration);
    key = xla_key_of(name);
    if (key.empty())
      report.refused.push_back("device key: XLA names its tables by device (sm_90, sm_100_B200, gfx950, ...) and '" +
                               (name.empty() ? std::string("(no device name)") : name) +
                               "' is not one gpucal knows: pass --set xla_device_key=KEY");
    else
      report.assumed.push_back("xla_device_key = " + key + ": from the device name '" + name + "'");
  }
  std::vector<std::pair<std::string, std::string>> files;
  if (report.refused.empty()) {
    const std::string matmul = matmul_table(calibration, key, report);
    const std::string collectives = collective_table(calibration, key, report);
    if (!matmul.empty()) files.emplace_back("matmul_perf_table.txtpb", matmul);
    if (!collectives.empty()) files.emplace_back("collective_perf_table.txtpb", collectives);
    if (files.empty())
      report.refused.push_back(
          "matmul_perf_table.txtpb, collective_perf_table.txtpb: no GEMM shape (compute.gemm) and no collective "
          "group within one node (communication.collectives) to write: run bench_gemm or bench_collectives "
          "(gpucal run --suite calibration)");
  }
  write_export(report, out_dir, files);
  return report;
}

}  // namespace gpucal::calibration
