#include "core/model/model_options.h"

#include <CLI/CLI.hpp>
#include <iostream>

#include "core/backend/backend.h"
#include "core/output/csv_sink.h"
#include "core/errors.h"
#include "core/model/model_flags.h"
#include "core/driver/sweep.h"

namespace gpucal::model {

namespace {

// An op of the bench with the cells of the step's operations it measures.
class RoleOp : public Op, public VerificationCells {
 public:
  RoleOp(std::unique_ptr<Op> inner, std::string roles, int64_t calls)
      : inner_(std::move(inner)), roles_(std::move(roles)), calls_(calls) {}
  std::string point() const override { return inner_->point(); }
  std::string impl() const override { return inner_->impl(); }
  void describe(Row& row) const override {
    inner_->describe(row);
    row.set("op_role", roles_).set("calls_per_step", calls_);
  }
  void setup(Backend& backend, const RunConfig& config) override { inner_->setup(backend, config); }
  Verification verify() override { return inner_->verify(); }
  void launch() override { inner_->launch(); }
  bool annotate(Row& row, const Measurement& m) const override { return inner_->annotate(row, m); }
  void teardown() override { inner_->teardown(); }
  void verification_cells(Row& row) const override {
    if (const auto* cells = dynamic_cast<const VerificationCells*>(inner_.get()))
      cells->verification_cells(row);
  }

