"""The skip rule of .ci/gpu-check: on a machine WITH a GPU, a GPU test that skips is a
failure unless it states a hardware reason: a line "SKIP(hardware): <reason>" in its output
(tests/e2e/run_and_check.py prints one when a test needs more GPUs than the machine has,
or a newer architecture). "SKIP: no cuda device here" on a GPU machine means the GPU stack
is broken or the test is mis-wired, which is exactly what the first GPU run must catch.

Results come from ctest's JUnit file (ctest --output-junit): status run / fail / notrun,
<skipped message="SKIP_RETURN_CODE=77"/> for a skip, and every test's output.
"""
import re
import xml.etree.ElementTree as ET

HARDWARE = re.compile(r"^SKIP\(hardware\):\s*(.+?)\s*$", re.M)
ANY_SKIP = re.compile(r"^(SKIP\b.*?)\s*$", re.M)

PASSED, HARDWARE_SKIP, FAILED = "passed", "hardware-skip", "failed"


def classify(status, skipped_message, output):
    """(verdict, reason) of one test on a GPU machine."""
    if status == "run":
        return PASSED, ""
    if status == "fail":
        last = [l for l in output.strip().splitlines() if l.startswith("FAIL")][-1:] or output.strip().splitlines()[-1:]
        return FAILED, "failed" + (f": {last[0][:200]}" if last else "")
    if skipped_message and "SKIP_RETURN_CODE" in skipped_message:
        hw = HARDWARE.findall(output)
        if hw:
            return HARDWARE_SKIP, hw[-1]
        said = ANY_SKIP.findall(output)
        return FAILED, ("skipped on a GPU machine without a hardware reason"
                        + (f" ({said[-1][:160]})" if said else " (it printed no SKIP line)"))
    return FAILED, "did not run" + (f": {skipped_message}" if skipped_message else "")


def parse_junit(path):
    """[{name, status, skipped_message, output, time_s}] from ctest's JUnit file."""
    tests = []
    for case in ET.parse(path).getroot().iter("testcase"):
        skipped = case.find("skipped")
        out = case.find("system-out")
        tests.append({"name": case.get("name", ""), "status": case.get("status", ""),
                      "skipped_message": skipped.get("message", "") if skipped is not None else "",
                      "output": out.text or "" if out is not None else "", "time_s": float(case.get("time") or 0)})
    return tests


def judge(junit_path, expected=()):
    """(per-test verdicts [{name, verdict, reason, time_s}], number of failures). `expected`:
    the names `ctest -N` lists; ctest's JUnit file leaves out every test that never started
    (its --stop-time came first), so each expected name absent from it is a failure."""
    verdicts = []
    for t in parse_junit(junit_path):
        verdict, reason = classify(t["status"], t["skipped_message"], t["output"])
        verdicts.append({"name": t["name"], "verdict": verdict, "reason": reason, "time_s": t["time_s"]})
    ran = {v["name"] for v in verdicts}
    for name in expected:
        if name not in ran:
            verdicts.append({"name": name, "verdict": FAILED, "reason": "not run: ctest's stop time came first",
                             "time_s": 0.0})
    return verdicts, sum(1 for v in verdicts if v["verdict"] == FAILED)


def listed_tests(ctest_n_output):
    """Test names of `ctest -N` output ("  Test  #91: gpu_gemm_cublaslt")."""
    return re.findall(r"^\s*Test\s+#\d+:\s+(\S+)\s*$", ctest_n_output, re.M)
