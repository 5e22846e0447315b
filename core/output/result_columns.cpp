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

}  // namespace gpucal
