// The messaging patterns between ranks (sendrecv, bidir, ring, pairs, rails, pingpong): each rank
// posts the sends and receives the pattern gives it (none for ranks idle in a pair) inside
// one communicator group: completed together (MPI) or enqueued as one group (NCCL/RCCL).
// pingpong is the exception: its two steps are ordered, so each send and receive is its own
// call (blocking MPI_Send/MPI_Recv; NCCL orders them on the stream) and rank 1 answers from
// its own send buffer, as osu_latency does. Ranks idle in a pair still run every point's agreement and
// max-combination, so nothing deadlocks.
#include <functional>

#include "bench_p2p/byte_pattern.h"
#include "bench_p2p/p2p_op.h"
#include "core/errors.h"

namespace gpucal::p2p {

namespace {

class MessageOp : public P2pOp {
 public:
  MessageOp(Endpoints e, std::string key, std::string regime, std::shared_ptr<P2pContext> ctx, std::vector<Transfer> transfers)
      : P2pOp(std::move(e), std::move(key), std::move(regime), std::move(ctx)), transfers_(std::move(transfers)),
        round_trip_(e_.pattern == "pingpong") {}

  void setup(Backend& backend, const RunConfig& config) override {
    backend_ = &backend;
    config_ = &config;
    run_seed_ = config.seed ^ std::hash<std::string>{}(point());
    const int me = ctx_->rank();
    const size_t n = static_cast<size_t>(e_.size);
    const MemKind kind = backend.is_host() ? MemKind::host_pageable : MemKind::device;
    // Every sender sends its own pattern from its own buffer, the round trip's answering rank
    // included (as osu_latency: the reply leaves a buffer the receive did not just write, so no
    // dirty cache lines move between the cores); each receive is checked against its sender.
    for (const Transfer& t : transfers_) {
      if (t.src == me && !send_.get()) {
        send_ = backend.allocate(n, kind);
        ctx_->device->fill_pattern(send_.get(), n, kind, pattern_seed(run_seed_, me, 0), false);
      }
      if (t.dst == me && !recv_.get()) {
        recv_ = backend.allocate(n, kind);
        expected_from_ = t.src;
      }
    }
    // In transfer order, which for a round trip is each rank's order of calls.
    for (const Transfer& t : transfers_) {
      if (t.src == me) messages_.push_back({true, t.dst, send_.get()});
      if (t.dst == me) messages_.push_back({false, t.src, recv_.get()});
    }
    backend.synchronize();
  }

  Verification verify() override {
    // The local part may throw; the sum across ranks must run on every rank regardless.
    int64_t wrong = 0, checked = 0;
    std::string error;
    try {
      const size_t n = static_cast<size_t>(e_.size);
      const uint64_t expected = pattern_seed(run_seed_, expected_from_, 0);
      if (recv_.get()) ctx_->device->fill_pattern(recv_.get(), n, recv_.kind(), expected, true);
      backend_->synchronize();
      launch();
      backend_->synchronize();
      if (recv_.get()) {
        if (config_->inject_fault == "corrupt-output") ctx_->device->corrupt_byte(recv_.get(), recv_.kind());
        wrong = ctx_->device->count_wrong(recv_.get(), n, recv_.kind(), expected);
        checked = e_.size;
      }
    } catch (const std::exception& ex) {
      error = ex.what();
      wrong = 0;
    }
    const int64_t total_wrong = ctx_->world->sum_across(wrong);
    const int64_t total_checked = ctx_->world->sum_across(checked);
    if (!error.empty()) throw std::runtime_error(error);
    return verdict(total_wrong, total_checked);
  }

  void launch() override {
    if (messages_.empty()) return;  // idle in this pair
    Communicator& comm = *ctx_->comm;
    const size_t n = static_cast<size_t>(e_.size);
    if (!round_trip_) comm.group_start();
    for (const Message& m : messages_) {
      if (m.send)
        comm.send(m.buffer, n, DType::uint8, m.peer);  // raw bytes
      else
        comm.recv(m.buffer, n, DType::uint8, m.peer);
    }
    if (!round_trip_) comm.group_end();
  }

  bool takes_part() const override { return !messages_.empty(); }  // idle in this pair: left out of --combine

  void teardown() override {
    messages_.clear();
    send_.reset();
    recv_.reset();
  }

 private:
  std::vector<Transfer> transfers_;
  bool round_trip_;  // pingpong: ordered calls, no group
  Backend* backend_ = nullptr;
  const RunConfig* config_ = nullptr;
  uint64_t run_seed_ = 0;
  int expected_from_ = -1;  // the rank whose pattern the receive buffer must hold
  Buffer send_, recv_;
  struct Message {
    bool send;
    int peer;
    void* buffer;
  };
  std::vector<Message> messages_;
};

}  // namespace

std::unique_ptr<Op> make_message_op(const std::string& pattern, int src, int dst, int64_t size,
                                    const std::string& regime, std::shared_ptr<P2pContext> ctx, int rail) {
  const int n = ctx->world->size();
  std::vector<Transfer> transfers = pattern == "sendrecv"   ? sendrecv_transfers(n, false)
                                    : pattern == "bidir"    ? sendrecv_transfers(n, true)
                                    : pattern == "ring"     ? ring_transfers(n)
                                    : pattern == "pingpong" ? pingpong_transfers()
                                    : pattern == "rails"    ? std::vector<Transfer>{{src, dst}, {dst, src}}
                                                            : std::vector<Transfer>{{src, dst}};
  Endpoints e;
  e.pattern = pattern;
  e.direction = pattern == "bidir" || pattern == "rails" ? "bi" : pattern == "pingpong" ? "pingpong" : "uni";
  e.engine = ctx->comm->library();
  e.memory = ctx->backend->is_host() ? "pageable" : "device";
  e.size = size;
  e.all_ranks = pattern == "ring";
  e.concurrent = pattern == "pairs" || pattern == "pingpong" || pattern == "rails" ? 1 : pattern == "ring" ? n : n / 2;
  const Transfer first = transfers.front();
  e.src_rank = first.src;
  e.dst_rank = first.dst;
  const RankInfo& s = ctx->ranks.at(static_cast<size_t>(first.src));
  const RankInfo& d = ctx->ranks.at(static_cast<size_t>(first.dst));
  e.src_node = s.node;
  e.dst_node = d.node;
  e.src_device = s.device;
  e.dst_device = d.device;
  std::vector<std::string> classes;
  for (const Transfer& t : transfers)
    if (t.src < t.dst || e.direction == "uni") classes.push_back(ctx->link_class(t.src, t.dst));  // each link once
  e.link_class = combine_link_classes(classes);
  std::string key = pattern == "pairs"   ? "r" + std::to_string(src) + "-r" + std::to_string(dst)
                    : pattern == "rails" ? "rail" + std::to_string(rail)
                                         : "";
  return std::make_unique<MessageOp>(std::move(e), std::move(key), regime, std::move(ctx), std::move(transfers));
}

}  // namespace gpucal::p2p
