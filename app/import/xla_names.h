// gpucal's names against XLA's in XLA's performance tables: the collectives (XLA's HLO opcodes),
// shared by the importer (import_xla.cpp) and the export (app/export/export_xla.cpp).
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace gpucal::calibration {

// {gpucal's collective, XLA's opcode}: the collectives both measure.
inline const std::vector<std::pair<std::string, std::string>>& xla_collective_opcodes() {
  static const std::vector<std::pair<std::string, std::string>> names{{"allreduce", "all-reduce"},
                                                                      {"allgather", "all-gather"},
                                                                      {"reduce_scatter", "reduce-scatter"},
                                                                      {"alltoall", "all-to-all"}};
  return names;
}

}  // namespace gpucal::calibration
