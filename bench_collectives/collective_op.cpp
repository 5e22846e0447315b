#include "bench_collectives/collective_op.h"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/backend/element_convert.h"
#include "core/world/world.h"
#include "core/errors.h"
#include "core/driver/sweep.h"

namespace gpucal::coll {

std::shared_ptr<Group> make_first_ranks_group(int n, World& world, const std::shared_ptr<Communicator>& parent,
                                              Watchdog& watchdog) {
  auto g = std::make_shared<Group>();
  g->nranks = n;
  std::shared_ptr<World> sub = world.split_first(n);
  std::shared_ptr<Communicator> comm = parent ? parent->split_first(n, sub) : sub ? make_host_communicator(sub) : nullptr;
  if (sub) {
    g->world = sub;
    g->nnodes = sub->nodes();
    g->ranks_per_node = static_cast<int>(sub->max_across(sub->local_size()));
    g->comm = comm;
    std::weak_ptr<Communicator> weak = g->comm;
    watchdog.add_abort_hook([weak] {
      if (auto c = weak.lock()) c->abort();
    });
  }
  return g;
}

namespace {
// Fills that no input produces (inputs are integers in [-4, 4]).
constexpr double kPoisonInt = -12345;
}  // namespace

std::string CollectivePoint::key(int nranks) const {
  std::ostringstream k;
  k << "collectives/" << impl << "/" << desc->name << "/" << to_string(dtype);
  if (desc->reduces()) k << "/" << to_string(op);
  if (desc->rooted()) k << "/r" << root;
  k << "/n" << nranks << "/" << (in_place ? "ip" : "oop") << "/" << format_size(size_bytes) << "/" << regime;
  if (graph) k << "/graph";
  return k.str();
}

Counts CollectiveOp::counts() const {
  const size_t esize = dtype_bytes(p_.dtype);
  return p_.desc->counts(p_.size_bytes / static_cast<int64_t>(esize), esize, group_->nranks);
}

int64_t CollectiveOp::run_size() const { return run_bytes(counts(), dtype_bytes(p_.dtype)); }

void CollectiveOp::describe(Row& row) const {
  const Counts c = counts();
  const int64_t esize = static_cast<int64_t>(dtype_bytes(p_.dtype));
  row.set("collective", p_.desc->name)
      .set("dtype", to_string(p_.dtype))
      .set("op", p_.desc->reduces() ? to_string(p_.op) : "")
      .set("in_place", p_.in_place)
      .set("root", p_.desc->rooted() ? std::to_string(p_.root) : "")
      .set("nranks", group_->nranks)
      .set("nnodes", group_->nnodes)
      .set("ranks_per_node", group_->ranks_per_node)
      .set("spans_nodes", group_->nnodes > 1)
      .set("size_bytes", run_size())
      .set("size_bytes_requested", p_.size_bytes)
      .set("count", c.param)
      .set("count_total", run_size() / esize)
      .set("send_count", c.send)
      .set("recv_count", c.recv)
      .set("bus_factor", p_.desc->bus_factor(group_->nranks))
      .set("graph", p_.graph);
}

void CollectiveOp::setup(Backend& backend, const RunConfig& config) {
  backend_ = &backend;
  if (p_.tuning_log) p_.tuning_log->read_new();  // the point's window opens: drop earlier lines
  corrupt_ = config.inject_fault == "corrupt-output";
  if (!group_->member()) return;
  const Counts c = counts();
  issue_counts_ = c;
  if (c.param == 0)
    throw SkipPoint(std::to_string(p_.size_bytes) + " B of " + to_string(p_.dtype) + " for " + p_.desc->name + " at " +
                    std::to_string(group_->nranks) + " ranks rounds to 0 elements per rank (as in nccl-tests: " +
                    (p_.desc->counts == whole_counts ? "less than one element"
                                                     : "each rank's block is rounded down to a multiple of 16 bytes") +
                    ")");
  const std::string why = group_->comm->unsupported(p_.dtype, p_.desc->reduces());
  if (!why.empty()) throw SkipPoint(why);
  const size_t esize = dtype_bytes(p_.dtype);
  const int rank = group_->comm->rank();
  if (p_.in_place) {
    recv_buf_ = backend.allocate(static_cast<size_t>(std::max(c.send, c.recv)) * esize);
    auto* base = static_cast<char*>(recv_buf_.get());
    send_ = base + static_cast<size_t>(p_.desc->in_place_send_offset(rank, c)) * esize;
    recv_ = base + static_cast<size_t>(p_.desc->in_place_recv_offset(rank, c)) * esize;
  } else {
    send_buf_ = backend.allocate(static_cast<size_t>(c.send) * esize);
    recv_buf_ = backend.allocate(static_cast<size_t>(c.recv) * esize);
    send_ = send_buf_.get();
    recv_ = recv_buf_.get();
  }
  if (p_.graph) {
    // NCCL >= 2.22 sets connections up lazily, at a communicator's first collective of a
    // kind; that setup cannot happen inside a stream capture. One eager launch first.
    issue();
    backend.synchronize();
    graph_ = group_->comm->capture_graph([this] { issue(); });
  }
}

void CollectiveOp::issue() {
  // Everything per launch is settled in setup: at a few hundred ns per collective, the
  // divisions of counts() alone showed in the figure.
  p_.desc->issue(*group_->comm, send_, recv_, issue_counts_, p_.dtype, p_.op, p_.root);
}

void CollectiveOp::launch() {
  if (!group_->member()) return;
  if (graph_)
    graph_();
  else
    issue();
}

// A separate, untimed run: poison the buffers, write the inputs, run once, compare every
// output element with the reference; wrong elements are summed over the group.
Verification CollectiveOp::verify() {
  Verification v;
  if (!group_->member()) {
    v.status = "ok";
    return v;
  }
  const Counts c = counts();
  const int rank = group_->comm->rank();
  Reference ref{group_->nranks, p_.root, p_.op, p_.dtype, c};
  const int code = static_cast<int>(p_.dtype);
  const size_t esize = dtype_bytes(p_.dtype);
  const double poison = p_.dtype == DType::int32 ? kPoisonInt : std::nan("");
  const size_t buffer_elems = recv_buf_.bytes() / esize;
  backend_->fill_constant(recv_buf_.get(), buffer_elems, p_.dtype, poison);
  Buffer host = backend_->allocate(static_cast<size_t>(c.send) * esize, MemKind::host_pageable);
  for (int64_t i = 0; i < c.send; ++i) elem::store_from_double(host.get(), static_cast<uint64_t>(i), code, ref.input(rank, i));
  backend_->copy(send_, host.get(), static_cast<size_t>(c.send) * esize);
  launch();
  if (corrupt_ && rank == (p_.desc->rooted() ? p_.root : group_->nranks - 1)) backend_->fill_constant(recv_, 1, p_.dtype, 99);  // one wrong element
  backend_->synchronize();
  const std::vector<double> out = backend_->to_host_doubles(recv_, static_cast<size_t>(c.recv), p_.dtype);
  // avg over floats divides once (or premultiplies by 1/n): allow n roundings of values <= 4.
  const double tol = p_.op == ReduceOp::avg && p_.desc->reduces() && p_.dtype != DType::int32
                         ? (group_->nranks + 1) * dtype_unit_roundoff(p_.dtype) * 4
                         : 0.0;
  int64_t wrong = 0;
  double max_err = 0;
  std::string first;
  for (int64_t j = 0; j < c.recv; ++j) {
    double expected = p_.desc->expected(ref, rank, j);
    if (std::isnan(expected)) continue;  // undefined on this rank (reduce, non-root)
    elem::store_from_double(host.get(), 0, code, expected);  // as the dtype holds it
    expected = elem::load_as_double(host.get(), 0, code);
    const double got = out[static_cast<size_t>(j)];
    const double err = std::fabs(got - expected);
    if (!(err <= tol)) {
      if (wrong++ == 0) {
        std::ostringstream m;
        m << "first at rank " << rank << " element " << j << ": got " << got << ", expected " << expected;
        first = m.str();
      }
    } else {
      max_err = std::max(max_err, err / std::max(1.0, std::fabs(expected)));
    }
  }
  wrong_ = group_->world->sum_across(wrong);
  v.max_rel_err = group_->world->max_across(max_err);
  v.status = wrong_ == 0 ? "ok" : "fail";
  if (wrong_ > 0) v.detail = std::to_string(wrong_) + " wrong elements over the group" + (first.empty() ? "" : "; " + first);
  return v;
}

bool CollectiveOp::annotate(Row& row, const Measurement& m) const {
  if (!group_->member()) return true;
  const double t = m.seconds.median;
  const double algbw = t > 0 ? static_cast<double>(run_size()) / t / 1e9 : 0.0;
  // Spread of what each rank measured itself: max - min of per-rank medians.
  const double local = m.local_seconds.median;
  const double spread = group_->world->max_across(local) - group_->world->min_across(local);
  row.set("algbw_gbps", algbw)
      .set("busbw_gbps", algbw * p_.desc->bus_factor(group_->nranks))
      .set("time_us_rank_spread", spread * 1e6);
  tuning_cells(row);
  return true;
}

// What NCCL logged since setup began (graph capture, verification, warm-up, timing; graph
// replays log nothing, so --graph rows count the capture only) reduced to the choice the
// point ran with. Byte counts: NCCL's API count (sendcount for allgather, recvcount for
// reduce_scatter) in the named form, S in the numbered forms.
void CollectiveOp::tuning_cells(Row& row) const {
  if (!p_.tuning_log) return;
  const auto records = parse_nccl_tuning_lines(p_.tuning_log->read_new());
  // NCCL's name in its TUNING lines; empty for alltoall, which is grouped ncclSend/ncclRecv
  // (point-to-point work logs no algorithm or protocol).
  const std::string func(p_.desc->info().nccl_tuning_name);
  if (func.empty()) {
    row.set("nccl_choices", "none: all-to-all runs as point-to-point tasks (ncclAlltoAll and grouped ncclSend/ncclRecv alike), which log no algorithm");
    return;
  }
  const NcclTuningExpect expect{func, counts().param * static_cast<int64_t>(dtype_bytes(p_.dtype)), run_size()};
  const NcclTuningSummary s = summarize_nccl_tuning(records, expect);
  if (s.matched == 0) {
    row.set("nccl_choices", "none: no TUNING line for " + func + " of " + std::to_string(expect.bytes) + " B in " +
                                p_.tuning_log->path());
    return;
  }
  row.set("nccl_algo", s.algo).set("nccl_proto", s.proto).set("nccl_choices", s.choices);
}

void CollectiveOp::teardown() {
  graph_ = nullptr;
  send_buf_.reset();
  recv_buf_.reset();
  send_ = recv_ = nullptr;
}

}  // namespace gpucal::coll
