#!/usr/bin/env python3
"""gpucal check --health: each rule judged on the recorded inputs of tests/fixtures/health (sysfs
trees in the kernel's formats, NVML readings as NVML's calls return them) and on readings made
here for the rules the fixtures do not reach; the verdict, the exit code, the drain command (a
stand-in scontrol that records its arguments), the JSON round trip (--json, then --health-from),
the Prometheus gauges, JUnit, and the refusals.

usage: check_health.py GPUCAL FIXTURES_DIR WORKDIR
"""
import copy
import json
import os
import re
import shutil
import subprocess
import sys

failures = []


def check(cond, what):
    print(("ok   " if cond else "FAIL ") + what)
    if not cond:
        failures.append(what)


def gpucal(*args, env=None):
    return subprocess.run([GPUCAL, "check", "--health", *args], capture_output=True, text=True, timeout=60,
                          env=env)


def statuses(doc):
    return {(l["check"], l["subject"]): l["status"] for l in doc["lines"]}


def judged(readings, name):
    path = os.path.join(WORK, name + ".json")
    json.dump({"readings": readings}, open(path, "w"))
    out = os.path.join(WORK, name + ".out.json")
    run = gpucal("--health-from", path, "--json", out)
    return run, (json.load(open(out)) if os.path.exists(out) else None)


def sysfs_cases():
    run = gpucal("--sysfs", os.path.join(FIX, "sysfs-healthy"), "--node", "n1", "--json", os.path.join(WORK, "h.json"))
    doc = json.load(open(os.path.join(WORK, "h.json")))
    s = statuses(doc)
    check(run.returncode == 0 and doc["verdict"] == "pass", f"healthy sysfs passes (exit {run.returncode})")
    check(s[("pcie_link", "0000:17:00.0")] == "pass" and s[("pcie_link", "0000:3b:00.0")] == "pass" and
          not any(k[1] in ("0000:00:1c.0", "0000:00:00.0") for k in s),
          "PCIe: trained links judged, an untrained port and the host bridge left out")
    check(s[("memory_ecc", "mc0")] == "warn" and s[("memory_ecc", "mc1")] == "pass", "EDAC: corrected errors warn")
    check(s[("cpu_thermal_throttle", "cpu0")] == "pass", "CPU thermal throttle counters read")
    check(s[("cpu_clock", "cpu0")] == "pass" and s[("cpu_clock", "cpu1")] == "pass" and
          doc["readings"]["cpu_clock_under_load"] is True and doc["readings"]["cpu_clocks"][0]["cur_khz"] == 2893412,
          "CPU clocks read under a load and judged against the base clock")
    check(s[("gpu", "-")] == "not available", "no GPU library: GPUs not available, never a pass")
    run = gpucal("--sysfs", os.path.join(FIX, "sysfs-narrow-nic"), "--node", "n2")
    check(run.returncode == 1 and "pcie_link             0000:3b:00.0" in run.stdout and "x8 of 16.0 GT/s PCIe x16" in run.stdout
          and "verdict: FAIL" in run.stdout, "a NIC trained at x8 of x16 fails the node")
    check(re.search(r"cpu_clock +cpu0 +warn +1200 MHz of base 2400 +scaling_max_freq caps it at 1200 MHz", run.stdout),
          f"a power policy capping a core below its base clock warns: {run.stdout}")
    run = gpucal("--sysfs", os.path.join(FIX, "sysfs-memory-error"), "--node", "n3", "--json", os.path.join(WORK, "m.json"))
    s = statuses(json.load(open(os.path.join(WORK, "m.json"))))
    check(run.returncode == 1 and s[("memory_ecc", "mc1")] == "fail" and s[("pcie_link", "0000:17:00.0")] == "warn",
          "uncorrected memory errors fail; a GPU link at 2.5 of 32 GT/s (idle power saving) only warns")
    check(s[("cpu_clock", "cpu1")] == "fail" and s[("cpu_clock", "cpu0")] == "pass",
          "a core at 1198 MHz of its 2400 MHz base under load fails")
    # The CPU quota of the process's cgroup, from a root's proc/self/cgroup and sys/fs/cgroup: v1's
    # cpu controller capped at 30% of a core two levels up (the job's own cgroup has none), and
    # v2's cpu.max at 1.5 of the 2 CPUs; a sysfs copy with no proc beside it says so.
    run = gpucal("--sysfs", os.path.join(FIX, "root-cpu-capped", "sys"), "--node", "n5", "--json", os.path.join(WORK, "q.json"))
    doc = json.load(open(os.path.join(WORK, "q.json")))
    check(run.returncode == 1 and statuses(doc)[("cpu_quota", "/gc-gcnode3/job_12")] == "fail" and
          doc["readings"]["cpu_quota"] == {"cgroup": "/gc-gcnode3/job_12", "bound_by": "/gc-gcnode3", "limit_cpus": 0.3,
                                           "allowed_cpus": 2} and
          "cgroup /gc-gcnode3 allows 0.30 CPUs of the 2 it may run on" in run.stdout,
          f"a cgroup v1 CPU quota of 30% of a core fails the node: {run.stdout}")
    run = gpucal("--sysfs", os.path.join(FIX, "root-cpu-v2", "sys"), "--node", "n6")
    check(run.returncode == 0 and re.search(r"cpu_quota +/system.slice/slurmstepd.scope/job_7 +warn +1.50 CPUs of the 2", run.stdout),
          f"a cgroup v2 cpu.max of 1.5 CPUs of 2 warns: {run.stdout}")
    run = gpucal("--sysfs", os.path.join(FIX, "sysfs-healthy"), "--node", "n1")
    check(re.search(r"cpu_quota +- +not available +- +no \S*proc/self/cgroup", run.stdout),
          f"a sysfs copy with no proc/ beside it: the quota is not available: {run.stdout}")
    empty = os.path.join(WORK, "empty-sysfs")
    os.makedirs(empty, exist_ok=True)
    run = gpucal("--sysfs", empty, "--node", "n4")
    check(run.returncode == 1 and "NOTHING CHECKED" in run.stdout and "nothing checked" in run.stderr,
          "a node exposing none of the checks fails closed")


