#include "bench_p2p/p2p_op.h"

#include <sstream>

#include "core/formulas/peaks.h"
#include "core/driver/sweep.h"

namespace gpucal::p2p {

std::vector<RankInfo> gather_rank_info(World& world, const Backend& backend) {
  std::ostringstream mine;
  mine << world.node() << " " << backend.info().index << " " << (backend.info().pci_bus_id.empty() ? "-" : backend.info().pci_bus_id);
  std::string joined;
  for (const auto& s : world.gather_strings(mine.str())) joined += s + "\n";
  std::vector<unsigned char> bytes(joined.begin(), joined.end());
  world.broadcast(bytes, 0);
  std::istringstream in(std::string(bytes.begin(), bytes.end()));
  std::vector<RankInfo> out;
  RankInfo r;
  while (in >> r.node >> r.device >> r.pci_bus_id) out.push_back(r);
  return out;
}

std::string P2pContext::link_class(int a, int b) const {
  const RankInfo& x = ranks.at(static_cast<size_t>(a));
  const RankInfo& y = ranks.at(static_cast<size_t>(b));
  if (x.node != y.node) return rank_link_class(x.node, y.node);
  if (backend->is_host()) return "shm";
  if (x.pci_bus_id == y.pci_bus_id) return "same-device";
  // Both ranks' devices as this process numbers them, when it sees both.
  const int me = rank();
  if (a != me && b != me) return "intra-node";
  const RankInfo& other = a == me ? y : x;
  return device->link_class_to(other.pci_bus_id);
}

void P2pContext::record_pair(const PairResult& r) {
  if (rank() != 0) return;
  pair_results.push_back(r);
  if (!metadata) return;
  nlohmann::json m = pair_matrix_json(world->size(), pair_results);
  m["engine"] = comm ? comm->library() : "";
  nlohmann::json nodes = nlohmann::json::array(), devices = nlohmann::json::array();
  for (const RankInfo& info : ranks) {
    nodes.push_back(info.node);
    devices.push_back(info.device);
  }
  m["rank_node"] = nodes;
  m["rank_device"] = devices;
  metadata->doc()["p2p_matrix"] = m;
}

std::string P2pOp::point() const {
  return "p2p/" + e_.pattern + "/" + e_.engine + "/" + key_ + (key_.empty() ? "" : "/") + format_size(e_.size) + "/" + regime_;
}

void P2pOp::describe(Row& row) const {
  row.set("pattern", e_.pattern)
      .set("direction", e_.direction)
      .set("engine", e_.engine)
      .set("memory", e_.memory)
      .set("link_class", e_.link_class)
      .set("size_bytes", e_.size)
      .set("bytes_counted", bytes_counted(e_.direction, e_.size))
      .set("bytes_counted_rule", bytes_counted_rule(e_.direction))
      .set("concurrent", e_.concurrent);
  if (e_.all_ranks) return;  // ring: every rank is both; the cells stay empty
  row.set("src_rank", e_.src_rank).set("dst_rank", e_.dst_rank);
  row.set("src_device", e_.src_device).set("dst_device", e_.dst_device);
  row.set("src_node", e_.src_node).set("dst_node", e_.dst_node);
}

bool P2pOp::annotate(Row& row, const Measurement& m) const {
  const double gbps = bandwidth_gbps(bytes_counted(e_.direction, e_.size), m.seconds.median);
  row.set("bandwidth_gbps", gbps).set("wrong", wrong_);
  // osu_latency's latency: half the round trip (so bandwidth_gbps = size / latency).
  if (e_.pattern == "pingpong") row.set("latency_us", m.seconds.median * 1e6 / 2);
  if (e_.pattern == "pairs") ctx_->record_pair({e_.src_rank, e_.dst_rank, e_.size, gbps, m.seconds.median * 1e6, e_.link_class});
  // Plausibility: a copy within device memory beyond the cache cannot beat the memory's
  // peak (read + write counted, as the peak counts every byte moved).
  if (e_.direction == "d2d" && !ctx_->backend->is_host()) {
    const double peak = peak_memory_gbps(ctx_->backend->info());
    if (peak > 0) row.set("peak_gbps", peak);
    if (peak > 0 && static_cast<size_t>(e_.size) > 2 * ctx_->backend->info().llc_bytes && gbps > 1.05 * peak) return false;
  }
  return gbps > 0;
}

Verification P2pOp::verdict(int64_t wrong, int64_t checked) {
  wrong_ = wrong;
  Verification v;
  v.status = wrong == 0 ? "ok" : "fail";
  v.max_rel_err = checked > 0 ? static_cast<double>(wrong) / static_cast<double>(checked) : 0.0;
  if (wrong) v.detail = std::to_string(wrong) + " wrong bytes of " + std::to_string(checked) + " received";
  return v;
}

}  // namespace gpucal::p2p
