// cuBLASLt GEMM: descriptors and the heuristic's candidates built once per shape (cached in
// the run's context, outside timing); one cublasLtMatmul per launch on the backend's stream;
// optional CUDA-graph capture of several launches.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <map>
#include <sstream>

#include "bench_gemm/cublaslt_status.h"
#include "bench_gemm/gemm_impls.h"
#include "core/errors.h"

#define CUBLASLT_CHECK(call) GPUCAL_STATUS_CHECK("cuBLASLt", call, cublasLtStatusName)
#define CUDA_RT_CHECK(call)                                                                              \
  do {                                                                                                   \
    cudaError_t gpucal_e_ = (call);                                                                      \
    if (gpucal_e_ != cudaSuccess)                                                                        \
      ::gpucal::throw_call_error("CUDA", cudaGetErrorString(gpucal_e_), #call, __FILE__, __LINE__);       \
  } while (0)

namespace gpucal::gemm {

namespace {

std::string cublasLtStatusName(cublasStatus_t s) { return cublasLtGetStatusName(s); }

// Readable names of cuBLASLt's tile and stage enums, generated at configure time from the
// toolkit's own cublasLt.h (bench_gemm/CMakeLists.txt), so every enum the header has is named.
std::string tile_name(int id) {
  switch (id) {
#include "cublaslt_tile_names.inc"
    default: return "undefined";
  }
}
std::string stages_name(int id) {
  switch (id) {
#include "cublaslt_stages_names.inc"
    default: return "undefined";
  }
}
std::string reduction_name(int scheme) {
  switch (scheme) {
    case CUBLASLT_REDUCTION_SCHEME_NONE: return "none";
    case CUBLASLT_REDUCTION_SCHEME_INPLACE: return "inplace";
    case CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE: return "compute_type";
    case CUBLASLT_REDUCTION_SCHEME_OUTPUT_TYPE: return "output_type";
    default: return std::to_string(scheme);
  }
}

cudaDataType_t cuda_type(DType t) {
  switch (t) {
    case DType::fp64: return CUDA_R_64F;
    case DType::fp32:
    case DType::tf32: return CUDA_R_32F;
    case DType::fp16: return CUDA_R_16F;
    case DType::bf16: return CUDA_R_16BF;
    case DType::fp8_e4m3: return CUDA_R_8F_E4M3;
    case DType::fp8_e5m2: return CUDA_R_8F_E5M2;
    case DType::int8: return CUDA_R_8I;
    case DType::int32: return CUDA_R_32I;
    default: throw SkipPoint("cuBLASLt: no CUDA data type for " + to_string(t));
  }
}

int sm_version(const std::string& arch) { return arch.rfind("sm_", 0) == 0 ? std::atoi(arch.c_str() + 3) : 0; }

// Descriptors and heuristic candidates of one shape; shared by every point of that shape.
// fp8 scales: floats between scale_a and scale_b, one 256-byte block each.
constexpr int kScaleStride = 64;

struct Plan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  cublasLtMatmulPreference_t pref = nullptr;
  std::vector<cublasLtMatmulHeuristicResult_t> candidates;
  std::string skip;  // non-empty: the library has no algorithm for this shape (why)
  float* scales = nullptr;  // fp8: scale_a at scales[0], scale_b at scales[kScaleStride]
  ~Plan() {
    if (scales) (void)cudaFree(scales);
    if (pref) cublasLtMatmulPreferenceDestroy(pref);
    if (a) cublasLtMatrixLayoutDestroy(a);
    if (b) cublasLtMatrixLayoutDestroy(b);
    if (c) cublasLtMatrixLayoutDestroy(c);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

class CublasLtContext : public LibraryContext {
 public:
  // Device memory comes from the runtime, not the backend: the context is shared by the
  // ops and the bench's main and may outlive the backend object.
  explicit CublasLtContext(size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
    CUBLASLT_CHECK(cublasLtCreate(&handle_));
    if (workspace_bytes_ > 0) CUDA_RT_CHECK(cudaMalloc(&workspace_, workspace_bytes_));
  }
  ~CublasLtContext() override {
    plans_.clear();
    if (workspace_) (void)cudaFree(workspace_);
    cublasLtDestroy(handle_);
  }
  std::string version() const override {
    const size_t v = cublasLtGetVersion();
    std::ostringstream s;
    s << v / 10000 << "." << (v / 100) % 100 << "." << v % 100;
    return s.str();
  }
  cublasLtHandle_t handle() const { return handle_; }
  void* workspace() const { return workspace_; }
  size_t workspace_bytes() const { return workspace_bytes_; }
  std::shared_ptr<Plan>& plan(const std::string& key) { return plans_[key]; }

 private:
  cublasLtHandle_t handle_{};
  void* workspace_ = nullptr;
  size_t workspace_bytes_;
  std::map<std::string, std::shared_ptr<Plan>> plans_;
};

class CublasLtGemm : public GemmOp {
 public:
  CublasLtGemm(const GemmProblem& p, const std::string& regime, const GemmRunOptions& o,
               std::shared_ptr<LibraryContext> ctx)
      : GemmOp(p, "cublaslt", regime, o), ctx_(std::static_pointer_cast<CublasLtContext>(std::move(ctx))) {}
  ~CublasLtGemm() override { release(); }

 protected:
  void prepare() override {
    if (backend_->name() != "cuda") throw SkipPoint("cublaslt runs on the cuda backend only");
    const int sm = sm_version(backend_->info().arch);
    if (p_.is_fp8() && sm < 89)
      throw SkipPoint("fp8 GEMM needs sm_89 or newer; this device is " + backend_->info().arch);
    if (p_.is_fp8() && sm < 100 && p_.layout != "TN")
      throw SkipPoint("cuBLASLt fp8 requires the TN layout (A transposed, B not) on " + backend_->info().arch);
    // Descriptors depend on the shape, types and layout only: the point name without regime.
    std::shared_ptr<Plan>& plan = ctx_->plan(p_.point("cublaslt", "", "candidates" + std::to_string(requested())));
    if (!plan) plan = build_plan();
    plan_ = plan;
    if (!plan_->skip.empty()) throw SkipPoint(plan_->skip);
    current_ = 0;
    alpha32_ = static_cast<float>(p_.alpha);
    beta32_ = static_cast<float>(p_.beta);
    alpha_i32_ = static_cast<int32_t>(p_.alpha);
    beta_i32_ = static_cast<int32_t>(p_.beta);
  }
  int candidate_count() const override { return static_cast<int>(plan_->candidates.size()); }
  void use_candidate(int index) override { current_ = index; }

  void run(int copy) override {
    const void* alpha = &alpha32_;
    const void* beta = &beta32_;
    if (p_.math == DType::fp64) alpha = &p_.alpha, beta = &p_.beta;
    if (p_.math == DType::int8) alpha = &alpha_i32_, beta = &beta_i32_;
    const void* c = p_.beta != 0.0 ? c_at(copy) : d();
    CUBLASLT_CHECK(cublasLtMatmul(ctx_->handle(), plan_->desc, alpha, a_at(copy), plan_->a, b_at(copy), plan_->b, beta,
                                  c, plan_->c, d(), plan_->c, &plan_->candidates[current_].algo, ctx_->workspace(),
                                  ctx_->workspace_bytes(), static_cast<cudaStream_t>(backend_->stream())));
  }

  AlgoInfo algorithm() const override {
    const cublasLtMatmulHeuristicResult_t& r = plan_->candidates[current_];
    int id = -1, tile = 0, stages = 0, splitk = 1, swizzle = 0, reduction = 0;
    size_t w = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&r.algo, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &reduction, sizeof reduction, &w);
    AlgoInfo a;
    a.algo_id = id;
    a.tile = tile_name(tile);
    a.stages = stages_name(stages);
    a.split_k = splitk > 0 ? splitk : 1;
    a.swizzle = swizzle;
    a.reduction_scheme = reduction_name(reduction);
    a.workspace_used = static_cast<int64_t>(r.workspaceSize);
    a.library_waves = r.wavesCount;
    std::ostringstream s;
    s << "id=" << id << ";tile=" << a.tile << ";stages=" << a.stages << ";splitk=" << a.split_k
      << ";swizzle=" << swizzle << ";reduction=" << a.reduction_scheme;
    a.summary = s.str();
    return a;
  }

  void capture_graph(const std::function<void()>& body) override {
    auto stream = static_cast<cudaStream_t>(backend_->stream());
    CUDA_RT_CHECK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal));
    try {
      body();
    } catch (...) {
      cudaGraph_t broken = nullptr;
      (void)cudaStreamEndCapture(stream, &broken);
      if (broken) (void)cudaGraphDestroy(broken);
      throw;
    }
    CUDA_RT_CHECK(cudaStreamEndCapture(stream, &graph_));
    CUDA_RT_CHECK(cudaGraphInstantiate(&graph_exec_, graph_, 0));
  }
  void replay_graph() override {
    CUDA_RT_CHECK(cudaGraphLaunch(graph_exec_, static_cast<cudaStream_t>(backend_->stream())));
  }

  void release() override {
    if (graph_exec_) (void)cudaGraphExecDestroy(graph_exec_);
    if (graph_) (void)cudaGraphDestroy(graph_);
    graph_exec_ = nullptr;
    graph_ = nullptr;
    plan_.reset();  // the context keeps it for the next point of this shape
  }

 private:
  int requested() const { return std::max(1, options_.autotune); }

  std::shared_ptr<Plan> build_plan() {
    auto plan = std::make_shared<Plan>();
    const cublasComputeType_t compute = p_.math == DType::fp64   ? CUBLAS_COMPUTE_64F
                                        : p_.math == DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                        : p_.math == DType::int8 ? CUBLAS_COMPUTE_32I
                                                                 : CUBLAS_COMPUTE_32F;
    const cudaDataType_t scale = p_.math == DType::fp64 ? CUDA_R_64F : p_.math == DType::int8 ? CUDA_R_32I : CUDA_R_32F;
    CUBLASLT_CHECK(cublasLtMatmulDescCreate(&plan->desc, compute, scale));
    const cublasOperation_t ta = p_.trans_a() ? CUBLAS_OP_T : CUBLAS_OP_N, tb = p_.trans_b() ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (p_.is_fp8()) {
      // Per-tensor scales live on the device for the plan's lifetime, each at the start of its
      // own 256-byte block, as a separately allocated tensor's would be (torch._scaled_mm, which
      // ran on the same H200, passes two tensors). With both in one float[2] (B's scale 4 bytes
      // in), every fp8 matmul there returned CUBLAS_STATUS_NOT_SUPPORTED after the heuristic had
      // offered an algorithm (cuBLASLt 13.1); the scale pointers are the one fp8-only input, so
      // they are aligned as the library's own samples align them.
      float host_scales[2 * kScaleStride] = {};
      host_scales[0] = static_cast<float>(p_.scale_a);
      host_scales[kScaleStride] = static_cast<float>(p_.scale_b);
      CUDA_RT_CHECK(cudaMalloc(reinterpret_cast<void**>(&plan->scales), sizeof host_scales));
      CUDA_RT_CHECK(cudaMemcpy(plan->scales, host_scales, sizeof host_scales, cudaMemcpyHostToDevice));
      const void* sa = plan->scales;
      const void* sb = plan->scales + kScaleStride;
      CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
      CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(plan->desc, CUBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
    }
    make_layout(&plan->a, p_.input, p_.trans_a() ? p_.k : p_.m, p_.trans_a() ? p_.m : p_.k, p_.lda(), p_.a_elems());
    make_layout(&plan->b, p_.input_b, p_.trans_b() ? p_.n : p_.k, p_.trans_b() ? p_.k : p_.n, p_.ldb(), p_.b_elems());
    make_layout(&plan->c, p_.output, p_.m, p_.n, p_.ldc(), p_.c_elems());
    CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&plan->pref));
    const size_t ws = ctx_->workspace_bytes();
    CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(plan->pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    std::vector<cublasLtMatmulHeuristicResult_t> results(static_cast<size_t>(requested()));
    int found = 0;
    const cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(ctx_->handle(), plan->desc, plan->a, plan->b, plan->c,
                                                             plan->c, plan->pref, requested(), results.data(), &found);
    const HeuristicVerdict verdict = cublaslt_heuristic_verdict(st, found);
    if (verdict == HeuristicVerdict::skip) {
      plan->skip = "cuBLASLt has no algorithm for " + to_string(p_.user_dtype()) + "->" + to_string(p_.output) + " " +
                   p_.layout + " on " + backend_->info().arch + " (heuristic: " + cublas_status_name(st) +
                   (st == CUBLAS_STATUS_SUCCESS ? ", 0 candidates" : "") + ")" +
                   (p_.math == DType::int8 ? "; cuBLASLt int8 wants TN and dimensions in multiples of 4" : "");
      return plan;
    }
    CUBLASLT_CHECK(st);  // HeuristicVerdict::error: an error row naming the status
    results.resize(static_cast<size_t>(found));
    plan->candidates = std::move(results);
    return plan;
  }

  void make_layout(cublasLtMatrixLayout_t* l, DType t, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
    CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(l, cuda_type(t), static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
    if (p_.batch > 1) {
      const int32_t count = static_cast<int32_t>(p_.batch);
      CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
      CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
  }

  std::shared_ptr<CublasLtContext> ctx_;
  std::shared_ptr<Plan> plan_;
  int current_ = 0;
  float alpha32_ = 1, beta32_ = 0;
  int32_t alpha_i32_ = 1, beta_i32_ = 0;
  cudaGraph_t graph_ = nullptr;
  cudaGraphExec_t graph_exec_ = nullptr;
};

}  // namespace

std::shared_ptr<LibraryContext> make_cublaslt_context(Backend&, size_t workspace_bytes) {
  return std::make_shared<CublasLtContext>(workspace_bytes);
}

std::unique_ptr<GemmOp> make_cublaslt_gemm(const GemmProblem& p, const std::string& regime, const GemmRunOptions& o,
                                           std::shared_ptr<LibraryContext> ctx) {
  return std::make_unique<CublasLtGemm>(p, regime, o, std::move(ctx));
}

}  // namespace gpucal::gemm
