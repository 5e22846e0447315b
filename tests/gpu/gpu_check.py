#!/usr/bin/env python3
"""gpu-check: every GPU path of gpucal on a GPU machine, in parts of at most 10 minutes each,
with PyTorch's figures for the same measurements.

  .ci/gpu-check --part 1|2|3|4|all [--bundle FILE | --build-dir DIR] [--out-dir DIR] [--export DIR]
                [--time-limit S]
  .ci/gpu-check --dry-run [--part ...]      the steps, their commands and time budgets
  .ci/gpu-check --ratios-only DIR           the ratio table of a results folder (no GPU needed)

Part 1, the first run on a new machine, most valuable first (8 minutes of budgets): device,
driver and library facts, the ldd check, `ctest -L gpu` with the skip rule (a GPU test that
skips on a machine with a GPU fails unless it prints "SKIP(hardware): ..."), `gpucal run
--suite smoke` end to end (benches, fit, exports, predict), GEMM bf16 on the llm set plus
4096^3 and 8192^3 against torch.matmul, attention (llm set, cuDNN and flash, fwd and bwd)
against SDPA's backends, copies (d2d, h2d, d2h pinned) against Tensor.copy_, collectives at
one rank against torch.distributed; then, on the seconds those left, GEMM fp16 and fp8.
Part 2: GEMM bf16 autotuned, bench_memory's llm set, each against PyTorch.
Part 3: the checks of the harness into <results>/harness/: compute-sanitizer memcheck and
racecheck on the flash kernels (fwd and bwd, d 64/128/256, causal 0/1, ragged lengths) and
on the cold-rotate GEMM at odd shapes, the same GEMM points as 5 separate processes (the
spread of their medians), 1024^3 bf16 cold and hot, and the duration of `gpucal run --suite
nightly`.
Part 4: `gpucal predict` checked on one training step (Llama-3 8B, one layer, seq 1024,
bf16): bench_gemm, bench_attention and bench_memory with those model flags into
<results>/step/, bench_step (the step run as one kernel sequence), the same step in PyTorch
(tests/gpu/torch_step.py), and `gpucal predict --measure-step`; prints and records
predicted / measured and predicted / PyTorch (targets: within 5% and 10%).
Each step has a time budget (tests/gpu/gpu_check_plan.py; --dry-run prints them). The whole
call keeps to --time-limit (default 600 s): a step never runs past it less 30 s, later steps
are reported `not run`, and the results are exported after every step, so a call that is cut
off still brings back what it measured. SIGTERM or SIGINT stops the running step, exports and
exits 1.

The build comes from a bundle (.ci/gpu-bundle; default .gpu/gpucal-gpu.tar.xz, unpacked to a
temporary folder) or a build folder. Vendor libraries are taken from PyTorch's nvidia-*
wheels (their lib folders go first on LD_LIBRARY_PATH). Results go to
results/reference/<device>/ (CSVs and sidecars of both sides, facts-partN.json,
ctest-gpu-partN.json, ratios.md, ratios.csv, summary-partN.json; part 3's in harness/,
part 4's in step/); with --export DIR a tarball of them, the ratio
table, the log and the summary are copied there.

Exit: 0 all passed; 1 a failure (test, skip without a hardware reason, ldd, a bench's exit
code, a sanitizer error, a step not run for lack of time); 2 bad arguments; 3 no NVIDIA GPU on
this machine (nothing measured).
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpucal_bundle  # noqa: E402
import ratios  # noqa: E402
import gpu_check_plan as plan  # noqa: E402
from gpu_check_plan import part_limit, steps_of, total_budget  # noqa: E402
from gpu_check_process import Stopped, on_signal  # noqa: E402
from gpu_check_results import export, write_summary  # noqa: E402
from gpu_check_steps import RUNNERS  # noqa: E402

KILL_GRACE_S = 15  # gpu_check_process.stop_group: SIGTERM, 10 s, then SIGKILL, 5 s
MIN_STEP_S = 5  # a step with less time than this left before the deadline is not started

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NO_GPU = 0, 1, 2, 3
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
DEFAULT_BUNDLE = os.path.join(REPO, ".gpu", "gpucal-gpu.tar.xz")


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        print(f"gpu-check: {message} (see --help)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def parse_args(argv):
    ap = OneLineParser(prog="gpu-check", description=__doc__.split("\n\n")[0],
                       epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=["1", "2", "3", "4", "all"], help="which part to run (--dry-run lists each part's steps)")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--bundle", help="a .ci/gpu-bundle tarball (default .gpu/gpucal-gpu.tar.xz)")
    src.add_argument("--build-dir", help="a gpucal build folder of this machine instead of a bundle")
    ap.add_argument("--unpack-to", help="where the bundle is unpacked (default: a temporary folder)")
    ap.add_argument("--out-dir", help="results folder (default results/reference/<device>)")
    ap.add_argument("--device-name", help="the <device> of the default results folder (default: from nvidia-smi)")
    ap.add_argument("--export",
                    help="copy the results tarball, ratio table, log and summary here after every step")
    ap.add_argument("--skip", action="append", default=[], metavar="STEP", help="leave this step out (repeatable)")
    ap.add_argument("--only", action="append", default=[], metavar="STEP", help="run only these steps (repeatable)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and exit")
    ap.add_argument("--ratios-only", metavar="DIR", help="write and print DIR's ratio table and exit")
    ap.add_argument("--time-limit", type=float, default=plan.CALL_LIMIT_S, metavar="S",
                    help=f"seconds this call may take in all (default {plan.CALL_LIMIT_S}); "
                         f"steps stop {plan.EXPORT_RESERVE_S} s before it to export")
    a = ap.parse_args(argv)
    if not a.ratios_only and not a.part:
        ap.error("--part 1, 2, 3, 4 or all is required (or --dry-run --part N, or --ratios-only DIR)")
    if not a.time_limit > plan.EXPORT_RESERVE_S + MIN_STEP_S:
        ap.error(f"--time-limit {a.time_limit:g}: needs more than {plan.EXPORT_RESERVE_S + MIN_STEP_S} s")
    for key in ("bundle", "build_dir", "unpack_to", "out_dir", "export", "ratios_only"):
        if getattr(a, key):  # relative to where gpu-check was called from
            setattr(a, key, os.path.abspath(getattr(a, key)))
    if a.part:
        names = {s.name for s in steps_of(a.part)}
        for n in a.skip + a.only:
            if n not in names:
                ap.error(f"no step '{n}' in part {a.part} (steps: {', '.join(sorted(names))})")
    return a


def selected_steps(a):
    return [s for s in steps_of(a.part) if s.name not in a.skip and (not a.only or s.name in a.only)]


def describe(step):
    if step.kind == "sanitizer":
        return f"compute-sanitizer --tool {step.argv[0]} " + " ".join(step.argv[2:])
    if step.kind == "suite":
        return " ".join(step.argv[1:])
    return " ".join(step.argv) if step.argv else {"facts": "tests/gpu/gpu_facts.py", "ldd": "ldd of every executable",
                                                  "ctest": "ctest -L gpu (skip rule)",
                                                  "gemm_shapes": "bench_gemm --set llm --list + squares"}[step.kind]


def print_plan(steps, part):
    counted = [s for s in steps if not s.extra]
    print(f"gpu-check part {part}: {len(steps)} steps, budgets {sum(s.budget_s for s in counted):.0f} s "
          f"(the plan's total for the part: {total_budget(part):.0f} s; at most {part_limit(part)} s)")
    for s in steps:
        extra = "  (extra: on seconds left unused)" if s.extra else ""
        print(f"  part {s.part}  {s.budget_s:4.0f} s  {s.name:20s} {describe(s)}{extra}")
    print("each call keeps to --time-limit (default 600 s): steps past it are reported `not run`; "
          "results are exported after every step")


def gpu_present():
    """(True, names) when nvidia-smi lists a GPU, else (False, why)."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return False, "nvidia-smi is not on PATH (no NVIDIA driver)"
    try:
        proc = subprocess.run([exe, "-L"], capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        return False, f"nvidia-smi -L failed: {e}"
    gpus = [l for l in proc.stdout.splitlines() if l.startswith("GPU ")]
    if proc.returncode != 0 or not gpus:
        return False, f"nvidia-smi -L lists no GPU ({(proc.stderr or proc.stdout).strip()[:200]})"
    return True, gpus


def device_slug(gpu_lines):
    name = re.sub(r"^GPU \d+: ", "", gpu_lines[0])
    name = re.sub(r"\s*\(UUID:.*\)$", "", name)
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "gpu"


class Log:
    """Prints and keeps a copy of what gpu-check says."""

    def __init__(self):
        self.lines = []

    def __call__(self, msg=""):
        print(msg, flush=True)
        self.lines.append(msg)

    def save(self, path):
        with open(path, "w") as f:
            f.write("\n".join(self.lines) + "\n")


class Context:
    def __init__(self, a, build, manifest, bundle_root, out_dir, work, env, log):
        self.a, self.build, self.manifest, self.bundle_root = a, build, manifest, bundle_root
        self.out, self.work, self.env, self.log = out_dir, work, env, log
        self.failures, self.notes = [], []
        self.child = None  # the step's running process (its group is stopped on a signal)

    def binary(self, name):
        for rel in self.manifest["executables"]:
            if os.path.basename(rel) == name:
                return os.path.join(self.build, rel)
        return None

    def expand(self, text, budget):
        def sub(m):
            key = m.group(1)
            if key.startswith("bin:"):
                path = self.binary(key[4:])
                if not path:
                    raise FileNotFoundError(key[4:])
                return path
            return {"out": self.out, "work": self.work, "here": HERE, "python": sys.executable,
                    "time_budget": str(max(5, int(budget - 15)))}[key]
        return re.sub(r"\{([a-z_]+(?::[A-Za-z0-9_]+)?)\}", sub, text)


def locate_build(a, log):
    """(build folder, manifest, bundle root or None)."""
    if a.build_dir:
        build = os.path.abspath(a.build_dir)
        if not os.path.isdir(build):
            raise SystemExit(f"gpu-check: --build-dir {a.build_dir}: no such folder")
        return build, {"executables": gpucal_bundle.executables(build)}, None
    bundle = a.bundle or DEFAULT_BUNDLE
    if not os.path.exists(bundle):
        raise SystemExit(f"gpu-check: no bundle at {bundle}: make one with .ci/gpu-bundle, or give --build-dir")
    dest = a.unpack_to or tempfile.mkdtemp(prefix="gpucal-gpu-")
    root, manifest = gpucal_bundle.unpack(bundle, dest)
    log(f"bundle {bundle} (commit {manifest.get('git_commit', '?')[:12]}, archs {manifest.get('cuda_architectures')}) "
        f"unpacked in {root}")
    return os.path.join(root, "build"), manifest, root


def run_steps(ctx, steps, part, gpus, t_start, deadline, results):
    """Runs the steps in order inside their budgets and the call's deadline, writing the
    summary and exporting after each; each step's result is appended to `results`."""
    savings = 0.0
    for i, step in enumerate(steps):
        left = deadline - time.monotonic() - KILL_GRACE_S
        granted = savings if step.extra else step.budget_s + savings
        budget = min(granted, left)
        if step.extra and savings < MIN_STEP_S and left >= MIN_STEP_S:
            results.append({"step": step.name, "status": "left out", "seconds": 0, "budget_s": 0,
                            "note": "an extra step: the earlier steps left no seconds unused"})
            ctx.log(f"         {step.name}: left out (the earlier steps used their budgets)")
            continue
        if budget < MIN_STEP_S:
            for later in steps[i:]:
                results.append({"step": later.name, "status": "not run", "seconds": 0, "budget_s": 0,
                                "note": f"the call's --time-limit {ctx.a.time_limit:g} s came first"})
                ctx.log(f"         {later.name}: not run (the call's time limit came first)")
            break
        ctx.log(f"[{time.monotonic() - t_start:5.0f} s] {step.name} (budget {budget:.0f} s) ...")
        try:
            status, secs, note = RUNNERS[step.kind](ctx, step, budget)
        except Stopped as e:
            results.append({"step": step.name, "status": "failed", "seconds": 0, "budget_s": round(budget),
                            "note": f"stopped by {e.args[0]}"})
            ctx.log(f"         {step.name}: stopped by {e.args[0]}")
            raise
        savings = max(0.0, granted - secs) if status != "absent" else granted
        results.append({"step": step.name, "status": status, "seconds": round(secs, 1), "budget_s": round(budget),
                        "note": note})
        ctx.log(f"         {step.name}: {status} in {secs:.0f} s. {note}")
        _, _, _, summary_path = write_summary(ctx, part, gpus, results, t_start, steps)
        export(ctx, part, summary_path)


def main(argv=None):
    a = parse_args(argv)
    if a.ratios_only:
        if not os.path.isdir(a.ratios_only):
            print(f"gpu-check: --ratios-only {a.ratios_only}: not a folder", file=sys.stderr)
            return EXIT_USAGE
        ratios.write(a.ratios_only)
        return EXIT_OK
    steps = selected_steps(a)
    if a.dry_run:
        print_plan(steps, a.part)
        return EXIT_OK
    t_start = time.monotonic()
    deadline = t_start + a.time_limit - plan.EXPORT_RESERVE_S
    present, gpus = gpu_present()
    if not present:
        print(f"gpu-check: no NVIDIA GPU on this machine ({gpus}); nothing measured. It runs where a GPU is: "
              f"docs/gpu-machine.md. --dry-run shows the plan.", file=sys.stderr)
        return EXIT_NO_GPU
    log = Log()
    part = a.part
    log(f"gpu-check part {part} on {', '.join(gpus)} (time limit {a.time_limit:g} s)")
    build, manifest, bundle_root = locate_build(a, log)
    out_dir = os.path.abspath(a.out_dir or os.path.join(REPO, "results", "reference", a.device_name or device_slug(gpus)))
    os.makedirs(out_dir, exist_ok=True)
    work = tempfile.mkdtemp(prefix=f"gpu-check-part{part}-")
    env = dict(os.environ)
    wheel_dirs = gpucal_bundle.wheel_library_dirs()
    env["LD_LIBRARY_PATH"] = os.pathsep.join(wheel_dirs + [p for p in env.get("LD_LIBRARY_PATH", "").split(os.pathsep) if p])
    log(f"vendor libraries from PyTorch's wheels: {', '.join(wheel_dirs) or 'none found (the system paths are used)'}")
    ctx = Context(a, build, manifest, bundle_root, out_dir, work, env, log)
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, on_signal)
    stopped, results = None, []
    try:
        run_steps(ctx, steps, part, gpus, t_start, deadline, results)
    except Stopped as e:
        stopped = e.args[0]
        if not results or "stopped by" not in results[-1]["note"]:  # it came between two steps
            results.append({"step": "(gpu-check)", "status": "failed", "seconds": 0, "budget_s": 0,
                            "note": f"stopped by {stopped}"})
    for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)  # the last summary and export are not to be cut short
    log("")
    rows, predictions, summary, summary_path = write_summary(ctx, part, gpus, results, t_start, steps)
    log(ratios.markdown(rows, [], print_rows=4, predictions=predictions) if rows or predictions
        else "(no ratios: no baseline matched a gpucal row)")
    log(ratios.targets_markdown(out_dir))
    log("steps: " + "; ".join(f"{r['step']} {r['status']} {r['seconds']:.0f}/{r['budget_s']} s" for r in results))
    failed = summary["failed_steps"]
    log(f"gpu-check part {part}: {'FAILED: ' + ', '.join(failed) if failed else 'passed'} "
        f"({summary['seconds']} s); results in {out_dir}")
    log.save(os.path.join(work, f"gpu-check-part{part}.log"))
    if a.export:
        log(f"exported to {a.export}: {export(ctx, part, summary_path)}")
        log.save(os.path.join(a.export, f"gpu-check-part{part}.log"))
    return EXIT_FAIL if failed or stopped else EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
