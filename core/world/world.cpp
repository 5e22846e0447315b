#include "core/world/world.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>

#include "core/world/thread_world.h"

#if defined(GPUCAL_HAVE_MPI)
#include "core/world/mpi_check.h"
#endif

namespace gpucal {

NodeLayout node_layout(const std::vector<std::string>& hostnames, int rank) {
  NodeLayout l;
  std::map<std::string, int> index;  // hostname -> node index, in order of first appearance
  for (const auto& h : hostnames) index.emplace(h, static_cast<int>(index.size()));
  l.nodes = static_cast<int>(index.size());
  const std::string& mine = hostnames.at(static_cast<size_t>(rank));
  l.node = index.at(mine);
  l.local_rank = 0;
  l.local_size = 0;
  for (int r = 0; r < static_cast<int>(hostnames.size()); ++r) {
    if (hostnames[static_cast<size_t>(r)] != mine) continue;
    if (r < rank) ++l.local_rank;
    ++l.local_size;
  }
  return l;
}

namespace {

std::string this_hostname(int world_rank) {
  char name[256] = {0};
  gethostname(name, sizeof name - 1);
  std::string host = name;
  if (const char* k = std::getenv("GPUCAL_TEST_RANKS_PER_NODE")) {
    const int per_node = std::atoi(k);
    if (per_node > 0) host += "#fake-node-" + std::to_string(world_rank / per_node);
  }
  return host;
}

class SingleWorld : public World {
 public:
  SingleWorld() : host_(this_hostname(0)) {}
  std::string kind() const override { return "single"; }
  int rank() const override { return 0; }
  int size() const override { return 1; }
  int node() const override { return 0; }
  int nodes() const override { return 1; }
  int local_rank() const override { return 0; }
  int local_size() const override { return 1; }
  std::string hostname() const override { return host_; }
  bool all_agree(bool local) override { return local; }
  double max_across(double local) override { return local; }
  double min_across(double local) override { return local; }
  int64_t sum_across(int64_t local) override { return local; }
  void broadcast(std::vector<unsigned char>&, int) override {}
  std::vector<std::string> gather_strings(const std::string& local) override { return {local}; }
  void barrier() override {}
  [[noreturn]] void abort(int code) override {
    std::fflush(nullptr);
    std::_Exit(code);
  }
  std::unique_ptr<World> split(int color, int) override {
    return color < 0 ? nullptr : std::make_unique<SingleWorld>();
  }
  void* native_handle() override { return nullptr; }

