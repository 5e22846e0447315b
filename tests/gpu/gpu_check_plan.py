"""What .ci/gpu-check runs, in which part, and how long each step may take.

A device session gets two calls of at most 10 minutes: each part is a list of steps whose
budgets (hard limits: a step past its budget is stopped and what it wrote so far is kept)
add up to PART_LIMIT_S, leaving time for unpacking, packing and the machine's own start.
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

Step = namedtuple("Step", "name part kind budget_s argv needs")
# kind: facts | ldd | ctest | gemm_shapes | bench | torch

GPU_FAST = ["--backend", "cuda", "--quiet", "--warmup-time", "0.02"]
GEMM = GPU_FAST + ["--max-time-per-point", "0.3"]
REF = GPU_FAST + ["--max-time-per-point", "0.5"]
GEMM_DTYPES = ("bf16", "fp16", "fp8_e4m3")


def torch_step(name, part, budget, bench, sources):
    return Step(name, part, "torch", budget,
                ["{python}", f"{{here}}/torch_{bench}.py", "--out", f"{{out}}/torch_{bench}.csv", "--points-from",
                 *[f"{{out}}/{s}.csv" for s in sources], "--time-budget", "{time_budget}"],
                f"{{here}}/torch_{bench}.py")


def gemm_step(dtype, budget, autotune=False):
    name = f"gemm_{dtype}" + ("_autotune" if autotune else "")
    return Step(name, 2, "bench", budget,
                ["{bin:bench_gemm}", *GEMM, "--shapes", f"{{work}}/gemm_shapes_{dtype}.csv", "--layout", "TN",
                 *(["--autotune", "4"] if autotune else []), "--out", f"{{out}}/{name}.csv"],
                "{bin:bench_gemm}")


STEPS = [
    # Part 1: the machine, the GPU tests, attention, copies, collectives.
    Step("facts", 1, "facts", 40, [], ""),
    Step("ldd", 1, "ldd", 20, [], ""),
    Step("ctest_gpu", 1, "ctest", 210, [], ""),
    Step("attention", 1, "bench", 110,
         ["{bin:bench_attention}", *REF, "--set", "llm", "--impl", "cudnn,flash", "--dtype", "bf16", "--pass",
          "fwd,bwd", "--causal", "0,1", "--out", "{out}/attention.csv"], "{bin:bench_attention}"),
    torch_step("torch_attention", 1, 60, "attention", ["attention"]),
    Step("p2p_copy", 1, "bench", 25,
         ["{bin:bench_p2p}", *GPU_FAST, "--max-time-per-point", "0.2", "--pattern", "copy", "--copy-direction",
          "d2d,h2d,d2h", "--memory", "pinned", "--sizes", "4K,1M,16M,256M,1G", "--out", "{out}/p2p_copy.csv"],
         "{bin:bench_p2p}"),
    torch_step("torch_p2p", 1, 25, "p2p", ["p2p_copy"]),
    Step("collectives", 1, "bench", 25,
         ["{bin:bench_collectives}", *GPU_FAST, "--max-time-per-point", "0.2", "--collective",
          "allreduce,allgather,reduce_scatter,broadcast", "--sizes", "8:1G:x16", "--out", "{out}/collectives.csv"],
         "{bin:bench_collectives}"),
    torch_step("torch_collectives", 1, 25, "collectives", ["collectives"]),
    # Part 2: GEMM on the llm set plus 4096^3 and 8192^3, heuristic and autotuned; memory.
    Step("facts", 2, "facts", 40, [], ""),
    Step("ldd", 2, "ldd", 20, [], ""),
    Step("gemm_shapes", 2, "gemm_shapes", 10, [], "{bin:bench_gemm}"),
    gemm_step("bf16", 75),
    gemm_step("fp16", 60),
    gemm_step("fp8_e4m3", 60),
    gemm_step("bf16", 110, autotune=True),
    torch_step("torch_gemm", 2, 75, "gemm", [f"gemm_{d}" for d in GEMM_DTYPES] + ["gemm_bf16_autotune"]),
    Step("memory", 2, "bench", 60, ["{bin:bench_memory}", "--backend", "cuda", "--quiet", "--out", "{out}/memory.csv"],
         "{bin:bench_memory}"),
    Step("torch_memory", 2, "torch", 30, ["{python}", "{here}/torch_memory.py", "--out", "{out}/torch_memory.csv"],
         "{here}/torch_memory.py"),
]


def steps_of(part):
    """The steps of part 1, 2 (int or text) or "all"."""
    return [s for s in STEPS if str(part) in ("all", str(s.part))]


def total_budget(part):
    return sum(s.budget_s for s in steps_of(part))
