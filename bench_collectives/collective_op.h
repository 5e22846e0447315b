// One collective point (collective, dtype, op, root, placement, ranks, size) as an Op:
// buffers and graph outside the timer, validation with exact integer inputs before
// timing, busbw from the descriptor's factor. Ranks outside the point's group follow it
// with nothing to do (the driver keeps every rank in step).
#pragma once

#include <memory>

#include "bench_collectives/collective.h"
#include "core/driver/driver.h"
#include "core/world/nccl_log.h"
#include "core/driver/op.h"
#include "core/measure/watchdog.h"

namespace gpucal::coll {

// The ranks [0, n) of a --ranks entry, with their communicator. On ranks outside the
// group `world` and `comm` are null.
struct Group {
  int nranks = 1, nnodes = 1, ranks_per_node = 1;
  std::shared_ptr<World> world;
  std::shared_ptr<Communicator> comm;
  bool member() const { return comm != nullptr; }
};

// The group of the first n ranks of `world`: on its members a communicator split from `parent`
// (NCCL/RCCL) or made over the sub-world (MPI, threads), its abort registered with the
// watchdog; on the other ranks no communicator (member() false). Same call order on every rank.
std::shared_ptr<Group> make_first_ranks_group(int n, World& world, const std::shared_ptr<Communicator>& parent,
                                              Watchdog& watchdog);

struct CollectivePoint {
  const CollectiveDesc* desc = nullptr;
  std::string impl;  // nccl | rccl | mpi
  DType dtype = DType::fp32;
  ReduceOp op = ReduceOp::sum;
  bool in_place = false;
  int root = 0;
  int64_t size_bytes = 0;  // S as requested (--sizes); the size that runs is rounded (run_bytes)
  std::string regime = "hot";
  bool graph = false;
  // --nccl-tuning-log on world rank 0 (nccl/rccl): this process's NCCL debug file, shared by
  // every point; null otherwise (the nccl_* cells stay empty).
  std::shared_ptr<LogTail> tuning_log{};
  // "collectives/nccl/allreduce/fp32/sum/n4/oop/8K/hot": unique per row.
  std::string key(int nranks) const;
};

class CollectiveOp : public Op, public VerificationCells {
 public:
  CollectiveOp(CollectivePoint p, std::shared_ptr<Group> group) : p_(std::move(p)), group_(std::move(group)) {}
  std::string point() const override { return p_.key(group_->nranks); }
  std::string impl() const override { return p_.impl; }
  void describe(Row& row) const override;
  void setup(Backend& backend, const RunConfig& config) override;
  Verification verify() override;
  void launch() override;
  bool annotate(Row& row, const Measurement& m) const override;
  void teardown() override;
  void verification_cells(Row& row) const override { row.set("wrong", wrong_); }
  bool takes_part() const override { return group_->member(); }

 private:
  void issue();
  Counts counts() const;
  int64_t run_size() const;  // bytes as nccl-tests prints `size`
  void tuning_cells(Row& row) const;
  CollectivePoint p_;
  std::shared_ptr<Group> group_;
  Backend* backend_ = nullptr;
  Buffer send_buf_, recv_buf_;  // in place: recv_buf_ only
  void* send_ = nullptr;
  void* recv_ = nullptr;
  Counts issue_counts_;  // counts() for this point, computed once in setup
  std::function<void()> graph_;
  int64_t wrong_ = 0;
  bool corrupt_ = false;  // test only: --inject-fault corrupt-output
};

}  // namespace gpucal::coll
