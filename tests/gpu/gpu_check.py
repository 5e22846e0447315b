#!/usr/bin/env python3
"""gpu-check: every GPU path of gpucal on a GPU machine, in device calls of at most 10 minutes
(--part 1, 2, 3 for issue 12's session; 4 when time is left), with PyTorch's figures for the
same measurements.

  .ci/gpu-check --part 1|2|3|4|all [--bundle FILE | --build-dir DIR] [--out-dir DIR] [--export DIR]
                [--time-limit S]
  .ci/gpu-check --dry-run [--part ...]      the steps, their commands and time budgets
  .ci/gpu-check --ratios-only DIR           the ratio table of a results folder (no GPU needed)

Part 1: device/driver/library facts, the ldd check, `ctest -L gpu` with the skip rule (a
GPU test that skips on a machine with a GPU fails unless it prints "SKIP(hardware): ..."),
attention (llm set, cuDNN and flash, fwd and bwd) against SDPA's backends, copies (d2d,
h2d, d2h pinned) against Tensor.copy_, collectives at one rank against torch.distributed.
Part 2: facts, ldd, GEMM on the llm set plus 4096^3 and 8192^3 (bf16, fp16, fp8; heuristic,
and bf16 autotuned) against torch.matmul / torch._scaled_mm, and bench_memory when built.
Part 3: facts, ldd, then issue 12's checks of the harness into <results>/harness/:
compute-sanitizer memcheck and racecheck on the flash kernels (fwd and bwd, d 64/128/256,
causal 0/1, ragged lengths) and on the cold-rotate GEMM at odd shapes, the same GEMM points
as 5 separate processes (the spread of their medians), 1024^3 bf16 cold and hot, and the
durations of `gpucal run --suite smoke` and `nightly`.
Part 4: facts, ldd, then `gpucal predict` checked on one training step (Llama-3 8B, one
layer, seq 1024, bf16): bench_gemm, bench_attention and bench_memory with those model flags
into <results>/step/, bench_step (the step run as one kernel sequence), the same step in
PyTorch (tests/gpu/torch_step.py), and `gpucal predict --measure-step`; prints and records
predicted / measured and predicted / PyTorch (issue 18's targets: within 5% and 10%).
Each step has a time budget (tests/gpu/gpu_check_plan.py; a part's add up to at most 540 s).
Issue 12's session runs parts 1, 2 and 3 as three calls back to back; part 3's steps are in
priority order and the needed ones fit what parts 1 and 2 leave of 30 minutes.
The whole call keeps to --time-limit (default 600 s, the device tool's; pass less when the
session has less device time left): a step never runs past it less 30 s, and the results
are exported after every step, so a call that is cut off still brings back what it measured.
SIGTERM or SIGINT stops the running step, exports and exits 1.

The build comes from a bundle (.ci/gpu-bundle; default .gpu/gpucal-gpu.tar.xz, unpacked to a
temporary folder) or a build folder. Vendor libraries are taken from PyTorch's nvidia-*
wheels (their lib folders go first on LD_LIBRARY_PATH). Results go to
results/reference/<device>/ (CSVs and sidecars of both sides, facts-partN.json,
ctest-gpu-partN.json, ratios.md, ratios.csv, summary-partN.json; part 3's in step/); with
--export (default: $OUT when set) a tarball of them, the ratio table, the log and the summary
are copied there.

Exit: 0 all passed; 1 a failure (test, skip without a hardware reason, ldd, a bench's exit
code, a sanitizer error, a step not run for lack of time); 2 bad arguments; 3 no NVIDIA GPU on
this machine (nothing measured).
"""
import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpucal_bundle  # noqa: E402
import ratios  # noqa: E402
import skip_rule  # noqa: E402
import gpu_check_plan as plan  # noqa: E402
from gpu_check_plan import part_limit, steps_of, total_budget  # noqa: E402

KILL_GRACE_S = 15  # run_process: SIGTERM, 10 s, then SIGKILL, 5 s
MIN_STEP_S = 5  # a step with less time than this left before the deadline is not started


class Stopped(Exception):
    """SIGTERM, SIGINT or SIGHUP arrived: stop the step, export, exit."""


