#include "tests/calibration/synthetic_results.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <stdexcept>
#include <vector>

namespace gpucal::calibration::testing {

namespace fs = std::filesystem;

namespace {

const std::vector<std::string> kCommon{"schema_version", "bench", "impl", "backend", "device", "point", "status",
                                       "status_detail", "regime", "samples", "time_us_median", "time_us_p10",
                                       "time_us_p90", "time_us_min", "time_us_max", "time_us_mean", "time_us_stdev",
                                       "verified", "max_rel_err"};

std::string num(double v) {
  std::ostringstream s;
  s.precision(12);
  s << v;
  return s.str();
}

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  const double pos = q * static_cast<double>(v.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(pos));
  const auto hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - static_cast<double>(lo)) * (v[hi] - v[lo]);
}

class BenchWriter {
 public:
  BenchWriter(const std::string& dir, const std::string& bench, std::vector<std::string> extra,
              const SyntheticOptions& o, std::mt19937& rng)
      : dir_(dir), bench_(bench), options_(o), rng_(rng) {
    columns_ = kCommon;
    columns_.insert(columns_.end(), extra.begin(), extra.end());
  }
  // Adds a row whose true time is `time_us`; `extra` fills the bench-specific columns, and
  // may use "{time}"-dependent values through the callback after sampling.
  void add(const std::string& point, double time_us, std::map<std::string, std::string> extra,
           const std::function<void(double median_us, std::map<std::string, std::string>&)>& derived = nullptr) {
    double t = time_us * options_.time_scale;
    if (point == options_.slow_point) t *= options_.slow_factor;
    std::normal_distribution<double> noise(0.0, options_.noise);
    std::vector<double> samples;
    for (int i = 0; i < options_.samples; ++i) samples.push_back(t * std::max(0.5, 1.0 + noise(rng_)));
    double mean = 0, var = 0;
    for (double s : samples) mean += s / static_cast<double>(samples.size());
    for (double s : samples) var += (s - mean) * (s - mean) / static_cast<double>(samples.size() - 1);
    const double median = quantile(samples, 0.5);
    std::map<std::string, std::string> row{{"schema_version", "1"}, {"bench", bench_}, {"impl", "synthetic"},
                                           {"backend", "host"}, {"device", options_.device}, {"point", point},
                                           {"status", "ok"}, {"status_detail", ""}, {"regime", "hot"},
                                           {"samples", std::to_string(samples.size())},
                                           {"time_us_median", num(median)}, {"time_us_p10", num(quantile(samples, 0.1))},
                                           {"time_us_p90", num(quantile(samples, 0.9))},
                                           {"time_us_min", num(*std::min_element(samples.begin(), samples.end()))},
                                           {"time_us_max", num(*std::max_element(samples.begin(), samples.end()))},
                                           {"time_us_mean", num(mean)}, {"time_us_stdev", num(std::sqrt(var))},
                                           {"verified", "ok"}, {"max_rel_err", "0"}};
    for (auto& [k, v] : extra) row[k] = v;
    if (derived) derived(median, row);
    rows_.push_back(row);
    for (std::size_t i = 0; i < samples.size(); ++i)
      samples_csv_ << "\"" << point << "\"," << i << "," << num(samples[i]) << "\n";
  }
  void write() const {
    std::ofstream csv(fs::path(dir_) / (bench_ + ".csv"));
    for (std::size_t c = 0; c < columns_.size(); ++c) csv << (c ? "," : "") << columns_[c];
    csv << "\n";
    for (const auto& row : rows_) {
      for (std::size_t c = 0; c < columns_.size(); ++c) {
        auto it = row.find(columns_[c]);
        const std::string v = it == row.end() ? "" : it->second;
        csv << (c ? "," : "") << (v.find_first_of(",\"") != std::string::npos ? "\"" + v + "\"" : v);
      }
      csv << "\n";
    }
    if (options_.write_samples) {
      std::ofstream samples(fs::path(dir_) / (bench_ + ".samples.csv"));
      samples << "point,sample,time_us\n" << samples_csv_.str();
    }
    nlohmann::json sidecar{{"bench", bench_},
                           {"timestamp", "2024-01-01T00:00:00Z"},
                           {"device", {{"name", options_.device}, {"memory_bytes", 80.0 * (1ull << 30)}}},
                           {"versions", {{"driver", options_.driver_version}, {"nccl", "2.21.5"}}}};
    sidecar.update(extra_sidecar);
    std::ofstream(fs::path(dir_) / (bench_ + ".json")) << sidecar.dump(2);
  }

