#include "core/backend/cudnn_graph.h"

#include <algorithm>
#include <array>
#include <sstream>
#include <utility>

namespace gpucal {

bool CudnnError::is_not_supported() const {
  return CUDNN_STATUS_CATEGORY(static_cast<int>(status_)) == static_cast<int>(CUDNN_STATUS_NOT_SUPPORTED);
}

void throw_cudnn_error(cudnnStatus_t status, const std::string& call, const char* file, int line) {
  // cuDNN 9 keeps a detailed message for the last failure on this thread; it is often the only
  // place that says which attribute or shape was rejected.
  std::array<char, 1024> detail{};
  cudnnGetLastErrorString(detail.data(), detail.size());
  std::string detail_text(detail.data());
  for (char& c : detail_text)
    if (c == '\n' || c == '\r') c = ' ';
  std::ostringstream msg;
  msg << "cudnn error '" << cudnnGetErrorString(status) << "'";
  if (!detail_text.empty()) msg << " (" << detail_text << ")";
  msg << " in " << call << " at " << file << ":" << line;
  throw CudnnError(status, msg.str());
}

namespace {

std::string attribute_call(const char* function, int64_t attribute) {
  return std::string(function) + "(attribute " + std::to_string(attribute) + ")";
}

// Reads an attribute holding backend descriptors into freshly created descriptors of element_type.
std::vector<BackendDescriptor> get_descriptors(cudnnBackendDescriptor_t from,
                                               cudnnBackendAttributeName_t name,
                                               cudnnBackendDescriptorType_t element_type, int64_t max_count) {
  std::vector<BackendDescriptor> owned;
  std::vector<cudnnBackendDescriptor_t> raw;
  for (int64_t i = 0; i < max_count; ++i) {
    owned.emplace_back(element_type);
    raw.push_back(owned.back().get());
  }
  int64_t count = 0;
  cudnnStatus_t status =
      cudnnBackendGetAttribute(from, name, CUDNN_TYPE_BACKEND_DESCRIPTOR, max_count, &count, raw.data());
  if (status != CUDNN_STATUS_SUCCESS)
    throw_cudnn_error(status, attribute_call("cudnnBackendGetAttribute", name), __FILE__, __LINE__);
  owned.resize(static_cast<size_t>(std::min(count, max_count)));
  return owned;
}

int64_t get_int64(cudnnBackendDescriptor_t from, cudnnBackendAttributeName_t name) {
  int64_t value = 0;
  int64_t count = 0;
  cudnnStatus_t status = cudnnBackendGetAttribute(from, name, CUDNN_TYPE_INT64, 1, &count, &value);
  if (status != CUDNN_STATUS_SUCCESS)
    throw_cudnn_error(status, attribute_call("cudnnBackendGetAttribute", name), __FILE__, __LINE__);
  return value;
}

// "engine=N knobs=type:value,..." from an engine config (the same facts cudnn-frontend puts in its plan tag).
std::string describe_engine_config(cudnnBackendDescriptor_t engine_config) {
  std::ostringstream text;
  auto engines =
      get_descriptors(engine_config, CUDNN_ATTR_ENGINECFG_ENGINE, CUDNN_BACKEND_ENGINE_DESCRIPTOR, 1);
  text << "engine=" << (engines.empty() ? -1 : get_int64(engines[0].get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX));
  auto knobs = get_descriptors(engine_config, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                               CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR, CUDNN_KNOB_TYPE_COUNTS);
  text << " knobs=";
  for (size_t i = 0; i < knobs.size(); ++i) {
    cudnnBackendKnobType_t type = CUDNN_KNOB_TYPE_COUNTS;
    int64_t count = 0;
    CUDNN_CHECK(cudnnBackendGetAttribute(knobs[i].get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                         CUDNN_TYPE_KNOB_TYPE, 1, &count, &type));
    text << (i ? "," : "") << static_cast<int>(type) << ":"
         << get_int64(knobs[i].get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE);
  }
  if (knobs.empty()) text << "none";
  return text.str();
}

}  // namespace

// ---- BackendDescriptor ----

BackendDescriptor::BackendDescriptor(cudnnBackendDescriptorType_t type) {
  CUDNN_CHECK(cudnnBackendCreateDescriptor(type, &desc_));
}

BackendDescriptor::~BackendDescriptor() {
  if (desc_ != nullptr) cudnnBackendDestroyDescriptor(desc_);
}

BackendDescriptor::BackendDescriptor(BackendDescriptor&& other) noexcept
    : desc_(std::exchange(other.desc_, nullptr)) {}

BackendDescriptor& BackendDescriptor::operator=(BackendDescriptor&& other) noexcept {
  if (this != &other) {
    if (desc_ != nullptr) cudnnBackendDestroyDescriptor(desc_);
    desc_ = std::exchange(other.desc_, nullptr);
  }
  return *this;
}

BackendDescriptor& BackendDescriptor::set(cudnnBackendAttributeName_t name, cudnnBackendAttributeType_t type,
                                          int64_t count, const void* values) {
  cudnnStatus_t status = cudnnBackendSetAttribute(desc_, name, type, count, values);
  if (status != CUDNN_STATUS_SUCCESS)
    throw_cudnn_error(status, attribute_call("cudnnBackendSetAttribute", name), __FILE__, __LINE__);
  return *this;
}

BackendDescriptor& BackendDescriptor::set_int64(cudnnBackendAttributeName_t name, int64_t value) {
  return set(name, CUDNN_TYPE_INT64, 1, &value);
}

BackendDescriptor& BackendDescriptor::set_int64s(cudnnBackendAttributeName_t name,
                                                 const std::vector<int64_t>& values) {
  return set(name, CUDNN_TYPE_INT64, static_cast<int64_t>(values.size()), values.data());
}

BackendDescriptor& BackendDescriptor::set_bool(cudnnBackendAttributeName_t name, bool value) {
  return set(name, CUDNN_TYPE_BOOLEAN, 1, &value);
}

BackendDescriptor& BackendDescriptor::set_float(cudnnBackendAttributeName_t name, float value) {
  return set(name, CUDNN_TYPE_FLOAT, 1, &value);
}

BackendDescriptor& BackendDescriptor::set_data_type(cudnnBackendAttributeName_t name, cudnnDataType_t value) {
  return set(name, CUDNN_TYPE_DATA_TYPE, 1, &value);
}

BackendDescriptor& BackendDescriptor::set_descriptor(cudnnBackendAttributeName_t name,
                                                     cudnnBackendDescriptor_t value) {
  return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &value);
}

