"""What .ci/gpu-check runs, in which part, and how long each step may take.

Each part is one call of `.ci/gpu-check --part N`, a list of steps run in order. Every step
has a budget, a hard limit: a step past it is stopped and what it wrote so far is kept; a
step that ends early leaves its unused seconds to the steps after it. Part 1 is the first
thing to run on a new machine, the most valuable steps first: its budgets add up to
FIRST_CALL_S (8 minutes), and its `extra` steps after them run only on seconds the others
left unused. Parts 2, 3 and 4 each add up to at most PART_LIMIT_S. Whatever the budgets, a
call keeps to its --time-limit (default CALL_LIMIT_S): a step is cut to what is left of it,
later steps are reported `not run`, and the results are written after every step.

The reference runs of a bench and its PyTorch baseline sit next to each other, so a part cut
short still has pairs to compare. A bench whose executable or baseline script is not in
this build is reported and skipped.

Command templates: {bin:NAME} the executable NAME of the build, {out} the results folder,
{work} the scratch folder, {here} tests/gpu, {python} this Python, {time_budget} the step's
budget less 15 s (for scripts that stop themselves).
"""
from collections import namedtuple

FIRST_CALL_S = 480  # part 1's budgets without its extra steps
PART_LIMIT_S = 540  # parts 2-4: their budgets add up to at most this
CALL_LIMIT_S = 600  # --time-limit's default
EXPORT_RESERVE_S = 30  # kept at the end of a call for the ratios, the summary and the export
PARTS = (1, 2, 3, 4)

Step = namedtuple("Step", "name part kind budget_s argv needs extra", defaults=(False,))
# kind: facts | ldd | ctest | gemm_shapes | bench | torch | sanitizer | suite
# extra: runs only on seconds the earlier steps of its part left unused (its budget is not counted)

GPU_FAST = ["--backend", "cuda", "--quiet", "--warmup-time", "0.02"]
GEMM = GPU_FAST + ["--max-time-per-point", "0.3"]
REF = GPU_FAST + ["--max-time-per-point", "0.5"]
GEMM_DTYPES = ("bf16", "fp16", "fp8_e4m3")


def torch_step(name, part, budget, bench, sources, folder="{out}", per_point_s=None, csv=None, extra=False):
    """A PyTorch baseline of the gpucal rows in `sources`, into `csv`.csv (default torch_<bench>;
    a results folder's torch_*.csv are all read); per_point_s: its --max-time-per-point
    (the sampling time per measurement; default the script's 0.25 s)."""
    return Step(name, part, "torch", budget,
                ["{python}", f"{{here}}/torch_{bench}.py", "--out", f"{folder}/{csv or 'torch_' + bench}.csv",
                 "--points-from",
                 *[f"{folder}/{s}.csv" for s in sources], "--time-budget", "{time_budget}",
                 *(["--max-time-per-point", str(per_point_s)] if per_point_s else [])],
                f"{{here}}/torch_{bench}.py", extra)


def gemm_step(dtype, part, budget, autotune=False, extra=False):
    name = f"gemm_{dtype}" + ("_autotune" if autotune else "")
    # fp8: cuBLASLt's own log of errors (level 1) in the step's log, which says why it refuses
    # an algorithm its heuristic offered
    logged = ["env", "CUBLASLT_LOG_LEVEL=1"] if dtype.startswith("fp8") else []
    return Step(name, part, "bench", budget,
                [*logged, "{bin:bench_gemm}", *GEMM, "--shapes", f"{{work}}/gemm_shapes_{dtype}.csv", "--layout", "TN",
                 *(["--autotune", "4"] if autotune else []), "--out", f"{{out}}/{name}.csv"],
                "{bin:bench_gemm}", extra)


# Part 4: one training step of Llama-3 8B, one layer, at full width. --scale 1: every GEMM of
# the layer is >= 34 GFLOP (>= 40 us even at ~800 TFLOP/s), above PyTorch's ~10-30 us of Python
# and autograd per op, so predicted / PyTorch compares kernels, not the interpreter (--scale 2:
# 9-30 GFLOP, 11-40 us). One layer at seq 1024: ~4.6 TFLOP of GEMMs (70% the logits over the
# 128,256-token vocabulary) and AdamW over 1.27e9 fp32 parameters (83% the embedding and output
# tables; --scale shrinks the vocabulary too, so it cannot change that share); ~20-25 ms a
# step, ~35 GB on the GPU for bench_step (every op's buffers at once), ~23 GB for PyTorch: an
# 80 GB H100 holds one program at a time (estimates, not measurements). The predict inputs, the
# step and the PyTorch step share the results folder STEP_DIR (gpucal predict reads
# <bench>.csv and step.csv there) and exactly these flags.
STEP_MODEL = ["--model", "llama3-8b", "--seq", "1024", "--micro-batch", "1", "--layers", "1", "--scale", "1",
              "--dtype", "bf16"]