 private:
  std::unique_ptr<Op> inner_;
  std::string roles_;
  int64_t calls_;
};

}  // namespace

DType resolve_model_dtype(const std::string& text, const std::string& backend_name) {
  if (text.empty() || text == "auto") return backend_name == "host" ? DType::fp32 : DType::bf16;
  if (text.find(',') != std::string::npos)
    throw UsageError("--dtype with --model takes one dtype, got '" + text + "'");
  if (text == "fp8") return DType::bf16;  // fp8 GEMMs in bf16 training (ParallelLayout::fp8_gemms)
  if (text != "bf16" && text != "fp16" && text != "fp32")
    throw UsageError("--dtype with --model: expected bf16, fp16, fp32, fp8 or auto, got '" + text + "'");
  return parse_dtype(text);
}

DType resolve_grad_dtype(const std::string& text, DType dtype) {
  if (text.empty()) throw UsageError("--grad-dtype: expected fp32, bf16, fp16 or auto, got ''");
  if (text == "auto") return dtype == DType::bf16 ? DType::fp32 : dtype;
  return parse_dtype(text);
}

struct ModelOptions::Flags {
  ModelFlags model;
  bool list = false, list_all = false;
  CLI::Option* list_opt = nullptr;  // possibly the bench's own
};

ModelOptions::ModelOptions(ModelBinding binding)
    : binding_(std::move(binding)), flags_(std::make_unique<Flags>()) {}
ModelOptions::~ModelOptions() = default;

bool ModelOptions::active() const {
  return flags_->model.active();
}

const Workload& ModelOptions::workload() const {
  if (!workload_) throw std::logic_error("ModelOptions::workload() before the model was resolved");
  return *workload_;
}

void ModelOptions::add_flags(CLI::App& app) {
  Flags& f = *flags_;
  f.model.add(app, "--model: ");
  f.model.layout_opts.push_back(
      app.add_flag("--list-all", f.list_all,
                   "--model: print every operation of the step (all benches) with its facts, run nothing"));
  f.list_opt = app.get_option_no_throw("--list");
  if (!f.list_opt) {
    f.list_opt = app.add_flag("--list", f.list, "--model: print this bench's operations, run nothing");
    f.model.layout_opts.push_back(f.list_opt);
  }
  for (const auto& name : binding_.replaced_flags)
    if (CLI::Option* o = app.get_option_no_throw(name))
      o->excludes(f.model.model_opt)->excludes(f.model.config_opt);
}

void ModelOptions::resolve(const RunConfig& config) {
  workload_ = flags_->model.derive(resolve_backend_name(config.backend, config.device));
}

std::vector<OpGroup> ModelOptions::groups() const {
  return group_ops(workload().ops, binding_.bench);
}

std::vector<OpGroup> ModelOptions::groups_for_world(const std::function<std::string(const ModelOp&)>& why_not,
                                                    Metadata& meta, bool print) const {
  std::vector<OpGroup> out;
  nlohmann::json skipped = nlohmann::json::array();
  for (auto& g : groups()) {
    const std::string reason = why_not(g.op);
    if (reason.empty()) {
      out.push_back(std::move(g));
      continue;
    }
    skipped.push_back({{"op_role", g.op.role},
                       {"calls_per_step", g.op.calls_per_step},
                       {"shape", g.op.shape_text()},
                       {"reason", reason}});
    if (print)
      std::cerr << "bench_" << binding_.bench << ": --model: skipping " << g.op.role << " ("
                << g.op.shape_text() << "): " << reason << "\n";
  }
  meta.doc()["model"]["skipped"] = skipped;
  return out;
}

std::vector<std::unique_ptr<Op>> ModelOptions::tag(std::vector<std::unique_ptr<Op>> ops) const {
  if (!active()) return ops;
  const auto share = groups();
  std::vector<std::unique_ptr<Op>> out;
  for (auto& op : ops) {
    Row row;
    op->describe(row);
    const OpGroup* match = nullptr;
    for (const auto& g : share) {
      bool same = true;
      for (const auto& [cell, value] : g.op.shape_cells()) same = same && row.get(cell) == value;
      if (same) match = &g;
    }
    if (!match) throw std::logic_error("--model: point " + op->point() + " is none of the step's operations");
    out.push_back(std::make_unique<RoleOp>(std::move(op), match->op.role, match->op.calls_per_step));
  }
  return out;
}

void print_workload(std::ostream& out, const Workload& w, const std::vector<ModelOp>& ops) {
  const ParallelLayout& l = w.layout;
  const StepFacts& f = w.facts;
  out << "# model " << w.model.name << " (" << w.model.source << ")\n"
      << "# layout tp=" << l.tp << " pp=" << l.pp << " dp=" << l.dp << " cp=" << l.cp << " ep=" << l.ep
      << " sp=" << l.sp << " seq=" << f.seq << " micro_batch=" << l.micro_batch
      << " global_batch=" << f.global_batch << " micro_batches=" << f.micro_batches
      << " dtype=" << to_string(l.dtype) << (l.fp8_gemms ? " gemm_dtype=fp8_e4m3" : "")
      << " grad_dtype=" << to_string(l.grad_dtype)
      << " zero=" << l.zero << " scale=" << l.scale << "\n"
      << "# rank: stage " << f.stage << " of " << l.pp << ", " << f.tokens
      << " tokens per micro-batch, " << w.dense_params << " dense and " << w.expert_params
      << " expert parameters\n";
  for (const auto& n : w.notes) out << "# note: " << n << "\n";
  out << "bench,op_role,calls_per_step,dtype,shape,flops_per_call\n";
  for (const ModelOp& op : ops)
    out << op.bench() << "," << op.role << "," << op.calls_per_step << "," << to_string(op.dtype) << ","
        << op.shape_text() << "," << format_number(op.flops()) << "\n";
}

void ModelOptions::print_list() const {
  const Workload& w = workload();
  if (flags_->list_all) return print_workload(std::cout, w, w.ops);
  std::vector<ModelOp> distinct;
  for (const auto& g : groups()) distinct.push_back(g.op);
  print_workload(std::cout, w, distinct);
}

nlohmann::json ModelOptions::sidecar() const {
  nlohmann::json j = to_json(workload());
  j["bench"] = binding_.bench;
  return j;
}

void ModelOptions::attach(BenchSpec& spec) {
  spec.columns.push_back("op_role");
  spec.columns.push_back("calls_per_step");
  auto add = spec.add_options;
  spec.add_options = [this, add](CLI::App& app) {
    if (add) add(app);
    add_flags(app);
  };
  auto before = spec.before_run;
  spec.before_run = [this, before](const RunConfig& config) {
    if (active()) {
      resolve(config);
      if (flags_->list_all || flags_->list_opt->count() > 0) {
        print_list();
        return true;
      }
    } else {
      flags_->model.require_model_for_layout_flags();
    }
    return before ? before(config) : false;
  };
  if (spec.make_ops) {
    auto make = spec.make_ops;
    spec.make_ops = [this, make](Backend& backend, const RunConfig& config) {
      return tag(make(backend, config));
    };
  }
  if (spec.make_world_ops) {
    auto make = spec.make_world_ops;
    spec.make_world_ops = [this, make](Backend& backend, const RunConfig& config, World& world,
                                       Watchdog& watchdog, Metadata& meta) {
      return tag(make(backend, config, world, watchdog, meta));
    };
  }
  auto add_meta = spec.add_metadata;
  spec.add_metadata = [this, add_meta](Metadata& meta, Backend& backend) {
    if (add_meta) add_meta(meta, backend);
    if (!active()) return;
    const nlohmann::json derived = sidecar();  // kept alive: items() refers into it
    for (const auto& [key, value] : derived.items()) meta.doc()["model"][key] = value;
  };
}

}  // namespace gpucal::model
