// cuBLASLt GEMM: descriptors and the heuristic's algorithm chosen in prepare(), outside
// timing; one cublasLtMatmul per launch on the backend's stream.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <sstream>

#include "bench_gemm/gemm_impls.h"
#include "harness/errors.h"

#define CUBLASLT_CHECK(call) GPUCAL_STATUS_CHECK("cuBLASLt", call, cublasLtStatusName)

namespace gpucal::gemm {

namespace {

std::string cublasLtStatusName(cublasStatus_t s) { return cublasLtGetStatusName(s); }

class CublasLtContext : public LibraryContext {
 public:
  CublasLtContext(Backend& backend, size_t workspace_bytes) : workspace_bytes_(workspace_bytes) {
    CUBLASLT_CHECK(cublasLtCreate(&handle_));
    workspace_ = backend.allocate(workspace_bytes);
  }
  ~CublasLtContext() override { cublasLtDestroy(handle_); }
  std::string version() const override {
    const size_t v = cublasLtGetVersion();
    std::ostringstream s;
    s << v / 10000 << "." << (v / 100) % 100 << "." << v % 100;
    return s.str();
  }
  cublasLtHandle_t handle() const { return handle_; }
  void* workspace() const { return workspace_.get(); }
  size_t workspace_bytes() const { return workspace_bytes_; }

 private:
  cublasLtHandle_t handle_{};
  Buffer workspace_;
  size_t workspace_bytes_;
};

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

class CublasLtGemm : public GemmOp {
 public:
  CublasLtGemm(const GemmProblem& p, const std::string& regime, std::shared_ptr<LibraryContext> ctx)
      : GemmOp(p, "cublaslt", regime), ctx_(std::static_pointer_cast<CublasLtContext>(std::move(ctx))) {}
  ~CublasLtGemm() override { release(); }