def nvml_cases():
    expect = {"nvml-healthy": (0, []), "nvml-remap-pending": (1, [("gpu_ecc", "gpu3"), ("gpu_row_remap", "gpu3")]),
              "nvml-nvlink-down": (1, [("gpu_nvlink", "gpu5")]),
              "nvml-hw-thermal": (1, [("gpu_clock_slowdown", "gpu6"), ("gpu_temperature", "gpu6")]),
              "nvml-pcie-x8": (1, [("gpu_pcie_link", "gpu1")])}
    for name, (rc, fails) in expect.items():
        out = os.path.join(WORK, name + ".judged.json")
        run = gpucal("--health-from", os.path.join(FIX, name + ".json"), "--json", out)
        doc = json.load(open(out))
        got = sorted(k for k, v in statuses(doc).items() if v == "fail")
        check(run.returncode == rc and got == sorted(fails), f"{name}: exit {run.returncode}, failures {got}")
    s = statuses(json.load(open(os.path.join(WORK, "nvml-pcie-x8.judged.json"))))
    check(s[("gpu_pcie_link", "gpu2")] == "warn", "a GPU at Gen1 of Gen5 (idle) warns")
    s = statuses(json.load(open(os.path.join(WORK, "nvml-nvlink-down.judged.json"))))
    # Round trip: the JSON written is judged the same when read back.
    again = os.path.join(WORK, "again.json")
    gpucal("--health-from", os.path.join(WORK, "nvml-nvlink-down.judged.json"), "--json", again)
    check(statuses(json.load(open(again))) == s, "--json then --health-from judges the same")


