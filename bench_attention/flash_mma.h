// Fragment-level tensor-core helpers for the flash attention kernels: the ONLY place where
// the CUDA (mma.sync PTX, ldmatrix, cp.async) and HIP (MFMA builtins) code differs. The
// kernels (flash_tiles.cuh, flash_fwd.cuh, flash_bwd.cuh) only use what is declared here.
//
// Every MMA is a warp-wide 16x16x16 product C[m][n] += sum_k A[m][k] * B[k][n] with fp16 or
// bf16 inputs (raw 16-bit patterns, kBf16 selects the type) and fp32 accumulation. The
// kernels never look inside FragA/FragB; they read the accumulator through acc_row/acc_col:
//
//   CUDA (warp of 32; g = lane/4, t = lane%4), two mma.m16n8k16 per 16x16 tile
//   (PTX ISA, "Matrix Fragments for mma.m16n8k16 with floating point type"):
//     C: 8 floats, v[4h+i] = C[g + 8*(i>>1)][8h + 2t + (i&1)]          (h = n half)
//     A: 4 regs, a[r] = A[g + 8*(r&1)][8*(r>>1) + 2t + {0,1}]
//     B: 4 regs, b[2h+j] = B[8j + 2t + {0,1}][8h + g]
//   HIP gfx90a (wave of 64; v_mfma_f32_16x16x16{f16,bf16_1k}; hardware layouts
//   A_hw[i][k]: lane i+16(k/4), item k%4; B_hw[k][j]: lane j+16(k/4), item k%4;
//   D_hw[i][j]: lane j+16(i/4), item i%4). We issue mfma(B^T, A^T) so D_hw = C^T and:
//     C: 4 floats, v[e] = C[lane%16][4*(lane/16) + e]
//     A: a[e] = A[lane%16][4*(lane/16) + e]
//     B: b[e] = B[4*(lane/16) + e][lane%16]
// In both layouts a C tile converted element-wise to 16 bits IS the A fragment of the
// same 16x16 matrix (acc_to_a), which is how P = softmax(S) feeds P V from registers.
#pragma once

#include <cstdint>

#include "core/backend/gpu_runtime.h"

namespace gpucal::attention::GPUCAL_GPU_NS::flash_detail {

#if defined(GPUCAL_GPU_HIP)
// ------------------------------------------------------------------------------ HIP
constexpr int kWarpSize = 64;
constexpr int kAccElems = 4;           // fp32 accumulator values per lane per 16x16 tile
constexpr int kAccRows = 1;            // distinct tile rows a lane holds
constexpr bool kSmallSmem = true;      // 64 KiB LDS per workgroup: smaller tiles
constexpr bool kSmemOptIn = false;     // no opt-in needed (nor possible) above 48 KiB

typedef short short4_t __attribute__((ext_vector_type(4)));
typedef _Float16 half4_t __attribute__((ext_vector_type(4)));
typedef float float4_t __attribute__((ext_vector_type(4)));

struct FragA { short4_t v; };
struct FragB { short4_t v; };
struct FragC { float v[kAccElems]; };

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) & (kWarpSize - 1); }
__device__ __forceinline__ int acc_row(int /*e*/) { return lane_id() & 15; }
__device__ __forceinline__ int acc_col(int e) { return 4 * (lane_id() >> 4) + e; }
__device__ __forceinline__ int acc_slot(int /*e*/) { return 0; }
__device__ __forceinline__ int slot_row(int /*s*/) { return lane_id() & 15; }
// One lane per row writes per-row results (LSE).
__device__ __forceinline__ bool row_leader() { return lane_id() < 16; }
// All-reduce over the lanes that hold the same rows (lanes with equal lane%16).
__device__ __forceinline__ float row_max(float x) {
  x = fmaxf(x, __shfl_xor(x, 16));
  return fmaxf(x, __shfl_xor(x, 32));
}
__device__ __forceinline__ float row_sum(float x) {
  x += __shfl_xor(x, 16);
  return x + __shfl_xor(x, 32);
}

template <bool kBf16>
__device__ __forceinline__ uint16_t float_to_bits(float f) {
  if constexpr (kBf16) {
    uint32_t u = __builtin_bit_cast(uint32_t, f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return 0x7fc0;  // NaN stays NaN
    return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);  // round to nearest even
  } else {
    return __builtin_bit_cast(uint16_t, static_cast<_Float16>(f));
  }
}
template <bool kBf16>
__device__ __forceinline__ float bits_to_float(uint16_t b) {
  if constexpr (kBf16) return __builtin_bit_cast(float, static_cast<uint32_t>(b) << 16);
  else return static_cast<float>(__builtin_bit_cast(_Float16, b));
}