 protected:
  void prepare() override {
    if (backend_->name() != "cuda") throw SkipPoint("cublaslt runs on the cuda backend only");
    const cublasComputeType_t compute = p_.math == DType::fp64   ? CUBLAS_COMPUTE_64F
                                        : p_.math == DType::tf32 ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                                 : CUBLAS_COMPUTE_32F;
    const cudaDataType_t scale = p_.math == DType::fp64 ? CUDA_R_64F : CUDA_R_32F;
    CUBLASLT_CHECK(cublasLtMatmulDescCreate(&desc_, compute, scale));
    const cublasOperation_t ta = p_.trans_a() ? CUBLAS_OP_T : CUBLAS_OP_N, tb = p_.trans_b() ? CUBLAS_OP_T : CUBLAS_OP_N;
    CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CUBLASLT_CHECK(cublasLtMatmulDescSetAttribute(desc_, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    make_layout(&a_desc_, p_.input, p_.trans_a() ? p_.k : p_.m, p_.trans_a() ? p_.m : p_.k, p_.lda(), p_.a_elems());
    make_layout(&b_desc_, p_.input, p_.trans_b() ? p_.n : p_.k, p_.trans_b() ? p_.k : p_.n, p_.ldb(), p_.b_elems());
    make_layout(&c_desc_, p_.output, p_.m, p_.n, p_.ldc(), p_.c_elems());
    CUBLASLT_CHECK(cublasLtMatmulPreferenceCreate(&pref_));
    const size_t ws = ctx_->workspace_bytes();
    CUBLASLT_CHECK(cublasLtMatmulPreferenceSetAttribute(pref_, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws));
    int found = 0;
    cublasLtMatmulHeuristicResult_t result{};
    cublasStatus_t st = cublasLtMatmulAlgoGetHeuristic(ctx_->handle(), desc_, a_desc_, b_desc_, c_desc_, c_desc_,
                                                       pref_, 1, &result, &found);
    if (st == CUBLAS_STATUS_NOT_SUPPORTED || (st == CUBLAS_STATUS_SUCCESS && found == 0))
      throw SkipPoint("cuBLASLt has no algorithm for " + point());
    CUBLASLT_CHECK(st);
    algo_ = result.algo;
    workspace_used_ = result.workspaceSize;
    waves_ = result.wavesCount;
    alpha32_ = static_cast<float>(p_.alpha);
    beta32_ = static_cast<float>(p_.beta);
  }

  void launch() override {
    const bool f64 = p_.math == DType::fp64;
    const void* alpha = f64 ? static_cast<const void*>(&p_.alpha) : &alpha32_;
    const void* beta = f64 ? static_cast<const void*>(&p_.beta) : &beta32_;
    const void* c = p_.beta != 0.0 ? c_.get() : d_.get();
    CUBLASLT_CHECK(cublasLtMatmul(ctx_->handle(), desc_, alpha, a_.get(), a_desc_, b_.get(), b_desc_, beta, c, c_desc_,
                                  d_.get(), c_desc_, &algo_, ctx_->workspace(), ctx_->workspace_bytes(),
                                  static_cast<cudaStream_t>(backend_->stream())));
  }

  void describe_algorithm(Row& row) const override {
    int id = -1, tile = 0, stages = 0, splitk = 0, swizzle = 0, reduction = 0;
    size_t w = 0;
    cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_ID, &id, sizeof id, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_TILE_ID, &tile, sizeof tile, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_STAGES_ID, &stages, sizeof stages, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_SPLITK_NUM, &splitk, sizeof splitk, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_CTA_SWIZZLING, &swizzle, sizeof swizzle, &w);
    cublasLtMatmulAlgoConfigGetAttribute(&algo_, CUBLASLT_ALGO_CONFIG_REDUCTION_SCHEME, &reduction, sizeof reduction, &w);
    std::ostringstream s;
    s << "id=" << id << ";tile=" << tile << ";stages=" << stages << ";splitk=" << splitk << ";swizzle=" << swizzle
      << ";reduction=" << reduction;
    row.set("algo", s.str())
        .set("algo_source", "heuristic")
        .set("workspace_bytes", static_cast<int64_t>(workspace_used_))
        .set("waves", static_cast<double>(waves_));
  }

  void release() override {
    if (pref_) cublasLtMatmulPreferenceDestroy(pref_);
    if (a_desc_) cublasLtMatrixLayoutDestroy(a_desc_);
    if (b_desc_) cublasLtMatrixLayoutDestroy(b_desc_);
    if (c_desc_) cublasLtMatrixLayoutDestroy(c_desc_);
    if (desc_) cublasLtMatmulDescDestroy(desc_);
    pref_ = nullptr;
    a_desc_ = b_desc_ = c_desc_ = nullptr;
    desc_ = nullptr;
  }

 private:
  void make_layout(cublasLtMatrixLayout_t* l, DType t, int64_t rows, int64_t cols, int64_t ld, int64_t stride) {
    CUBLASLT_CHECK(cublasLtMatrixLayoutCreate(l, cuda_type(t), static_cast<uint64_t>(rows), static_cast<uint64_t>(cols), ld));
    if (p_.batch > 1) {
      const int32_t count = static_cast<int32_t>(p_.batch);
      CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_BATCH_COUNT, &count, sizeof count));
      CUBLASLT_CHECK(cublasLtMatrixLayoutSetAttribute(*l, CUBLASLT_MATRIX_LAYOUT_STRIDED_BATCH_OFFSET, &stride, sizeof stride));
    }
  }

  std::shared_ptr<CublasLtContext> ctx_;
  cublasLtMatmulDesc_t desc_ = nullptr;
  cublasLtMatrixLayout_t a_desc_ = nullptr, b_desc_ = nullptr, c_desc_ = nullptr;
  cublasLtMatmulPreference_t pref_ = nullptr;
  cublasLtMatmulAlgo_t algo_{};
  size_t workspace_used_ = 0;
  float waves_ = 0;
  float alpha32_ = 1, beta32_ = 0;
};

}  // namespace

std::shared_ptr<LibraryContext> make_cublaslt_context(Backend& backend, size_t workspace_bytes) {
  return std::make_shared<CublasLtContext>(backend, workspace_bytes);
}

std::unique_ptr<GemmOp> make_cublaslt_gemm(const GemmProblem& p, const std::string& regime,
                                           std::shared_ptr<LibraryContext> ctx) {
  return std::make_unique<CublasLtGemm>(p, regime, std::move(ctx));
}

}  // namespace gpucal::gemm