def rsmi_cases():
    """An 8-GPU AMD node as ROCm SMI reads it: bad pages pending retirement fail, XGMI errors and
    corrected ECC counts warn, and what ROCm SMI does not give (clock event reasons) is not a pass."""
    out = os.path.join(WORK, "rsmi-healthy.judged.json")
    run = gpucal("--health-from", os.path.join(FIX, "rsmi-healthy.json"), "--json", out)
    s = statuses(json.load(open(out)))
    check(run.returncode == 0 and s[("gpu_xgmi", "gpu0")] == "pass" and s[("gpu_row_remap", "gpu7")] == "pass"
          and s[("gpu_clock_slowdown", "gpu0")] == "not available" and not any(k[0] == "gpu_nvlink" for k in s),
          f"rsmi-healthy: exit {run.returncode}, an AMD GPU's checks are XGMI's, not NVLink's, clocks not available")
    out = os.path.join(WORK, "rsmi-bad-page.judged.json")
    run = gpucal("--health-from", os.path.join(FIX, "rsmi-bad-page.json"), "--json", out)
    s = statuses(json.load(open(out)))
    fails = sorted(k for k, v in s.items() if v == "fail")
    check(run.returncode == 1 and fails == [("gpu_row_remap", "gpu2")] and s[("gpu_xgmi", "gpu6")] == "warn"
          and s[("gpu_ecc", "gpu2")] == "warn" and "awaits retirement" in run.stdout,
          f"rsmi-bad-page: exit {run.returncode}, failures {fails}")
    again = os.path.join(WORK, "rsmi-again.json")
    gpucal("--health-from", out, "--json", again)
    check(statuses(json.load(open(again))) == s, "ROCm SMI readings: --json then --health-from judges the same")
    bad = os.path.join(WORK, "rsmi-bad-api.json")
    doc = json.load(open(os.path.join(FIX, "rsmi-healthy.json")))
    doc["readings"]["gpus"][0]["api"] = "amdsmi"
    json.dump(doc, open(bad, "w"))
    run = gpucal("--health-from", bad)
    check(run.returncode == 2 and "readings.gpus[0].api" in run.stderr, "an unknown api is refused, naming the field")


def sku_refusals():
    """An expectations file's "health" object is checked like its metrics: one line naming the field."""
    folder = os.path.join(WORK, "skus")
    os.makedirs(folder, exist_ok=True)
    doc = json.load(open(os.path.join(os.path.dirname(FIX), "..", "..", "expectations", "h100_sxm.json")))
    doc["health"]["gpu_pcie"]["generation"] = 0
    json.dump(doc, open(os.path.join(folder, "h100_sxm.json"), "w"))
    env = dict(os.environ, GPUCAL_EXPECTATIONS_DIR=folder)
    run = gpucal("--health-from", os.path.join(FIX, "nvml-healthy.json"), "--json", os.path.join(WORK, "sku.json"), env=env)
    line = {(l["check"], l["subject"]): l for l in json.load(open(os.path.join(WORK, "sku.json")))["lines"]}.get(("gpu_sku", "-"), {})
    check(line.get("status") == "not available" and "health.gpu_pcie.generation" in line.get("detail", ""),
          f"a bad health field in an expectations file is named, and the SKU checks are not a pass: {line}")
    doc["health"]["gpu_pcie"]["generation"] = 5
    for sku in ("h100_sxm", "h100_twin"):
        doc["sku"] = sku
        json.dump(doc, open(os.path.join(folder, sku + ".json"), "w"))
    run = gpucal("--health-from", os.path.join(FIX, "nvml-healthy.json"), "--json", os.path.join(WORK, "sku.json"), env=env)
    line = {(l["check"], l["subject"]): l for l in json.load(open(os.path.join(WORK, "sku.json")))["lines"]}.get(("gpu_sku", "gpu0"), {})
    check(line.get("status") == "not available" and "matches both" in line.get("detail", ""),
          f"a GPU two expectations files match: its SKU checks are not available, saying why: {line}")