// A[m][k] = p[m*ld + k]: each lane reads 4 contiguous elements (8 bytes; ld % 4 == 0).
__device__ __forceinline__ void load_a(FragA& a, const uint16_t* p, int ld) {
  const int lane = lane_id();
  a.v = *reinterpret_cast<const short4_t*>(p + (lane & 15) * ld + 4 * (lane >> 4));
}
// B[k][n] = p[n*ld + k] (e.g. K stored [key][dim] for S = Q K^T).
__device__ __forceinline__ void load_b_nk(FragB& b, const uint16_t* p, int ld) {
  const int lane = lane_id();
  b.v = *reinterpret_cast<const short4_t*>(p + (lane & 15) * ld + 4 * (lane >> 4));
}
// B[k][n] = p[k*ld + n] (e.g. V stored [key][dim] for O = P V).
__device__ __forceinline__ void load_b_kn(FragB& b, const uint16_t* p, int ld) {
  const int lane = lane_id();
  const uint16_t* q = p + 4 * (lane >> 4) * ld + (lane & 15);
  b.v = short4_t{static_cast<short>(q[0]), static_cast<short>(q[ld]), static_cast<short>(q[2 * ld]),
                 static_cast<short>(q[3 * ld])};
}
template <bool kBf16>
__device__ __forceinline__ void acc_to_a(FragA& a, const FragC& c) {
  a.v = short4_t{static_cast<short>(float_to_bits<kBf16>(c.v[0])), static_cast<short>(float_to_bits<kBf16>(c.v[1])),
                 static_cast<short>(float_to_bits<kBf16>(c.v[2])), static_cast<short>(float_to_bits<kBf16>(c.v[3]))};
}
template <bool kBf16>
__device__ __forceinline__ void mma(FragC& c, const FragA& a, const FragB& b) {
  float4_t acc = {c.v[0], c.v[1], c.v[2], c.v[3]};
  // Operands swapped on purpose (see the header comment): the hardware computes B^T A^T = C^T.
  if constexpr (kBf16) {
    acc = __builtin_amdgcn_mfma_f32_16x16x16bf16_1k(b.v, a.v, acc, 0, 0, 0);
  } else {
    acc = __builtin_amdgcn_mfma_f32_16x16x16f16(__builtin_bit_cast(half4_t, b.v), __builtin_bit_cast(half4_t, a.v),
                                                acc, 0, 0, 0);
  }
  c.v[0] = acc[0];
  c.v[1] = acc[1];
  c.v[2] = acc[2];
  c.v[3] = acc[3];
}

// Global -> shared 16-byte copy in two halves, zero-filled when !valid. AMD GPUs have no
// cp.async: copy16_issue loads into a register (the load stays in flight: the compiler
// waits for it only where the register is used), copy16_land stores it to LDS. The kernels
// land a tile just before async_wait_all(), so the loads overlap the MMAs between issue and
// land as cp.async's do on CUDA (the LDS write falls inside the window cp.async has for
// its own), and the barrier after the wait makes the tile visible.
struct Staged16 {
  uint4 v;
};
__device__ __forceinline__ void copy16_issue(Staged16& held, void*, const void* gmem, bool valid) {
  held.v = valid ? *reinterpret_cast<const uint4*>(gmem) : make_uint4(0, 0, 0, 0);
}
__device__ __forceinline__ void copy16_land(void* smem, const Staged16& held) {
  *reinterpret_cast<uint4*>(smem) = held.v;
}
__device__ __forceinline__ void async_commit() {}
__device__ __forceinline__ void async_wait_all() {}

#else
// ----------------------------------------------------------------------------- CUDA
constexpr int kWarpSize = 32;
constexpr int kAccElems = 8;
constexpr int kAccRows = 2;            // rows g and g+8
constexpr bool kSmallSmem = false;     // sm_80: 163 KiB, sm_90: 227 KiB per block
constexpr bool kSmemOptIn = true;      // > 48 KiB dynamic smem needs cudaFuncSetAttribute

struct FragA { uint32_t v[4]; };
struct FragB { uint32_t v[4]; };
struct FragC { float v[kAccElems]; };

__device__ __forceinline__ int lane_id() { return static_cast<int>(threadIdx.x) & (kWarpSize - 1); }
__device__ __forceinline__ int acc_row(int e) { return (lane_id() >> 2) + 8 * ((e >> 1) & 1); }
__device__ __forceinline__ int acc_col(int e) { return 8 * (e >> 2) + 2 * (lane_id() & 3) + (e & 1); }
__device__ __forceinline__ int acc_slot(int e) { return (e >> 1) & 1; }
__device__ __forceinline__ int slot_row(int s) { return (lane_id() >> 2) + 8 * s; }
__device__ __forceinline__ bool row_leader() { return (lane_id() & 3) == 0; }
// All-reduce over the 4 lanes (equal lane/4) that hold the same rows.
__device__ __forceinline__ float row_max(float x) {
  x = fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 1));
  return fmaxf(x, __shfl_xor_sync(0xffffffffu, x, 2));
}
__device__ __forceinline__ float row_sum(float x) {
  x += __shfl_xor_sync(0xffffffffu, x, 1);
  return x + __shfl_xor_sync(0xffffffffu, x, 2);
}

