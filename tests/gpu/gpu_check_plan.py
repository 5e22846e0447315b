"""What .ci/gpu-check runs, in which part, and how long each step may take.

A device session has 30 minutes of device time and calls of at most 10 minutes: each part is
one call, a list of steps whose budgets (hard limits: a step past its budget is stopped and
what it wrote so far is kept) add up to at most PART_LIMIT_S, leaving time for unpacking,
packing and the machine's own start. Issue 12's session runs parts 1, 2 and 3 back to back
(SESSION_PARTS): parts 1 and 2 take PART_LIMIT_S each, and part 3 gets what is left of
SESSION_BUDGET_S after MACHINE_START_S for the machine's start and CALL_OVERHEAD_S per call
(pass it as --time-limit): its steps are in priority order, and the ones issue 12 cannot do
without (the sanitizers, the five repeats, cold against hot) come first and fit that rest.
Part 4 (issue 18's check of `gpucal predict` on a model step, and the nightly suite's
duration) is for a session with time left, or the next one.
The reference runs of a bench and its PyTorch baseline sit next to each other, so a part cut
short still has pairs to compare. A bench whose executable or baseline script is not in
this build is reported and skipped (bench_memory and tests/gpu/torch_memory.py arrive with
the memory work; the entry below runs them with their defaults).

Command templates: {bin:NAME} the executable NAME of the build, {out} the results folder,
{work} the scratch folder, {here} tests/gpu, {python} this Python, {time_budget} the step's
budget less 15 s (for scripts that stop themselves). A step that ends early leaves its
unused seconds to the steps after it; the part's total never grows.
"""
from collections import namedtuple

PART_LIMIT_S = 540  # of the 600 s a device command may run
CALL_LIMIT_S = 600  # a device command's own limit (--time-limit's default)
EXPORT_RESERVE_S = 30  # kept at the end of a call for the ratios, the summary and the export
SESSION_BUDGET_S = 1800  # device time of one session
MACHINE_START_S = 240  # a fresh machine's start ("minutes"), counted once
CALL_OVERHEAD_S = 60  # per call: the bundle carried and unpacked, the results packed
PARTS = (1, 2, 3, 4)
SESSION_PARTS = (1, 2, 3)  # issue 12's session, in this order, each call right after the last

Step = namedtuple("Step", "name part kind budget_s argv needs")
# kind: facts | ldd | ctest | gemm_shapes | bench | torch | sanitizer | suite

GPU_FAST = ["--backend", "cuda", "--quiet", "--warmup-time", "0.02"]
GEMM = GPU_FAST + ["--max-time-per-point", "0.3"]
REF = GPU_FAST + ["--max-time-per-point", "0.5"]
GEMM_DTYPES = ("bf16", "fp16", "fp8_e4m3")


def torch_step(name, part, budget, bench, sources, folder="{out}", per_point_s=None):
    """A PyTorch baseline of the gpucal rows in `sources`; per_point_s: its --max-time-per-point
    (the sampling time per measurement; default the script's 0.25 s)."""
    return Step(name, part, "torch", budget,
                ["{python}", f"{{here}}/torch_{bench}.py", "--out", f"{folder}/torch_{bench}.csv", "--points-from",
                 *[f"{folder}/{s}.csv" for s in sources], "--time-budget", "{time_budget}",
                 *(["--max-time-per-point", str(per_point_s)] if per_point_s else [])],
                f"{{here}}/torch_{bench}.py")


def gemm_step(dtype, budget, autotune=False):
    name = f"gemm_{dtype}" + ("_autotune" if autotune else "")
    return Step(name, 2, "bench", budget,
                ["{bin:bench_gemm}", *GEMM, "--shapes", f"{{work}}/gemm_shapes_{dtype}.csv", "--layout", "TN",
                 *(["--autotune", "4"] if autotune else []), "--out", f"{{out}}/{name}.csv"],
                "{bin:bench_gemm}")


# Part 3: one training step of Llama-3 8B, one layer, at full width. --scale 1: every GEMM of
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


