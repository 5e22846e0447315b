// A calibration.json document with exactly known ground truth for the exporter conformance tests
// (test_conformance_*.cpp): a node of 8 GPUs, two such nodes for the inter-node groups, α–β
// collectives per (collective, group size), p2p, a d2d copy table, bf16/fp32 GEMM shapes and
// sidecar metadata. Each test exports it and evaluates the consumer's own formula (as read in
// the consumer's code, cited in each test) on the exported values against this truth.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

namespace gpucal::calibration::testing {

constexpr int kGpusPerNode = 8;
constexpr double kCopyGbps = 3000.0;  // d2d copy plateau, read + write
constexpr double kDeviceMemoryGiB = 80.0;
constexpr const char* kDeviceName = "NVIDIA H100 80GB HBM3";

// α (µs) and bus bandwidth (GB/s) of a collective; inter-node groups are 16 ranks on 2 nodes.
struct CommTruth {
  double alpha_us, busbw_gbps;
};
CommTruth comm_truth(const std::string& collective, int nranks, bool spans_nodes);
// One-way p2p (sendrecv) truth.
CommTruth p2p_truth(bool spans_nodes);
// Bus factor of nccl-tests: allreduce 2(n-1)/n, allgather / reduce_scatter (n-1)/n.
double bus_factor(const std::string& collective, int nranks);
// Measured time of a collective at size S (the truth, as the document's points carry it).
double truth_time_us(const std::string& collective, int nranks, bool spans_nodes, double size_bytes);

// bf16 GEMM truth: achieved TFLOP/s of an m×n×k shape.
double gemm_truth_tflops(double m, double n, double k);

// The document. With inter_node = false it has no spans_nodes = 1 group.
nlohmann::json conformance_calibration(bool inter_node = true);

// Every --set a full export needs besides the document (figures no bench in it measures).
std::vector<std::string> conformance_settings();

}  // namespace gpucal::calibration::testing
