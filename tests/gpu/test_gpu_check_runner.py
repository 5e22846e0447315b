#!/usr/bin/env python3
"""gpu-check's step runner on the host, with stand-in commands (no GPU, no torch): the call's
deadline (a step is cut to what is left, later steps are not run), a signal in the middle of
a step (its process group is stopped, the results so far stay), the export after every step
(the per-sample CSVs in a tarball of their own), compute-sanitizer's verdicts (a stand-in
compute-sanitizer on PATH), `gpucal run`'s per-bench times, and ctest's unrun tests.

  test_gpu_check_runner.py [TestCaseName ...]
"""
import argparse
import json
import os
import signal
import stat
import sys
import tarfile
import tempfile
import time
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gpu_check  # noqa: E402
import gpu_check_process  # noqa: E402
import gpu_check_steps  # noqa: E402
import skip_rule  # noqa: E402
from gpu_check_plan import Step  # noqa: E402


def make_context(export=True):
    out, work = tempfile.mkdtemp(prefix="gc-out-"), tempfile.mkdtemp(prefix="gc-work-")
    a = argparse.Namespace(export=tempfile.mkdtemp(prefix="gc-export-") if export else None, time_limit=600.0)
    log_lines = []

    class Log(gpu_check.Log):
        def __call__(self, msg=""):
            self.lines.append(msg)
            log_lines.append(msg)

    ctx = gpu_check.Context(a, None, {"executables": [], "git_commit": "test"}, None, out, work, dict(os.environ), Log())
    return ctx, log_lines


def shell_step(name, script, budget, part=9, extra=False):
    return Step(name, part, "bench", budget, ["sh", "-c", script], "", extra)


def ended(pid, wait_s=5.0):
    """True once pid is gone or a zombie (killed, not yet reaped by its new parent)."""
    t_end = time.monotonic() + wait_s
    while time.monotonic() < t_end:
        try:
            with open(f"/proc/{pid}/stat") as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False


def tar_names(path):
    with tarfile.open(path) as tar:
        return tar.getnames()


class DeadlineTest(unittest.TestCase):
    def setUp(self):
        self.grace, self.min_step = gpu_check.KILL_GRACE_S, gpu_check.MIN_STEP_S
        gpu_check.KILL_GRACE_S, gpu_check.MIN_STEP_S = 1, 1

    def tearDown(self):
        gpu_check.KILL_GRACE_S, gpu_check.MIN_STEP_S = self.grace, self.min_step

    def test_a_step_is_cut_to_the_deadline_and_later_steps_are_not_run(self):
        ctx, _ = make_context()
        steps = [shell_step("first", "echo a,b > {out}/first.csv", 30),
                 shell_step("long", "sleep 60", 100),
                 shell_step("later", "echo never > {out}/later.csv", 30)]
        results, t0 = [], time.monotonic()
        gpu_check.run_steps(ctx, steps, "9", ["GPU 0: stand-in"], t0, t0 + 5, results)
        took = time.monotonic() - t0
        self.assertEqual([r["status"] for r in results], ["ok", "truncated", "not run"])
        self.assertLess(took, 20)  # the 60 s sleep was stopped at the deadline, not at its 100 s budget
        self.assertLessEqual(results[1]["budget_s"], 5)
        self.assertIn("--time-limit", results[2]["note"])
        self.assertFalse(os.path.exists(os.path.join(ctx.out, "later.csv")))
        # Exported after each step that ran: the first step's CSV came back even though a later one was cut.
        tarball = os.path.join(ctx.a.export, "gpu-check-part9.tar.gz")
        self.assertIn(os.path.basename(ctx.out) + "/first.csv", tar_names(tarball))
        with open(os.path.join(ctx.a.export, "summary-part9.json")) as f:
            summary = json.load(f)
        self.assertEqual([s["step"] for s in summary["steps"]], ["first", "long"])  # as of the last export
        self.assertEqual(summary["failed_steps"], [])

    def test_unused_seconds_pass_to_the_next_step(self):
        ctx, _ = make_context(export=False)
        ctx.a.export = None
        steps = [shell_step("quick", "true", 20), shell_step("next", "true", 10)]
        results, t0 = [], time.monotonic()
        gpu_check.run_steps(ctx, steps, "9", ["GPU 0: stand-in"], t0, t0 + 1000, results)
        self.assertEqual([r["status"] for r in results], ["ok", "ok"])
        self.assertGreaterEqual(results[1]["budget_s"], 28)  # its 10 s plus most of quick's 20

    def test_an_extra_step_runs_only_on_seconds_left_unused(self):
        ctx, _ = make_context(export=False)
        ctx.a.export = None
        steps = [shell_step("quick", "true", 4), shell_step("extra", "true", 50, extra=True),
                 shell_step("slow", "sleep 30", 2), shell_step("extra2", "echo no > {out}/x.csv", 50, extra=True)]
        results, t0 = [], time.monotonic()
        gpu_check.run_steps(ctx, steps, "9", ["GPU 0: stand-in"], t0, t0 + 1000, results)
        self.assertEqual([r["status"] for r in results], ["ok", "ok", "truncated", "left out"])
        self.assertEqual(results[1]["budget_s"], 4)  # quick's unused seconds, not its own 50
        self.assertLessEqual(results[2]["budget_s"], 6)  # its 2 s and what the extra left of quick's
        self.assertIn("left no seconds unused", results[3]["note"])
        self.assertFalse(os.path.exists(os.path.join(ctx.out, "x.csv")))


