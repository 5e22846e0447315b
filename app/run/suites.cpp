#include "app/run/suites.h"

#include <stdexcept>

namespace gpucal::calibration {

namespace {

// The README's first command: every bench, every fit and every export within about 40 s of
// benches on a 2-core host. Collectives and p2p: 8x steps up to 256 KiB, then three sizes in the
// bandwidth regime (>= 1 MiB), which the exporters' alpha-beta and vTrain's 1 MiB..1 GiB tables
// start from; memory's copy sweeps past 4x the last-level cache (--bytes auto), where the device
// bandwidth is read; attention is causal, forward and backward, at the head dim and sequence
// lengths of the predicted model.
Suite smoke() {
  return {
      .name = "smoke",
      .purpose =
          "about 40 s on a 2-core host: a few points per bench, enough for every fit, export and a "
          "predicted step (the README's first command)",
      .max_time_per_point_s = 0.05,
      .benches = {{"gemm",
                   {"--m", "128,512", "--n", "128,512", "--k", "128,512", "--dtype", "fp32,bf16", "--layout",
                    "NN"},
                   false,
                   {},
                   // a GPU runs 512^3 in microseconds, under the 20 us per operation the NERSC
                   // estimator charges: 4096^3 gives the exports a rate in the GPU's regime
                   {"--m", "128,512,4096", "--n", "128,512,4096", "--k", "128,512,4096", "--dtype", "fp32,bf16",
                    "--layout", "NN"}},
                  {"attention",
                   {"--batch", "1", "--heads", "8", "--kv-heads", "8", "--seq", "128,256", "--head-dim",
                    "16", "--causal", "1", "--pass", "fwd,bwd"}},
                  {"collectives",
                   {"--sizes", "8:256K:x8,2M,8M,32M", "--ranks", "2,all", "--collective",
                    "allreduce,allgather,reduce_scatter"},
                   true},
                  {"p2p",
                   {"--pattern", "sendrecv,pingpong,copy", "--sizes", "8:256K:x8,2M,8M,32M"},
                   true,
                   {"--pattern", "copy", "--sizes", "8:256K:x8,2M,8M,32M"}},
                  {"memory",
                   {"--kernel", "copy,fma_chain,ops", "--bytes", "auto", "--dtype", "fp32", "--fma-elements",
                    "64K", "--rows", "64", "--cols", "1024", "--params", "64K"}}},
      .predict = {"--model", "llama3-8b", "--layers", "2", "--scale", "8", "--seq", "256", "--tp", "2",
                  "--dp", "2", "--ranks-per-node", "4", "--quiet"},
      .predict_label =
          "llama3-8b cut to 2 layers at 1/8 width (hidden 512, head dim 16), sequence 256, "
          "tp 2 x dp 2 on one node",
      .predict_model = "llama3-8b cut to 2 layers at 1/8 width (hidden 512, head dim 16), sequence 256"};
}

Suite calibration() {
  return {
      .name = "calibration",
      .purpose = "the full standard tables for one node (tens of minutes)",
      .max_time_per_point_s = 2.0,
      .benches = {{"gemm",
                   {"--m", "256:16384:x2", "--n", "256:16384:x2", "--k", "1024,4096,16384", "--dtype",
                    "bf16,fp16,fp32", "--layout", "NN,TN"}},
                  {"attention",
                   {"--batch", "1,4", "--heads", "16", "--kv-heads", "16,4", "--seq", "512:16384:x2",
                    "--head-dim", "64,128", "--causal", "0,1", "--pass", "fwd,bwd"}},
                  {"collectives", {"--sizes", "8:1G:x2", "--ranks", "2,all", "--collective", "all"}, true},
                  {"p2p",
                   {"--pattern", "sendrecv,bidir,ring,pingpong,pairs,copy", "--sizes", "8:1G:x2"},
                   true,
                   {"--pattern", "copy", "--sizes", "8:1G:x2"}},
                  {"memory", {"--set", "llm"}}},
      .predict = {"--model", "llama3-8b", "--tp", "8", "--ranks-per-node", "8", "--allow-missing", "--quiet"},
      .predict_label = "llama3-8b, tp 8 on one node (operations no table reaches are left out and listed)",
      .predict_model = "llama3-8b (operations no table reaches are left out and listed)"};
}

Suite nightly() {
  return {.name = "nightly",
          .purpose = "a fixed regression set for `gpucal compare` against a baseline (minutes)",
          .max_time_per_point_s = 0.5,
          .benches = {{"gemm",
                       {"--m", "1024,4096,8192", "--n", "1024,4096,8192", "--k", "1024,4096,8192", "--dtype",
                        "bf16", "--layout", "NN"}},
                      {"attention",
                       {"--batch", "2", "--heads", "16", "--kv-heads", "16", "--seq", "1024,4096",
                        "--head-dim", "128", "--causal", "0,1", "--pass", "fwd,bwd"}},
                      {"collectives",
                       {"--sizes", "1K:256M:x16", "--ranks", "2,all", "--collective", "allreduce,allgather"},
                       true},
                      {"p2p",
                       {"--pattern", "sendrecv,pingpong,copy", "--sizes", "1K:256M:x16"},
                       true,
                       {"--pattern", "copy", "--sizes", "1K:256M:x16"}},
                      {"memory", {"--set", "quick"}}}};
}

// gpucal fleet run's node phase: the headline figures expectations/ checks.
Suite fleet() {
  return {.name = "fleet",
          .purpose = "gpucal fleet run's node phase on GPU nodes: the headline figures expectations/ checks (minutes)",
          .max_time_per_point_s = 0.5,
          .exports = false,
          .benches = {{"gemm", {"--m", "8192", "--n", "8192", "--k", "8192", "--dtype", "bf16,fp8", "--layout", "TN"}},
                      {"memory", {"--kernel", "copy", "--bytes", "1G", "--dtype", "fp32"}},
                      {"collectives", {"--sizes", "8G", "--ranks", "all", "--collective", "allreduce"}, true},
                      {"p2p", {"--pattern", "sendrecv,pingpong", "--sizes", "8,1G"}, true}}};
}

// The fleet suite sized for CPU nodes and CI: the same figures at small sizes.
Suite fleet_smoke() {
  return {.name = "fleet-smoke",
          .purpose = "the fleet suite sized for CPU nodes and CI: the same figures at small sizes (a minute)",
          .max_time_per_point_s = 0.3,
          .exports = false,
          .benches = {{"gemm",
                       {"--m", "512", "--n", "512", "--k", "512", "--dtype", "fp32", "--layout", "NN", "--regime", "hot"}},
                      {"memory", {"--kernel", "copy", "--bytes", "64M", "--dtype", "fp32"}},
                      {"collectives", {"--sizes", "4M", "--ranks", "all", "--collective", "allreduce"}, true},
                      {"p2p", {"--pattern", "sendrecv,pingpong", "--sizes", "8,4M"}, true}}};
}

}  // namespace

const std::vector<Suite>& suites() {
  static const std::vector<Suite> table{smoke(), calibration(), nightly(), fleet(), fleet_smoke()};
  return table;
}

std::vector<std::string> one_gpu_layout(const std::vector<std::string>& predict) {
  static const char* const kDegrees[] = {"--tp", "--pp", "--dp", "--cp", "--ep", "--ranks-per-node"};
  std::vector<std::string> out = predict;
  for (size_t i = 0; i + 1 < out.size(); ++i)
    for (const char* flag : kDegrees)
      if (out[i] == flag) out[i + 1] = "1";
  return out;
}

const Suite& find_suite(const std::string& name) {
  std::string known;
  for (const Suite& s : suites()) {
    if (s.name == name) return s;
    known += (known.empty() ? "" : ", ") + s.name;
  }
  throw std::invalid_argument("unknown suite '" + name + "' (known: " + known + ")");
}

}  // namespace gpucal::calibration
