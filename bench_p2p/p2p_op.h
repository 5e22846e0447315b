// The p2p ops: a copy within a process (CopyOp: copy engine, SM kernel or CPU memcpy) and
// messages between ranks (MessageOp: MPI or NCCL/RCCL). Both describe their endpoints in
// the same cells, validate one transfer with pattern-filled buffers before timing, and
// turn the median time into bandwidth over the bytes p2p_formulas.h counts.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bench_p2p/device_ops.h"
#include "bench_p2p/p2p_formulas.h"
#include "core/world/comm.h"
#include "core/output/metadata.h"
#include "core/driver/op.h"
#include "core/world/world.h"

namespace gpucal::p2p {

// Where each rank runs, known to every rank (gathered once before the first point).
struct RankInfo {
  int node = 0, device = 0;
  std::string pci_bus_id;
};

// What every op of a run shares: the world, the device operations, the message transport,
// every rank's placement, and (on rank 0) the pair results for the sidecar's matrix.
struct P2pContext {
  World* world = nullptr;
  Backend* backend = nullptr;
  std::unique_ptr<DeviceOps> device;
  std::shared_ptr<Communicator> comm;  // null when no messaging pattern was asked for
  std::vector<RankInfo> ranks;
  std::vector<PairResult> pair_results;
  Metadata* metadata = nullptr;  // the sidecar document, for the pair matrix (rank 0)
  int rank() const { return world ? world->rank() : 0; }
  // Rank 0: keeps a pairs row's figures and rewrites the sidecar's p2p_matrix from them.
  void record_pair(const PairResult& r);
  // Link class between two ranks: same node -> the devices' link (GPU backends) or shm.
  std::string link_class(int a, int b) const;
};
// Collective: every rank calls it.
std::vector<RankInfo> gather_rank_info(World& world, const Backend& backend);

// The parameter cells of one row and the pieces of its point key.
struct Endpoints {
  std::string pattern, direction, engine, memory;
  int src_rank = 0, dst_rank = 0, src_device = 0, dst_device = 0, src_node = 0, dst_node = 0;
  bool all_ranks = false;  // ring: every rank is a source and a destination
  int concurrent = 1;      // transfers in flight at once (pairs of sendrecv, ranks of ring)
  std::string link_class = "unknown";
  int64_t size = 0;
};

class P2pOp : public Op {
 public:
  P2pOp(Endpoints e, std::string key, std::string regime, std::shared_ptr<P2pContext> ctx)
      : e_(std::move(e)), key_(std::move(key)), regime_(std::move(regime)), ctx_(std::move(ctx)) {}
  std::string point() const override;
  std::string impl() const override { return e_.engine; }
  void describe(Row& row) const override;
  bool annotate(Row& row, const Measurement& m) const override;
  const Endpoints& endpoints() const { return e_; }

 protected:
  // Turns the wrong-byte count of the validation run into the driver's verdict.
  Verification verdict(int64_t wrong, int64_t checked);
  Endpoints e_;
  std::string key_;  // the pattern-specific middle of the point key
  std::string regime_;
  std::shared_ptr<P2pContext> ctx_;
  uint64_t seed_ = 0;
  int64_t wrong_ = -1;
};

// copy pattern. direction: h2d | d2h | d2d | peer | h2h (host backend); engine: ce | sm | cpu.
std::unique_ptr<Op> make_copy_op(const std::string& direction, const std::string& engine, const std::string& memory,
                                 int peer_device, int64_t size, const std::string& regime,
                                 std::shared_ptr<P2pContext> ctx);
// sendrecv | bidir | ring | pairs | rails | pingpong (src -> dst for pairs, src <-> dst for
// rails, whose point key names `rail`; ignored otherwise).
std::unique_ptr<Op> make_message_op(const std::string& pattern, int src, int dst, int64_t size,
                                    const std::string& regime, std::shared_ptr<P2pContext> ctx, int rail = -1);

}  // namespace gpucal::p2p