class SignalTest(unittest.TestCase):
    def tearDown(self):
        gpu_check_process.StopRequest.signal_name = None  # what a stopped gpu-check leaves; it exits after

    def test_sigterm_stops_the_steps_process_group_and_keeps_what_was_done(self):
        ctx, _ = make_context()
        marker = os.path.join(ctx.work, "child.pid")
        # The step's shell starts a sleeping child, records it, then signals gpu-check (its parent).
        steps = [shell_step("done", "echo x,y > {out}/done.csv", 20),
                 shell_step("signalled", f"sleep 60 & echo $! > {marker}; kill -TERM $PPID; wait", 100)]
        old = signal.signal(signal.SIGTERM, gpu_check.on_signal)
        results, t0 = [], time.monotonic()
        try:
            with self.assertRaises(gpu_check.Stopped):
                gpu_check.run_steps(ctx, steps, "9", ["GPU 0: stand-in"], t0, t0 + 1000, results)
        finally:
            signal.signal(signal.SIGTERM, old)
        self.assertLess(time.monotonic() - t0, 20)
        self.assertEqual(results[0]["status"], "ok")
        self.assertEqual(results[1]["status"], "failed")
        self.assertIn("SIGTERM", results[1]["note"])
        with open(marker) as f:
            child = int(f.read())
        self.assertTrue(ended(child), "the background sleep of the step's group is still running")
        self.assertIn(os.path.basename(ctx.out) + "/done.csv",
                      tar_names(os.path.join(ctx.a.export, "gpu-check-part9.tar.gz")))

    def test_a_steps_process_has_its_own_group_in_gpu_checks_session(self):
        ctx, _ = make_context(export=False)
        rc, _ = gpu_check_process.run_process(ctx, "ids", ["sh", "-c", "cat /proc/$$/stat"], 20)
        self.assertEqual(rc, 0)
        with open(os.path.join(ctx.work, "ids.log")) as f:
            fields = f.read().splitlines()[-1].rsplit(")", 1)[1].split()  # state ppid pgrp session ...
        pgid, sid = int(fields[2]), int(fields[3])
        self.assertNotEqual(pgid, os.getpgid(0))
        self.assertEqual(sid, os.getsid(0))  # a caller ends what it leaves by session: no session of its own