class StopRequest:
    """What on_signal saw. While a step's process is being started (Popen between fork and
    return) the handler only records the signal: an exception there would lose the process
    and leave it running; run_process raises once it holds the process."""
    signal_name = None
    defer = False

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NO_GPU = 0, 1, 2, 3
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
DEFAULT_BUNDLE = os.path.join(REPO, ".gpu", "gpucal-gpu.tar.xz")
SQUARES = (4096, 8192)


class OneLineParser(argparse.ArgumentParser):
    def error(self, message):
        print(f"gpu-check: {message} (see --help)", file=sys.stderr)
        sys.exit(EXIT_USAGE)


def parse_args(argv):
    ap = OneLineParser(prog="gpu-check", description=__doc__.split("\n\n")[0],
                       epilog=__doc__.split("\n\n", 1)[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=["1", "2", "3", "4", "all"], help="which device call this is")
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--bundle", help="a .ci/gpu-bundle tarball (default .gpu/gpucal-gpu.tar.xz)")
    src.add_argument("--build-dir", help="a gpucal build folder of this machine instead of a bundle")
    ap.add_argument("--unpack-to", help="where the bundle is unpacked (default: a temporary folder)")
    ap.add_argument("--out-dir", help="results folder (default results/reference/<device>)")
    ap.add_argument("--device-name", help="the <device> of the default results folder (default: from nvidia-smi)")
    ap.add_argument("--export", default=os.environ.get("OUT"),
                    help="copy the results tarball, ratio table, log and summary here (default: $OUT when set)")
    ap.add_argument("--skip", action="append", default=[], metavar="STEP", help="leave this step out (repeatable)")
    ap.add_argument("--only", action="append", default=[], metavar="STEP", help="run only these steps (repeatable)")
    ap.add_argument("--dry-run", action="store_true", help="print the plan and exit")
    ap.add_argument("--ratios-only", metavar="DIR", help="write and print DIR's ratio table and exit")
    ap.add_argument("--time-limit", type=float, default=plan.CALL_LIMIT_S, metavar="S",
                    help=f"seconds this call may take in all (default {plan.CALL_LIMIT_S}, the device tool's limit); "
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
    print(f"gpu-check part {part}: {len(steps)} steps, budgets {sum(s.budget_s for s in steps):.0f} s "
          f"(the plan's total for the part: {total_budget(part):.0f} s; limit {part_limit(part)} s per part)")
    for s in steps:
        needed = "  (needed)" if s.part == 3 and s.name in plan.PART3_NEEDED else ""
        print(f"  part {s.part}  {s.budget_s:4.0f} s  {s.name:18s} {describe(s)}{needed}")
    session = plan.SESSION_PARTS
    budgets = " + ".join(f"{total_budget(p) if p != 3 else plan.needed_budget_part3():.0f}" for p in session)
    print(f"issue 12's device session, parts {', '.join(map(str, session))} as {len(session)} calls back to back: "
          f"machine start ~{plan.MACHINE_START_S} s + {len(session)} x {plan.CALL_OVERHEAD_S} s per call (bundle, "
          f"unpack, pack) + budgets {budgets} s (part 3: its needed steps; the rest as time allows) = "
          f"{plan.session_seconds():.0f} s of {plan.SESSION_BUDGET_S} s; give part 3 --time-limit S with S the "
          f"device time left (status's budget_left_s) less ~60 s for the transfers; part 4: a later call")


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


def run_process(ctx, name, argv, budget, env=None):
    """Runs argv with its output in work/NAME.log; stopped (SIGTERM, then SIGKILL) past
    budget seconds. Returns (exit code or None when stopped, seconds)."""
    log_path = os.path.join(ctx.work, f"{name}.log")
    t0 = time.monotonic()
    with open(log_path, "w") as out:
        out.write("$ " + " ".join(argv) + "\n")
        out.flush()
        # Its own process group (not session: the device tool ends what a call leaves running,
        # except processes in a session of their own), so the step can be stopped as a whole.
        StopRequest.defer = True
        try:
            proc = subprocess.Popen(argv, stdout=out, stderr=subprocess.STDOUT, env=env or ctx.env, process_group=0)
        except BaseException:
            StopRequest.defer = False
            raise
        try:
            ctx.child = proc
            StopRequest.defer = False
            if StopRequest.signal_name:  # it came while the process was being started
                raise Stopped(StopRequest.signal_name)
            rc = proc.wait(timeout=budget)
        except subprocess.TimeoutExpired:
            stop_group(proc)
            rc = None
        except Stopped:
            stop_group(proc)
            raise
        finally:
            ctx.child = None
    return rc, time.monotonic() - t0


def stop_group(proc):
    """SIGTERM to the process group, then SIGKILL (KILL_GRACE_S in all)."""
    for sig, grace in ((signal.SIGTERM, 10), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            break
        try:
            proc.wait(timeout=grace)
            break
        except subprocess.TimeoutExpired:
            continue


def tail(path, lines=6):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:]).rstrip()
    except OSError:
        return ""


def csv_counts(path):
    if not os.path.exists(path):
        return "no CSV"
    import csv  # noqa: PLC0415
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    counts = {}
    for r in rows:
        counts[r.get("status", "?")] = counts.get(r.get("status", "?"), 0) + 1
    return f"{len(rows)} rows " + " ".join(f"{k}={v}" for k, v in sorted(counts.items()))


def step_facts(ctx, step, budget):
    exes = [p for p in (ctx.binary(b) for b in ("bench_gemm", "bench_attention", "bench_collectives")) if p]
    argv = [sys.executable, os.path.join(HERE, "gpu_facts.py"), "--out",
            os.path.join(ctx.out, f"facts-part{step.part}.json")] + sum((["--executable", e] for e in exes), [])
    rc, secs = run_process(ctx, f"facts-part{step.part}", argv, budget)
    ctx.log(tail(os.path.join(ctx.work, f"facts-part{step.part}.log"), 20))
    return ("ok" if rc == 0 else "failed"), secs, ""


def step_ldd(ctx, step, budget):
    t0 = time.monotonic()
    problems, missing = gpucal_bundle.check_libraries(ctx.build, ctx.manifest["executables"], ctx.env, ctx.bundle_root)
    for p in problems:
        ctx.log(f"    {p}")
    note = f"{len(problems)} problem(s); vendor libraries not found: {', '.join(missing) or 'none'}"
    return ("ok" if not problems and not missing else "failed"), time.monotonic() - t0, note


def find_ctest():
    """ctest on PATH, else beside the cmake of PyTorch's environment (pip's cmake package)."""
    found = shutil.which("ctest")
    if found:
        return found
    try:
        import cmake  # noqa: PLC0415
        candidate = os.path.join(cmake.CMAKE_BIN_DIR, "ctest")
        return candidate if os.path.exists(candidate) else None
    except (ImportError, AttributeError):
        return None


def step_ctest(ctx, step, budget):
    ctest = find_ctest()
    if not ctest:
        return "failed", 0, "ctest not found (PATH, pip's cmake package)"
    junit = os.path.join(ctx.work, f"ctest-gpu-part{step.part}.xml")
    listed = subprocess.run([ctest, "--test-dir", ctx.build, "-N", "-L", "gpu"], capture_output=True, text=True,
                            env=ctx.env, timeout=60)
    expected = skip_rule.listed_tests(listed.stdout)
    stop = time.strftime("%H:%M:%S", time.localtime(time.time() + budget - 20))
    argv = [ctest, "--test-dir", ctx.build, "-L", "gpu", "-j", "4", "--timeout", "240", "--stop-time", stop,
            "--output-junit", junit]
    rc, secs = run_process(ctx, f"ctest-gpu-part{step.part}", argv, budget)
    if not os.path.exists(junit):
        return "failed", secs, "ctest was stopped before writing its results" if rc is None else f"no JUnit (rc {rc})"
    verdicts, failures = skip_rule.judge(junit, expected)
    with open(os.path.join(ctx.out, f"ctest-gpu-part{step.part}.json"), "w") as f:
        json.dump(verdicts, f, indent=2)
    for v in verdicts:
        if v["verdict"] != skip_rule.PASSED:
            ctx.log(f"    {v['verdict']:13s} {v['name']}: {v['reason']}")
    passed = sum(v["verdict"] == skip_rule.PASSED for v in verdicts)
    hw = sum(v["verdict"] == skip_rule.HARDWARE_SKIP for v in verdicts)
    note = f"{len(verdicts)} GPU tests: {passed} passed, {hw} skipped for hardware, {failures} failed"
    return ("ok" if failures == 0 and verdicts else "failed"), secs, note


def step_gemm_shapes(ctx, step, budget):
    """The llm set's shapes (bench_gemm --set llm --list) plus 4096^3 and 8192^3, per dtype."""
    t0 = time.monotonic()
    from gpu_check_plan import GEMM_DTYPES  # noqa: PLC0415
    for dtype in GEMM_DTYPES:
        try:
            proc = subprocess.run([ctx.binary("bench_gemm"), "--set", "llm", "--list", "--dtype", dtype, "--layout",
                                   "TN"], capture_output=True, text=True, env=ctx.env,
                                  timeout=max(1.0, budget - (time.monotonic() - t0)))
        except subprocess.TimeoutExpired:
            return "truncated", time.monotonic() - t0, f"bench_gemm --set llm --list ({dtype}) ran past the budget"
        if proc.returncode != 0:
            return "failed", time.monotonic() - t0, proc.stderr.strip()[:200]
        lines = [l for l in proc.stdout.splitlines() if l and not l.startswith("#")]
        header = lines[0].split(",")
        keep = ["m", "n", "k", "batch", "dtype", "layout"]
        rows = [",".join(dict(zip(header, l.split(",")))[c] for c in keep) for l in lines[1:]]
        have = {tuple(r.split(",")[:3]) for r in rows}  # the llm set may hold them already: one row each
        rows += [f"{s},{s},{s},1,{dtype},TN" for s in SQUARES if (str(s), str(s), str(s)) not in have]
        with open(os.path.join(ctx.work, f"gemm_shapes_{dtype}.csv"), "w") as f:
            f.write(",".join(keep) + "\n" + "\n".join(rows) + "\n")
    return "ok", time.monotonic() - t0, f"{len(rows)} shapes per dtype"


def expand_or_absent(ctx, items, budget):
    """(items with their placeholders expanded, None), or (None, the step's `absent` result) when
    one names an executable this build lacks."""
    try:
        return [ctx.expand(x, budget) for x in items], None
    except FileNotFoundError as e:
        return None, ("absent", 0, f"{e.args[0]} is not in this build")


def step_command(ctx, step, budget):
    expanded, absent = expand_or_absent(ctx, [*step.argv, step.needs], budget)
    if absent:
        return absent
    argv, needs = expanded[:-1], expanded[-1]
    if needs and not os.path.exists(needs):
        return "absent", 0, f"{os.path.relpath(needs, REPO)} is not in this checkout"
    for x in argv:  # files a step writes under the results folder may sit in a subfolder (part 3's step/)
        if x.startswith(ctx.out + os.sep) and os.path.splitext(x)[1] in (".csv", ".json"):
            os.makedirs(os.path.dirname(x), exist_ok=True)
    rc, secs = run_process(ctx, step.name, argv, budget)
    csv_path = next((x for x in argv if x.endswith(".csv") and x.startswith(ctx.out)), "")
    note = csv_counts(csv_path) if csv_path else ""
    if rc is None:
        return "truncated", secs, f"stopped at its {budget:.0f} s budget; {note}"
    if rc != 0:
        return "failed", secs, f"exit {rc}; {note}; " + tail(os.path.join(ctx.work, f"{step.name}.log"), 3)
    return "ok", secs, note


def find_compute_sanitizer():
    found = shutil.which("compute-sanitizer")
    if found:
        return found
    for candidate in ("/usr/local/cuda/bin/compute-sanitizer", "/usr/local/cuda/compute-sanitizer/compute-sanitizer"):
        if os.path.exists(candidate):
            return candidate
    return None


SANITIZER_ERRORS = re.compile(r"ERROR SUMMARY:\s*(\d+)\s+errors?")
RACECHECK_SUMMARY = re.compile(r"RACECHECK SUMMARY:\s*(\d+)\s+hazards? displayed\s*\((\d+)\s+errors?,\s*(\d+)\s+warnings?\)")


def sanitizer_errors(text):
    """Errors compute-sanitizer reported in its output (the last ERROR SUMMARY, and for
    racecheck the errors of its RACECHECK SUMMARY), or None when it printed no summary."""
    counts = [int(n) for n in SANITIZER_ERRORS.findall(text)]
    races = [int(m[1]) for m in RACECHECK_SUMMARY.findall(text)]
    if not counts and not races:
        return None
    return max(counts[-1:] + races[-1:])


def record_json_entry(path, key, entry):
    """Appends entry to the list under `key` of the JSON file at path (created when absent)."""
    doc = {key: []}
    if os.path.exists(path):
        with open(path) as f:
            doc = json.load(f)
    doc.setdefault(key, []).append(entry)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path + ".tmp", "w") as f:
        json.dump(doc, f, indent=2)
    os.replace(path + ".tmp", path)


