#include "core/model/model_flags.h"

#include <CLI/CLI.hpp>

#include "core/errors.h"
#include "core/driver/flag_checks.h"
#include "core/model/bounds.h"
#include "core/model/model_options.h"
#include "core/driver/sweep.h"

namespace gpucal::model {

namespace {
std::string option_value(const CLI::Option* o) {
  return o && o->count() > 0 ? o->as<std::string>() : "";
}

// An explicit empty value is refused rather than read as "not given" (the default).
CLI::Validator non_empty() {
  return CLI::Validator([](std::string& text) { return text.empty() ? std::string("expected a value, got ''") : ""; },
                        "TEXT");
}
}  // namespace

void ModelFlags::add(CLI::App& app, const std::string& what) {
  ParallelLayout& l = layout;
  model_opt = app.add_option("--model", model,
                             what + "one training step of this model on one rank: gpt3-175b, llama3-8b, "
                                    "llama3-70b, llama3-405b, mixtral-8x7b, deepseek-v3, vit-era5")
                  ->check(non_empty());
  config_opt = app.add_option("--model-config", model_config, what + "like --model, a model described in a JSON file")
                   ->check(non_empty());
  model_opt->excludes(config_opt);
  auto layout_opt = [&](CLI::Option* o) {
    layout_opts.push_back(o);
    return o;
  };
  layout_opt(app.add_option("--tp", l.tp, what + "tensor-parallel ranks")->capture_default_str());
  layout_opt(app.add_option("--pp", l.pp, what + "pipeline stages")->capture_default_str());
  layout_opt(app.add_option("--dp", l.dp, what + "data-parallel replicas")->capture_default_str());
  layout_opt(app.add_option("--cp", l.cp, what + "context-parallel ranks (sequence split)")->capture_default_str());
  layout_opt(app.add_option("--ep", l.ep, what + "expert-parallel ranks (within dp x cp)")->capture_default_str());
  layout_opt(app.add_flag("--sp", sp, what + "sequence parallelism over the tensor-parallel group"));
  layout_opt(app.add_option("--micro-batch", l.micro_batch, what + "sequences per micro-batch")->capture_default_str());
  layout_opt(app.add_option("--global-batch", l.global_batch,
                            what + "sequences per step (default: micro-batch x dp, one micro-batch)")
                 ->check(number_check<int64_t>({.min = 1, .max = limits::kGlobalBatch})));
  layout_opt(app.add_option("--grad-dtype", grad_dtype,
                            what + "gradient reduction type; auto: fp32 for bf16 (Megatron), else --dtype")
                 ->capture_default_str()
                 ->check(non_empty()));
  layout_opt(app.add_option("--zero", l.zero, what + "0 (DDP), 1, 2 (distributed optimizer), 3 (FSDP)")
                 ->capture_default_str());
  layout_opt(app.add_option("--dp-bucket-params", dp_bucket,
                            what + "parameters per DP gradient bucket; auto: Megatron's max(40M, 1M x dp x cp); "
                                   "0: one bucket")
                 ->capture_default_str());
  layout_opt(app.add_option("--pp-stage", pp_stage, what + "the pipeline stage derived: first, last or an index")
                 ->capture_default_str());
  layout_opt(app.add_flag("--account-for-embedding-in-pipeline-split", l.account_embedding,
                          what + "the embedding counts as one layer of the first stage (Megatron's flag)"));
  layout_opt(app.add_flag("--account-for-loss-in-pipeline-split", l.account_loss,
                          what + "the loss counts as one layer of the last stage (Megatron's flag)"));
  // 0 in the layout means "all layers"; on the command line a count must be given.
  layout_opt(app.add_option("--layers", l.layers, what + "only the first N layers (a layer subset)")
                 ->check(number_check<int64_t>({.min = 1, .max = limits::kLayers})));
  layout_opt(app.add_option("--scale", l.scale,
                            what + "divide every width (hidden, head dim, FFN, vocabulary, MLA ranks) by N; heads, "
                                   "experts, layers, sequence and batch kept")
                 ->capture_default_str());
  seq_opt = app.get_option_no_throw("--seq");
  if (!seq_opt) seq_opt = layout_opt(app.add_option("--seq", seq, what + "sequence length (default: the model's)"));
  dtype_opt = app.get_option_no_throw("--dtype");
  if (!dtype_opt)
    dtype_opt = layout_opt(
        app.add_option("--dtype", dtype,
                       what + "bf16, fp16, fp32, fp8 (the linear layers' GEMMs in fp8_e4m3 and their inputs' and "
                              "gradients' casts, the rest bf16, as Transformer Engine); auto: fp32 on host, bf16 on GPUs")
            ->capture_default_str());
}

void ModelFlags::require_model_for_layout_flags() const {
  for (const CLI::Option* o : layout_opts)
    if (o->count() > 0) throw UsageError(o->get_name() + " needs --model NAME or --model-config FILE");
}

ModelSpec ModelFlags::spec() const {
  return !model.empty() ? find_preset(model) : load_model_config(model_config);
}

ParallelLayout ModelFlags::resolved_layout(const std::string& backend_name) const {
  ParallelLayout l = layout;
  // Not given: 0, the model's own sequence length; given, it must be a length (0 is refused).
  if (seq_opt && seq_opt->count() > 0) {
    const std::string seq_text = option_value(seq_opt);
    if (seq_text.find_first_of(",:") != std::string::npos)
      throw UsageError("--seq with --model takes one sequence length, got '" + seq_text + "'");
    l.seq = parse_size(seq_text, "seq");
    if (l.seq < 1) throw UsageError("--seq: expected a sequence length of at least 1, got '" + seq_text + "'");
  }
  if (dtype_opt && dtype_opt->count() > 0 && option_value(dtype_opt).empty())
    throw UsageError("--dtype with --model: expected bf16, fp16, fp32, fp8 or auto, got ''");
  l.sp = sp;
  l.dtype = resolve_model_dtype(option_value(dtype_opt), backend_name);
  l.fp8_gemms = option_value(dtype_opt) == "fp8";
  l.grad_dtype = resolve_grad_dtype(grad_dtype, l.dtype);
  l.dp_bucket_params = dp_bucket == "auto" ? -1 : parse_size(dp_bucket, "dp-bucket-params");
  if (pp_stage == "last")
    l.pp_stage = -1;
  else if (pp_stage == "first")
    l.pp_stage = 0;
  else
    l.pp_stage = parse_size(pp_stage, "pp-stage");
  return l;
}

}  // namespace gpucal::model