BackendDescriptor& BackendDescriptor::set_descriptors(cudnnBackendAttributeName_t name,
                                                      const std::vector<cudnnBackendDescriptor_t>& values) {
  return set(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, static_cast<int64_t>(values.size()), values.data());
}

BackendDescriptor& BackendDescriptor::set_pointers(cudnnBackendAttributeName_t name,
                                                   const std::vector<void*>& values) {
  return set(name, CUDNN_TYPE_VOID_PTR, static_cast<int64_t>(values.size()), values.data());
}

BackendDescriptor& BackendDescriptor::finalize() {
  CUDNN_CHECK(cudnnBackendFinalize(desc_));
  return *this;
}

// ---- OperationGraphBuilder ----

GraphTensor OperationGraphBuilder::make_tensor(int64_t uid, std::vector<int64_t> dims,
                                               std::vector<int64_t> strides, cudnnDataType_t data_type,
                                               bool is_virtual, bool is_by_value) {
  BackendDescriptor desc(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  desc.set_data_type(CUDNN_ATTR_TENSOR_DATA_TYPE, data_type)
      .set_int64s(CUDNN_ATTR_TENSOR_DIMENSIONS, dims)
      .set_int64s(CUDNN_ATTR_TENSOR_STRIDES, strides)
      .set_int64(CUDNN_ATTR_TENSOR_UNIQUE_ID, uid)
      .set_int64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, 16);  // cudaMalloc'd buffers; cudnn-frontend's default
  if (is_virtual) desc.set_bool(CUDNN_ATTR_TENSOR_IS_VIRTUAL, true);
  if (is_by_value) desc.set_bool(CUDNN_ATTR_TENSOR_IS_BY_VALUE, true);
  desc.finalize();
  GraphTensor tensor{desc.get(), uid, std::move(dims), std::move(strides), data_type};
  tensors_.push_back(std::move(desc));
  return tensor;
}

