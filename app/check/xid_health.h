// NVIDIA Xid events: the driver's fault reports in the kernel log ("NVRM: Xid (PCI:0000:3b:00):
// 79, pid=..., GPU has fallen off the bus."), which operators grep dmesg for (NVIDIA's Xid
// catalog, docs.nvidia.com/deploy/xid-errors; LBNL NHC and Meta's GCM health checks do the
// same). The check reads every Xid the kernel's ring buffer still holds (since boot, unless it
// wrapped) on a node whose NVIDIA driver is loaded, and judges each PCI address's Xids:
//   fail  48 double-bit ECC, 64 row remap or page retirement failed, 74 NVLink error, 79 fallen
//         off the bus, 95 uncontained ECC, 119 and 120 GSP timeout or error (reset or service)
//   warn  63 row remap or page retirement recorded (reset to apply), 92 high single-bit ECC rate,
//         94 contained ECC (the application was stopped), and any other Xid (most are the
//         application's: 13, 31, 43, 45; the catalog gives each one's action)
// "not available" where the driver is not loaded or the kernel log is not readable (dmesg_restrict
// without CAP_SYSLOG), never a pass.
#pragma once
#include <string>
#include <vector>

#include "app/check/health.h"

namespace gpucal::check {

// The Xid lines of kernel log text (dmesg, journalctl -k, or klogctl's raw "<4>[  269.517] ..."),
// in order; other lines are skipped.
std::vector<XidEvent> parse_xid_lines(const std::string& log);

// Reads the kernel ring buffer (klogctl) where `sysfs_root`/module/nvidia says the driver is loaded.
void read_kernel_xids(const std::string& sysfs_root, HealthReadings& into);

// Reads a saved kernel log (dmesg > FILE, journalctl -k: a previous boot's too) instead; throws
// std::invalid_argument naming --kernel-log when it is not a readable regular file.
void read_kernel_log_file(const std::string& path, HealthReadings& into);

// One line per PCI address with Xids ("pass" with none), the worst Xid deciding.
void judge_xids(const HealthReadings& r, std::vector<HealthLine>& out);

}  // namespace gpucal::check
