// Host GEMM through OpenBLAS (sgemm, dgemm): the CPU baseline and the backend CI runs.
// One candidate (the library's own blocking), no graphs, no tiles to report.
#include <cblas.h>

#include "bench_gemm/gemm_impls.h"
#include "core/errors.h"

namespace gpucal::gemm {

namespace {

class HostGemm : public GemmOp {
 public:
  using GemmOp::GemmOp;

 protected:
  void prepare() override {
    if (!backend_->is_host()) throw SkipPoint("the openblas implementation runs on the host backend only");
    if (p_.math != DType::fp32 && p_.math != DType::fp64)
      throw SkipPoint("OpenBLAS offers fp32 and fp64 GEMM only, not " + to_string(p_.user_dtype()));
  }
  bool output_in_place() const override { return true; }
  AlgoInfo algorithm() const override {
    AlgoInfo a;
    a.summary = p_.math == DType::fp64 ? "cblas_dgemm" : "cblas_sgemm";
    return a;
  }
  void run(int copy) override {
    const auto ta = p_.trans_a() ? CblasTrans : CblasNoTrans, tb = p_.trans_b() ? CblasTrans : CblasNoTrans;
    const int m = static_cast<int>(p_.m), n = static_cast<int>(p_.n), k = static_cast<int>(p_.k);
    const int lda = static_cast<int>(p_.lda()), ldb = static_cast<int>(p_.ldb()), ldc = static_cast<int>(p_.ldc());
    for (int64_t b = 0; b < p_.batch; ++b) {
      if (p_.math == DType::fp64) {
        cblas_dgemm(CblasColMajor, ta, tb, m, n, k, p_.alpha, static_cast<double*>(a_at(copy)) + b * p_.a_elems(), lda,
                    static_cast<double*>(b_at(copy)) + b * p_.b_elems(), ldb, p_.beta,
                    static_cast<double*>(d()) + b * p_.c_elems(), ldc);
      } else {
        cblas_sgemm(CblasColMajor, ta, tb, m, n, k, static_cast<float>(p_.alpha),
                    static_cast<float*>(a_at(copy)) + b * p_.a_elems(), lda,
                    static_cast<float*>(b_at(copy)) + b * p_.b_elems(), ldb, static_cast<float>(p_.beta),
                    static_cast<float*>(d()) + b * p_.c_elems(), ldc);
      }
    }
  }
};

}  // namespace

std::unique_ptr<GemmOp> make_host_gemm(const GemmProblem& p, const std::string& regime, const GemmRunOptions& o) {
  return std::make_unique<HostGemm>(p, "openblas", regime, o);
}

}  // namespace gpucal::gemm
