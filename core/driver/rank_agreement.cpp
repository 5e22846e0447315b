#include "core/driver/rank_agreement.h"

#include <cstring>
#include <vector>

#include "core/output/file_io.h"

namespace gpucal {

int agreed_exit_code(World& world, int local_code, const std::string& local_msg, const std::string& prog) {
  const int code = world.size() == 1 ? local_code : static_cast<int>(world.max_across(local_code));
  if (code == 0) return 0;
  for (const auto& m : world.gather_strings(local_code ? local_msg : ""))
    if (!m.empty()) {
      write_stderr_line(prog + ": error: " + m);
      break;
    }
  return code;
}

int share_point_index(World& world, int index) {
  if (world.size() == 1) return index;
  std::vector<unsigned char> bytes(sizeof index);
  std::memcpy(bytes.data(), &index, sizeof index);
  world.broadcast(bytes, 0);
  std::memcpy(&index, bytes.data(), sizeof index);
  return index;
}

}  // namespace gpucal