STEP_DIR = "{out}/step"


def model_step(name, budget, binary, csv, measure=REF):
    return Step(name, 4, "bench", budget,
                [f"{{bin:{binary}}}", *measure, *STEP_MODEL, "--out", f"{STEP_DIR}/{csv}.csv"], f"{{bin:{binary}}}")


# Part 3: the checks of the harness itself, into <results>/harness/ (ratios.py reads
# these names). compute-sanitizer runs each bench with as little timing as the harness allows
# (hot regime, 2 samples, no warm-up): the kernels are what is checked, at small ragged shapes
# (sequence 77 and 200 against 131 keys; GEMM 127 x 65 x 33 and 1000 x 65 x 257), 10-100x
# slower under the tool.
HARNESS_DIR = "{out}/harness"
SANITIZED = ["--backend", "cuda", "--quiet", "--regime", "hot", "--min-samples", "2", "--max-time-per-point", "0.001",
             "--warmup-time", "0"]
SANITIZED_FLASH = ["{bin:bench_attention}", *SANITIZED, "--impl", "flash", "--dtype", "bf16", "--batch", "1", "--heads",
                   "2", "--kv-heads", "1", "--seq", "77,200", "--seq-kv", "131", "--head-dim", "64,128,256", "--causal",
                   "0,1", "--pass", "fwd,bwd"]
SANITIZED_GEMM = ["{bin:bench_gemm}", "--backend", "cuda", "--quiet", "--min-samples", "2", "--max-time-per-point",
                  "0.001", "--warmup-time", "0", "--rotate", "--dtype", "bf16,fp8_e4m3", "--layout", "TN", "--m",
                  "127,1000", "--n", "65", "--k", "33,257"]
REPEATS = 5  # the same GEMM points as separate processes: their medians' spread (target: <= 1% at >= 100 us)
REPEAT_GEMM = ["{bin:bench_gemm}", *REF, "--dtype", "bf16", "--layout", "TN", "--m", "4096", "--n", "4096", "--k",
               "4096,8192"]  # ~0.2 and ~0.4 ms at ~700 TFLOP/s
COLD_HOT_GEMM = ["{bin:bench_gemm}", *REF, "--dtype", "bf16", "--layout", "TN", "--m", "1024", "--n", "1024", "--k",
                 "1024"]  # 2 MiB of operands: L2-resident when hot, so cold (flushed) must read slower


def sanitizer_step(tool, target, budget, command):
    """compute-sanitizer --tool TOOL on a bench command; its output in harness/, its verdict in
    harness/sanitizer.json."""
    return Step(f"{tool}_{target}", 3, "sanitizer", budget,
                [tool, target, *command, "--out", f"{HARNESS_DIR}/{tool}-{target}.csv"], command[0])


def suite_step(name, part, budget, suite):
    """`gpucal run --suite SUITE` on the GPU, timed (its own log gives each bench's wall time);
    the durations go to harness/suites.json."""
    return Step(name, part, "suite", budget,
                [suite, "{bin:gpucal}", "run", "--suite", suite, "--backend", "cuda", "--threads", "all", "--no-plots",
                 "--out", f"{{out}}/suite-{suite}"], "{bin:gpucal}")


