// Named shape sets (--set NAME): the sweeps the FlashAttention benchmarks and long-sequence
// scientific models use, so that runs on different machines cover the same points.
//   llm:  d = 128, 16 heads (2048 hidden / 128), MHA, 16K tokens per batch
//         (batch = 16384 / seq), seq 512 .. 16K: the FlashAttention-2 benchmark sweep.
//   long: batch 1, 16 heads, d = 128, seq 8K .. 256K (x2): long-sequence scientific
//         transformers; points that do not fit the device are recorded skips.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gpucal::attention {

struct SetShape {
  int64_t batch, heads, kv_heads, seq_q, seq_kv, head_dim;
};

// Throws UsageError naming the known sets.
std::vector<SetShape> named_set(const std::string& name);
const std::vector<std::string>& named_set_names();

}  // namespace gpucal::attention
