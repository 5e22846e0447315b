// The part of every GEMM implementation that is not the library call: buffers with seeded
// random inputs (rotated copies for cold-rotate), autotuning over the library's candidates,
// graph capture, verification (host fp64 on sampled elements; on GPUs also the reference
// kernel on every element), throughput, roofline, wave and peak annotations.
// An implementation (host, cublaslt, hipblaslt) fills in prepare(), run() and algorithm().
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "bench_gemm/gemm_autotune.h"
#include "bench_gemm/gemm_problem.h"
#include "core/driver/op.h"
#include "core/formulas/peaks.h"

namespace gpucal::gemm {

// How every point of a run picks and times its algorithm (from the command line).
struct GemmRunOptions {
  int autotune = 0;          // 0: the heuristic's first choice; N >= 1: time the top N, keep the fastest
  bool rotate = false;       // cold-rotate: cycle over copies of the inputs exceeding 2x L2
  int graph_launches = 0;    // > 0: time a captured graph of this many launches (regime "graph")
  size_t workspace_bytes = 0;  // the library's workspace limit (provenance only here)
  std::shared_ptr<BestSoFar> best;  // run-wide best per dtype; null: no efficiency_vs_best_so_far
};

// The regime a row is filed under: "graph" / "graph-cold-rotate" with --graph,
// "cold-rotate" with --rotate, else the measurement's own (cold or hot).
std::string effective_regime(const std::string& measure_regime, const GemmRunOptions& o);

// Provenance of the algorithm a point ran, as the library describes it.
struct AlgoInfo {
  std::string summary;           // the `algo` column: compact "key=value;..." text
  int64_t algo_id = -1;          // cuBLASLt algorithm id
  int64_t solution_index = -1;   // hipBLASLt solution index
  std::string tile;              // "128x256" (readable), "undefined", or "" when not applicable
  std::string stages;            // "64x4", "undefined", ...
  int64_t split_k = 1;
  int64_t swizzle = -1;
  std::string reduction_scheme;  // none, inplace, compute_type, output_type
  int64_t workspace_used = -1;   // bytes the algorithm needs; -1 when unknown
  double library_waves = -1;     // the library's own wavesCount; -1 when unknown
};

class GemmOp : public Op {
 public:
  GemmOp(GemmProblem p, std::string impl, std::string measure_regime, GemmRunOptions options);
  std::string point() const override;
  std::string impl() const override { return impl_; }
  void describe(Row& row) const override;
  void setup(Backend& backend, const RunConfig& config) override;
  Verification verify() override;
  // One timed unit: a graph replay of graph_launches GEMMs, or one GEMM on the next copy.
  void launch() final;
  bool annotate(Row& row, const Measurement& m) const override;
  void teardown() override;
  const GemmProblem& problem() const { return p_; }

 protected:
  // Library descriptors and the heuristic's candidates (index 0 = its first choice).
  // Runs before the buffers are allocated (a_at() etc. are null): it decides from the
  // problem alone, and throws SkipPoint for combinations the library lacks.
  virtual void prepare() = 0;
  virtual int candidate_count() const { return 1; }
  virtual void use_candidate(int /*index*/) {}
  // One GEMM reading copy `copy` of A, B (and C), writing D; asynchronous on the stream.
  virtual void run(int copy) = 0;
  virtual AlgoInfo algorithm() const = 0;
  // Captures `body` (several run() calls) into a graph on the backend's stream, and replays
  // it. The default: no graphs here (a recorded skip).
  virtual void capture_graph(const std::function<void()>& body);
  virtual void replay_graph() {}
  virtual void release() {}
  // True when the library updates its output in place (BLAS: C := alpha AB + beta C), so D
  // must start as a copy of C rather than as poison when beta != 0.
  virtual bool output_in_place() const { return false; }

  void* a_at(int copy) const;
  void* b_at(int copy) const;
  void* c_at(int copy) const;  // nullptr when beta == 0
  void* d() const { return d_.get(); }

  GemmProblem p_;
  std::string impl_, measure_regime_;
  GemmRunOptions options_;
  Backend* backend_ = nullptr;
  const RunConfig* config_ = nullptr;

 private:
  void fill_inputs();
  void autotune();
  Verification verify_on_host(double* max_err) const;

  Buffer a_, b_, c_, d_;  // A, B, C hold `copies_` identical copies; D is the output
  int64_t copies_ = 1;    // copies of A and B
  int64_t c_copies_ = 1;  // copies of C: copies_ when the library reads C, else 1
  int next_copy_ = 0;
  bool graph_ready_ = false;
  uint64_t seed_ = 0;
  bool autotuned_ = false;
  AutotuneChoice choice_{};
  std::string verify_method_;
  uint64_t verified_elements_ = 0;
  double tolerance_used_ = 0;
};

// Elements the host reference checks: all of them for small outputs, else a fixed
// pseudo-random sample plus the four corners of the first and last batch entries.
struct CheckedElement {
  int64_t batch, row, col;
};
std::vector<CheckedElement> elements_to_check(const GemmProblem& p, uint64_t seed, size_t max_sampled = 2048);

// Range of the uniform random inputs: [-1, 1) of logical value; fp8 stores the quantized
// values q = x / scale, which span the format ([-max_finite, max_finite)); int8 [-64, 64).
struct InputRange {
  double lo, hi;
};
InputRange input_range(DType storage);

}  // namespace gpucal::gemm
