#include "core/output/result_columns.h"

namespace gpucal {

const std::vector<std::string>& collectives_columns() {
  static const std::vector<std::string> columns = {"collective",
                                                   "dtype",
                                                   "op",
                                                   "in_place",
                                                   "root",
                                                   "nranks",
                                                   "nnodes",
                                                   "ranks_per_node",
                                                   "spans_nodes",
                                                   "size_bytes",
                                                   "size_bytes_requested",
                                                   "count",
                                                   "count_total",
                                                   "send_count",
                                                   "recv_count",
                                                   "algbw_gbps",
                                                   "busbw_gbps",
                                                   "bus_factor",
                                                   "wrong",
                                                   "time_us_rank_spread",
                                                   "graph",
                                                   "nccl_algo",
                                                   "nccl_proto",
                                                   "nccl_choices"};
  return columns;
}

const std::vector<std::string>& p2p_columns() {
  static const std::vector<std::string> columns = {
      "pattern",        "direction",  "engine",        "src_rank",           "dst_rank",
      "src_device",     "dst_device", "src_node",      "dst_node",           "link_class",
      "memory",         "size_bytes", "bytes_counted", "bytes_counted_rule", "concurrent",
      "bandwidth_gbps", "peak_gbps",  "wrong",         "latency_us"};
  return columns;
}

const std::vector<std::string>& gemm_columns() {
  static const std::vector<std::string> columns = {
    "dtype", "b_dtype", "compute_type", "math_type", "out_dtype", "layout", "m", "n", "k", "batch", "alpha", "beta",
    "scale_a", "scale_b", "flops", "flop_convention", "bytes", "arith_intensity_flop_per_byte", "tflops",
    "peak_tflops", "peak_source", "efficiency", "efficiency_vs_best_so_far", "achieved_gbps", "roofline_bound",
    "roofline_time_us", "algo", "algo_source", "algo_id", "solution_index", "algo_rank", "tile", "stages", "split_k",
    "swizzle", "reduction_scheme", "workspace_bytes", "workspace_limit_bytes", "library_waves", "sms", "tile_m",
    "tile_n", "tiles", "waves", "wave_efficiency", "tile_efficiency", "heuristic_time_us", "autotune_candidates",
    "autotune_gain", "rotate_copies", "graph_launches", "verify_method", "verified_elements", "tolerance"};
  return columns;
}

}  // namespace gpucal