def step_sanitizer(ctx, step, budget):
    """compute-sanitizer --tool TOOL on a bench command (step.argv: tool, target, command...);
    the verdict goes to harness/sanitizer.json, the tool's output beside it."""
    tool, target = step.argv[0], step.argv[1]
    exe = find_compute_sanitizer()
    if not exe:
        return "failed", 0, "compute-sanitizer not found (PATH, /usr/local/cuda/bin)"
    command, absent = expand_or_absent(ctx, step.argv[2:], budget)
    if absent:
        return absent
    harness = os.path.join(ctx.out, "harness")
    os.makedirs(harness, exist_ok=True)
    argv = [exe, "--tool", tool, "--error-exitcode", "99", "--print-limit", "20", *command]
    rc, secs = run_process(ctx, step.name, argv, budget)
    output = os.path.join(ctx.work, f"{step.name}.log")
    with open(output, errors="replace") as f:
        text = f.read()
    shutil.copy(output, os.path.join(harness, f"sanitizer-{tool}-{target}.txt"))
    errors = sanitizer_errors(text)
    status = "truncated" if rc is None else ("ok" if rc == 0 and errors == 0 else "failed")
    record_json_entry(os.path.join(harness, "sanitizer.json"), "runs",
                      {"tool": tool, "target": target, "rc": rc, "errors": errors, "seconds": round(secs, 1),
                       "status": status, "command": " ".join(command)})
    why = ("stopped at its budget" if rc is None else f"exit {rc}") + (
        f", {errors} error(s)" if errors is not None else ", no ERROR SUMMARY in its output")
    return status, secs, f"{tool} on {target}: {why}" + ("" if status == "ok" else "; " + tail(output, 3))