GraphTensor OperationGraphBuilder::tensor(int64_t uid, std::vector<int64_t> dims,
                                          std::vector<int64_t> strides, cudnnDataType_t data_type) {
  return make_tensor(uid, std::move(dims), std::move(strides), data_type, false, false);
}

GraphTensor OperationGraphBuilder::scalar(int64_t uid, cudnnDataType_t data_type) {
  return make_tensor(uid, {1, 1, 1, 1}, {1, 1, 1, 1}, data_type, false, true);
}

GraphTensor OperationGraphBuilder::virtual_tensor(std::vector<int64_t> dims, std::vector<int64_t> strides,
                                                  cudnnDataType_t data_type) {
  return make_tensor(next_virtual_uid_++, std::move(dims), std::move(strides), data_type, true, false);
}

GraphTensor OperationGraphBuilder::virtual_like(const GraphTensor& shape, cudnnDataType_t data_type) {
  return virtual_tensor(shape.dims, shape.strides, data_type);
}

void OperationGraphBuilder::add_pointwise(cudnnPointwiseMode_t mode, cudnnDataType_t compute_type,
                                          const GraphTensor& x, const GraphTensor* b, const GraphTensor* t,
                                          const GraphTensor& y, std::optional<int64_t> axis) {
  BackendDescriptor settings(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  settings.set(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, 1, &mode)
      .set_data_type(CUDNN_ATTR_POINTWISE_MATH_PREC, compute_type);
  if (axis) settings.set_int64(CUDNN_ATTR_POINTWISE_AXIS, *axis);
  settings.finalize();

  BackendDescriptor op(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR);
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, settings.get())
      .set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x.desc);
  if (b != nullptr) op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b->desc);
  if (t != nullptr) op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_TDESC, t->desc);  // BINARY_SELECT's mask
  op.set_descriptor(CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y.desc)
      .set_float(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1, 1.f)
      .set_float(CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2, 1.f)
      .finalize();
  op_settings_.push_back(std::move(settings));
  operations_.push_back(std::move(op));
}

GraphTensor OperationGraphBuilder::unary(cudnnPointwiseMode_t mode, const GraphTensor& x) {
  GraphTensor y = virtual_like(x, CUDNN_DATA_FLOAT);
  add_pointwise(mode, CUDNN_DATA_FLOAT, x, nullptr, nullptr, y);
  return y;
}

GraphTensor OperationGraphBuilder::binary(cudnnPointwiseMode_t mode, const GraphTensor& x,
                                          const GraphTensor& b) {
  GraphTensor y = virtual_like(x, CUDNN_DATA_FLOAT);
  add_pointwise(mode, CUDNN_DATA_FLOAT, x, &b, nullptr, y);
  return y;
}

void OperationGraphBuilder::add_matmul(const GraphTensor& a, const GraphTensor& b, const GraphTensor& c) {
  BackendDescriptor settings(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  settings.set_data_type(CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_DATA_FLOAT).finalize();
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR);
  op.set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_ADESC, a.desc)
      .set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_BDESC, b.desc)
      .set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_CDESC, c.desc)
      .set_descriptor(CUDNN_ATTR_OPERATION_MATMUL_DESC, settings.get())
      .finalize();
  op_settings_.push_back(std::move(settings));
  operations_.push_back(std::move(op));
}

void OperationGraphBuilder::add_reduction(cudnnReduceTensorOp_t reduce_op, const GraphTensor& x,
                                          const GraphTensor& y) {
  BackendDescriptor settings(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  settings.set(CUDNN_ATTR_REDUCTION_OPERATOR, CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1, &reduce_op)
      .set_data_type(CUDNN_ATTR_REDUCTION_COMP_TYPE, CUDNN_DATA_FLOAT)
      .finalize();
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR);
  op.set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x.desc)
      .set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y.desc)
      .set_descriptor(CUDNN_ATTR_OPERATION_REDUCTION_DESC, settings.get())
      .finalize();
  op_settings_.push_back(std::move(settings));
  operations_.push_back(std::move(op));
}