def xid_cases():
    """NVIDIA Xid events from a kernel log (--kernel-log, dmesg's format): each PCI address judged
    by its worst Xid, 79 failing and 13 or 63 warning; the same Xids in recorded readings; no Xid in
    a log that was read passes; readings without Xids (no driver, or recorded before) are not a pass."""
    out = os.path.join(WORK, "xid.json")
    run = gpucal("--sysfs", os.path.join(FIX, "sysfs-healthy"), "--kernel-log", os.path.join(FIX, "kernel-xid.log"),
                 "--node", "n9", "--json", out)
    doc = json.load(open(out))
    s = statuses(doc)
    lines = {l["subject"]: l for l in doc["lines"] if l["check"] == "gpu_xid"}
    check(run.returncode == 1 and s.get(("gpu_xid", "pci 0000:c6:00")) == "fail"
          and s.get(("gpu_xid", "pci 0000:9b:00")) == "warn" and s.get(("gpu_xid", "pci 0000:1b:00")) == "warn"
          and lines["pci 0000:1b:00"]["value"] == "13 x2" and "fallen off the bus" in lines["pci 0000:c6:00"]["detail"]
          and "86011 s after boot" in lines["pci 0000:c6:00"]["detail"] and len(lines) == 3,
          f"kernel log Xids: exit {run.returncode}, {[(k, v['status'], v['value']) for k, v in lines.items()]}")
    again = os.path.join(WORK, "xid-again.json")
    run = gpucal("--health-from", out, "--json", again)
    check(run.returncode == 1 and statuses(json.load(open(again))) == s, "Xids: --json then --health-from judges the same")
    quiet = os.path.join(WORK, "quiet.log")
    open(quiet, "w").write("[    4.2] nvidia-nvlink: Nvlink Core is being initialized\n")
    run = gpucal("--sysfs", os.path.join(FIX, "sysfs-healthy"), "--kernel-log", quiet, "--json", out)
    check(run.returncode == 0 and statuses(json.load(open(out))).get(("gpu_xid", "-")) == "pass",
          f"a kernel log with no Xid passes: exit {run.returncode}")
    base = json.load(open(os.path.join(FIX, "nvml-healthy.json")))["readings"]
    run, doc = judged(base, "no-xids")
    check(doc is not None and statuses(doc).get(("gpu_xid", "-")) == "not available" and run.returncode == 0,
          "readings without Xids: gpu_xid not available, never a pass")
    r = copy.deepcopy(base)
    r["xids"] = [{"pci": "0000:18:00", "xid": 48}, {"pci": "0000:18:00", "xid": 94}]
    run, doc = judged(r, "xid48")
    check(doc is not None and statuses(doc).get(("gpu_xid", "pci 0000:18:00")) == "fail" and run.returncode == 1,
          "a double-bit ECC Xid (48) fails")
    empty = os.path.join(WORK, "empty-sysfs-xid")
    os.makedirs(os.path.join(empty, "module", "nvidia"), exist_ok=True)
    run = gpucal("--sysfs", empty, "--json", out)
    ring = {l["subject"]: l for l in json.load(open(out))["lines"] if l["check"] == "gpu_xid"}
    line = ring.get("-", {})
    check((line.get("status") == "pass" and "kernel ring buffer" in line.get("detail", ""))
          or (line.get("status") == "not available" and "not readable" in line.get("detail", "")),
          f"with the driver loaded (sysfs module/nvidia) the ring buffer is read, or why not is said: {ring}")
    run = gpucal("--sysfs", os.path.join(FIX, "sysfs-healthy"), "--json", out)
    line = {l["subject"]: l for l in json.load(open(out))["lines"] if l["check"] == "gpu_xid"}.get("-", {})
    check(line.get("status") == "not available" and "NVIDIA driver is not loaded" in line.get("detail", ""),
          f"no NVIDIA driver: Xids not available, never a pass: {line}")
    for args, words in [(["--kernel-log", os.path.join(WORK, "none.log")], "--kernel-log: cannot read"),
                        (["--kernel-log", WORK], "--kernel-log: cannot read"),
                        (["--health-from", again, "--kernel-log", quiet], "--kernel-log does not go with --health-from")]:
        run = gpucal(*args)
        check(run.returncode == 2 and words in run.stderr and len(run.stderr.strip().splitlines()) == 1,
              f"refused: {args} -> exit {run.returncode}: {run.stderr.strip()}")