 private:
  std::string host_;
};

#if defined(GPUCAL_HAVE_MPI)

std::vector<std::string> allgather_strings(MPI_Comm comm, const std::string& local) {
  int size = 0;
  MPI_CHECK(MPI_Comm_size(comm, &size));
  int len = static_cast<int>(local.size());
  std::vector<int> lens(static_cast<size_t>(size)), displs(static_cast<size_t>(size));
  MPI_CHECK(MPI_Allgather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, comm));
  int total = 0;
  for (int r = 0; r < size; ++r) {
    displs[static_cast<size_t>(r)] = total;
    total += lens[static_cast<size_t>(r)];
  }
  std::string all(static_cast<size_t>(total), '\0');
  MPI_CHECK(MPI_Allgatherv(local.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(), MPI_CHAR, comm));
  std::vector<std::string> out;
  for (int r = 0; r < size; ++r)
    out.push_back(all.substr(static_cast<size_t>(displs[static_cast<size_t>(r)]), static_cast<size_t>(lens[static_cast<size_t>(r)])));
  return out;
}

class MpiWorld : public World {
 public:
  // Takes ownership of `comm` unless it is MPI_COMM_WORLD; `finalize` ends MPI on destruction.
  MpiWorld(MPI_Comm comm, std::string host, bool finalize, std::string thread_level)
      : comm_(comm), host_(std::move(host)), finalize_(finalize), thread_level_(std::move(thread_level)) {
    MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
    MPI_CHECK(MPI_Comm_size(comm_, &size_));
    layout_ = node_layout(allgather_strings(comm_, host_), rank_);
  }
  ~MpiWorld() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized) return;
    if (comm_ != MPI_COMM_WORLD) MPI_Comm_free(&comm_);
    if (finalize_) MPI_Finalize();
  }
  std::string kind() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int node() const override { return layout_.node; }
  int nodes() const override { return layout_.nodes; }
  int local_rank() const override { return layout_.local_rank; }
  int local_size() const override { return layout_.local_size; }
  std::string hostname() const override { return host_; }
  bool all_agree(bool local) override {
    int in = local ? 1 : 0, out = 0;
    MPI_CHECK(MPI_Allreduce(&in, &out, 1, MPI_INT, MPI_LAND, comm_));
    return out != 0;
  }
  double max_across(double local) override { return reduce(local, MPI_MAX); }
  double min_across(double local) override { return reduce(local, MPI_MIN); }
  int64_t sum_across(int64_t local) override {
    long long in = local, out = 0;
    MPI_CHECK(MPI_Allreduce(&in, &out, 1, MPI_LONG_LONG, MPI_SUM, comm_));
    return out;
  }
  void broadcast(std::vector<unsigned char>& bytes, int root) override {
    long long n = static_cast<long long>(bytes.size());
    MPI_CHECK(MPI_Bcast(&n, 1, MPI_LONG_LONG, root, comm_));
    bytes.resize(static_cast<size_t>(n));
    if (n > 0) MPI_CHECK(MPI_Bcast(bytes.data(), static_cast<int>(n), MPI_BYTE, root, comm_));
  }
  std::vector<std::string> gather_strings(const std::string& local) override {
    auto all = allgather_strings(comm_, local);
    return rank_ == 0 ? all : std::vector<std::string>{};
  }
  void barrier() override { MPI_CHECK(MPI_Barrier(comm_)); }
  [[noreturn]] void abort(int code) override {
    std::fflush(nullptr);
    MPI_Abort(MPI_COMM_WORLD, code);  // every rank of the job, not only this sub-world
    std::_Exit(code);
  }
  std::unique_ptr<World> split(int color, int key) override {
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_CHECK(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &sub));
    if (sub == MPI_COMM_NULL) return nullptr;
    return std::make_unique<MpiWorld>(sub, host_, false, thread_level_);
  }
  void* native_handle() override { return reinterpret_cast<void*>(comm_); }
  std::string mpi_thread_level() const override { return thread_level_; }

 private:
  double reduce(double local, MPI_Op op) {
    double out = 0;
    MPI_CHECK(MPI_Allreduce(&local, &out, 1, MPI_DOUBLE, op, comm_));
    return out;
  }
  MPI_Comm comm_;
  std::string host_;
  bool finalize_;
  std::string thread_level_;
  int rank_ = 0, size_ = 1;
  NodeLayout layout_;
};

std::string thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    case MPI_THREAD_MULTIPLE: return "multiple";
  }
  return "unknown (" + std::to_string(level) + ")";
}

// Set by mpirun (Open MPI, MPICH/Hydra, MVAPICH) or srun (PMI/PMIx).
bool launched_by_mpi() {
  for (const char* v : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMI_RANK", "PMIX_RANK", "MV2_COMM_WORLD_SIZE",
                        "SLURM_STEP_NUM_TASKS"})
    if (std::getenv(v)) return true;
  return false;
}

#endif

}  // namespace

void ThreadTeam::barrier() {
  std::unique_lock<std::mutex> lock(mu);
  const uint64_t gen = generation;
  if (++arrived == size) {
    arrived = 0;
    ++generation;
    cv.notify_all();
    return;
  }
  cv.wait(lock, [&] { return generation != gen; });
}

ThreadWorld::ThreadWorld(std::shared_ptr<ThreadTeam> team, int rank, std::vector<std::string> hostnames)
    : team_(std::move(team)), rank_(rank), hostnames_(std::move(hostnames)), layout_(node_layout(hostnames_, rank_)) {}

std::vector<ThreadTeam::Slot> ThreadWorld::exchange(ThreadTeam::Slot mine) {
  // Writes before the first barrier are visible after it (the barrier's mutex orders
  // them); the second keeps a fast member from overwriting its slot in the next exchange
  // while a slow one still reads this one.
  team_->slots[static_cast<size_t>(rank_)] = std::move(mine);
  team_->barrier();
  std::vector<ThreadTeam::Slot> all = team_->slots;
  team_->barrier();
  return all;
}