STEPS = [
    # Part 1, the first call on a new machine, most valuable first: the GPU tests, the smoke
    # suite end to end, GEMM bf16, attention, copies, collectives, each bench beside PyTorch.
    # Budgets add up to FIRST_CALL_S; the steps after them (GEMM fp16 and fp8) run only with
    # the seconds earlier steps left unused, inside the call's --time-limit.
    Step("facts", 1, "facts", 15, [], ""),
    Step("ldd", 1, "ldd", 5, [], ""),
    Step("ctest_gpu", 1, "ctest", 130, [], ""),
    suite_step("suite_smoke", 1, 75, "smoke"),
    Step("gemm_shapes", 1, "gemm_shapes", 5, [], "{bin:bench_gemm}"),
    gemm_step("bf16", 1, 45),
    torch_step("torch_gemm_bf16", 1, 40, "gemm", ["gemm_bf16"], per_point_s=0.1, csv="torch_gemm_bf16"),
    Step("attention", 1, "bench", 50,
         ["{bin:bench_attention}", *REF, "--set", "llm", "--impl", "cudnn,flash", "--dtype", "bf16", "--pass",
          "fwd,bwd", "--causal", "0,1", "--out", "{out}/attention.csv"], "{bin:bench_attention}"),
    torch_step("torch_attention", 1, 35, "attention", ["attention"]),
    Step("p2p_copy", 1, "bench", 20,
         ["{bin:bench_p2p}", *GPU_FAST, "--max-time-per-point", "0.2", "--pattern", "copy", "--copy-direction",
          "d2d,h2d,d2h", "--memory", "pinned", "--sizes", "4K,1M,16M,256M,1G", "--out", "{out}/p2p_copy.csv"],
         "{bin:bench_p2p}"),
    torch_step("torch_p2p", 1, 15, "p2p", ["p2p_copy"]),
    # In and out of place: torch.distributed's all_reduce, broadcast and reduce work in place
    # only, so they are compared on the in-place rows (torch_collectives.py says so per row).
    Step("collectives", 1, "bench", 25,
         ["{bin:bench_collectives}", *GPU_FAST, "--max-time-per-point", "0.2", "--collective",
          "allreduce,allgather,reduce_scatter,broadcast", "--in-place", "0,1", "--sizes", "8:1G:x16", "--out",
          "{out}/collectives.csv"],
         "{bin:bench_collectives}"),
    torch_step("torch_collectives", 1, 20, "collectives", ["collectives"], per_point_s=0.1),
    gemm_step("fp16", 1, 25, extra=True),
    gemm_step("fp8_e4m3", 1, 25, extra=True),
    torch_step("torch_gemm", 1, 40, "gemm", ["gemm_fp16", "gemm_fp8_e4m3"], per_point_s=0.1, extra=True),
    # Part 2: GEMM bf16 autotuned, bench_memory, each beside PyTorch.
    Step("facts", 2, "facts", 30, [], ""),
    Step("ldd", 2, "ldd", 10, [], ""),
    Step("gemm_shapes", 2, "gemm_shapes", 10, [], "{bin:bench_gemm}"),
    gemm_step("bf16", 2, 100, autotune=True),
    torch_step("torch_gemm_autotune", 2, 50, "gemm", ["gemm_bf16_autotune"], per_point_s=0.1,
               csv="torch_gemm_autotune"),
    # The llm set (306 points with a PyTorch counterpart, 309 with fma_chain): on an H200 253 of
    # them took 140 s (0.55 s a point: filling and checking tensors up to 2 GiB on the host).
    Step("memory", 2, "bench", 180,
         ["{bin:bench_memory}", "--backend", "cuda", "--quiet", "--warmup-time", "0.02", "--max-time-per-point", "0.1",
          "--set", "llm", "--impl", "gpucal", "--out", "{out}/memory.csv"], "{bin:bench_memory}"),
    torch_step("torch_memory", 2, 90, "memory", ["memory"], per_point_s=0.1),
    # Part 3: checks of the harness itself (see HARNESS_DIR), most needed first.
    Step("facts", 3, "facts", 25, [], ""),
    Step("ldd", 3, "ldd", 10, [], ""),
    sanitizer_step("memcheck", "flash", 50, SANITIZED_FLASH),
    sanitizer_step("racecheck", "flash", 55, SANITIZED_FLASH),
    sanitizer_step("memcheck", "gemm", 25, SANITIZED_GEMM),
    sanitizer_step("racecheck", "gemm", 25, SANITIZED_GEMM),
    *[Step(f"repeat_{i}", 3, "bench", 15, [*REPEAT_GEMM, "--out", f"{HARNESS_DIR}/repeat-{i}.csv"], "{bin:bench_gemm}")
      for i in range(1, REPEATS + 1)],
    *[Step(f"gemm_{regime}", 3, "bench", 15,
           [*COLD_HOT_GEMM, "--regime", regime, "--out", f"{HARNESS_DIR}/cold_hot-{regime}.csv"], "{bin:bench_gemm}")
      for regime in ("cold", "hot")],
    suite_step("suite_nightly", 3, 175, "nightly"),
    # Part 4: the check of `gpucal predict` on one training step (see STEP_MODEL).
    Step("facts", 4, "facts", 40, [], ""),
    Step("ldd", 4, "ldd", 20, [], ""),
    model_step("step_gemm", 30, "bench_gemm", "gemm"),
    model_step("step_attention", 15, "bench_attention", "attention"),
    model_step("step_memory", 30, "bench_memory", "memory"),
    model_step("step_bench", 40, "bench_step", "step", GPU_FAST + ["--max-time-per-point", "2"]),
    torch_step("torch_step", 4, 45, "step", ["step"], folder=STEP_DIR),
    # --allow-suspect: rows a loaded host flags suspect (their column says so) still cost the step,
    # so the chain predicts wherever it runs.
    Step("step_predict", 4, "bench", 15,
         ["{bin:gpucal}", "predict", STEP_DIR, *STEP_MODEL, "--measure-step", "--allow-suspect", "--output",
          f"{STEP_DIR}/predict.json"],
         "{bin:gpucal}"),
]


def steps_of(part):
    """The steps of part 1, 2, 3, 4 (int or text) or "all"."""
    return [s for s in STEPS if str(part) in ("all", str(s.part))]


def total_budget(part):
    """The part's budgets, its extra steps left out."""
    return sum(s.budget_s for s in steps_of(part) if not s.extra)


def part_limit(part):
    return FIRST_CALL_S if str(part) == "1" else PART_LIMIT_S
