// Thin C++ layer over the cuDNN 9 backend graph API (cudnn_graph.h): error checking, an RAII
// backend descriptor, a builder for operation graphs, and engine/plan selection. Knows no
// workload: bench_attention builds its SDPA graphs with it (attention_cudnn.cpp), bench_memory
// its normalization graphs (norm_cudnn.cpp). Library gpucal_cudnn, built where CMake finds cuDNN.
#pragma once

#include <cudnn.h>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace gpucal {

// A cuDNN call failed. The status is kept so that "not supported" can be told from a bug.
class CudnnError : public std::runtime_error {
 public:
  CudnnError(cudnnStatus_t status, const std::string& what) : std::runtime_error(what), status_(status) {}
  cudnnStatus_t status() const { return status_; }
  bool is_not_supported() const;

 private:
  cudnnStatus_t status_;
};

// No cuDNN engine runs this configuration. The benchmark records it as a skip, not an error.
class CudnnUnsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws CudnnError with the status name, cuDNN's last detailed message, the call's text and file:line.
[[noreturn]] void throw_cudnn_error(cudnnStatus_t status, const std::string& call, const char* file,
                                    int line);

}  // namespace gpucal

#define CUDNN_CHECK(call)                                                                      \
  do {                                                                                         \
    cudnnStatus_t gpucal_cudnn_status_ = (call);                                               \
    if (gpucal_cudnn_status_ != CUDNN_STATUS_SUCCESS)                                          \
      ::gpucal::throw_cudnn_error(gpucal_cudnn_status_, #call, __FILE__, __LINE__); \
  } while (0)

namespace gpucal {

// Owns one cudnnBackendDescriptor_t. Move-only; an empty one holds nullptr.
class BackendDescriptor {
 public:
  BackendDescriptor() = default;
  explicit BackendDescriptor(cudnnBackendDescriptorType_t type);
  ~BackendDescriptor();
  BackendDescriptor(BackendDescriptor&& other) noexcept;
  BackendDescriptor& operator=(BackendDescriptor&& other) noexcept;
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;

  cudnnBackendDescriptor_t get() const { return desc_; }
  explicit operator bool() const { return desc_ != nullptr; }

  // Each setter throws CudnnError naming the attribute on failure; they return *this to chain.
  BackendDescriptor& set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type, int64_t count,
                         const void* values);
  BackendDescriptor& set_int64(cudnnBackendAttributeName_t name, int64_t value);
  BackendDescriptor& set_int64s(cudnnBackendAttributeName_t name, const std::vector<int64_t>& values);
  BackendDescriptor& set_bool(cudnnBackendAttributeName_t name, bool value);
  BackendDescriptor& set_float(cudnnBackendAttributeName_t name, float value);
  BackendDescriptor& set_data_type(cudnnBackendAttributeName_t name, cudnnDataType_t value);
  BackendDescriptor& set_descriptor(cudnnBackendAttributeName_t name, cudnnBackendDescriptor_t value);
  BackendDescriptor& set_descriptors(cudnnBackendAttributeName_t name,
                                     const std::vector<cudnnBackendDescriptor_t>& values);
  BackendDescriptor& set_pointers(cudnnBackendAttributeName_t name, const std::vector<void*>& values);
  BackendDescriptor& finalize();

 private:
  cudnnBackendDescriptor_t desc_ = nullptr;
};

// A tensor of the graph being built: its backend descriptor (owned by the builder) and its shape.
struct GraphTensor {
  cudnnBackendDescriptor_t desc = nullptr;
  int64_t uid = 0;
  std::vector<int64_t> dims;
  std::vector<int64_t> strides;
  cudnnDataType_t data_type = CUDNN_DATA_FLOAT;
};

// Builds one operation graph. Every descriptor it creates lives as long as the builder.
// Non-virtual tensors get the caller's uid (the variant pack binds pointers by uid); virtual
// tensors get uids counting up from first_virtual_uid.
class OperationGraphBuilder {
 public:
  explicit OperationGraphBuilder(int64_t first_virtual_uid) : next_virtual_uid_(first_virtual_uid) {}

  GraphTensor tensor(int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides,
                     cudnnDataType_t data_type);
  // A host scalar passed by value through the variant pack, broadcast over rank-4 tensors.
  GraphTensor scalar(int64_t uid, cudnnDataType_t data_type);
  GraphTensor virtual_tensor(std::vector<int64_t> dims, std::vector<int64_t> strides,
                             cudnnDataType_t data_type);
  GraphTensor virtual_like(const GraphTensor& shape, cudnnDataType_t data_type);

  // y = mode(x[, b[, t]]). axis is for GEN_INDEX only.
  void add_pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t compute_type, const GraphTensor& x,
                     const GraphTensor* b, const GraphTensor* t, const GraphTensor& y,
                     std::optional<int64_t> axis = std::nullopt);
  // Shorthands returning a new fp32 virtual output shaped like x (b broadcasts into x).
  GraphTensor unary(cudnnPointwiseMode_t mode, const GraphTensor& x);
  GraphTensor binary(cudnnPointwiseMode_t mode, const GraphTensor& x, const GraphTensor& b);

  void add_matmul(const GraphTensor& a, const GraphTensor& b, const GraphTensor& c);         // fp32 compute
  void add_reduction(cudnnReduceTensorOp_t op, const GraphTensor& x, const GraphTensor& y);  // fp32 compute
  void add_reshape(const GraphTensor& x, const GraphTensor& y);
  // An operation the caller built and finalized from tensors of this builder (e.g. a
  // normalization); the builder keeps it alive with the graph.
  void add_operation(BackendDescriptor op);

  // Finalizes the operation graph over every operation added so far.
  BackendDescriptor build(cudnnHandle_t handle);

 private:
  GraphTensor make_tensor(int64_t uid, std::vector<int64_t> dims, std::vector<int64_t> strides,
                          cudnnDataType_t data_type, bool is_virtual, bool is_by_value);
  std::vector<BackendDescriptor> tensors_;
  std::vector<BackendDescriptor> op_settings_;  // pointwise / matmul / reduction descriptors
  std::vector<BackendDescriptor> operations_;
  int64_t next_virtual_uid_;
};

// A finalized execution plan and what provenance columns need to know about it.
struct ExecutionPlan {
  BackendDescriptor plan;
  int64_t workspace_bytes = 0;
  std::string description;  // "engine=N knobs=type:value,... heur=A cfg=i/n"
};

// Asks heuristics mode A, then FALLBACK, and finalizes the first engine config that builds.
// Throws CudnnUnsupported (with the last failure's message) when none does.
ExecutionPlan build_first_supported_plan(cudnnHandle_t handle, const BackendDescriptor& operation_graph);

// A finalized variant pack: uids[i] is bound to pointers[i]; by-value scalars pass host pointers.
BackendDescriptor make_variant_pack(const std::vector<int64_t>& uids, const std::vector<void*>& pointers,
                                    void* workspace);

}  // namespace gpucal