def suite_bench_seconds(log_text):
    """{bench: seconds} from `gpucal run`'s log: a line "  bench_X: <command>", then its
    verdict line "    ok in 12.3 s" (or "    failed (...) in 3.0 s")."""
    out, bench = {}, None
    for line in log_text.splitlines():
        started = re.match(r"^  (bench_\w+): ", line)
        if started:
            bench = started.group(1)
            continue
        took = re.match(r"^    \S.* in ([0-9.]+) s$", line)
        if took and bench:
            out[bench] = float(took.group(1))
            bench = None
    return out


def step_suite(ctx, step, budget):
    """`gpucal run --suite S` timed (step.argv: suite, command...); each bench's wall time from
    its log; all into harness/suites.json."""
    suite = step.argv[0]
    argv, absent = expand_or_absent(ctx, step.argv[1:], budget)
    if absent:
        return absent
    rc, secs = run_process(ctx, step.name, argv, budget)
    with open(os.path.join(ctx.work, f"{step.name}.log"), errors="replace") as f:
        text = f.read()
    benches = suite_bench_seconds(text)
    status = "truncated" if rc is None else ("ok" if rc == 0 else "failed")
    record_json_entry(os.path.join(ctx.out, "harness", "suites.json"), "suites",
                      {"suite": suite, "seconds": round(secs, 1), "rc": rc, "status": status, "benches": benches})
    note = f"suite {suite}: {secs:.0f} s; " + ", ".join(f"{b} {t:.0f} s" for b, t in benches.items())
    return status, secs, note + ("" if status == "ok" else "; " + tail(os.path.join(ctx.work, f"{step.name}.log"), 3))


