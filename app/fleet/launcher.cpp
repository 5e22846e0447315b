#include "app/fleet/launcher.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "app/run/bench_runner.h"
#include "app/run/run_suite.h"
#include "core/output/file_io.h"

namespace gpucal::fleet {

using calibration::shell_quote;

Launcher::Kind parse_launcher_kind(const std::string& text) {
  if (text == "slurm") return Launcher::Kind::slurm;
  if (text == "mpirun") return Launcher::Kind::mpirun;
  if (text == "local") return Launcher::Kind::local;
  if (text == "auto") {
    const char* nodelist = std::getenv("SLURM_JOB_NODELIST");
    return nodelist && *nodelist ? Launcher::Kind::slurm : Launcher::Kind::mpirun;
  }
  throw std::invalid_argument("--launcher: expected auto, slurm, mpirun or local, got '" + text + "'");
}

std::string to_string(Launcher::Kind kind) {
  switch (kind) {
    case Launcher::Kind::slurm: return "slurm";
    case Launcher::Kind::mpirun: return "mpirun";
    case Launcher::Kind::local: return "local";
  }
  return "";
}

namespace {

std::vector<std::string> split_words(const std::string& text, char separator) {
  std::vector<std::string> out;
  std::istringstream in(text);
  std::string word;
  while (std::getline(in, word, separator))
    if (!word.empty()) out.push_back(word);
  return out;
}

std::vector<std::string> slurm_nodes() {
  const char* nodelist = std::getenv("SLURM_JOB_NODELIST");
  if (!nodelist || !*nodelist)
    throw std::invalid_argument("--launcher slurm: no SLURM_JOB_NODELIST: run inside salloc or sbatch, or give --nodes");
  const std::string command = "scontrol show hostnames " + shell_quote(nodelist) + " 2>/dev/null";
  FILE* pipe = ::popen(command.c_str(), "r");
  if (!pipe) throw std::invalid_argument("--launcher slurm: cannot run scontrol");
  std::string text;
  char buffer[4096];
  while (std::fgets(buffer, sizeof buffer, pipe)) text += buffer;
  if (::pclose(pipe) != 0 || text.empty())
    throw std::invalid_argument(std::string("--launcher slurm: `scontrol show hostnames ") + nodelist + "` failed");
  return split_words(text, '\n');
}

std::string joined(const std::vector<std::string>& hosts, const std::string& suffix) {
  std::string out;
  for (const auto& h : hosts) out += (out.empty() ? "" : ",") + h + suffix;
  return out;
}

}  // namespace

std::vector<std::string> read_hostfile(const std::string& path) {
  if (const std::string why = not_a_regular_file(path); !why.empty())
    throw std::invalid_argument("--hostfile: '" + path + "' " + why);
  std::ifstream in(path);
  if (!in) throw std::invalid_argument("--hostfile: cannot open '" + path + "'");
  std::vector<std::string> hosts;
  std::set<std::string> seen;
  std::string line;
  while (std::getline(in, line)) {
    line = line.substr(0, line.find('#'));
    std::istringstream words(line);
    std::string host;
    if (words >> host && seen.insert(host).second) hosts.push_back(host);
  }
  if (hosts.empty()) throw std::invalid_argument("--hostfile: '" + path + "' names no host");
  return hosts;
}

std::vector<std::string> discover_nodes(const Launcher& l, const std::string& given) {
  std::vector<std::string> nodes;
  if (!given.empty()) nodes = split_words(given, ',');
  else if (l.kind == Launcher::Kind::slurm) nodes = slurm_nodes();
  else if (l.kind == Launcher::Kind::mpirun) {
    if (l.hostfile.empty()) throw std::invalid_argument("--launcher mpirun: give --hostfile FILE or --nodes a,b,c");
    nodes = read_hostfile(l.hostfile);
  } else throw std::invalid_argument("--launcher local: give the node names with --nodes a,b,c");
  std::set<std::string> seen;
  for (const auto& n : nodes) {
    if (n.find_first_of("/ \t") != std::string::npos || n.find("--") != std::string::npos || n == "." || n == "..")
      throw std::invalid_argument("--nodes: '" + n + "' cannot name a node folder");
    if (!seen.insert(n).second) throw std::invalid_argument("--nodes: '" + n + "' is named twice");
  }
  return nodes;
}

std::string single_command(const Launcher& l, const std::string& host, const std::string& inner) {
  switch (l.kind) {
    case Launcher::Kind::slurm:
      // Without the step's SLURM_STEP* variables: a bench the process starts (they all call
      // MPI_Init) would take itself for a rank srun launched without PMI and abort; without them
      // it starts as an MPI singleton. The job's variables (SLURM_JOB*) stay for the sidecars.
      return l.srun + " --overlap --nodes=1 --ntasks=1 --nodelist=" + shell_quote(host) + " --job-name=gpucal-fleet sh -c " +
             shell_quote(R"(for v in $(env | sed -n 's/^\(SLURM_STEP[A-Z_]*\)=.*/\1/p'); do unset "$v"; done; exec "$@")") +
             " sh " + inner;
    case Launcher::Kind::mpirun: return l.mpirun + " -np 1 --host " + shell_quote(host) + " " + inner;
    case Launcher::Kind::local: return "env GPUCAL_FLEET_NODE=" + shell_quote(host) + " " + inner;
  }
  return inner;
}

std::string mpi_command(const Launcher& l, const std::vector<std::string>& hosts, int ranks_per_node,
                        const std::string& inner) {
  const std::string ranks = std::to_string(static_cast<long long>(hosts.size()) * ranks_per_node);
  switch (l.kind) {
    case Launcher::Kind::slurm:
      return l.srun + " --overlap --nodes=" + std::to_string(hosts.size()) + " --ntasks=" + ranks +
             " --ntasks-per-node=" + std::to_string(ranks_per_node) + " --nodelist=" + shell_quote(joined(hosts, "")) +
             " --mpi=" + l.srun_mpi + " --job-name=gpucal-fleet " + inner;
    case Launcher::Kind::mpirun:
      return l.mpirun + " -np " + ranks + " --host " + shell_quote(joined(hosts, ":" + std::to_string(ranks_per_node))) + " " + inner;
    case Launcher::Kind::local: return l.mpirun + " -np " + ranks + " --oversubscribe " + inner;
  }
  return inner;
}

std::string private_tmpdir_variable(const Launcher& l) {
  // orte_tmpdir_base, the base of every process's session folder (mpirun passes it on to its
  // ranks; orte_local_tmpdir_base would reach them beside it, which Open MPI refuses). Only for
  // the local launcher, where every step's processes are on this host: with the mpirun launcher
  // the remote daemons would make the same path on every node. MPICH ignores it.
  return l.kind == Launcher::Kind::local ? "OMPI_MCA_orte_tmpdir_base" : "";
}

std::string probe_command(const Launcher& l, const std::string& host) { return single_command(l, host, "true"); }

}  // namespace gpucal::fleet