# Part 3: issue 12's checks of the harness itself, into <results>/harness/ (ratios.py reads
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
REPEATS = 5  # the same GEMM points as separate processes: their medians' spread (issue 12: <= 1% at >= 100 us)
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
    # Part 1: the machine, the GPU tests, attention, copies, collectives.
    Step("facts", 1, "facts", 30, [], ""),
    Step("ldd", 1, "ldd", 10, [], ""),
    Step("ctest_gpu", 1, "ctest", 205, [], ""),
    Step("attention", 1, "bench", 110,
         ["{bin:bench_attention}", *REF, "--set", "llm", "--impl", "cudnn,flash", "--dtype", "bf16", "--pass",
          "fwd,bwd", "--causal", "0,1", "--out", "{out}/attention.csv"], "{bin:bench_attention}"),
    torch_step("torch_attention", 1, 60, "attention", ["attention"]),
    Step("p2p_copy", 1, "bench", 25,
         ["{bin:bench_p2p}", *GPU_FAST, "--max-time-per-point", "0.2", "--pattern", "copy", "--copy-direction",
          "d2d,h2d,d2h", "--memory", "pinned", "--sizes", "4K,1M,16M,256M,1G", "--out", "{out}/p2p_copy.csv"],
         "{bin:bench_p2p}"),
    torch_step("torch_p2p", 1, 25, "p2p", ["p2p_copy"]),
    # In and out of place: torch.distributed's all_reduce, broadcast and reduce work in place
    # only, so they are compared on the in-place rows (torch_collectives.py says so per row).
    Step("collectives", 1, "bench", 40,
         ["{bin:bench_collectives}", *GPU_FAST, "--max-time-per-point", "0.2", "--collective",
          "allreduce,allgather,reduce_scatter,broadcast", "--in-place", "0,1", "--sizes", "8:1G:x16", "--out",
          "{out}/collectives.csv"],
         "{bin:bench_collectives}"),
    torch_step("torch_collectives", 1, 35, "collectives", ["collectives"], per_point_s=0.1),
    # Part 2: GEMM on the llm set plus 4096^3 and 8192^3, heuristic and autotuned; memory.
    Step("facts", 2, "facts", 30, [], ""),
    Step("ldd", 2, "ldd", 10, [], ""),
    Step("gemm_shapes", 2, "gemm_shapes", 10, [], "{bin:bench_gemm}"),
    gemm_step("bf16", 75),
    gemm_step("fp16", 60),
    gemm_step("fp8_e4m3", 60),
    gemm_step("bf16", 100, autotune=True),
    # Squares first, the other shapes round-robin over the dtypes; ~35 s at 0.1 s per shape on an
    # H100 (216 shapes, >= 10 cold samples each: an estimate, not a measurement).
    torch_step("torch_gemm", 2, 75, "gemm", [f"gemm_{d}" for d in GEMM_DTYPES] + ["gemm_bf16_autotune"],
               per_point_s=0.1),
    # The llm set (306 points with a PyTorch counterpart, 309 with fma_chain), ~45 s each side.
    Step("memory", 2, "bench", 60,
         ["{bin:bench_memory}", "--backend", "cuda", "--quiet", "--warmup-time", "0.02", "--max-time-per-point", "0.1",
          "--set", "llm", "--impl", "gpucal", "--out", "{out}/memory.csv"], "{bin:bench_memory}"),
    torch_step("torch_memory", 2, 60, "memory", ["memory"], per_point_s=0.1),
    # Part 3: issue 12's checks of the harness (see HARNESS_DIR), most needed first.
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
    suite_step("suite_smoke", 3, 45, "smoke"),
    suite_step("suite_nightly", 3, 175, "nightly"),
    # Part 4: issue 18's check of `gpucal predict` (see STEP_MODEL).
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
         ["{bin:gpucal}", "predict", STEP_DIR, *STEP_MODEL, "--measure-step", "--allow-suspect", "--out",
          f"{STEP_DIR}/predict.json"],
         "{bin:gpucal}"),
]
# Issue 12 cannot do without these part-3 steps; they come first and fit the session's rest.
PART3_NEEDED = ("facts", "ldd", "memcheck_flash", "racecheck_flash", "memcheck_gemm", "racecheck_gemm",
                *[f"repeat_{i}" for i in range(1, REPEATS + 1)], "gemm_cold", "gemm_hot")


def steps_of(part):
    """The steps of part 1, 2, 3, 4 (int or text) or "all"."""
    return [s for s in STEPS if str(part) in ("all", str(s.part))]


def total_budget(part):
    return sum(s.budget_s for s in steps_of(part))


def part_limit(part):
    return PART_LIMIT_S


def part3_rest_s():
    """What issue 12's session leaves for part 3 after the machine's start and parts 1 and 2
    (their full budgets), less part 3's own call overhead."""
    return (SESSION_BUDGET_S - MACHINE_START_S - len(SESSION_PARTS) * CALL_OVERHEAD_S
            - sum(total_budget(p) for p in SESSION_PARTS if p != 3))


def needed_budget_part3():
    return sum(s.budget_s for s in steps_of(3) if s.name in PART3_NEEDED)


def session_seconds():
    """Device time issue 12's session may take: the machine's start, then per call its
    overhead and the part's budgets (part 3: the steps it cannot do without)."""
    return (MACHINE_START_S + len(SESSION_PARTS) * CALL_OVERHEAD_S
            + sum(total_budget(p) if p != 3 else needed_budget_part3() for p in SESSION_PARTS))
