// Host attention (the `host` implementation CI runs): per (batch, head), query blocks of 64 rows;
// S = scale·Q Kᵀ and the products with P and dS through OpenBLAS sgemm/dgemm, softmax in the
// data type. Deliberately a different algorithm from the row-wise fp64 reference it is checked
// against. Causal blocks stop at the last visible key.
#include <cblas.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "bench_attention/attention_impls.h"
#include "core/errors.h"

namespace gpucal::attention {

namespace {

constexpr int64_t kBlockRows = 64;

void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}
void gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, double alpha, const double* a,
          int64_t lda, const double* b, int64_t ldb, double beta, double* c, int64_t ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k), alpha, a,
              static_cast<int>(lda), b, static_cast<int>(ldb), beta, c, static_cast<int>(ldc));
}

template <typename T>
struct HostKernels {
  const AttentionParams& p;
  std::vector<T>& s;   // [kBlockRows][seq_kv] scores, then P
  std::vector<T>& dp;  // [kBlockRows][seq_kv] dP, then dS (backward)
  std::vector<double>& lse_full;  // LSE kept at full precision for the backward (the buffer is fp32)

  int64_t visible(int64_t i) const { return p.causal ? std::min(i + 1, p.seq_kv) : p.seq_kv; }

  void forward(const T* q, const T* k, const T* v, T* o, float* lse) {
    const auto sq = p.strides(p.heads, p.seq_q), skv = p.strides(p.kv_heads, p.seq_kv);
    const int64_t group = p.heads / p.kv_heads, d = p.head_dim;
    const T scale = static_cast<T>(p.softmax_scale());
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t h = 0; h < p.heads; ++h) {
        const T* qh = q + b * sq.batch + h * sq.head;
        const T* kh = k + b * skv.batch + (h / group) * skv.head;
        const T* vh = v + b * skv.batch + (h / group) * skv.head;
        T* oh = o + b * sq.batch + h * sq.head;
        for (int64_t i0 = 0; i0 < p.seq_q; i0 += kBlockRows) {
          const int64_t rows = std::min(kBlockRows, p.seq_q - i0), n = visible(i0 + rows - 1);
          gemm(CblasNoTrans, CblasTrans, rows, n, d, scale, qh + i0 * sq.seq, sq.seq, kh, skv.seq, T(0), s.data(), n);
          for (int64_t r = 0; r < rows; ++r) {
            T* x = s.data() + r * n;
            const int64_t vis = visible(i0 + r);
            const T m = *std::max_element(x, x + vis);
            T l = 0;
            for (int64_t j = 0; j < vis; ++j) l += x[j] = std::exp(x[j] - m);
            for (int64_t j = 0; j < vis; ++j) x[j] /= l;
            std::fill(x + vis, x + n, T(0));
            const int64_t row = (b * p.heads + h) * p.seq_q + i0 + r;
            lse_full[static_cast<size_t>(row)] = static_cast<double>(m + std::log(l));
            lse[row] = static_cast<float>(lse_full[static_cast<size_t>(row)]);
          }
          gemm(CblasNoTrans, CblasNoTrans, rows, d, n, T(1), s.data(), n, vh, skv.seq, T(0), oh + i0 * sq.seq, sq.seq);
        }
      }
  }

  void backward(const T* q, const T* k, const T* v, const T* o, const T* d_o, T* dq, T* dk, T* dv) {
    const auto sq = p.strides(p.heads, p.seq_q), skv = p.strides(p.kv_heads, p.seq_kv);
    const int64_t group = p.heads / p.kv_heads, d = p.head_dim;
    const T scale = static_cast<T>(p.softmax_scale());
    std::memset(dk, 0, static_cast<size_t>(p.kv_elems()) * sizeof(T));
    std::memset(dv, 0, static_cast<size_t>(p.kv_elems()) * sizeof(T));
    for (int64_t b = 0; b < p.batch; ++b)
      for (int64_t h = 0; h < p.heads; ++h) {
        const int64_t qoff = b * sq.batch + h * sq.head, kvoff = b * skv.batch + (h / group) * skv.head;
        for (int64_t i0 = 0; i0 < p.seq_q; i0 += kBlockRows) {
          const int64_t rows = std::min(kBlockRows, p.seq_q - i0), n = visible(i0 + rows - 1);
          const T* qb = q + qoff + i0 * sq.seq;
          const T* dob = d_o + qoff + i0 * sq.seq;
          gemm(CblasNoTrans, CblasTrans, rows, n, d, scale, qb, sq.seq, k + kvoff, skv.seq, T(0), s.data(), n);
          gemm(CblasNoTrans, CblasTrans, rows, n, d, T(1), dob, sq.seq, v + kvoff, skv.seq, T(0), dp.data(), n);
          for (int64_t r = 0; r < rows; ++r) {
            const int64_t i = i0 + r, vis = visible(i);
            const T* orow = o + qoff + i * sq.seq;
            const T* dorow = d_o + qoff + i * sq.seq;
            T delta = 0;
            for (int64_t c = 0; c < d; ++c) delta += orow[c] * dorow[c];
            const T l = static_cast<T>(lse_full[static_cast<size_t>((b * p.heads + h) * p.seq_q + i)]);
            T* x = s.data() + r * n;
            T* g = dp.data() + r * n;
            for (int64_t j = 0; j < n; ++j) {
              x[j] = j < vis ? std::exp(x[j] - l) : T(0);  // P
              g[j] = x[j] * (g[j] - delta);                 // dS
            }
          }
          gemm(CblasNoTrans, CblasNoTrans, rows, d, n, scale, dp.data(), n, k + kvoff, skv.seq, T(0),
               dq + qoff + i0 * sq.seq, sq.seq);
          gemm(CblasTrans, CblasNoTrans, n, d, rows, scale, dp.data(), n, qb, sq.seq, T(1), dk + kvoff, skv.seq);
          gemm(CblasTrans, CblasNoTrans, n, d, rows, T(1), s.data(), n, dob, sq.seq, T(1), dv + kvoff, skv.seq);
        }
      }
  }
};