def made_cases():
    base = json.load(open(os.path.join(FIX, "nvml-healthy.json")))["readings"]
    cases = []
    r = copy.deepcopy(base); r["gpus"][0]["clock_event_reasons"] = 0x20
    cases.append(("software thermal slowdown warns", r, ("gpu_clock_slowdown", "gpu0"), "warn", 0))
    r = copy.deepcopy(base); r["gpus"][0]["temperature_c"] = 85
    cases.append(("85 C with slowdown at 89 C warns", r, ("gpu_temperature", "gpu0"), "warn", 0))
    r = copy.deepcopy(base); r["gpus"][0]["slowdown_temperature_c"] = None
    cases.append(("no slowdown threshold: temperature not available", r, ("gpu_temperature", "gpu0"), "not available", 0))
    r = copy.deepcopy(base); r["gpus"][0].update(remap_pending=None, remap_failure=None, retired_pages_pending=1)
    cases.append(("page retirement pending (pre-Ampere) fails", r, ("gpu_row_remap", "gpu0"), "fail", 1))
    r = copy.deepcopy(base); r["gpus"][0]["remap_failure"] = 1
    cases.append(("a failed row remap fails", r, ("gpu_row_remap", "gpu0"), "fail", 1))
    r = copy.deepcopy(base); r["gpus"][0]["nvlinks"][4]["recovery"] = 2
    cases.append(("NVLink recoveries warn", r, ("gpu_nvlink", "gpu0"), "warn", 0))
    r = copy.deepcopy(base); r["gpus"][0]["nvlinks"] = []
    cases.append(("no NVLink: not available", r, ("gpu_nvlink", "gpu0"), "not available", 0))
    r = copy.deepcopy(base); r["gpus"][0].update(ecc_uncorrected_volatile=None, ecc_corrected_volatile=None)
    cases.append(("ECC off: not available", r, ("gpu_ecc", "gpu0"), "not available", 0))
    r = copy.deepcopy(base); r["gpus"][0]["ecc_corrected_volatile"] = 7
    cases.append(("corrected GPU ECC errors warn", r, ("gpu_ecc", "gpu0"), "warn", 0))
    # Against the SKU (expectations/h100_sxm.json "health"): a GPU whose platform allows only Gen4,
    # though it trained at its maximum, and one reporting 12 of the H100 SXM's 18 NVLinks.
    r = copy.deepcopy(base); r["gpus"][0].update(pcie_gen=4, pcie_gen_max=4)
    cases.append(("Gen4 of Gen4 on an H100 SXM (Gen5) fails the SKU check", r, ("gpu_pcie_sku", "gpu0"), "fail", 1))
    cases.append(("... while the device's own check passes", r, ("gpu_pcie_link", "gpu0"), "pass", 1))
    r = copy.deepcopy(base); r["gpus"][1]["nvlinks"] = r["gpus"][1]["nvlinks"][:12]
    cases.append(("12 of 18 NVLinks fails", r, ("gpu_nvlink_count", "gpu1"), "fail", 1))
    r = copy.deepcopy(base)
    for g in r["gpus"]:
        g["name"] = "Some Future GPU"
    cases.append(("a GPU no expectations file matches: the SKU checks are not available", r, ("gpu_sku", "-"), "not available", 0))
    clocks = [{"cpu": 0, "cur_khz": 1500000, "base_khz": 0, "max_khz": 3700000, "policy_max_khz": 3700000}]
    r = copy.deepcopy(base); r.update(cpu_clocks=clocks, cpu_clock_under_load=False)
    cases.append(("clocks read idle: not available", r, ("cpu_clock", "-"), "not available", 0))
    r = copy.deepcopy(base); r.update(cpu_clocks=clocks, cpu_clock_under_load=True)
    cases.append(("no base clock: under half the maximum under load warns", r, ("cpu_clock", "cpu0"), "warn", 0))
    r = copy.deepcopy(base); r.update(cpu_clocks=[dict(clocks[0], cur_khz=2000000)], cpu_clock_under_load=True)
    cases.append(("no base clock: over half the maximum passes", r, ("cpu_clock", "cpu0"), "pass", 0))
    quota = {"cgroup": "/kubepods/pod1", "bound_by": "/kubepods/pod1", "limit_cpus": 6.0, "allowed_cpus": 8}
    r = copy.deepcopy(base); r.update(cpu_quota=quota)
    cases.append(("6 CPUs of 8 by the cgroup's quota warns", r, ("cpu_quota", "/kubepods/pod1"), "warn", 0))
    r = copy.deepcopy(base); r.update(cpu_quota=dict(quota, limit_cpus=8.0))
    cases.append(("a quota of all 8 CPUs passes", r, ("cpu_quota", "/kubepods/pod1"), "pass", 0))
    r = copy.deepcopy(base); r.update(cpu_quota=dict(quota, limit_cpus=0))
    cases.append(("no quota passes", r, ("cpu_quota", "/kubepods/pod1"), "pass", 0))
    r = copy.deepcopy(base); r.pop("cpu_quota", None)
    cases.append(("readings recorded before the quota check: not available", r, ("cpu_quota", "-"), "not available", 0))
    for i, (what, readings, key, status, rc) in enumerate(cases):
        run, doc = judged(readings, f"made{i}")
        check(doc is not None and statuses(doc).get(key) == status and run.returncode == rc,
              f"{what}: {statuses(doc).get(key) if doc else None}, exit {run.returncode}")


