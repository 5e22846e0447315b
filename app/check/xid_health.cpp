#include "app/check/xid_health.h"

#include <sys/klog.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <sstream>

#include "core/output/file_io.h"

namespace gpucal::check {

namespace {

constexpr int kSyslogReadAll = 3, kSyslogSizeBuffer = 10;  // klogctl actions (syslog(2))

struct XidKind {
  const char* status;
  const char* what;
};

// The Xids this check knows by name; any other is a warn naming the catalog.
XidKind kind_of(int xid) {
  static const std::map<int, XidKind> known{
      {48, {"fail", "double-bit ECC error"}},
      {63, {"warn", "row remap or page retirement recorded: reset the GPU to apply it"}},
      {64, {"fail", "row remap or page retirement failed"}},
      {74, {"fail", "NVLink error"}},
      {79, {"fail", "GPU has fallen off the bus"}},
      {92, {"warn", "high single-bit ECC error rate"}},
      {94, {"warn", "contained ECC error: the application was stopped"}},
      {95, {"fail", "uncontained ECC error"}},
      {119, {"fail", "GSP RPC timeout"}},
      {120, {"fail", "GSP error"}},
  };
  const auto it = known.find(xid);
  return it != known.end() ? it->second : XidKind{"warn", "see NVIDIA's Xid catalog for its action"};
}

int rank_of(const std::string& status) { return status == "fail" ? 2 : status == "warn" ? 1 : 0; }

}  // namespace

std::vector<XidEvent> parse_xid_lines(const std::string& log) {
  // "[  269.517039] NVRM: Xid (PCI:0000:01:00): 79, pid=1101, name=python, GPU has fallen off the bus."
  // Older drivers print the address without "PCI:".
  static const std::regex xid(R"((?:\[\s*([0-9]+\.[0-9]+)\]\s*)?NVRM: Xid \((?:PCI:)?([0-9A-Fa-f:.]+)\):\s*([0-9]+),?\s*(.*))");
  std::vector<XidEvent> out;
  std::istringstream in(log);
  std::string line;
  std::smatch m;
  while (std::getline(in, line)) {
    if (!std::regex_search(line, m, xid)) continue;
    XidEvent e;
    e.pci = m[2].str();
    e.xid = std::stoi(m[3].str().substr(0, 6));
    e.seconds_since_boot = m[1].matched ? std::stod(m[1].str()) : -1;
    e.text = m[4].str().substr(0, 200);
    out.push_back(e);
  }
  return out;
}

void read_kernel_xids(const std::string& sysfs_root, HealthReadings& into) {
  into.xid_read = false;
  const std::filesystem::path module = std::filesystem::path(sysfs_root) / "module" / "nvidia";
  if (!std::filesystem::exists(module)) {
    into.xid_source = "the NVIDIA driver is not loaded (no " + module.string() + ")";
    return;
  }
  const int size = klogctl(kSyslogSizeBuffer, nullptr, 0);
  std::string buffer(static_cast<std::size_t>(size > 0 ? size : 1 << 20), '\0');
  const int got = klogctl(kSyslogReadAll, buffer.data(), static_cast<int>(buffer.size()));
  if (got < 0) {
    into.xid_source = std::string("the kernel log is not readable (") + std::strerror(errno) +
                      "): run as root or with CAP_SYSLOG, or set kernel.dmesg_restrict=0";
    return;
  }
  buffer.resize(static_cast<std::size_t>(got));
  into.xids = parse_xid_lines(buffer);
  into.xid_read = true;
  into.xid_source = "the kernel ring buffer (klogctl), " + std::to_string(got) + " bytes";
}

void read_kernel_log_file(const std::string& path, HealthReadings& into) {
  const std::string why = not_a_regular_file(path);  // before opening: a FIFO's open would block
  std::ifstream in;
  if (why.empty()) in.open(path);
  if (!why.empty() || !in)
    throw std::invalid_argument("--kernel-log: cannot read '" + path + "'" + (why.empty() ? "" : " (" + why + ")") +
                                "; give a kernel log (dmesg > FILE)");
  std::ostringstream text;
  text << in.rdbuf();
  into.xids = parse_xid_lines(text.str());
  into.xid_read = true;
  into.xid_source = path;
}

void judge_xids(const HealthReadings& r, std::vector<HealthLine>& out) {
  if (!r.xid_read) {
    out.push_back({"gpu_xid", "-", "not available", "-", r.xid_source});
    return;
  }
  if (r.xids.empty()) {
    out.push_back({"gpu_xid", "-", "pass", "no Xid", r.xid_source});
    return;
  }
  std::map<std::string, std::vector<const XidEvent*>> by_pci;
  for (const auto& e : r.xids) by_pci[e.pci].push_back(&e);
  for (const auto& [pci, events] : by_pci) {
    const XidEvent* worst = events.front();
    for (const XidEvent* e : events)
      if (rank_of(kind_of(e->xid).status) > rank_of(kind_of(worst->xid).status)) worst = e;
    std::map<int, int> counts;
    for (const XidEvent* e : events) ++counts[e->xid];
    std::string value;
    for (const auto& [xid, n] : counts) value += (value.empty() ? "" : ", ") + std::to_string(xid) + (n > 1 ? " x" + std::to_string(n) : "");
    const XidKind k = kind_of(worst->xid);
    std::string detail = "Xid " + std::to_string(worst->xid) + ": " + k.what;
    if (worst->seconds_since_boot >= 0) {
      std::ostringstream at;
      at.precision(0);
      at << std::fixed << worst->seconds_since_boot;
      detail += " (" + at.str() + " s after boot)";
    }
    out.push_back({"gpu_xid", "pci " + pci, k.status, value, detail});
  }
}

}  // namespace gpucal::check