class HostAttention : public AttentionOp {
 public:
  using AttentionOp::AttentionOp;

 protected:
  void check_supported() override {
    if (!backend_->is_host()) throw SkipPoint("the host implementation runs on the host backend only");
    if (p_.dtype != DType::fp32 && p_.dtype != DType::fp64)
      throw SkipPoint("the host implementation computes in fp32 and fp64 only, not " + gpucal::to_string(p_.dtype));
  }
  size_t workspace_estimate() const override { return scratch_bytes(); }
  void prepare() override {
    const size_t n = static_cast<size_t>(kBlockRows * p_.shape.seq_kv);
    lse_full_.assign(static_cast<size_t>(p_.shape.lse_elems()), 0.0);
    if (p_.dtype == DType::fp64) s64_.assign(n, 0), dp64_.assign(p_.needs_backward() ? n : 0, 0);
    else s32_.assign(n, 0), dp32_.assign(p_.needs_backward() ? n : 0, 0);
  }
  void forward() override {
    if (p_.dtype == DType::fp64) run<double>(s64_, dp64_, false);
    else run<float>(s32_, dp32_, false);
  }
  void backward() override {
    if (p_.dtype == DType::fp64) run<double>(s64_, dp64_, true);
    else run<float>(s32_, dp32_, true);
  }
  void describe_impl(Row& row) const override {
    row.set("engine", std::string("openblas ") + (p_.dtype == DType::fp64 ? "dgemm" : "sgemm") +
                          ", 64-row query blocks, two-pass softmax")
        .set("workspace_bytes", static_cast<int64_t>(scratch_bytes()));
  }
  void release() override {
    s32_ = {}, dp32_ = {};
    s64_ = {}, dp64_ = {}, lse_full_ = {};
  }

 private:
  size_t scratch_bytes() const {
    return (p_.needs_backward() ? 2 : 1) * static_cast<size_t>(kBlockRows * p_.shape.seq_kv) * dtype_bytes(p_.dtype);
  }
  template <typename T>
  void run(std::vector<T>& s, std::vector<T>& dp, bool bwd) {
    HostKernels<T> kern{p_.shape, s, dp, lse_full_};
    if (!bwd)
      kern.forward(q_.as<T>(), k_.as<T>(), v_.as<T>(), o_.as<T>(), lse_.as<float>());
    else
      kern.backward(q_.as<T>(), k_.as<T>(), v_.as<T>(), o_.as<T>(), do_.as<T>(), dq_.as<T>(), dk_.as<T>(),
                    dv_.as<T>());
  }
  std::vector<float> s32_, dp32_;
  std::vector<double> s64_, dp64_, lse_full_;
};

}  // namespace

std::unique_ptr<AttentionOp> make_host_attention(const AttentionProblem& p, const std::string& regime) {
  return std::make_unique<HostAttention>(p, "host", regime);
}

}  // namespace gpucal::attention
