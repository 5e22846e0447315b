// Element types named once: parsing, printing, sizes and unit roundoff.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace gpucal {

enum class DType { fp64, fp32, tf32, fp16, bf16, fp8_e4m3, fp8_e5m2, int8, int32, uint8 };

std::string to_string(DType t);
// Accepts the canonical names (fp32, bf16, fp8_e4m3, ...) and common aliases (float, half,
// e4m3, ...). Throws UsageError naming the accepted values.
DType parse_dtype(const std::string& name);
// A --FLAG list of dtypes; messages name the flag. Throws UsageError.
std::vector<DType> parse_dtype_list(const std::string& csv, const std::string& flag = "dtype");
// Storage bytes of one element (tf32 is stored as fp32).
size_t dtype_bytes(DType t);
bool dtype_is_float(DType t);
// Unit roundoff u = 2^-(mantissa bits + 1) of the format; 0 for integers.
double dtype_unit_roundoff(DType t);
// Largest absolute error of rounding a number below the smallest normal to the format: half
// its smallest subnormal (fp16 2^-25); 0 for integers. Rounding x gives |err| <= u|x| + this.
double dtype_underflow(DType t);

}  // namespace gpucal
