#include "tests/calibration/conformance_readers.h"

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <sstream>

#include "tests/calibration/test_util.h"

namespace gpucal::calibration::testing {

using nlohmann::json;
namespace fs = std::filesystem;

void expect_calculon_processor(const json& p, const char* what) {
  ASSERT_TRUE(p.is_object() && !p.empty()) << what;
  for (const auto& [dtype, entry] : p.items()) {
    EXPECT_TRUE(std::set<std::string>({"float8", "float16", "float32", "bfloat16"}).count(dtype)) << dtype;
    ASSERT_TRUE(entry["tflops"].is_number()) << what << "." << dtype;
    EXPECT_GT(entry["tflops"].get<double>(), 0);
    const json& table = entry["gflops_efficiency"];
    ASSERT_TRUE(table.is_array() && !table.empty()) << what;
    for (std::size_t i = 0; i < table.size(); ++i) {
      ASSERT_TRUE(table[i].is_array() && table[i].size() == 2 && table[i][0].is_number() &&
                  table[i][1].is_number());
      EXPECT_GT(table[i][1].get<double>(), 0.0);
      EXPECT_LE(table[i][1].get<double>(), 1.0);
      if (i) EXPECT_LT(table[i][0].get<double>(), table[i - 1][0].get<double>());
    }
    EXPECT_EQ(table.back()[0].get<double>(), 0.0);
  }
}

void expect_calculon_memory(const json& m, const char* what) {
  ASSERT_TRUE(m.is_object()) << what;
  for (const char* key : {"GiB", "GBps"}) {
    ASSERT_TRUE(m[key].is_number()) << what << "." << key;
    EXPECT_GT(m[key].get<double>(), 0) << what << "." << key;  // mem2.GBps divides every offload time
  }
  const json& table = m["MB_efficiency"];
  ASSERT_TRUE(table.is_array() && !table.empty());
  for (const json& row : table) {
    ASSERT_TRUE(row.is_array() && row.size() == 2 && row[0].is_number() && row[1].is_number());
    EXPECT_GT(row[1].get<double>(), 0.0);
    EXPECT_LE(row[1].get<double>(), 1.0);
  }
  EXPECT_EQ(table.back()[0].get<double>(), 0.0);
}

void expect_calculon_network(const json& net) {
  // network.py: assert Network.kKeys == set(cfg.keys())
  std::set<std::string> keys;
  for (const auto& [k, v] : net.items()) keys.insert(k);
  EXPECT_EQ(keys, (std::set<std::string>{"bandwidth", "efficiency", "size", "latency", "ops",
                                         "must_be_filled", "processor_usage"}));
  EXPECT_GT(net["bandwidth"].get<double>(), 0);
  EXPECT_GT(net["efficiency"].get<double>(), 0);
  EXPECT_LE(net["efficiency"].get<double>(), 1);
  EXPECT_TRUE(net["size"].is_number_integer());
  EXPECT_TRUE(net["latency"].is_number());
  EXPECT_TRUE(net["must_be_filled"].is_boolean());
  EXPECT_GE(net["processor_usage"].get<double>(), 0);
  EXPECT_LT(net["processor_usage"].get<double>(), 1);
  std::set<std::string> ops;
  for (const auto& [op, v] : net["ops"].items()) {
    ops.insert(op);
    ASSERT_TRUE(v.is_array() && v.size() == 2) << op;
    EXPECT_GT(v[0].get<double>(), 0) << op;
    if (op == "p2p")
      EXPECT_TRUE(v[1].is_null()) << "p2p takes no offset";
    else
      EXPECT_TRUE(v[1].is_number()) << op << " needs an offset";
  }
  EXPECT_EQ(ops, (std::set<std::string>{"p2p", "reduce_scatter", "all_gather", "all_reduce"}));
}

void expect_calculon_system(const json& s) {
  expect_calculon_processor(s["matrix"], "matrix");
  expect_calculon_processor(s["vector"], "vector");
  for (const auto& [dtype, v] : s["matrix"].items()) EXPECT_TRUE(s["vector"].contains(dtype)) << dtype;
  expect_calculon_memory(s["mem1"], "mem1");
  expect_calculon_memory(s["mem2"], "mem2");
  EXPECT_TRUE(s["processing_mode"] == "roofline" || s["processing_mode"] == "no_overlap");
  ASSERT_TRUE(s["networks"].is_array() && !s["networks"].empty());
  for (const json& net : s["networks"]) expect_calculon_network(net);
}

AstraSimNetwork parse_as_astrasim(const std::string& path) {
  const YAML::Node yml = YAML::LoadFile(path);
  AstraSimNetwork n;
  n.topology = yml["topology"].as<std::vector<std::string>>();
  n.npus = yml["npus_count"].as<std::vector<int>>();
  n.bandwidth_gibps = yml["bandwidth"].as<std::vector<double>>();
  n.latency_ns = yml["latency"].as<std::vector<double>>();
  return n;
}

void expect_astrasim_network(const AstraSimNetwork& n) {
  ASSERT_FALSE(n.topology.empty());
  EXPECT_EQ(n.npus.size(), n.topology.size());
  EXPECT_EQ(n.bandwidth_gibps.size(), n.topology.size());
  EXPECT_EQ(n.latency_ns.size(), n.topology.size());
  for (const auto& t : n.topology) EXPECT_TRUE(t == "Ring" || t == "Switch" || t == "FullyConnected") << t;
  for (int c : n.npus) EXPECT_GT(c, 1);
  for (double b : n.bandwidth_gibps) EXPECT_GT(b, 0);
  for (double l : n.latency_ns) EXPECT_GE(l, 0);
}

void expect_astrasim_system(const json& j, std::size_t dims) {
  // Sys::initialize_sys assigns these to typed variables (string / vector<string> / int / double).
  EXPECT_TRUE(
      std::set<std::string>({"LIFO", "FIFO", "EXPLICIT"}).count(j["scheduling-policy"].get<std::string>()));
  for (const char* key : {"all-reduce-implementation", "all-gather-implementation",
                          "reduce-scatter-implementation", "all-to-all-implementation"}) {
    const auto impls = j[key].get<std::vector<std::string>>();
    EXPECT_EQ(impls.size(), dims) << key;
    for (const auto& impl : impls) EXPECT_EQ(impl, "ring") << key;
  }
  EXPECT_TRUE(j["collective-optimization"] == "baseline" || j["collective-optimization"] == "localBWAware");
  for (const char* key : {"active-chunks-per-dimension", "endpoint-delay", "preferred-dataset-splits",
                          "roofline-enabled", "boost-mode"})
    EXPECT_TRUE(j[key].is_number_integer()) << key;
  for (const char* key : {"peak-perf", "local-mem-bw"}) {
    ASSERT_TRUE(j[key].is_number()) << key << " = " << j[key].dump();  // a null aborts: type must be number
    EXPECT_GT(j[key].get<double>(), 0);
  }
}

void expect_nersc_system(const json& s) {
  // The keys of the tool's systems/config-*.json that its code reads (vector_flops_fp32 is never read).
  for (const char* key :
       {"matrix_flops_fp16", "vector_flops_fp16", "hbm_bandwidth", "hbm_capacity", "nvlink_bandwidth",
        "nvlink_eff", "nvlink_latency", "ib_bandwidth", "ib_eff", "ib_latency", "nvlink_size", "nic_factor",
        "summa_nb", "element_size", "mask_element_size", "flops_units"}) {
    ASSERT_TRUE(s.contains(key)) << key;
    EXPECT_TRUE(s[key].is_number()) << key << " = " << s[key].dump();
  }
  EXPECT_TRUE(s["empirical"].is_boolean());
  EXPECT_EQ(s["empirical"], false);  // true makes __init__ open a file the tool does not ship
  EXPECT_TRUE(s["nvlink_size"].is_number_integer());
  EXPECT_TRUE(s["summa_nb"].is_number_integer());
}

VTrainLut read_lut_as_vtrain_does(const std::string& path) {
  std::istringstream in(read_text(path));
  std::string line;
  std::getline(in, line);  // readlines()[1:]
  VTrainLut lut;
  while (std::getline(in, line)) {
    std::vector<std::string> info;
    std::stringstream ss(line);
    for (std::string cell; std::getline(ss, cell, ',');) info.push_back(cell);
    EXPECT_GE(info.size(), 3u) << line;
    if (info.size() < 3) continue;
    // int(info[0]) and int(info[-2]): plain integers, nothing like "5760538.5"
    for (const std::string* cell : {&info[0], &info[info.size() - 2]}) {
      EXPECT_FALSE(cell->empty());
      EXPECT_EQ(cell->find_first_not_of("0123456789"), std::string::npos) << "not an int: " << *cell;
    }
    lut.rows[std::stoll(info[0]) / 1024 / 1024] = {std::stoll(info[info.size() - 2]), std::stod(info.back())};
  }
  return lut;
}

std::map<int, VTrainLut> read_vtrain_tables(const json& config) {
  std::map<int, VTrainLut> tables;
  // base_dir = trace_path / gpu_name.lower(); files ending in "_LUT"; GPU count = split("_")[1][3:]
  const std::string gpu = config["gpu_name"];
  std::string lowered = gpu;
  std::transform(lowered.begin(), lowered.end(), lowered.begin(), ::tolower);
  EXPECT_EQ(gpu, lowered);
  const fs::path base = fs::path(config["trace_path"].get<std::string>()) / lowered;
  EXPECT_TRUE(fs::is_directory(base)) << base;
  if (!fs::is_directory(base)) return tables;
  for (const auto& entry : fs::directory_iterator(base)) {
    const std::string name = entry.path().filename().string();
    if (name.size() < 4 || name.substr(name.size() - 4) != "_LUT") continue;
    const auto first = name.find('_'), second = name.find('_', first + 1);
    const std::string field = name.substr(first + 1, second - first - 1);
    EXPECT_EQ(field.rfind("GPU", 0), 0u) << name;
    const VTrainLut lut = read_lut_as_vtrain_does(entry.path().string());
    // compute_comm_time looks up round(size / 2^20) and falls back on the 1024 MiB row.
    EXPECT_EQ(lut.rows.size(), 1024u) << name;
    if (!lut.rows.empty()) {
      EXPECT_EQ(lut.rows.begin()->first, 1) << name;
      EXPECT_EQ(lut.rows.rbegin()->first, 1024) << name;
    }
    tables[std::stoi(field.substr(3))] = lut;
  }
  return tables;
}

void expect_vtrain_config_keys(const json& config) {
  const std::set<std::string> arguments{"num_gpus",
                                        "tensor_parallel_size",
                                        "data_parallel_size",
                                        "pipeline_parallel_size",
                                        "gpu_name",
                                        "global_batch_size",
                                        "micro_batch_size",
                                        "model_arch",
                                        "num_layers",
                                        "hidden_size",
                                        "num_attention_heads",
                                        "max_length",
                                        "vocab_size",
                                        "use_gradient_bucket",
                                        "use_checkpoint",
                                        "ddp_bucket_size",
                                        "inter_node_bandwidth",
                                        "intra_node_bandwidth",
                                        "pipeline_scheduling",
                                        "node_size",
                                        "trace_path"};
  for (const auto& [key, value] : config.items()) EXPECT_TRUE(arguments.count(key)) << key;
}

}  // namespace gpucal::calibration::testing
