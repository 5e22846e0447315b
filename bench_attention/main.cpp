// bench_attention: fused scaled-dot-product attention throughput, verified against an fp64
// host reference, for cuDNN SDPA (`cudnn`), gpucal's portable FA2-style kernel (`flash`, CUDA
// and HIP) and a host implementation (`host`, CI).
// Axes (the harness's range/list syntax: 512:16384:x2, lists 64,128):
//   --batch --heads (query heads) --kv-heads (MHA = heads, GQA, MQA = 1; default: = heads)
//   --seq (--seq-kv when it differs; default: = seq) --head-dim 64,128,256 --causal 0,1
//   --dtype auto|fp32|fp64|fp16|bf16|fp8_e4m3 (auto: fp32 on host, bf16 on GPUs)
//   --pass fwd,bwd,fwdbwd  --layout BSHD,BHSD  --impl auto|host|cudnn|flash  --flop-convention fa2|fa3
//   or --set llm|long (fixed shapes; --list prints them).
//   Or --model NAME|--model-config FILE with the layout flags (--tp --cp --seq --micro-batch ...):
//   the attention calls one training step runs on one rank (core/model/).
// Example: bench_attention --backend cuda --set llm --causal 0,1 --pass fwd,bwd --dtype bf16 --out attn.csv
//          bench_attention --backend host --batch 1 --heads 4 --kv-heads 1,4 --seq 128,256 --head-dim 64,128
//                          --causal 0,1 --pass fwd,bwd --out a.csv
#include <CLI/CLI.hpp>
#include <cstdio>
#include <iostream>

#include "bench_attention/attention_impls.h"
#include "bench_attention/attention_sets.h"
#include "core/driver/driver.h"
#include "core/errors.h"
#include "core/model/model_options.h"
#include "core/driver/sweep.h"
#include "core/registry/registry.h"

