#include "core/backend/backend.h"

#include <sstream>

#include "core/backend/element_convert.h"
#include "core/errors.h"

namespace gpucal {

Buffer& Buffer::operator=(Buffer&& o) noexcept {
  if (this != &o) {
    reset();
    owner_ = o.owner_;
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    kind_ = o.kind_;
    o.owner_ = nullptr;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void Buffer::reset() {
  if (owner_ && ptr_) owner_->release(ptr_, kind_);
  owner_ = nullptr;
  ptr_ = nullptr;
  bytes_ = 0;
}

void require_memory(const Backend& backend, double bytes, const std::string& what) {
  const double have = backend.available_memory_bytes();
  if (have <= 0 || bytes <= 0.95 * have) return;
  auto gib = [](double b) {
    std::ostringstream s;
    s.precision(3);
    s << b / (1024.0 * 1024 * 1024) << " GiB";
    return s.str();
  };
  throw SkipPoint("needs " + gib(bytes) + " of " + (backend.is_host() ? "host" : "device") + " memory for " + what +
                  ", " + backend.info().name + " has " + gib(have) + (backend.is_host() ? " available" : ""));
}

Buffer Backend::allocate(size_t bytes, MemKind kind) {
  require_memory(*this, static_cast<double>(bytes), "one buffer");
  if (bytes == 0) bytes = 1;  // a valid pointer for empty extents
  return Buffer(this, raw_allocate(bytes, kind), bytes, kind);
}

std::vector<double> Backend::to_host_doubles(const void* src, size_t count, DType type) {
  const size_t bytes = count * dtype_bytes(type);
  std::vector<unsigned char> raw(bytes);
  copy(raw.data(), src, bytes);
  synchronize();
  std::vector<double> out(count);
  const int code = static_cast<int>(type);
  for (size_t i = 0; i < count; ++i) out[i] = elem::load_as_double(raw.data(), i, code);
  return out;
}

std::unique_ptr<Backend> make_host_backend();
#if defined(GPUCAL_HAVE_CUDA)
namespace cuda {
std::unique_ptr<Backend> make_gpu_backend(int device);
int device_count();
}  // namespace cuda
#endif
#if defined(GPUCAL_HAVE_HIP)
namespace hip {
std::unique_ptr<Backend> make_gpu_backend(int device);
int device_count();
}  // namespace hip
#endif

std::vector<std::string> compiled_backends() {
  std::vector<std::string> names;
#if defined(GPUCAL_HAVE_CUDA)
  names.push_back("cuda");
#endif
#if defined(GPUCAL_HAVE_HIP)
  names.push_back("hip");
#endif
  names.push_back("host");
  return names;
}

int gpu_device_count(const std::string& backend) {
#if defined(GPUCAL_HAVE_CUDA)
  if (backend == "cuda") return cuda::device_count();
#endif
#if defined(GPUCAL_HAVE_HIP)
  if (backend == "hip") return hip::device_count();
#endif
  (void)backend;
  return 0;
}

std::string resolve_backend_name(const std::string& name, int device_index) {
  if (name != "auto") return name;
  for (const char* gpu : {"cuda", "hip"})
    if (gpu_device_count(gpu) > device_index) return gpu;
  return "host";
}

std::unique_ptr<Backend> make_backend(const std::string& requested, int device_index) {
  const std::string name = resolve_backend_name(requested, device_index);
  if (name == "host") return make_host_backend();
  if (name != "cuda" && name != "hip") throw UsageError("unknown backend '" + name + "' (expected auto, cuda, hip or host)");
  bool compiled = false;
  for (const auto& b : compiled_backends()) compiled = compiled || b == name;
  if (!compiled) throw UsageError("backend '" + name + "' is not compiled into this build");
  const int count = gpu_device_count(name);
  if (count <= device_index) {
    std::ostringstream msg;
    msg << "backend '" << name << "' has " << count << " usable device(s); device " << device_index << " requested";
    throw UsageError(msg.str());
  }
#if defined(GPUCAL_HAVE_CUDA)
  if (name == "cuda") return cuda::make_gpu_backend(device_index);
#endif
#if defined(GPUCAL_HAVE_HIP)
  if (name == "hip") return hip::make_gpu_backend(device_index);
#endif
  throw UsageError("backend '" + name + "' unavailable");
}

}  // namespace gpucal
