// Each consumer's reading of our export files, as read in its code (cited per function), with
// gtest assertions on what that code requires: shared by the exporter conformance tests
// (test_conformance_*.cpp, which add the consumers' formulas against known truth) and the smoke
// run test (test_smoke_run.cpp, on a real run's exports).
#pragma once
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace gpucal::calibration::testing {

// Calculon (calculon-ai/calculon caa4b11): processor.py {dtype: {tflops, gflops_efficiency}},
// thresholds descending to 0, 0 < eff <= 1; memory.py {GiB, GBps > 0, MB_efficiency covering 0};
// network.py Network.kKeys exactly, ops p2p [scalar, null] and the others [scalar, offset].
void expect_calculon_processor(const nlohmann::json& p, const char* what);
void expect_calculon_memory(const nlohmann::json& m, const char* what);
void expect_calculon_network(const nlohmann::json& net);
// Every section system.py reads: matrix, vector (each matrix dtype), mem1, mem2,
// processing_mode, networks (each a network).
void expect_calculon_system(const nlohmann::json& system);

// ASTRA-sim (c0cf6d6) NetworkParser::parse_network_config_yml (yaml-cpp, as the backend) and
// check_validity: one entry per dimension, a known topology, npus_count > 1, bandwidth > 0,
// latency >= 0.
struct AstraSimNetwork {
  std::vector<std::string> topology;
  std::vector<int> npus;
  std::vector<double> bandwidth_gibps, latency_ns;
};
AstraSimNetwork parse_as_astrasim(const std::string& yml_path);
void expect_astrasim_network(const AstraSimNetwork& network);
// Sys::initialize_sys's typed reads of system.json (a null aborts), `dims` implementations each.
void expect_astrasim_system(const nlohmann::json& system, std::size_t dims);

// NERSC transformer-perf-estimates (54278b0): every key its code reads is a number (ib_* even for
// one node), empirical false, nvlink_size and summa_nb integers.
void expect_nersc_system(const nlohmann::json& system);

// vTrain (f8dda84) get_allreduce_LUT's reading of one table: {size // 2^20: (int time ns, busbw)}.
struct VTrainLut {
  std::map<long long, std::pair<long long, double>> rows;
};
VTrainLut read_lut_as_vtrain_does(const std::string& path);
// The tables where the loader looks (<trace_path>/<gpu_name lowercased>/*_LUT, GPU count from the
// name), each with every 1 MiB row from 1 to 1024 MiB; returns {GPU count: table}.
std::map<int, VTrainLut> read_vtrain_tables(const nlohmann::json& system_config);
// system_config.json holds only vTrainConfig keyword arguments.
void expect_vtrain_config_keys(const nlohmann::json& system_config);

}  // namespace gpucal::calibration::testing
