// Built-in shape sets (--set NAME), data in gemm_sets.cpp. A set gives GEMM dimensions
// only; dtypes, layouts and batch come from the command line.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpucal::gemm {

struct SetShape {
  int64_t m, n, k;
  std::string note;  // what the shape stands for ("h=4096 T=2048 qkv")
};

struct ShapeSet {
  std::string name;
  std::string description;
  std::vector<SetShape> shapes;
};

// Every built-in set, in a fixed order.
const std::vector<ShapeSet>& shape_sets();
// Throws UsageError naming the known sets.
const ShapeSet& find_shape_set(const std::string& name);

}  // namespace gpucal::gemm