void OperationGraphBuilder::add_reshape(const GraphTensor& x, const GraphTensor& y) {
  BackendDescriptor op(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR);
  op.set_descriptor(CUDNN_ATTR_OPERATION_RESHAPE_XDESC, x.desc)
      .set_descriptor(CUDNN_ATTR_OPERATION_RESHAPE_YDESC, y.desc)
      .finalize();
  operations_.push_back(std::move(op));
}

void OperationGraphBuilder::add_operation(BackendDescriptor op) { operations_.push_back(std::move(op)); }

// cuDNN 9.x marks the *_HANDLE attributes deprecated (in favour of device-property descriptors for
// deviceless builds), but they remain the documented way to bind a graph and plan to a live handle
// on every 9.x release, and cudnn-frontend still uses them.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
constexpr cudnnBackendAttributeName_t kOperationGraphHandle = CUDNN_ATTR_OPERATIONGRAPH_HANDLE;
constexpr cudnnBackendAttributeName_t kExecutionPlanHandle = CUDNN_ATTR_EXECUTION_PLAN_HANDLE;
#pragma GCC diagnostic pop

BackendDescriptor OperationGraphBuilder::build(cudnnHandle_t handle) {
  std::vector<cudnnBackendDescriptor_t> ops;
  for (const auto& op : operations_) ops.push_back(op.get());
  BackendDescriptor graph(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  graph.set(kOperationGraphHandle, CUDNN_TYPE_HANDLE, 1, &handle)
      .set_descriptors(CUDNN_ATTR_OPERATIONGRAPH_OPS, ops)
      .finalize();
  return graph;
}

// ---- plan selection ----

ExecutionPlan build_first_supported_plan(cudnnHandle_t handle, const BackendDescriptor& operation_graph) {
  std::string last_failure = "heuristics returned no engine configs";
  const std::pair<cudnnBackendHeurMode_t, const char*> modes[] = {{CUDNN_HEUR_MODE_A, "A"},
                                                                  {CUDNN_HEUR_MODE_FALLBACK, "FALLBACK"}};
  for (const auto& [mode, mode_name] : modes) {
    std::vector<BackendDescriptor> configs;
    try {
      BackendDescriptor heuristics(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
      cudnnBackendDescriptor_t graph = operation_graph.get();
      heuristics.set_descriptor(CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH, graph)
          .set(CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode)
          .finalize();
      int64_t config_count = 0;
      CUDNN_CHECK(cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                           CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &config_count, nullptr));
      if (config_count > 0)
        configs = get_descriptors(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                  CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, config_count);
    } catch (const CudnnError& e) {
      last_failure = std::string("heuristics mode ") + mode_name + ": " + e.what();
      continue;
    }
    for (size_t i = 0; i < configs.size(); ++i) {
      try {
        ExecutionPlan result;
        result.plan = BackendDescriptor(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
        result.plan.set(kExecutionPlanHandle, CUDNN_TYPE_HANDLE, 1, &handle)
            .set_descriptor(CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG, configs[i].get())
            .finalize();
        result.workspace_bytes = get_int64(result.plan.get(), CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE);
        result.description = describe_engine_config(configs[i].get()) + " heur=" + mode_name +
                             " cfg=" + std::to_string(i) + "/" + std::to_string(configs.size());
        return result;
      } catch (const CudnnError& e) {
        last_failure =
            std::string("plan from heuristics ") + mode_name + " cfg " + std::to_string(i) + ": " + e.what();
      }
    }
  }
  throw CudnnUnsupported("no cuDNN engine builds this graph; last failure: " + last_failure);
}

BackendDescriptor make_variant_pack(const std::vector<int64_t>& uids, const std::vector<void*>& pointers,
                                    void* workspace) {
  BackendDescriptor pack(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
  pack.set_int64s(CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, uids)
      .set_pointers(CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, pointers)
      .set(CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace)
      .finalize();
  return pack;
}

}  // namespace gpucal
