// How `gpucal fleet run` starts work on the nodes of an allocation:
//   slurm   inside salloc/sbatch: the nodes of $SLURM_JOB_NODELIST; a process on one node is
//           `srun --overlap -N1 -n1 --nodelist=H`, an MPI job over nodes `srun --overlap --mpi=pmix`
//           (--overlap: the steps of a round share the allocation without waiting for each other)
//   mpirun  Open MPI's mpirun with a host file (one host per line; slots= and comments ignored):
//           `mpirun -np 1 --host H`, `mpirun -np K --host a:R,b:R`
//   local   every "node" is this machine (named by --nodes): a rehearsal of the phases, and tests
#pragma once
#include <string>
#include <vector>

namespace gpucal::fleet {

struct Launcher {
  enum class Kind { slurm, mpirun, local } kind = Kind::slurm;
  std::string srun = "srun";      // program and extra options for every step
  std::string srun_mpi = "pmix";  // srun --mpi= for MPI steps
  std::string mpirun = "mpirun";  // program and extra options (mpirun and local kinds)
  std::string hostfile;           // mpirun kind
};

Launcher::Kind parse_launcher_kind(const std::string& text);  // slurm | mpirun | local | auto
std::string to_string(Launcher::Kind kind);

// The nodes to measure: `given` (a comma list) when not empty, else the allocation's (slurm:
// `scontrol show hostnames $SLURM_JOB_NODELIST`; mpirun: the host file). Throws
// std::invalid_argument when there is no allocation to read, or a node is named twice.
std::vector<std::string> discover_nodes(const Launcher& launcher, const std::string& given);

// A host file's hosts, in order, each once.
std::vector<std::string> read_hostfile(const std::string& path);

// One process on `host`.
std::string single_command(const Launcher& l, const std::string& host, const std::string& inner);
// An MPI job with `ranks_per_node` ranks on each of `hosts`.
std::string mpi_command(const Launcher& l, const std::vector<std::string>& hosts, int ranks_per_node,
                        const std::string& inner);
// The variable a step of this launcher needs pointed at a private folder (Step::
// private_tmpdir_variable): Open MPI's session-folder base for the local launcher (its steps'
// mpiruns start at once on this host), none for slurm and mpirun (one mpirun per node and round
// on each node; the launching host's own race is a known limit, docs/operators.md).
std::string private_tmpdir_variable(const Launcher& l);
// Does `host` still answer? (`true` on it)
std::string probe_command(const Launcher& l, const std::string& host);

}  // namespace gpucal::fleet
