#include "bench_p2p/p2p_formulas.h"

#include <algorithm>

#include "core/errors.h"

namespace gpucal::p2p {

int64_t bytes_counted(const std::string& direction, int64_t size) {
  return bytes_counted_rule(direction) == "size" ? size : 2 * size;
}

std::string bytes_counted_rule(const std::string& direction) {
  if (direction == "d2d" || direction == "h2h") return "read+write";
  if (direction == "bi") return "both-directions";
  if (direction == "pingpong") return "round-trip";
  return "size";
}

double bandwidth_gbps(int64_t bytes, double seconds) {
  return seconds > 0 ? static_cast<double>(bytes) / seconds / 1e9 : 0.0;
}

std::vector<Transfer> sendrecv_transfers(int n, bool bidirectional) {
  std::vector<Transfer> out;
  for (int i = 0; i < n / 2; ++i) {
    out.push_back({i, i + n / 2});
    if (bidirectional) out.push_back({i + n / 2, i});
  }
  return out;
}

std::vector<Transfer> ring_transfers(int n) {
  std::vector<Transfer> out;
  for (int r = 0; r < n; ++r) out.push_back({r, (r + 1) % n});
  return out;
}

std::vector<Transfer> pingpong_transfers() { return {{0, 1}, {1, 0}}; }

std::vector<Transfer> ordered_pairs(int n) {
  std::vector<Transfer> out;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      if (i != j) out.push_back({i, j});
  return out;
}

std::vector<Rail> rail_pairs(const std::vector<int>& node_of_rank) {
  std::vector<int> first, second;
  int other = -1;
  for (int r = 0; r < static_cast<int>(node_of_rank.size()); ++r) {
    const int node = node_of_rank[static_cast<std::size_t>(r)];
    if (node == node_of_rank.front()) {
      first.push_back(r);
    } else if (other < 0 || node == other) {
      other = node;
      second.push_back(r);
    } else {
      throw UsageError("--pattern rails pairs the ranks of two nodes; this run's ranks sit on more than two "
                       "(run it on two nodes, the same number of ranks on each)");
    }
  }
  if (second.empty() || first.size() != second.size())
    throw UsageError("--pattern rails pairs rank i of one node with rank i of another and needs two nodes with the same "
                     "number of ranks; this run has " + std::to_string(first.size()) + " and " +
                     std::to_string(second.size()));
  std::vector<Rail> out;
  for (std::size_t i = 0; i < first.size(); ++i) out.push_back({static_cast<int>(i), first[i], second[i]});
  return out;
}

void check_rank_count(const std::string& pattern, int n) {
  if (pattern == "copy") return;
  if (n < 2)
    throw UsageError("--pattern " + pattern + " needs at least 2 ranks (run it under mpirun/srun); this run has " +
                     std::to_string(n));
  if ((pattern == "sendrecv" || pattern == "bidir") && n % 2 != 0)
    throw UsageError("--pattern " + pattern + " pairs rank i with i + n/2 and needs an even rank count; this run has " +
                     std::to_string(n));
}

std::string rank_link_class(int node_a, int node_b) { return node_a == node_b ? "shm" : "network"; }

std::string peer_link_class(bool peer_access, const std::string& direct_link) {
  return peer_access ? direct_link : "staged";
}

std::string combine_link_classes(const std::vector<std::string>& classes) {
  if (classes.empty()) return "unknown";
  for (const auto& c : classes)
    if (c != classes.front()) return "mixed";
  return classes.front();
}

nlohmann::json pair_matrix_json(int n, const std::vector<PairResult>& results) {
  using nlohmann::json;
  json bw = json::array(), lat = json::array(), link = json::array();
  for (int i = 0; i < n; ++i) {
    bw.push_back(json(std::vector<json>(n, nullptr)));
    lat.push_back(json(std::vector<json>(n, nullptr)));
    link.push_back(json(std::vector<json>(n, nullptr)));
  }
  int64_t largest = 0, smallest = 0;
  for (const auto& r : results) {
    largest = std::max(largest, r.size);
    smallest = smallest == 0 ? r.size : std::min(smallest, r.size);
  }
  for (const auto& r : results) {
    if (r.src == r.dst || r.src < 0 || r.dst < 0 || r.src >= n || r.dst >= n) continue;
    if (r.size == largest) bw[r.src][r.dst] = r.bandwidth_gbps;
    if (r.size == smallest) lat[r.src][r.dst] = r.latency_us;
    link[r.src][r.dst] = r.link_class;
  }
  return {{"ranks", n},
          {"index", "[src_rank][dst_rank]"},
          {"bandwidth_size_bytes", largest},
          {"latency_size_bytes", smallest},
          {"bandwidth_gbps", bw},
          {"latency_us", lat},
          {"link_class", link}};
}

}  // namespace gpucal::p2p
