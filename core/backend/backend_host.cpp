// The host backend: CPU memory, wall-clock timing (work is synchronous), and the CPU's
// facts from /proc and sysconf.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <new>
#include <sstream>
#include <thread>

#include "core/backend/backend.h"
#include "core/backend/element_convert.h"

namespace gpucal {

namespace {

std::string cpuinfo_field(const std::string& key) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) {
        auto v = line.substr(colon + 1);
        v.erase(0, v.find_first_not_of(" \t"));
        return v;
      }
    }
  }
  return "";
}

// The largest cache sysfs lists for cpu0 ("32768K"); sysconf's figure is unreliable
// under hypervisors (seen: 256 MiB reported for a 32 MiB L3).
size_t last_level_cache_bytes() {
  size_t best = 0;
  for (int i = 0; i < 8; ++i) {
    std::ifstream in("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
    std::string text;
    if (!(in >> text) || text.empty()) continue;
    size_t v = std::strtoull(text.c_str(), nullptr, 10);
    const char unit = text.back();
    v <<= unit == 'K' ? 10 : unit == 'M' ? 20 : 0;
    best = std::max(best, v);
  }
  return best > 0 ? best : (32u << 20);
}

// Core clock from a chain of dependent 64-bit multiplies (3 cycles each on x86-64 cores since
// Core 2 and Zen), timed with the wall clock; the best of a few tries, so it reflects the boost
// clock (seen: 3.1 GHz on a 2.3 GHz nominal Xeon). Not a chain of add-immediates: Golden Cove cores (Sapphire Rapids, Alder Lake) fold
// those at rename and run several per cycle, which read as a 12 GHz clock on a 2.3 GHz core.
double measured_core_clock_mhz() {
#if defined(__x86_64__)
  constexpr double kCycles = 600000.0 * 8 * 3;  // iterations x multiplies x latency
  double best = 0;
  for (int attempt = 0; attempt < 20; ++attempt) {  // ~6 ms each; preempted tries read low
    uint64_t x = 3, n = 600000;
    const uint64_t one = 1;
    const auto t0 = std::chrono::steady_clock::now();
    asm volatile(
        "1:\n\t"
        "imul %2, %0\n\timul %2, %0\n\timul %2, %0\n\timul %2, %0\n\t"
        "imul %2, %0\n\timul %2, %0\n\timul %2, %0\n\timul %2, %0\n\t"
        "dec %1\n\tjnz 1b"
        : "+r"(x), "+r"(n)
        : "r"(one)
        : "cc");
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (s > 0) best = std::max(best, kCycles / s / 1e6);
  }
  return best;
#else
  return 0;
#endif
}

DeviceInfo host_info() {
  DeviceInfo d;
  d.backend = "host";
  d.name = cpuinfo_field("model name");
  if (d.name.empty()) d.name = "unknown CPU";
  const std::string flags = " " + cpuinfo_field("flags") + " ";
  d.arch = "x86_64";
  if (flags.find(" avx512f ") != std::string::npos)
    d.arch += "-avx512";
  else if (flags.find(" avx2 ") != std::string::npos && flags.find(" fma ") != std::string::npos)
    d.arch += "-avx2";
  d.compute_units = static_cast<int>(std::thread::hardware_concurrency());
  // The clock the cores really reach: under a hypervisor /proc/cpuinfo shows the nominal
  // clock while the cores boost above it (seen: sgemm 9% above a nominal-clock peak), and
  // a peak computed from it would reject honest results. Take the highest of cpufreq's
  // maximum, the reported clock and a measured one.
  std::ifstream maxf("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  double khz = 0;
  const double reported = std::atof(cpuinfo_field("cpu MHz").c_str());
  const double cpufreq = (maxf >> khz && khz > 0) ? khz / 1000.0 : 0.0;
  const double measured = measured_core_clock_mhz();
  d.clock_mhz = std::max({reported, cpufreq, measured});
  d.clock_source = d.clock_mhz == measured ? "measured (dependent-multiply chain)"
                   : d.clock_mhz == cpufreq ? "cpufreq cpuinfo_max_freq"
                                            : "/proc/cpuinfo";
  d.memory_bytes = static_cast<size_t>(sysconf(_SC_PHYS_PAGES)) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
  d.l2_bytes = last_level_cache_bytes();
  d.llc_bytes = d.l2_bytes;
  d.llc_source = "sysfs cpu0 cache";
  std::ifstream mid("/etc/machine-id");
  std::getline(mid, d.uuid);
  std::ifstream ver("/proc/sys/kernel/osrelease");
  std::getline(ver, d.driver_version);
  d.runtime_version = "";
  return d;
}

class HostTimer : public DeviceTimer {
 public:
  void start() override { t0_ = std::chrono::steady_clock::now(); }
  void stop() override { t1_ = std::chrono::steady_clock::now(); }
  double elapsed_seconds() override { return std::chrono::duration<double>(t1_ - t0_).count(); }

 private:
  std::chrono::steady_clock::time_point t0_, t1_;
};

class HostBackend : public Backend {
 public:
  HostBackend() : info_(host_info()) {}
  const DeviceInfo& info() const override { return info_; }
  void release(void* ptr, MemKind) override { std::free(ptr); }
  double available_memory_bytes() const override {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    double kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit)
      if (key == "MemAvailable:") return kib * 1024.0;
    return static_cast<double>(info_.memory_bytes);
  }
  void* stream() override { return nullptr; }
  void synchronize() override {}
  std::unique_ptr<DeviceTimer> make_timer() override { return std::make_unique<HostTimer>(); }
  void copy(void* dst, const void* src, size_t bytes) override { std::memcpy(dst, src, bytes); }
  void fill_random(void* dst, size_t count, DType type, uint64_t seed, double lo, double hi) override {
    const int code = static_cast<int>(type);
    for (size_t i = 0; i < count; ++i) elem::store_from_double(dst, i, code, lo + (hi - lo) * elem::uniform01(seed, i));
  }
  void fill_constant(void* dst, size_t count, DType type, double value) override {
    const int code = static_cast<int>(type);
    for (size_t i = 0; i < count; ++i) elem::store_from_double(dst, i, code, value);
  }
  void flush_cache() override {
    const size_t bytes = 2 * info_.llc_bytes;
    if (flush_.size() != bytes) flush_.assign(bytes, 0);
    // A read-modify-write pass: every line becomes dirty in cache, displacing the inputs.
    for (size_t i = 0; i < bytes; i += 64) flush_[i] = static_cast<unsigned char>(flush_[i] + 1);
  }

 protected:
  void* raw_allocate(size_t bytes, MemKind) override {
    // 64-byte alignment: full cache lines and AVX-512 loads.
    void* p = std::aligned_alloc(256, (bytes + 255) / 256 * 256);  // as cudaMalloc aligns
    if (!p) throw std::bad_alloc();
    return p;
  }

 private:
  DeviceInfo info_;
  std::vector<unsigned char> flush_;
};

}  // namespace

std::unique_ptr<Backend> make_host_backend() { return std::make_unique<HostBackend>(); }

}  // namespace gpucal
