"""gpu-check's step runners (RUNNERS, by a step's kind in gpu_check_plan.py): each takes the
context, the step and its budget in seconds and returns (status, seconds, note)."""
import json
import os
import re
import shutil
import subprocess
import sys
import time

import gpucal_bundle
import skip_rule
from gpu_check_process import run_process, tail

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.abspath(os.path.join(HERE, "..", ".."))
SQUARES = (4096, 8192)


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