def outputs_and_drain():
    bin_dir = os.path.join(WORK, "bin")
    os.makedirs(bin_dir, exist_ok=True)
    log = os.path.join(WORK, "scontrol.log")
    fake = os.path.join(bin_dir, "scontrol")
    with open(fake, "w") as f:
        f.write(f"#!/bin/sh\nprintf '%s\\n' \"$@\" >> {log}\n")
    os.chmod(fake, 0o755)
    env = dict(os.environ, SLURMD_NODENAME="gpu-node-07")
    prom = os.path.join(WORK, "health.prom")
    junit = os.path.join(WORK, "health.xml")
    run = gpucal("--health-from", os.path.join(FIX, "nvml-nvlink-down.json"), "--drain", "--scontrol", fake,
                 "--prometheus", prom, "--junit", junit, env=env)
    args = open(log).read().splitlines() if os.path.exists(log) else []
    check(run.returncode == 1 and args[:3] == ["update", "NodeName=gpu-node-07", "State=DRAIN"] and
          args[3].startswith("Reason=gpucal health: gpu_nvlink gpu5") and "drained gpu-node-07" in run.stdout,
          f"--drain drains SLURMD_NODENAME with the failure as the reason: {args}")
    text = open(prom).read()
    check('gpucal_health_ok{node="gpu-node-07"} 0' in text and
          'gpucal_health_status{node="gpu-node-07",check="gpu_nvlink",subject="gpu5",status="fail"} 1' in text,
          "Prometheus: the verdict gauge and a status per check")
    if shutil.which("promtool"):
        lint = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        check(lint.returncode == 0, f"promtool check metrics: {lint.stdout}{lint.stderr}")
    xml = open(junit).read()
    check("<failure" in xml and "gpu_nvlink gpu5" in xml, "JUnit: the failing check is a failure")
    os.remove(log)
    run = gpucal("--health-from", os.path.join(FIX, "nvml-healthy.json"), "--drain", "--scontrol", fake, env=env)
    check(run.returncode == 0 and not os.path.exists(log), "a healthy node is not drained")


def refusals():
    bad = os.path.join(WORK, "bad.json")
    open(bad, "w").write('{"readings": {"gpus": [{"index": 0, "pcie_width": -1}]}}')
    for args, words in [(["--health-from", bad], "readings.gpus[0].pcie_width must be a non-negative number"),
                        (["--health-from", os.path.join(WORK, "missing.json")], "missing.json"),
                        (["results/smoke"], "run gpucal check twice"),
                        (["--expect", "auto"], "--expect does not go with --health"),
                        (["--health-from", bad, "--json", bad], "--json")]:
        run = gpucal(*args)
        lines = run.stderr.strip().splitlines()
        check(run.returncode == 2 and len(lines) == 1 and words in lines[0] and "exception" not in run.stderr,
              f"refused in one line: {args} -> exit {run.returncode}: {run.stderr.strip()}")
    run = subprocess.run([GPUCAL, "check", "--sysfs", "/sys"], capture_output=True, text=True)
    check(run.returncode == 2 and "--sysfs goes with --health" in run.stderr, "--sysfs without --health is refused")


if __name__ == "__main__":
    GPUCAL, FIX, WORK = sys.argv[1:4]
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    sysfs_cases()
    nvml_cases()
    rsmi_cases()
    made_cases()
    xid_cases()
    sku_refusals()
    outputs_and_drain()
    refusals()
    print(f"{len(failures)} failure(s)")
    sys.exit(1 if failures else 0)