template <bool kBf16>
__device__ __forceinline__ uint16_t float_to_bits(float f) {
  if constexpr (kBf16) return __bfloat16_as_ushort(__float2bfloat16_rn(f));
  else return __half_as_ushort(__float2half_rn(f));
}
template <bool kBf16>
__device__ __forceinline__ float bits_to_float(uint16_t b) {
  if constexpr (kBf16) return __bfloat162float(__ushort_as_bfloat16(b));
  else return __half2float(__ushort_as_half(b));
}
// Two floats -> one register, `lo` in the low 16 bits (the lower k / column index).
template <bool kBf16>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  return static_cast<uint32_t>(float_to_bits<kBf16>(lo)) | (static_cast<uint32_t>(float_to_bits<kBf16>(hi)) << 16);
}

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
// ldmatrix x4: lanes 8i..8i+7 give the 8 row addresses (16 bytes each) of 8x8 matrix i;
// register i receives matrix i, row lane/4, columns 2(lane%4)+{0,1} (.trans: the transpose).
__device__ __forceinline__ void ldmatrix_x4(uint32_t (&r)[4], const uint16_t* row_ptr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_ptr)));
}
__device__ __forceinline__ void ldmatrix_x4_trans(uint32_t (&r)[4], const uint16_t* row_ptr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(smem_addr(row_ptr)));
}
// A[m][k] = p[m*ld + k]. Matrix i = lane/8 covers rows 8(i&1).., cols 8(i>>1).. (= a[i]).
// ld*2 must be a multiple of 16 bytes (the kernels pad rows by 8 elements).
__device__ __forceinline__ void load_a(FragA& a, const uint16_t* p, int ld) {
  const int lane = lane_id(), i = lane >> 3;
  ldmatrix_x4(a.v, p + ((lane & 7) + 8 * (i & 1)) * ld + 8 * (i >> 1));
}
// B[k][n] = p[n*ld + k]. Matrix i = 2h+j: stored rows n = 8h.., cols k = 8j.. (= b[2h+j]).
__device__ __forceinline__ void load_b_nk(FragB& b, const uint16_t* p, int ld) {
  const int lane = lane_id(), i = lane >> 3;
  ldmatrix_x4(b.v, p + (8 * (i >> 1) + (lane & 7)) * ld + 8 * (i & 1));
}
// B[k][n] = p[k*ld + n]. Matrix i = 2h+j: stored rows k = 8j.., cols n = 8h.., transposed.
__device__ __forceinline__ void load_b_kn(FragB& b, const uint16_t* p, int ld) {
  const int lane = lane_id(), i = lane >> 3;
  ldmatrix_x4_trans(b.v, p + (8 * (i & 1) + (lane & 7)) * ld + 8 * (i >> 1));
}
template <bool kBf16>
__device__ __forceinline__ void acc_to_a(FragA& a, const FragC& c) {
  a.v[0] = pack2<kBf16>(c.v[0], c.v[1]);  // row g,   k 2t..
  a.v[1] = pack2<kBf16>(c.v[2], c.v[3]);  // row g+8, k 2t..
  a.v[2] = pack2<kBf16>(c.v[4], c.v[5]);  // row g,   k 8+2t..
  a.v[3] = pack2<kBf16>(c.v[6], c.v[7]);  // row g+8, k 8+2t..
}
template <bool kBf16>
__device__ __forceinline__ void mma(FragC& c, const FragA& a, const FragB& b) {
#pragma unroll
  for (int h = 0; h < 2; ++h) {
    float* d = c.v + 4 * h;
    if constexpr (kBf16) {
      asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(a.v[0]), "r"(a.v[1]), "r"(a.v[2]), "r"(a.v[3]), "r"(b.v[2 * h]), "r"(b.v[2 * h + 1]));
    } else {
      asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
          "{%0,%1,%2,%3};\n"
          : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
          : "r"(a.v[0]), "r"(a.v[1]), "r"(a.v[2]), "r"(a.v[3]), "r"(b.v[2 * h]), "r"(b.v[2 * h + 1]));
    }
  }
}

// cp.async 16 bytes global -> shared, bypassing L1; src-size 0 zero-fills (ragged tiles).
__device__ __forceinline__ void copy16_async(void* smem, const void* gmem, bool valid) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(smem_addr(smem)), "l"(gmem),
               "r"(valid ? 16 : 0)
               : "memory");
}
__device__ __forceinline__ void async_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
__device__ __forceinline__ void async_wait_all() { asm volatile("cp.async.wait_group 0;\n" ::: "memory"); }
// The copy is in flight from copy16_issue on (cp.async); nothing is held, nothing to land.
struct Staged16 {};
__device__ __forceinline__ void copy16_issue(Staged16&, void* smem, const void* gmem, bool valid) {
  copy16_async(smem, gmem, valid);
}
__device__ __forceinline__ void copy16_land(void*, const Staged16&) {}
#endif

__device__ __forceinline__ void zero(FragC& c) {
#pragma unroll
  for (int e = 0; e < kAccElems; ++e) c.v[e] = 0.f;
}

}  // namespace gpucal::attention::GPUCAL_GPU_NS::flash_detail