RUNNERS = {"facts": step_facts, "ldd": step_ldd, "ctest": step_ctest, "gemm_shapes": step_gemm_shapes,
           "bench": step_command, "torch": step_command, "sanitizer": step_sanitizer, "suite": step_suite}


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


SAMPLES_SUFFIX = ".samples.csv"
EXPORT_FILE_LIMIT = 15 * 2**20  # the device tool brings back files of at most 16 MiB


def export(ctx, part, summary_path):
    """Copies the results into --export (the device tool brings back 8 files of <= 16 MiB): a
    tarball of the results and logs without the per-sample CSVs, those in a second one (left
    out, and said, when over the limit), the ratio table and the summary."""
    if not ctx.a.export:
        return
    os.makedirs(ctx.a.export, exist_ok=True)
    tar_path = os.path.join(ctx.a.export, f"gpu-check-part{part}.tar.gz")
    samples_path = os.path.join(ctx.a.export, f"gpu-check-part{part}-samples.tar.xz")
    without_samples = lambda info: None if info.name.endswith(SAMPLES_SUFFIX) else info  # noqa: E731
    with tarfile.open(tar_path + ".tmp", "w:gz") as tar:
        tar.add(ctx.out, arcname=os.path.basename(ctx.out), filter=without_samples)
        tar.add(ctx.work, arcname=f"gpu-check-part{part}-logs")
    os.replace(tar_path + ".tmp", tar_path)
    samples = [os.path.join(d, f) for d, _, files in os.walk(ctx.out) for f in files if f.endswith(SAMPLES_SUFFIX)]
    note = ""
    if samples:
        with tarfile.open(samples_path + ".tmp", "w:xz") as tar:
            for f in samples:
                tar.add(f, arcname=os.path.join(os.path.basename(ctx.out), os.path.relpath(f, ctx.out)))
        if os.path.getsize(samples_path + ".tmp") > EXPORT_FILE_LIMIT:
            os.remove(samples_path + ".tmp")
            note = f"; the per-sample CSVs ({len(samples)}) are over {EXPORT_FILE_LIMIT >> 20} MiB packed: left out"
        else:
            os.replace(samples_path + ".tmp", samples_path)
            note = f", {os.path.basename(samples_path)} ({os.path.getsize(samples_path) / 2**20:.1f} MiB)"
    size = os.path.getsize(tar_path)
    if size > EXPORT_FILE_LIMIT:
        note += f"; WARNING: {os.path.basename(tar_path)} is over {EXPORT_FILE_LIMIT >> 20} MiB and may not come back"
    for src, name in ((os.path.join(ctx.out, "ratios.md"), f"ratios-part{part}.md"),
                      (summary_path, f"summary-part{part}.json")):
        if os.path.exists(src):
            shutil.copy(src, os.path.join(ctx.a.export, name))
    ctx.log.save(os.path.join(ctx.a.export, f"gpu-check-part{part}.log"))
    return f"{os.path.basename(tar_path)} ({size / 2**20:.1f} MiB){note}, ratios-part{part}.md, " \
           f"summary-part{part}.json, gpu-check-part{part}.log"


