// The copy pattern: one process moves `size` bytes between two buffers. Copy engine
// (cudaMemcpyAsync / hipMemcpyAsync, cudaMemcpyPeerAsync for peers), the SM copy kernel,
// or the CPU's memcpy on the host backend (direction h2h).
#include <functional>

#include "bench_p2p/byte_pattern.h"
#include "bench_p2p/p2p_op.h"
#include "core/errors.h"

namespace gpucal::p2p {

namespace {

MemKind kind_of(const std::string& memory) {
  return memory == "pinned" ? MemKind::host_pinned : memory == "pageable" ? MemKind::host_pageable : MemKind::device;
}

class CopyOp : public P2pOp {
 public:
  CopyOp(Endpoints e, std::string key, std::string regime, std::shared_ptr<P2pContext> ctx, int peer)
      : P2pOp(std::move(e), std::move(key), std::move(regime), std::move(ctx)), peer_(peer) {}

  void setup(Backend& backend, const RunConfig& config) override {
    backend_ = &backend;
    config_ = &config;
    seed_ = pattern_seed(config.seed ^ std::hash<std::string>{}(point()), ctx_->rank(), 0);
    const size_t n = static_cast<size_t>(e_.size);
    const std::string& d = e_.direction;
    src_ = backend.allocate(n, d == "h2d" ? kind_of(e_.memory) : d == "h2h" ? MemKind::host_pageable : MemKind::device);
    if (d == "peer") {
      peer_buf_ = ctx_->device->allocate_peer(peer_, n, /*require_access=*/e_.engine == "sm");
    } else {
      dst_ = backend.allocate(n, d == "d2h" ? kind_of(e_.memory) : d == "h2h" ? MemKind::host_pageable : MemKind::device);
    }
    ctx_->device->fill_pattern(src_.get(), n, src_.kind(), seed_, false);
    backend.synchronize();
  }

  Verification verify() override {
    const size_t n = static_cast<size_t>(e_.size);
    ctx_->device->fill_pattern(dst(), n, dst_kind(), seed_, true, dst_device());
    launch();
    backend_->synchronize();
    if (config_->inject_fault == "corrupt-output") ctx_->device->corrupt_byte(dst(), dst_kind());
    return verdict(ctx_->device->count_wrong(dst(), n, dst_kind(), seed_, dst_device()), e_.size);
  }

  void launch() override {
    const size_t n = static_cast<size_t>(e_.size);
    if (e_.engine == "sm")
      ctx_->device->sm_copy(dst(), src_.get(), n);
    else if (e_.direction == "peer")
      ctx_->device->peer_copy(dst(), peer_, src_.get(), n);
    else
      backend_->copy(dst(), src_.get(), n);  // ce on GPUs, memcpy on the host
  }

  void teardown() override {
    src_.reset();
    dst_.reset();
    peer_buf_ = PeerBuffer{};
  }

 private:
  void* dst() const { return e_.direction == "peer" ? peer_buf_.get() : dst_.get(); }
  MemKind dst_kind() const { return e_.direction == "peer" ? MemKind::device : dst_.kind(); }
  int dst_device() const { return e_.direction == "peer" ? peer_ : -1; }

  int peer_;
  Backend* backend_ = nullptr;
  const RunConfig* config_ = nullptr;
  Buffer src_, dst_;
  PeerBuffer peer_buf_;
};

}  // namespace

std::unique_ptr<Op> make_copy_op(const std::string& direction, const std::string& engine, const std::string& memory,
                                 int peer_device, int64_t size, const std::string& regime,
                                 std::shared_ptr<P2pContext> ctx) {
  Endpoints e;
  e.pattern = "copy";
  e.direction = direction;
  e.engine = engine;
  e.memory = memory;
  e.size = size;
  e.src_rank = e.dst_rank = ctx->rank();
  e.src_node = e.dst_node = ctx->ranks.at(static_cast<size_t>(ctx->rank())).node;
  const int own = ctx->backend->info().index;
  // Host memory is device -1.
  e.src_device = direction == "h2d" ? -1 : own;
  e.dst_device = direction == "d2h" ? -1 : direction == "peer" ? peer_device : own;
  if (direction == "h2h") e.src_device = e.dst_device = -1;
  e.link_class = direction == "peer" ? ctx->device->device_link_class(peer_device)
                 : direction == "h2d" || direction == "d2h" ? ctx->device->host_link_class()
                                                            : "same-device";
  std::string key = direction + "/" + memory;
  if (direction == "peer") key += "/d" + std::to_string(own) + "-d" + std::to_string(peer_device);
  return std::make_unique<CopyOp>(std::move(e), std::move(key), regime, std::move(ctx), peer_device);
}

}  // namespace gpucal::p2p
