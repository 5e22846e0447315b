#include "app/run/suites.h"

#include <stdexcept>

namespace gpucal::calibration {

const std::vector<Suite>& suites() {
  static const std::vector<Suite> table{
      {"smoke",
       "seconds: a few small points per bench (ctest, the README's first command)",
       0.05,
       {{"gemm", {"--m", "128,512", "--n", "128,512", "--k", "128,512", "--dtype", "fp32,bf16", "--layout", "NN"}},
        {"attention",
         {"--batch", "1", "--heads", "4", "--kv-heads", "4", "--seq", "128,256", "--head-dim", "64", "--causal", "0",
          "--pass", "fwd"}},
        {"collectives",
         {"--sizes", "8:1M:x4", "--ranks", "2,all", "--collective", "allreduce,allgather,reduce_scatter"},
         true},
        {"p2p", {"--pattern", "sendrecv,pingpong,pairs,copy", "--sizes", "8:1M:x4"}, true},
        {"memory",
         {"--bytes", "4K:16M:x16", "--dtype", "fp32", "--fma-elements", "64K", "--rows", "64", "--cols", "1024",
          "--params", "64K"}}}},
      {"calibration",
       "the full standard tables for one node (tens of minutes)",
       2.0,
       {{"gemm",
         {"--m", "256:16384:x2", "--n", "256:16384:x2", "--k", "1024,4096,16384", "--dtype", "bf16,fp16,fp32",
          "--layout", "NN,TN"}},
        {"attention",
         {"--batch", "1,4", "--heads", "16", "--kv-heads", "16,4", "--seq", "512:16384:x2", "--head-dim", "64,128",
          "--causal", "0,1", "--pass", "fwd,bwd"}},
        {"collectives",
         {"--sizes", "8:1G:x2", "--ranks", "2,all", "--collective", "all"},
         true},
        {"p2p", {"--pattern", "sendrecv,bidir,ring,pingpong,pairs,copy", "--sizes", "8:1G:x2"}, true},
        {"memory", {"--set", "llm"}}}},
      {"nightly",
       "a fixed regression set for `gpucal compare` against a baseline (minutes)",
       0.5,
       {{"gemm", {"--m", "1024,4096,8192", "--n", "1024,4096,8192", "--k", "1024,4096,8192", "--dtype", "bf16",
                  "--layout", "NN"}},
        {"attention",
         {"--batch", "2", "--heads", "16", "--kv-heads", "16", "--seq", "1024,4096", "--head-dim", "128", "--causal",
          "0,1", "--pass", "fwd,bwd"}},
        {"collectives", {"--sizes", "1K:256M:x16", "--ranks", "2,all", "--collective", "allreduce,allgather"}, true},
        {"p2p", {"--pattern", "sendrecv,pingpong,copy", "--sizes", "1K:256M:x16"}, true},
        {"memory", {"--set", "quick"}}}},
      {"fleet",
       "gpucal fleet run's node phase on GPU nodes: the headline figures expectations/ checks (minutes)",
       0.5,
       {{"gemm", {"--m", "8192", "--n", "8192", "--k", "8192", "--dtype", "bf16,fp8", "--layout", "TN"}},
        {"memory", {"--kernel", "copy", "--bytes", "1G", "--dtype", "fp32"}},
        {"collectives", {"--sizes", "8G", "--ranks", "all", "--collective", "allreduce"}, true},
        {"p2p", {"--pattern", "sendrecv,pingpong", "--sizes", "8,1G"}, true}}},
      {"fleet-smoke",
       "the fleet suite sized for CPU nodes and CI: the same figures at small sizes (a minute)",
       0.3,
       {{"gemm", {"--m", "512", "--n", "512", "--k", "512", "--dtype", "fp32", "--layout", "NN", "--regime", "hot"}},
        {"memory", {"--kernel", "copy", "--bytes", "64M", "--dtype", "fp32"}},
        {"collectives", {"--sizes", "4M", "--ranks", "all", "--collective", "allreduce"}, true},
        {"p2p", {"--pattern", "sendrecv,pingpong", "--sizes", "8,4M"}, true}}},
  };
  return table;
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