namespace {

using namespace gpucal;
using namespace gpucal::attention;

struct AttentionOptions {
  std::string batch = "1", heads = "16", kv_heads, seq = "1024", seq_kv, head_dim = "128", causal = "0";
  std::string dtype = "auto", pass = "fwd", layout = "BSHD", impl = "auto", convention = "fa2", set;
  bool list = false;
  std::vector<CLI::Option*> shape_flags;  // conflict with --set
};

const std::vector<std::string> kColumns = {
    "dtype",  "layout", "pass", "batch", "heads", "kv_heads", "seq_q", "seq_kv", "head_dim", "causal",
    "flop_convention", "flops", "tflops", "peak_tflops", "peak_source", "efficiency", "graph_build_ms",
    "workspace_bytes", "engine"};

std::vector<SetShape> shapes_from(const AttentionOptions& o) {
  if (!o.set.empty()) {
    for (const CLI::Option* f : o.shape_flags)
      if (f->count() > 0)
        throw UsageError("--set " + o.set + " fixes batch, heads, kv-heads, seq and head-dim; drop " + f->get_name());
    return named_set(o.set);
  }
  std::vector<SetShape> out;
  // 0 stands for "as --heads / --seq" below, so a given 0 must not slip through as that.
  const AxisBounds positive{.min = 1};
  const auto bs = parse_axis(o.batch, "batch", positive), hs = parse_axis(o.heads, "heads", positive),
             ds = parse_axis(o.head_dim, "head-dim", positive), sqs = parse_axis(o.seq, "seq", positive);
  const auto kvs = o.kv_heads.empty() ? std::vector<int64_t>{0} : parse_axis(o.kv_heads, "kv-heads", positive);
  const auto skvs = o.seq_kv.empty() ? std::vector<int64_t>{0} : parse_axis(o.seq_kv, "seq-kv", positive);
  for (int64_t d : ds)
    for (int64_t h : hs)
      for (int64_t kv : kvs)
        for (int64_t sq : sqs)
          for (int64_t skv : skvs)
            for (int64_t b : bs) out.push_back({b, h, kv == 0 ? h : kv, sq, skv == 0 ? sq : skv, d});
  return out;
}

std::vector<bool> causal_from(const AttentionOptions& o) {
  std::vector<bool> out;
  for (const auto& w : parse_word_list(o.causal, "causal", {"0", "1"})) out.push_back(w == "1");
  return out;
}

// Every point of the sweep; `dtype_auto` replaces "auto" in --dtype.
std::vector<AttentionProblem> problems_from(const AttentionOptions& o, DType dtype_auto) {
  std::vector<DType> types;
  for (const auto& w : parse_word_list(o.dtype, "dtype", {"auto", "fp32", "fp64", "fp16", "bf16", "fp8_e4m3"})) {
    if (w == "auto") {
      types.push_back(dtype_auto);
      continue;
    }
    try {
      types.push_back(parse_dtype(w));
    } catch (const UsageError& e) {
      throw UsageError(std::string("--dtype: ") + e.what());
    }
  }
  // parse_word_list refuses a word listed twice; 'auto' can still name a listed type (auto,fp32
  // on the host), which would measure every point twice under one key.
  for (std::size_t i = 0; i < types.size(); ++i)
    for (std::size_t j = i + 1; j < types.size(); ++j)
      if (types[i] == types[j])
        throw UsageError("--dtype: " + to_string(types[i]) + " is listed twice ('auto' is " +
                         to_string(dtype_auto) + " on this backend)");
  const auto passes = parse_word_list(o.pass, "pass", {"fwd", "bwd", "fwdbwd"});
  const auto layouts = parse_word_list(o.layout, "layout", {"BSHD", "BHSD"});
  const FlopConvention conv = parse_flop_convention(o.convention);
  const auto shapes = shapes_from(o);
  const auto causals = causal_from(o);
  std::vector<AttentionProblem> out;
  for (DType t : types)
    for (const auto& pass : passes)
      for (const auto& layout : layouts)
        for (bool causal : causals)
          for (const auto& s : shapes)
            out.push_back(make_problem(t, parse_pass(pass), conv, layout, s.batch, s.heads, s.kv_heads, s.seq_q,
                                       s.seq_kv, s.head_dim, causal));
  return out;
}

void print_list(const std::vector<AttentionProblem>& problems) {
  std::printf("%-6s %-4s %-5s %-5s %-5s %-8s %-8s %-8s %-6s %-8s %s\n", "dtype", "pass", "lay", "batch", "heads",
              "kv_heads", "seq_q", "seq_kv", "d", "causal", "tflop");
  for (const auto& p : problems) {
    const auto& s = p.shape;
    std::printf("%-6s %-4s %-5s %-5lld %-5lld %-8lld %-8lld %-8lld %-6lld %-8d %.4g\n", to_string(p.dtype).c_str(),
                to_string(p.pass).c_str(), to_string(s.layout).c_str(), static_cast<long long>(s.batch),
                static_cast<long long>(s.heads), static_cast<long long>(s.kv_heads), static_cast<long long>(s.seq_q),
                static_cast<long long>(s.seq_kv), static_cast<long long>(s.head_dim), s.causal ? 1 : 0,
                p.flops() / 1e12);
  }
}

// Closing --help.
const std::vector<std::pair<std::string, std::string>> kExamples = {
    {"bench_attention --backend host --batch 1 --heads 4 --seq 128,256 --head-dim 64 --out attn.csv",
     "the host implementation, verified against fp64"},
    {"bench_attention --backend cuda --set llm --pass fwd,bwd --causal 0,1 --out attn.csv",
     "cuDNN and the flash kernel on the LLM set, forward and backward"},
    {"bench_attention --model llama3-8b --tp 2 --backend cuda --out attn.csv",
     "the attention calls of one training step on one rank"},
};

}  // namespace

