// Ranks as threads of one process: the single-process launch mode (`--threads N`), one
// thread per local GPU, as nccl-tests' -t. Each thread owns a ThreadWorld of a shared
// ThreadTeam; the World's collective operations (agreement, max, broadcast, gather, split)
// are exchanges through the team's slots between two barriers. NCCL bootstraps over it
// unchanged (the unique id travels by World::broadcast; every thread calls
// ncclCommInitRank on its own device); on the host backend the threads' communicator is
// the shared-memory one of core/world/comm_threads.cpp.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/world/world.h"

namespace gpucal {

// What every member of a team shares. Members must call the collective methods in the
// same order (as with MPI); a member that never arrives is the watchdog's business.
struct ThreadTeam {
  explicit ThreadTeam(int n) : size(n), slots(static_cast<size_t>(n)) {}
  // One rank's contribution to an exchange.
  struct Slot {
    const void* ptr = nullptr;
    int64_t i = 0;
    double d = 0;
    std::string s;
  };
  // A posted point-to-point message (bench_p2p over threads): the receiver copies from
  // `data` and sets `consumed`; the sender waits for that before reusing its buffer.
  struct Message {
    const void* data = nullptr;
    size_t bytes = 0;
    bool consumed = false;
  };

  const int size;
  std::mutex mu;
  std::condition_variable cv;
  int arrived = 0;
  uint64_t generation = 0;
  std::vector<Slot> slots;
  std::map<int, std::shared_ptr<ThreadTeam>> split_teams;  // color -> team, during split()
  std::map<std::pair<int, int>, std::deque<Message*>> mailbox;  // (src, dst) -> FIFO, under mu

  void barrier();
};

class ThreadWorld : public World {
 public:
  // `hostnames` holds every member's hostname (index = rank in the team).
  ThreadWorld(std::shared_ptr<ThreadTeam> team, int rank, std::vector<std::string> hostnames);
  std::string kind() const override { return "threads"; }
  int rank() const override { return rank_; }
  int size() const override { return team_->size; }
  int node() const override { return layout_.node; }
  int nodes() const override { return layout_.nodes; }
  int local_rank() const override { return layout_.local_rank; }
  int local_size() const override { return layout_.local_size; }
  std::string hostname() const override { return hostnames_.at(static_cast<size_t>(rank_)); }
  bool all_agree(bool local) override;
  double max_across(double local) override;
  double min_across(double local) override;
  int64_t sum_across(int64_t local) override;
  void broadcast(std::vector<unsigned char>& bytes, int root) override;
  std::vector<std::string> gather_strings(const std::string& local) override;
  void barrier() override { team_->barrier(); }
  [[noreturn]] void abort(int code) override;
  std::unique_ptr<World> split(int color, int key) override;
  void* native_handle() override { return nullptr; }

  // Every member's slot after all have written theirs (two barriers).
  std::vector<ThreadTeam::Slot> exchange(ThreadTeam::Slot mine);
  ThreadTeam& team() { return *team_; }

 private:
  std::shared_ptr<ThreadTeam> team_;
  int rank_;
  std::vector<std::string> hostnames_;
  NodeLayout layout_;
};

// The worlds of an n-thread team, one per thread (rank i at index i). Made on one thread,
// then each handed to its own thread. GPUCAL_TEST_RANKS_PER_NODE applies as under MPI.
std::vector<std::unique_ptr<World>> make_thread_worlds(int n);

}  // namespace gpucal