bool ThreadWorld::all_agree(bool local) {
  ThreadTeam::Slot s;
  s.i = local ? 1 : 0;
  for (const auto& x : exchange(s))
    if (x.i == 0) return false;
  return true;
}

double ThreadWorld::max_across(double local) {
  ThreadTeam::Slot s;
  s.d = local;
  const auto all = exchange(s);
  return std::max_element(all.begin(), all.end(), [](const auto& a, const auto& b) { return a.d < b.d; })->d;
}

double ThreadWorld::min_across(double local) {
  return -max_across(-local);
}

int64_t ThreadWorld::sum_across(int64_t local) {
  ThreadTeam::Slot s;
  s.i = local;
  int64_t out = 0;
  for (const auto& x : exchange(s)) out += x.i;
  return out;
}

void ThreadWorld::broadcast(std::vector<unsigned char>& bytes, int root) {
  ThreadTeam::Slot s;
  s.ptr = &bytes;
  team_->slots[static_cast<size_t>(rank_)] = s;
  team_->barrier();
  if (rank_ != root) bytes = *static_cast<const std::vector<unsigned char>*>(team_->slots[static_cast<size_t>(root)].ptr);
  team_->barrier();  // the root's vector is read until here
}

std::vector<std::string> ThreadWorld::gather_strings(const std::string& local) {
  ThreadTeam::Slot s;
  s.s = local;
  const auto all = exchange(s);
  std::vector<std::string> out;
  if (rank_ == 0)
    for (const auto& x : all) out.push_back(x.s);
  return out;
}

void ThreadWorld::abort(int code) {
  std::fflush(nullptr);
  std::_Exit(code);  // every thread of the process: the whole team
}

std::unique_ptr<World> ThreadWorld::split(int color, int key) {
  ThreadTeam::Slot s;
  s.i = color;
  s.d = key;
  s.s = hostname();
  const auto all = exchange(s);
  // Members of my color ordered by (key, rank), as MPI_Comm_split orders them.
  std::vector<std::pair<double, int>> members;
  for (int r = 0; r < size(); ++r)
    if (all[static_cast<size_t>(r)].i == color) members.emplace_back(all[static_cast<size_t>(r)].d, r);
  std::sort(members.begin(), members.end());
  std::shared_ptr<ThreadTeam> sub;
  if (color >= 0) {
    std::lock_guard<std::mutex> lock(team_->mu);
    auto& t = team_->split_teams[color];
    if (!t) t = std::make_shared<ThreadTeam>(static_cast<int>(members.size()));
    sub = t;
  }
  team_->barrier();  // every member holds its team
  if (rank_ == 0) {
    std::lock_guard<std::mutex> lock(team_->mu);
    team_->split_teams.clear();
  }
  team_->barrier();  // cleared before the next split
  if (color < 0) return nullptr;
  int sub_rank = 0;
  std::vector<std::string> hosts;
  for (size_t i = 0; i < members.size(); ++i) {
    if (members[i].second == rank_) sub_rank = static_cast<int>(i);
    hosts.push_back(all[static_cast<size_t>(members[i].second)].s);
  }
  return std::make_unique<ThreadWorld>(std::move(sub), sub_rank, std::move(hosts));
}

std::vector<std::unique_ptr<World>> make_thread_worlds(int n) {
  auto team = std::make_shared<ThreadTeam>(n);
  std::vector<std::string> hosts;
  for (int r = 0; r < n; ++r) hosts.push_back(this_hostname(r));
  std::vector<std::unique_ptr<World>> out;
  for (int r = 0; r < n; ++r) out.push_back(std::make_unique<ThreadWorld>(team, r, hosts));
  return out;
}

std::unique_ptr<World> make_world(int* argc, char*** argv) {
#if defined(GPUCAL_HAVE_MPI)
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized || launched_by_mpi()) {
    bool owner = false;
    int provided = 0;
    if (!initialized) {
      MPI_CHECK(MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided));  // see make_world in world.h
      owner = true;
    } else {
      MPI_CHECK(MPI_Query_thread(&provided));
    }
    int rank = 0;
    MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    return std::make_unique<MpiWorld>(MPI_COMM_WORLD, this_hostname(rank), owner, thread_level_name(provided));
  }
#else
  (void)argc;
  (void)argv;
#endif
  return std::make_unique<SingleWorld>();
}

}  // namespace gpucal