int main(int argc, char** argv) {
  AttentionOptions opt;
  std::map<std::string, std::shared_ptr<LibraryContext>> contexts;  // per implementation, shared by its points
  model::ModelOptions from_model({.bench = "attention",
                                  .replaced_flags = {"--batch", "--heads", "--kv-heads", "--seq-kv", "--head-dim",
                                                     "--causal", "--pass", "--layout", "--set"}});
  BenchSpec spec;
  spec.bench = "attention";
  spec.description = "bench_attention: fused attention (SDPA) throughput for cudnn, flash and host, verified against fp64";
  spec.examples = kExamples;
  spec.list_impls = attention_impls_table;
  spec.columns = kColumns;
  spec.add_options = [&](CLI::App& app) {
    opt.shape_flags = {
        app.add_option("--batch", opt.batch, "batch size")->capture_default_str(),
        app.add_option("--heads", opt.heads, "query heads")->capture_default_str(),
        app.add_option("--kv-heads", opt.kv_heads, "K/V heads (default: = heads; GQA: fewer; MQA: 1)"),
        app.add_option("--seq", opt.seq, "query sequence length")->capture_default_str(),
        app.add_option("--seq-kv", opt.seq_kv, "key/value sequence length (default: = seq)"),
        app.add_option("--head-dim", opt.head_dim, "head dimension (64, 128, 256)")->capture_default_str()};
    app.add_option("--causal", opt.causal, "0, 1 (list): top-left causal mask")->capture_default_str();
    app.add_option("--dtype", opt.dtype, "auto (fp32 on host, bf16 on GPUs), fp32, fp64, fp16, bf16, fp8_e4m3 (list)")
        ->capture_default_str();
    app.add_option("--pass", opt.pass, "fwd, bwd, fwdbwd (list)")->capture_default_str();
    app.add_option("--layout", opt.layout, "BSHD, BHSD (list)")->capture_default_str();
    app.add_option("--impl", opt.impl, "auto (every implementation of the backend) or a list of:\n" +
                                           registry::help_lines(attention_impls()))
        ->capture_default_str();
    app.add_option("--flop-convention", opt.convention, "fa2 (FlashAttention-2, default) or fa3")
        ->capture_default_str();
    app.add_option("--set", opt.set, "named shape set: llm, long (fixes the shape axes)");
    app.add_flag("--list", opt.list, "print the points' shapes and exit");
  };
  spec.before_run = [&](const RunConfig&) {
    // Validates every axis before a backend starts (bad input: one line, exit 2).
    const auto problems = problems_from(opt, DType::fp32);
    if (!opt.list) return false;
    if (opt.dtype.find("auto") != std::string::npos)
      std::printf("# dtype auto is listed as fp32 (host); GPU backends run bf16\n");
    print_list(problems);
    return true;
  };
  spec.make_ops = [&](Backend& backend, const RunConfig& config) {
    std::vector<AttentionProblem> problems;
    for (const auto& g : from_model.active() ? from_model.groups() : std::vector<model::OpGroup>{}) {
      const model::AttentionShape& a = g.op.attention;
      problems.push_back(make_problem(g.op.dtype, parse_pass(a.pass), parse_flop_convention(opt.convention), "BSHD",
                                      a.batch, a.heads, a.kv_heads, a.seq_q, a.seq_kv, a.head_dim, a.causal));
    }
    if (!from_model.active()) problems = problems_from(opt, backend.is_host() ? DType::fp32 : DType::bf16);
    std::vector<std::unique_ptr<Op>> ops;
    for (const AttentionImpl* impl : resolve_attention_impls(opt.impl, backend)) {
      std::shared_ptr<LibraryContext> ctx;
      if (impl->make_context) ctx = contexts[std::string(impl->name)] = impl->make_context(backend);
      for (const auto& p : problems) ops.push_back(impl->make_op(p, config.regime, ctx));
    }
    return ops;
  };
  spec.add_metadata = [&](Metadata& meta, Backend&) {
    for (const auto& [name, ctx] : contexts) meta.add_library(name, ctx->version());
  };
  from_model.attach(spec);
  return bench_main(argc, argv, spec);
}
