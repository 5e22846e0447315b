#include "core/backend/dtype.h"

#include <cmath>
#include <map>
#include <sstream>

#include "core/errors.h"
#include "core/driver/sweep.h"

namespace gpucal {

namespace {
struct DTypeInfo {
  DType type;
  const char* name;
  size_t bytes;
  int mantissa_bits;  // explicit fraction bits; -1 for integers
  int min_exponent;   // exponent of the smallest normal number (floats)
};
constexpr DTypeInfo kInfo[] = {
    {DType::fp64, "fp64", 8, 52, -1022}, {DType::fp32, "fp32", 4, 23, -126},        {DType::tf32, "tf32", 4, 10, -126},
    {DType::fp16, "fp16", 2, 10, -14},   {DType::bf16, "bf16", 2, 7, -126},         {DType::fp8_e4m3, "fp8_e4m3", 1, 3, -6},
    {DType::fp8_e5m2, "fp8_e5m2", 1, 2, -14}, {DType::int8, "int8", 1, -1, 0},     {DType::int32, "int32", 4, -1, 0},
    {DType::uint8, "uint8", 1, -1, 0},
};
const DTypeInfo& info(DType t) {
  for (const auto& i : kInfo)
    if (i.type == t) return i;
  throw std::logic_error("unknown DType");
}
}  // namespace

std::string to_string(DType t) { return info(t).name; }

DType parse_dtype(const std::string& name) {
  static const std::map<std::string, DType> aliases = {
      {"double", DType::fp64}, {"float", DType::fp32}, {"half", DType::fp16}, {"bfloat16", DType::bf16},
      {"e4m3", DType::fp8_e4m3}, {"e5m2", DType::fp8_e5m2}, {"fp8", DType::fp8_e4m3}, {"int", DType::int32},
  };
  for (const auto& i : kInfo)
    if (name == i.name) return i.type;
  auto it = aliases.find(name);
  if (it != aliases.end()) return it->second;
  std::ostringstream msg;
  msg << "unknown dtype '" << name << "' (expected one of:";
  for (const auto& i : kInfo) msg << ' ' << i.name;
  msg << ")";
  throw UsageError(msg.str());
}

std::vector<DType> parse_dtype_list(const std::string& csv, const std::string& flag) {
  std::vector<DType> out;
  for (const auto& item : parse_word_list(csv, flag)) {  // the list path: empty and repeated items
    DType t;
    try {
      t = parse_dtype(item);
    } catch (const UsageError& e) {
      throw UsageError("--" + flag + ": " + e.what());
    }
    for (DType seen : out)
      if (seen == t) throw UsageError("--" + flag + ": '" + item + "' names " + to_string(t) + " a second time");
    out.push_back(t);
  }
  return out;
}

size_t dtype_bytes(DType t) { return info(t).bytes; }
bool dtype_is_float(DType t) { return info(t).mantissa_bits >= 0; }
double dtype_unit_roundoff(DType t) {
  int m = info(t).mantissa_bits;
  return m < 0 ? 0.0 : 1.0 / static_cast<double>(2ull << m);
}
double dtype_underflow(DType t) {
  const DTypeInfo& i = info(t);
  return i.mantissa_bits < 0 ? 0.0 : std::ldexp(1.0, i.min_exponent - i.mantissa_bits - 1);
}

}  // namespace gpucal