class ExportTest(unittest.TestCase):
    def test_per_sample_csvs_go_into_a_tarball_of_their_own(self):
        ctx, _ = make_context()
        with open(os.path.join(ctx.out, "gemm.csv"), "w") as f:
            f.write("bench,point\n")
        os.makedirs(os.path.join(ctx.out, "harness"))
        with open(os.path.join(ctx.out, "harness", "repeat-1.samples.csv"), "w") as f:
            f.write("point,sample,time_us\n" + "p,1,2.5\n" * 1000)
        summary = os.path.join(ctx.out, "summary-part9.json")
        with open(summary, "w") as f:
            f.write("{}")
        said = gpu_check.export(ctx, "9", summary)
        base = os.path.basename(ctx.out)
        main = tar_names(os.path.join(ctx.a.export, "gpu-check-part9.tar.gz"))
        self.assertIn(f"{base}/gemm.csv", main)
        self.assertNotIn(f"{base}/harness/repeat-1.samples.csv", main)
        self.assertEqual(tar_names(os.path.join(ctx.a.export, "gpu-check-part9-samples.tar.xz")),
                         [f"{base}/harness/repeat-1.samples.csv"])
        self.assertIn("gpu-check-part9-samples.tar.xz", said)
        self.assertLessEqual(len(os.listdir(ctx.a.export)), 8)  # 5 files per part: within what a file-count-limited copy takes
        self.assertFalse([f for f in os.listdir(ctx.a.export) if f.endswith(".tmp")])


FAKE_SANITIZER = """#!/bin/sh
# Stand-in compute-sanitizer: --tool T --error-exitcode N --print-limit N, then the command.
tool=$2; code=$4; shift 6
"$@"; rc=$?
errors=${FAKE_SANITIZER_ERRORS:-0}
if [ "$tool" = racecheck ]; then echo "========= RACECHECK SUMMARY: $errors hazards displayed ($errors errors, 0 warnings)"; fi
echo "========= ERROR SUMMARY: $errors errors"
if [ "$errors" != 0 ]; then exit "$code"; fi
exit $rc
"""


class SanitizerTest(unittest.TestCase):
    def setUp(self):
        self.bin = tempfile.mkdtemp(prefix="gc-bin-")
        path = os.path.join(self.bin, "compute-sanitizer")
        with open(path, "w") as f:
            f.write(FAKE_SANITIZER)
        os.chmod(path, stat.S_IRWXU)
        self.saved = dict(os.environ)
        os.environ["PATH"] = self.bin + os.pathsep + os.environ["PATH"]

    def tearDown(self):
        os.environ.clear()
        os.environ.update(self.saved)

    def run_step(self, ctx, tool, errors, command=("sh", "-c", "echo kernel ran")):
        os.environ["FAKE_SANITIZER_ERRORS"] = str(errors)
        ctx.env = dict(os.environ)
        step = Step(f"{tool}_k", 3, "sanitizer", 30, [tool, "k", *command], "")
        return gpu_check_steps.step_sanitizer(ctx, step, 30)

    def test_clean_and_dirty_runs_are_recorded(self):
        ctx, _ = make_context(export=False)
        status, _, note = self.run_step(ctx, "memcheck", 0)
        self.assertEqual(status, "ok", note)
        status, _, note = self.run_step(ctx, "racecheck", 3)
        self.assertEqual(status, "failed")
        self.assertIn("3 error(s)", note)
        status, _, note = self.run_step(ctx, "memcheck", 0, ("sh", "-c", "exit 4"))
        self.assertEqual(status, "failed")  # the bench itself failed under the tool
        self.assertIn("exit 4", note)
        with open(os.path.join(ctx.out, "harness", "sanitizer.json")) as f:
            runs = json.load(f)["runs"]
        self.assertEqual([(r["tool"], r["errors"], r["rc"], r["status"]) for r in runs],
                         [("memcheck", 0, 0, "ok"), ("racecheck", 3, 99, "failed"), ("memcheck", 0, 4, "failed")])
        with open(os.path.join(ctx.out, "harness", "sanitizer-racecheck-k.txt")) as f:
            self.assertIn("RACECHECK SUMMARY", f.read())

    def test_summaries_are_read_and_their_absence_is_no_pass(self):
        self.assertEqual(gpu_check_steps.sanitizer_errors("========= ERROR SUMMARY: 0 errors\n"), 0)
        self.assertEqual(gpu_check_steps.sanitizer_errors("========= ERROR SUMMARY: 1 error\n"), 1)
        text = ("========= RACECHECK SUMMARY: 5 hazards displayed (2 errors, 3 warnings)\n"
                "========= ERROR SUMMARY: 0 errors\n")
        self.assertEqual(gpu_check_steps.sanitizer_errors(text), 2)
        self.assertIsNone(gpu_check_steps.sanitizer_errors("the bench crashed before the tool could summarize\n"))

    def test_no_compute_sanitizer_is_a_failure(self):
        ctx, _ = make_context(export=False)
        os.environ["PATH"] = "/nonexistent"
        if gpu_check_steps.find_compute_sanitizer():
            self.skipTest("a compute-sanitizer is installed at a fixed CUDA path here")
        status, _, note = gpu_check_steps.step_sanitizer(ctx, Step("memcheck_k", 3, "sanitizer", 30, ["memcheck", "k", "true"],
                                                             ""), 30)
        self.assertEqual(status, "failed")
        self.assertIn("compute-sanitizer not found", note)