 private:
  std::string dir_, bench_;
  const SyntheticOptions& options_;
  std::mt19937& rng_;
  std::vector<std::string> columns_;
  std::vector<std::map<std::string, std::string>> rows_;
  std::ostringstream samples_csv_;

 public:
  nlohmann::json extra_sidecar = nlohmann::json::object();  // bench-specific sidecar keys
};

}  // namespace

std::string synthetic_gemm_point() { return "gemm/synthetic/bf16/NN/m4096/n4096/k4096/b1/hot"; }

namespace {

// Each bench's CSV in turn, from one generator: the order of the calls fixes every sample.

// gemm.csv: bf16 and fp32 GEMMs, small ones less efficient.
void write_gemm(const std::string& dir, const SyntheticOptions& o, std::mt19937& rng) {
  BenchWriter gemm(dir, "gemm", {"dtype", "compute_type", "out_dtype", "layout", "m", "n", "k", "batch", "alpha",
                                 "beta", "flops", "bytes", "tflops", "peak_tflops", "efficiency",
                                 "arith_intensity_flop_per_byte", "roofline_bound", "roofline_time_us"},
                   o, rng);
  for (const auto& [dtype, peak] : std::vector<std::pair<std::string, double>>{{"bf16", kBf16PeakTflops}, {"fp32", 60.0}})
    for (int m : {256, 1024, 4096})
      for (int n : {256, 1024, 4096})
        for (int k : {1024, 4096}) {
          const double flops = 2.0 * m * n * k;
          const double eff = 0.9 * flops / (flops + 5e9);  // small GEMMs are less efficient
          const double time_us = flops / (peak * eff * 1e6);
          const std::string point = "gemm/synthetic/" + dtype + "/NN/m" + std::to_string(m) + "/n" +
                                    std::to_string(n) + "/k" + std::to_string(k) + "/b1/hot";
          const double bytes = (dtype == "bf16" ? 2.0 : 4.0) * (1.0 * m * k + 1.0 * k * n + 1.0 * m * n);
          gemm.add(point, time_us,
                   {{"dtype", dtype}, {"compute_type", "fp32"}, {"out_dtype", dtype}, {"layout", "NN"},
                    {"m", std::to_string(m)}, {"n", std::to_string(n)}, {"k", std::to_string(k)}, {"batch", "1"},
                    {"alpha", "1"}, {"beta", "0"}, {"flops", num(flops)}, {"bytes", num(bytes)},
                    {"peak_tflops", num(peak)}, {"arith_intensity_flop_per_byte", num(flops / bytes)},
                    {"roofline_bound", "compute"}, {"roofline_time_us", num(flops / (peak * 1e6))}},
                   [flops, peak](double median, std::map<std::string, std::string>& row) {
                     const double tflops = flops / (median * 1e6);
                     row["tflops"] = num(tflops);
                     row["efficiency"] = num(tflops / peak);
                   });
        }
  gemm.write();
}

// attention.csv: FA2-convention forward passes, rising with the sequence length.
void write_attention(const std::string& dir, const SyntheticOptions& o, std::mt19937& rng) {
  BenchWriter attention(dir, "attention", {"dtype", "layout", "pass", "batch", "heads", "kv_heads", "seq_q", "seq_kv",
                                           "head_dim", "causal", "flop_convention", "flops", "tflops",
                                           "peak_tflops", "efficiency"},
                        o, rng);
  for (int d : {64, 128})
    for (int s : {512, 1024, 2048, 4096}) {
      const double flops = 4.0 * 1 * 16 * s * s * d;  // FA2 forward convention, b=1, h=16
      const double tflops = 500.0 * s / (s + 1000.0) * (d == 128 ? 1.0 : 0.8);
      attention.add("attention/synthetic/bf16/fwd/b1/h16/s" + std::to_string(s) + "/d" + std::to_string(d) + "/hot",
                    flops / (tflops * 1e6),
                    {{"dtype", "bf16"}, {"layout", "BSHD"}, {"pass", "fwd"}, {"batch", "1"}, {"heads", "16"},
                     {"kv_heads", "16"}, {"seq_q", std::to_string(s)}, {"seq_kv", std::to_string(s)},
                     {"head_dim", std::to_string(d)}, {"causal", "0"}, {"flop_convention", "fa2"},
                     {"flops", num(flops)}, {"peak_tflops", num(kBf16PeakTflops)}},
                    [flops](double median, std::map<std::string, std::string>& row) {
                      row["tflops"] = num(flops / (median * 1e6));
                      row["efficiency"] = num(flops / (median * 1e6) / kBf16PeakTflops);
                    });
    }
  attention.write();
}

// collectives.csv: alpha-beta groups within a node and across two nodes.
void write_collectives(const std::string& dir, const SyntheticOptions& o, std::mt19937& rng) {
  BenchWriter coll(dir, "collectives", {"collective", "dtype", "op", "in_place", "root", "nranks", "nnodes",
                                        "ranks_per_node", "spans_nodes", "size_bytes", "count", "algbw_gbps",
                                        "busbw_gbps", "bus_factor", "wrong"},
                   o, rng);
  struct Group { std::string collective, dtype; int nranks, nnodes; double alpha, beta; };
  const std::vector<Group> groups{{"allreduce", "fp32", 2, 1, kIntraAlphaUs, kIntraBetaGbps},
                                  {"allreduce", "fp32", 4, 1, kIntraAlphaUs, kIntraBetaGbps},
                                  {"allgather", "bf16", 4, 1, 8.0, 120.0},
                                  {"allreduce", "fp32", 8, 2, kInterAlphaUs, kInterBetaGbps}};
  for (const Group& g : groups) {
    const double factor = g.collective == "allreduce" ? 2.0 * (g.nranks - 1) / g.nranks : (g.nranks - 1.0) / g.nranks;
    const int elem = g.dtype == "fp32" ? 4 : 2;
    for (double size = 1024; size <= 1024.0 * 1024 * 1024; size *= 4) {
      const std::string point = "collectives/nccl/" + g.collective + "/" + g.dtype + "/n" + std::to_string(g.nranks) +
                                "/nodes" + std::to_string(g.nnodes) + "/s" + num(size);
      coll.add(point, g.alpha + size * factor / (g.beta * 1e3),
               {{"collective", g.collective}, {"dtype", g.dtype}, {"op", "sum"}, {"in_place", "0"}, {"root", "0"},
                {"nranks", std::to_string(g.nranks)}, {"nnodes", std::to_string(g.nnodes)},
                {"ranks_per_node", std::to_string(g.nranks / g.nnodes)}, {"spans_nodes", g.nnodes > 1 ? "1" : "0"},
                {"size_bytes", num(size)}, {"count", num(size / elem)}, {"bus_factor", num(factor)}, {"wrong", "0"}},
               [size, factor](double median, std::map<std::string, std::string>& row) {
                 row["algbw_gbps"] = num(size / (median * 1e3));
                 row["busbw_gbps"] = num(size * factor / (median * 1e3));
               });
    }
  }
  coll.write();
}

// p2p.csv: sendrecv and d2d copy curves, and all pairs of two 2-GPU islands.
void write_p2p(const std::string& dir, const SyntheticOptions& o, std::mt19937& rng) {
  BenchWriter p2p(dir, "p2p", {"pattern", "direction", "src_rank", "dst_rank", "src_device", "dst_device", "src_node",
                               "dst_node", "link_class", "size_bytes", "bandwidth_gbps", "wrong"},
                  o, rng);
  auto bw_column = [](double size) {
    return [size](double median, std::map<std::string, std::string>& row) {
      row["bandwidth_gbps"] = num(size / (median * 1e3));
    };
  };
  for (double size = 1024; size <= 1024.0 * 1024 * 1024; size *= 4) {
    p2p.add("p2p/sendrecv/uni/r0-r1/s" + num(size), kP2pIntraAlphaUs + size / (kP2pIntraBetaGbps * 1e3),
            {{"pattern", "sendrecv"}, {"direction", "uni"}, {"src_rank", "0"}, {"dst_rank", "1"}, {"src_device", "0"},
             {"dst_device", "1"}, {"src_node", "0"}, {"dst_node", "0"}, {"link_class", "nvlink"},
             {"size_bytes", num(size)}, {"wrong", "0"}},
            bw_column(size));
    const double copy_gbps = kCopyPeakGbps * size / (size + 4e6);
    p2p.add("p2p/copy/d2d/dev0/s" + num(size), size / (copy_gbps * 1e3),
            {{"pattern", "copy"}, {"direction", "d2d"}, {"src_rank", "0"}, {"dst_rank", "0"}, {"src_device", "0"},
             {"dst_device", "0"}, {"src_node", "0"}, {"dst_node", "0"}, {"link_class", "local"},
             {"size_bytes", num(size)}, {"wrong", "0"}},
            bw_column(size));
  }
  const double pair_size = 64.0 * 1024 * 1024;
  for (int src = 0; src < 4; ++src)
    for (int dst = 0; dst < 4; ++dst) {
      if (src == dst) continue;
      const double gbps = (src / 2 == dst / 2) ? 150.0 : 50.0;  // two "islands" of 2 GPUs
      p2p.add("p2p/pairs/uni/r" + std::to_string(src) + "-r" + std::to_string(dst) + "/s" + num(pair_size),
              pair_size / (gbps * 1e3),
              {{"pattern", "pairs"}, {"direction", "uni"}, {"src_rank", std::to_string(src)},
               {"dst_rank", std::to_string(dst)}, {"src_device", std::to_string(src)},
               {"dst_device", std::to_string(dst)}, {"src_node", "0"}, {"dst_node", "0"},
               {"link_class", src / 2 == dst / 2 ? "nvlink" : "pcie"}, {"size_bytes", num(pair_size)}, {"wrong", "0"}},
              bw_column(pair_size));
    }
  p2p.write();
}

// memory.csv (bench_memory): STREAM curves with three plateaus, fma_chain, and two ops.
void write_memory(const std::string& dir, const SyntheticOptions& o, std::mt19937& rng) {
  BenchWriter mem(dir, "memory", {"kernel", "family", "dtype", "rows", "cols", "params", "elements", "array_bytes",
                                  "working_set_bytes", "bytes", "bandwidth_gbps", "tflops", "peak_tflops",
                                  "peak_source", "flops"},
                  o, rng);
  mem.extra_sidecar["cache_levels"] = {{{"name", "L1d"}, {"bytes", kL1Bytes}}, {{"name", "L2"}, {"bytes", kL2Bytes}}};
  auto gbps_column = [](double bytes) {
    return [bytes](double median, std::map<std::string, std::string>& row) {
      row["bandwidth_gbps"] = num(bytes / (median * 1e3));
    };
  };
  for (const std::string kernel : {"copy", "triad"})
    for (double array = 4096; array <= 256.0 * 1024 * 1024; array *= 2) {
      const double arrays = kernel == "copy" ? 2 : 3, ws = arrays * array;
      const double gbps = ws <= kL1Bytes / 2 ? kL1Gbps : ws <= kL2Bytes / 2 ? kL2Gbps : ws >= 2 * kL2Bytes ? kMemoryGbps : 600.0;
      mem.add("memory/synthetic/" + kernel + "/fp32/" + num(array) + "/hot", ws / (gbps * 1e3),
              {{"kernel", kernel}, {"family", "stream"}, {"dtype", "fp32"}, {"elements", num(array / 4)},
               {"array_bytes", num(array)}, {"working_set_bytes", num(ws)}, {"bytes", num(ws)}},
              gbps_column(ws));
    }
  for (const std::string dtype : {"fp32", "bf16"}) {
    const double flops = 2.0 * (1 << 24) * 4097;
    mem.add("memory/synthetic/fma_chain/" + dtype + "/n16M/hot", flops / (kVectorTflops * (dtype == "bf16" ? 2 : 1) * 1e6),
            {{"kernel", "fma_chain"}, {"family", "vector"}, {"dtype", dtype}, {"elements", "16777216"}, {"flops", num(flops)},
             {"working_set_bytes", "1"}, {"bytes", "1"}, {"bandwidth_gbps", "1"},
             {"peak_tflops", num(kVectorPeakTflops * (dtype == "bf16" ? 2 : 1))}, {"peak_source", "synthetic"}},
            [flops](double median, std::map<std::string, std::string>& row) { row["tflops"] = num(flops / (median * 1e6)); });
  }
  for (int rows : {1024, 4096, 16384}) {
    const double bytes = 2.0 * rows * 4096 * 2 + 4 * 4096 + 8.0 * rows;  // layernorm_fwd bf16
    mem.add("memory/synthetic/layernorm_fwd/bf16/r" + std::to_string(rows) + "/c4096/hot",
            bytes / (kMemoryGbps * 0.8 * 1e3),
            {{"kernel", "layernorm_fwd"}, {"family", "op"}, {"dtype", "bf16"}, {"rows", std::to_string(rows)},
             {"cols", "4096"}, {"elements", num(rows * 4096.0)}, {"working_set_bytes", num(bytes)}, {"bytes", num(bytes)}},
            gbps_column(bytes));
  }
  mem.write();
}

}  // namespace

void write_synthetic_results(const std::string& dir, const SyntheticOptions& o) {
  fs::create_directories(dir);
  std::mt19937 rng(o.seed);
  write_gemm(dir, o, rng);
  write_attention(dir, o, rng);
  write_collectives(dir, o, rng);
  write_p2p(dir, o, rng);
  write_memory(dir, o, rng);
}

}  // namespace gpucal::calibration::testing
