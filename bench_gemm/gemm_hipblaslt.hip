// hipBLASLt GEMM: the same axes, columns and checks as gemm_cublaslt.cpp. Descriptors and
// the heuristic's candidates are built once per shape (cached in the run's context); one
// hipblasLtMatmul per launch; optional HIP-graph capture. Provenance is the solution index
// (hipblaslt_ext::getIndexFromAlgo, hipBLASLt 0.6 / ROCm 6.0 and later); hipBLASLt reports
// no tile, so tile and wave columns stay empty and library_waves carries its wavesCount.
// Compiled by hipcc (gpucal_add_hip_sources) only where hipBLASLt is found at configure time.
#ifndef GPUCAL_HAVE_HIPBLASLT
#define GPUCAL_HAVE_HIPBLASLT  // hipcc does not see the target's definitions: declare our API
#endif
#include <hip/hip_runtime.h>
#include <hipblaslt/hipblaslt-ext.hpp>
#include <hipblaslt/hipblaslt.h>

#include <map>
#include <sstream>

#include "bench_gemm/gemm_impls.h"
#include "core/errors.h"

#define HIPBLASLT_CHECK(call) GPUCAL_STATUS_CHECK("hipBLASLt", call, hipblas_status_name)
#define HIP_RT_CHECK(call)                                                                             \
  do {                                                                                                 \
    hipError_t gpucal_e_ = (call);                                                                     \
    if (gpucal_e_ != hipSuccess)                                                                       \
      ::gpucal::throw_call_error("HIP", hipGetErrorString(gpucal_e_), #call, __FILE__, __LINE__);       \
  } while (0)

namespace gpucal::gemm {

namespace {

std::string hipblas_status_name(hipblasStatus_t s) {
  switch (s) {
    case HIPBLAS_STATUS_SUCCESS: return "HIPBLAS_STATUS_SUCCESS";
    case HIPBLAS_STATUS_NOT_INITIALIZED: return "HIPBLAS_STATUS_NOT_INITIALIZED";
    case HIPBLAS_STATUS_ALLOC_FAILED: return "HIPBLAS_STATUS_ALLOC_FAILED";
    case HIPBLAS_STATUS_INVALID_VALUE: return "HIPBLAS_STATUS_INVALID_VALUE";
    case HIPBLAS_STATUS_MAPPING_ERROR: return "HIPBLAS_STATUS_MAPPING_ERROR";
    case HIPBLAS_STATUS_EXECUTION_FAILED: return "HIPBLAS_STATUS_EXECUTION_FAILED";
    case HIPBLAS_STATUS_INTERNAL_ERROR: return "HIPBLAS_STATUS_INTERNAL_ERROR";
    case HIPBLAS_STATUS_NOT_SUPPORTED: return "HIPBLAS_STATUS_NOT_SUPPORTED";
    case HIPBLAS_STATUS_ARCH_MISMATCH: return "HIPBLAS_STATUS_ARCH_MISMATCH";
    default: return "hipblasStatus " + std::to_string(static_cast<int>(s));
  }
}

// gfx94x (MI300) runs fp8 in the FNUZ encodings (e4m3 max 240, other NaN and bias), which
// differ bit for bit from the OCP encodings our inputs and references use; only targets
// with OCP fp8 (gfx950, gfx12) and a ROCm that names those types (6.3+) run fp8 here.
[[maybe_unused]] bool ocp_fp8_target(const std::string& arch) { return arch.rfind("gfx950", 0) == 0 || arch.rfind("gfx12", 0) == 0; }

hipDataType hip_type(DType t, const std::string& arch) {
  switch (t) {
    case DType::fp64: return HIP_R_64F;
    case DType::fp32:
    case DType::tf32: return HIP_R_32F;
    case DType::fp16: return HIP_R_16F;
    case DType::bf16: return HIP_R_16BF;
    case DType::int8: return HIP_R_8I;
    case DType::int32: return HIP_R_32I;
    case DType::fp8_e4m3:
    case DType::fp8_e5m2:
#if defined(HIP_VERSION) && HIP_VERSION >= 60300000
      if (ocp_fp8_target(arch)) return t == DType::fp8_e4m3 ? HIP_R_8F_E4M3 : HIP_R_8F_E5M2;
#endif
      throw SkipPoint("fp8 here uses the OCP encodings; " + arch +
                      " hipBLASLt runs FNUZ fp8 (gfx94x) or this ROCm names no OCP fp8 types");
    default: throw SkipPoint("hipBLASLt: no HIP data type for " + to_string(t));
  }
}

struct Plan {
  hipblasLtMatmulDesc_t desc = nullptr;
  hipblasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr;
  hipblasLtMatmulPreference_t pref = nullptr;
  std::vector<hipblasLtMatmulHeuristicResult_t> candidates;
  std::string skip;
  float* scales = nullptr;  // fp8: device float[2] = {scale_a, scale_b}
  ~Plan() {
    if (scales) (void)hipFree(scales);
    if (pref) hipblasLtMatmulPreferenceDestroy(pref);
    if (a) hipblasLtMatrixLayoutDestroy(a);
    if (b) hipblasLtMatrixLayoutDestroy(b);
    if (c) hipblasLtMatrixLayoutDestroy(c);
    if (desc) hipblasLtMatmulDescDestroy(desc);
  }
};

class HipBlasLtContext : public LibraryContext {
 public:
  // Device memory from the runtime, not the backend: the context may outlive the backend.
  explicit HipBlasLtContext(size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
    HIPBLASLT_CHECK(hipblasLtCreate(&handle_));
    if (workspace_bytes_ > 0) HIP_RT_CHECK(hipMalloc(&workspace_, workspace_bytes_));
  }
  ~HipBlasLtContext() override {
    plans_.clear();
    if (workspace_) (void)hipFree(workspace_);
    hipblasLtDestroy(handle_);
  }
  std::string version() const override {
    int v = 0;
    if (hipblasLtGetVersion(handle_, &v) != HIPBLAS_STATUS_SUCCESS) return "unknown";
    std::ostringstream s;
    s << v / 100000 << "." << (v / 100) % 1000 << "." << v % 100;
    return s.str();
  }
  hipblasLtHandle_t handle() const { return handle_; }
  void* workspace() const { return workspace_; }
  size_t workspace_bytes() const { return workspace_bytes_; }
  std::shared_ptr<Plan>& plan(const std::string& key) { return plans_[key]; }

 private:
  hipblasLtHandle_t handle_{};
  void* workspace_ = nullptr;
  size_t workspace_bytes_;
  std::map<std::string, std::shared_ptr<Plan>> plans_;
};

class HipBlasLtGemm : public GemmOp {
 public:
  HipBlasLtGemm(const GemmProblem& p, const std::string& regime, const GemmRunOptions& o,
                std::shared_ptr<LibraryContext> ctx)
      : GemmOp(p, "hipblaslt", regime, o), ctx_(std::static_pointer_cast<HipBlasLtContext>(std::move(ctx))) {}
  ~HipBlasLtGemm() override { release(); }

 protected:
  void prepare() override {
    if (backend_->name() != "hip") throw SkipPoint("hipblaslt runs on the hip backend only");
    std::shared_ptr<Plan>& plan = ctx_->plan(p_.point("hipblaslt", "", "candidates" + std::to_string(requested())));
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
    HIPBLASLT_CHECK(hipblasLtMatmul(ctx_->handle(), plan_->desc, alpha, a_at(copy), plan_->a, b_at(copy), plan_->b,
                                    beta, c, plan_->c, d(), plan_->c, &plan_->candidates[current_].algo,
                                    ctx_->workspace(), ctx_->workspace_bytes(),
                                    static_cast<hipStream_t>(backend_->stream())));
  }

  AlgoInfo algorithm() const override {
    hipblasLtMatmulHeuristicResult_t r = plan_->candidates[current_];
    AlgoInfo a;
    a.solution_index = hipblaslt_ext::getIndexFromAlgo(r.algo);
    a.workspace_used = static_cast<int64_t>(r.workspaceSize);
    a.library_waves = r.wavesCount;
    a.summary = "solution=" + std::to_string(a.solution_index);
    return a;
  }

  void capture_graph(const std::function<void()>& body) override {
    auto stream = static_cast<hipStream_t>(backend_->stream());
    HIP_RT_CHECK(hipStreamBeginCapture(stream, hipStreamCaptureModeThreadLocal));
    try {
      body();
    } catch (...) {
      hipGraph_t broken = nullptr;
      (void)hipStreamEndCapture(stream, &broken);
      if (broken) (void)hipGraphDestroy(broken);
      throw;
    }
    HIP_RT_CHECK(hipStreamEndCapture(stream, &graph_));
    HIP_RT_CHECK(hipGraphInstantiate(&graph_exec_, graph_, nullptr, nullptr, 0));
  }
  void replay_graph() override { HIP_RT_CHECK(hipGraphLaunch(graph_exec_, static_cast<hipStream_t>(backend_->stream()))); }

  void release() override {
    if (graph_exec_) (void)hipGraphExecDestroy(graph_exec_);
    if (graph_) (void)hipGraphDestroy(graph_);
    graph_exec_ = nullptr;
    graph_ = nullptr;
    plan_.reset();
  }

 private:
  int requested() const { return std::max(1, options_.autotune); }

  std::shared_ptr<Plan> build_plan() {
    auto plan = std::make_shared<Plan>();
    const std::string& arch = backend_->info().arch;
    const hipblasComputeType_t compute = p_.math == DType::fp64   ? HIPBLAS_COMPUTE_64F
                                         : p_.math == DType::tf32 ? HIPBLAS_COMPUTE_32F_FAST_TF32
                                         : p_.math == DType::int8 ? HIPBLAS_COMPUTE_32I
                                                                  : HIPBLAS_COMPUTE_32F;
    const hipDataType scale = p_.math == DType::fp64 ? HIP_R_64F : p_.math == DType::int8 ? HIP_R_32I : HIP_R_32F;
    const hipDataType ta_type = hip_type(p_.input, arch), tb_type = hip_type(p_.input_b, arch),
                      tc_type = hip_type(p_.output, arch);
    HIPBLASLT_CHECK(hipblasLtMatmulDescCreate(&plan->desc, compute, scale));
    const hipblasOperation_t ta = p_.trans_a() ? HIPBLAS_OP_T : HIPBLAS_OP_N, tb = p_.trans_b() ? HIPBLAS_OP_T : HIPBLAS_OP_N;
    HIPBLASLT_CHECK(hipblasLtMatmulDescSetAttribute(plan->desc, HIPBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    HIPBLASLT_CHECK(hipblasLtMatmulDescSetAttribute(plan->desc, HIPBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    if (p_.is_fp8()) {
      const float host_scales[2] = {static_cast<float>(p_.scale_a), static_cast<float>(p_.scale_b)};
      HIP_RT_CHECK(hipMalloc(reinterpret_cast<void**>(&plan->scales), sizeof host_scales));
      HIP_RT_CHECK(hipMemcpy(plan->scales, host_scales, sizeof host_scales, hipMemcpyHostToDevice));
      const void* sa = plan->scales;
      const void* sb = plan->scales + 1;
      HIPBLASLT_CHECK(hipblasLtMatmulDescSetAttribute(plan->desc, HIPBLASLT_MATMUL_DESC_A_SCALE_POINTER, &sa, sizeof sa));
      HIPBLASLT_CHECK(hipblasLtMatmulDescSetAttribute(plan->desc, HIPBLASLT_MATMUL_DESC_B_SCALE_POINTER, &sb, sizeof sb));
    }
    make_layout(&plan->a, ta_type, p_.trans_a() ? p_.k : p_.m, p_.trans_a() ? p_.m : p_.k, p_.lda(), p_.a_elems());
    make_layout(&plan->b, tb_type, p_.trans_b() ? p_.n : p_.k, p_.trans_b() ? p_.k : p_.n, p_.ldb(), p_.b_elems());
    make_layout(&plan->c, tc_type, p_.m, p_.n, p_.ldc(), p_.c_elems());
    HIPBLASLT_CHECK(hipblasLtMatmulPreferenceCreate(&plan->pref));
    const uint64_t ws = ctx_->workspace_bytes();
    HIPBLASLT_CHECK(hipblasLtMatmulPreferenceSetAttribute(plan->pref, HIPBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    std::vector<hipblasLtMatmulHeuristicResult_t> results(static_cast<size_t>(requested()));
    int found = 0;
    const hipblasStatus_t st = hipblasLtMatmulAlgoGetHeuristic(ctx_->handle(), plan->desc, plan->a, plan->b, plan->c,
                                                               plan->c, plan->pref, requested(), results.data(), &found);
    results.resize(st == HIPBLAS_STATUS_SUCCESS ? static_cast<size_t>(found) : 0);
    for (const auto& r : results)
      if (r.state == HIPBLAS_STATUS_SUCCESS) plan->candidates.push_back(r);
    if (st == HIPBLAS_STATUS_NOT_SUPPORTED || st == HIPBLAS_STATUS_INVALID_VALUE || plan->candidates.empty()) {
      plan->skip = "hipBLASLt has no solution for " + to_string(p_.user_dtype()) + "->" + to_string(p_.output) + " " +
                   p_.layout + " on " + arch;
      return plan;
    }
    HIPBLASLT_CHECK(st);
    return plan;
  }

  void make_layout(hipblasLtMatrixLayout_t* l, hipDataType t, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
    HIPBLASLT_CHECK(hipblasLtMatrixLayoutCreate(l, t, static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
    if (p_.batch > 1) {
      const int32_t count = static_cast<int32_t>(p_.batch);
      HIPBLASLT_CHECK(hipblasLtMatrixLayoutSetAttribute(*l, HIPBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
      HIPBLASLT_CHECK(hipblasLtMatrixLayoutSetAttribute(*l, HIPBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
  }

  std::shared_ptr<HipBlasLtContext> ctx_;
  std::shared_ptr<Plan> plan_;
  int current_ = 0;
  float alpha32_ = 1, beta32_ = 0;
  int32_t alpha_i32_ = 1, beta_i32_ = 0;
  hipGraph_t graph_ = nullptr;
  hipGraphExec_t graph_exec_ = nullptr;
};

}  // namespace

std::shared_ptr<LibraryContext> make_hipblaslt_context(Backend&, size_t workspace_bytes) {
  return std::make_shared<HipBlasLtContext>(workspace_bytes);
}

std::unique_ptr<GemmOp> make_hipblaslt_gemm(const GemmProblem& p, const std::string& regime, const GemmRunOptions& o,
                                            std::shared_ptr<LibraryContext> ctx) {
  return std::make_unique<HipBlasLtGemm>(p, regime, o, std::move(ctx));
}

}  // namespace gpucal::gemm