RUN_LOG = """gpucal run: suite smoke (seconds) -> /r
  bench_gemm: '/b/bench_gemm' --backend 'cuda' --out '/r/gemm.csv'
    ok in 12.5 s
  bench_attention: '/b/bench_attention' --backend 'cuda'
    bench_attention: error: something
    failed (exit 1, see /r/logs/attention.log) in 3.0 s
  bench_p2p: not built, skipped (looked for /b/bench_p2p)
  fit: wrote /r/calibration.json
"""


class SuiteTest(unittest.TestCase):
    def test_each_benchs_wall_time_is_read_from_the_log(self):
        self.assertEqual(gpu_check_steps.suite_bench_seconds(RUN_LOG), {"bench_gemm": 12.5, "bench_attention": 3.0})

    def test_the_suite_step_records_durations(self):
        ctx, _ = make_context(export=False)
        log = os.path.join(ctx.work, "canned.log")
        with open(log, "w") as f:
            f.write(RUN_LOG)
        step = Step("suite_smoke", 3, "suite", 30, ["smoke", "sh", "-c", f"cat {log}; sleep 0.2"], "")
        status, secs, note = gpu_check_steps.step_suite(ctx, step, 30)
        self.assertEqual(status, "ok", note)
        with open(os.path.join(ctx.out, "harness", "suites.json")) as f:
            suites = json.load(f)["suites"]
        self.assertEqual(len(suites), 1)
        self.assertEqual(suites[0]["suite"], "smoke")
        self.assertEqual(suites[0]["benches"], {"bench_gemm": 12.5, "bench_attention": 3.0})
        self.assertGreaterEqual(suites[0]["seconds"], 0.2)
        self.assertIn("bench_gemm 12 s", note)


class CtestListTest(unittest.TestCase):
    def test_tests_ctest_never_started_are_failures(self):
        listing = "Test project /b\n  Test  #91: gpu_gemm_cublaslt\n  Test #241: gpu_attention_cuda\n\nTotal Tests: 2\n"
        self.assertEqual(skip_rule.listed_tests(listing), ["gpu_gemm_cublaslt", "gpu_attention_cuda"])
        junit = os.path.join(tempfile.mkdtemp(), "j.xml")
        with open(junit, "w") as f:
            f.write('<testsuite><testcase name="gpu_gemm_cublaslt" status="run" time="1.0"/></testsuite>')
        verdicts, failures = skip_rule.judge(junit, skip_rule.listed_tests(listing))
        self.assertEqual(failures, 1)
        self.assertEqual([(v["name"], v["verdict"]) for v in verdicts],
                         [("gpu_gemm_cublaslt", skip_rule.PASSED), ("gpu_attention_cuda", skip_rule.FAILED)])
        self.assertIn("stop time", verdicts[1]["reason"])


if __name__ == "__main__":
    unittest.main(verbosity=2)