def write_summary(ctx, part, gpus, results, t_start, steps):
    """The ratio table and summary-partN.json as they stand (after every step, and at the end)."""
    rows, _ = ratios.write(ctx.out, stream=None)
    predictions = ratios.step_predictions(ctx.out)
    failed = [r for r in results if r["status"] in ("failed", "not run")]
    summary = {"part": part, "gpus": gpus, "build": ctx.manifest.get("git_commit"), "results": ctx.out,
               "time_limit_s": ctx.a.time_limit, "steps": results, "seconds": round(time.monotonic() - t_start),
               "failed_steps": [r["step"] for r in failed]}
    if any(s.name == "step_predict" for s in steps):
        summary["step_predictions"] = predictions
    summary_path = os.path.join(ctx.out, f"summary-part{part}.json")
    with open(summary_path + ".tmp", "w") as f:
        json.dump(summary, f, indent=2)
    os.replace(summary_path + ".tmp", summary_path)
    return rows, predictions, summary, summary_path


def on_signal(signum, _frame):
    StopRequest.signal_name = signal.Signals(signum).name
    if not StopRequest.defer:
        raise Stopped(StopRequest.signal_name)


def run_steps(ctx, steps, part, gpus, t_start, deadline, results):
    """Runs the steps in order inside their budgets and the call's deadline, writing the
    summary and exporting after each; each step's result is appended to `results`."""
    savings = 0.0
    for i, step in enumerate(steps):
        left = deadline - time.monotonic() - KILL_GRACE_S
        budget = min(step.budget_s + savings, left)
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
        savings = max(0.0, step.budget_s + savings - secs) if status != "absent" else step.budget_s + savings
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
