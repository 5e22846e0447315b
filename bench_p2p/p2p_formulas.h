// The p2p conventions users rely on, each in one place and unit-tested: which bytes a
// bandwidth counts, who talks to whom in each pattern, link classes, and the all-pairs
// matrix of the JSON sidecar.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gpucal::p2p {

// Bytes a bandwidth figure counts for one transfer of `size` bytes:
//  - d2d/h2h copies within one memory read and write every byte: 2*size (STREAM copy,
//    nvbandwidth's device-local copy), which is the figure to compare with the HBM peak;
//  - bidirectional messaging moves size in each direction at once: 2*size (osu_bibw);
//  - a ping-pong round trip moves size there and size back: 2*size, so the bandwidth is
//    size over the half round trip (osu_latency's latency);
//  - everything else (h2d, d2h, peer, uni, ring, pairs) moves size once: size.
int64_t bytes_counted(const std::string& direction, int64_t size);
// One word naming that convention for the CSV's bytes_counted_rule column.
std::string bytes_counted_rule(const std::string& direction);
// GB/s with GB = 1e9 B.
double bandwidth_gbps(int64_t bytes, double seconds);

// Who talks to whom. A Transfer is one message from src to dst of the point's size.
struct Transfer {
  int src, dst;
};
// sendrecv/bidir: rank i < n/2 pairs with i + n/2 (osu_mbw_mr's pairing: with ranks placed
// node by node, pairs cross nodes); all pairs transfer at once. n must be even and >= 2.
std::vector<Transfer> sendrecv_transfers(int n, bool bidirectional);
// ring: every rank sends to (r+1)%n and receives from (r-1+n)%n at once (nccl-tests
// sendrecv). n >= 2.
std::vector<Transfer> ring_transfers(int n);
// pingpong: rank 0 sends to rank 1, then rank 1 sends to rank 0 from its own buffer, in that
// order (one round trip, osu_latency); other ranks idle.
std::vector<Transfer> pingpong_transfers();
// pairs: every ordered pair (i, j), i != j, row-major; measured one at a time.
std::vector<Transfer> ordered_pairs(int n);
// rails: the ranks of two nodes paired by their index on their node (GPU i with GPU i, each
// GPU's own NIC on a rail-optimised cluster); `node_of_rank` is each rank's node index. Rail i
// is the i-th rank (by rank order) of the node of rank 0 with the i-th rank of the other node.
// Throws UsageError unless the ranks sit on exactly two nodes, the same number on each.
struct Rail {
  int rail, a, b;
};
std::vector<Rail> rail_pairs(const std::vector<int>& node_of_rank);
// Throws UsageError with a one-line reason when `pattern` cannot run on n ranks.
void check_rank_count(const std::string& pattern, int n);

// Link classes. Ranks: same node -> "shm" (intra-node), else "network". Several links in
// one row (ring, several sendrecv pairs): their common class, or "mixed".
std::string rank_link_class(int node_a, int node_b);
// Two GPUs of one process: without peer access a copy-engine peer copy is staged through
// host memory ("staged"), whatever wires join them; with it, the direct link the runtime
// names (nvlink, xgmi, pcie).
std::string peer_link_class(bool peer_access, const std::string& direct_link);
std::string combine_link_classes(const std::vector<std::string>& classes);

// The all-pairs matrix for the sidecar: bandwidth at the largest measured size and latency
// (median time) at the smallest, as N x N arrays indexed [src][dst], null on the diagonal
// and where a pair has no ok row at that size.
struct PairResult {
  int src, dst;
  int64_t size;
  double bandwidth_gbps, latency_us;
  std::string link_class;
};
nlohmann::json pair_matrix_json(int n, const std::vector<PairResult>& results);

}  // namespace gpucal::p2p
