#!/usr/bin/env python3
"""What a run leaves behind when things go wrong, checked:

  lock       BENCH          a second run with the same --out is refused (exit 2, one line)
                            while the first goes on and keeps every row
  full-disk  BENCH MODE GPUCAL  writes fail mid-run (MODE rlimit: RLIMIT_FSIZE makes writes past
                            a size fail with EFBIG, no root needed; MODE tmpfs: a 96 KiB tmpfs,
                            skipped (77) where it cannot be mounted). A rerun over an earlier
                            good result: exit 1, one line naming the file, the earlier result
                            byte for byte, this run's whole rows in FILE.csv.partial (which
                            gpucal fit reads). Fresh outputs on a disk too full for a header
                            (bench_gemm, bench_memory, bench_collectives, gpucal run): no file
                            left behind, empty or not
  kill9      BENCH GPUCAL N  N runs killed (SIGKILL) at random moments, some under mpirun
                            (killing rank 0, another rank, or mpirun) and --threads: no row
                            that the bench reported finished is missing from FILE.csv.partial,
                            every row's samples are whole, gpucal fit reads every partial file
                            (a torn last line is dropped with a warning); prints the totals
  quiet      BENCH          every bench with --quiet leaves stderr empty (no Google Benchmark
                            context block), without it never prints the library's DEBUG warning,
                            and its sidecar says what the library is (libraries.google_benchmark)
  watchdog   BENCH MPIRUN   rank 0 hangs while writing a row (--inject-rank-fault hang-sink):
                            the watchdog ends the run within its timeout, names the phase,
                            and the rows written before are kept

BENCH is the bench_gemm binary (the others are found beside it: BIN/bench_X/bench_X).
"""
import csv
import glob
import io
import json
import os
import pty
import random
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

SKIP = 77
FAST = ["--backend", "host", "--quiet", "--warmup-time", "0", "--max-time-per-point", "0.005"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def bench(gemm_path, name):
    return os.path.join(os.path.dirname(os.path.dirname(gemm_path)), "bench_" + name, "bench_" + name)


def read_rows(path):
    """Whole rows of a CSV our writers wrote; a torn last line (no line end) is returned apart."""
    with open(path, newline="") as f:
        text = f.read()
    torn = ""
    if text and not text.endswith("\n"):
        cut = text.rfind("\n") + 1
        text, torn = text[:cut], text[cut:]
    rows = list(csv.DictReader(io.StringIO(text)))
    return rows, torn


def sample_counts(path):
    rows, _ = read_rows(path)
    counts = {}
    for r in rows:
        counts[r["point"]] = counts.get(r["point"], 0) + 1
    return counts


def check_whole(csv_path, expect_ok=True):
    """Every CSV row complete, and every ok row's samples in the samples file."""
    rows, torn = read_rows(csv_path)
    if torn:
        fail(f"{csv_path}: torn last line {torn[:80]!r}")
    suffix = ".partial" if csv_path.endswith(".partial") else ""
    samples_path = csv_path[:-len(".csv" + suffix)] + ".samples.csv" + suffix
    counts = sample_counts(samples_path) if os.path.exists(samples_path) else {}
    header = open(csv_path).readline().strip().split(",")
    for r in rows:
        if len(r) != len(header) or None in r.values():
            fail(f"{csv_path}: a row with the wrong number of cells")
        if r["status"] == "ok" and counts.get(r["point"], 0) != int(r["samples"]):
            fail(f"{csv_path}: {r['point']}: {counts.get(r['point'], 0)} samples in the samples file, row says {r['samples']}")
    return rows


def gemm_sweep(points):
    return ["--m", f"16:{16 * points}:+16", "--n", "16", "--k", "16"]


def cmd_lock(gemm):
    work = tempfile.mkdtemp(prefix="gpucal_lock_")
    out = os.path.join(work, "run.csv")
    first = subprocess.Popen([gemm] + gemm_sweep(60) + FAST + ["--min-samples", "3", "--out", out], stdout=subprocess.DEVNULL,
                             stderr=subprocess.PIPE, text=True)
    deadline = time.time() + 30
    while not (os.path.exists(out + ".partial") and os.path.getsize(out + ".partial") > 0):
        if time.time() > deadline or first.poll() is not None:
            fail("the first run did not start writing")
        time.sleep(0.02)
    second = subprocess.run([gemm] + gemm_sweep(2) + FAST + ["--out", out], capture_output=True, text=True, timeout=60)
    first_rc = first.wait(timeout=300)
    lines = our_lines(second.stderr)
    if second.returncode != 2:
        fail(f"second run exit {second.returncode}, expected 2; stderr {second.stderr!r}")
    if len(lines) != 1 or "is being written by another run" not in lines[0]:
        fail(f"second run stderr {lines!r}")
    if first_rc != 0:
        fail(f"first run exit {first_rc}: {first.stderr.read()!r}")
    rows = check_whole(out)
    if len(rows) != 60:
        fail(f"first run kept {len(rows)} rows, expected 60")
    meta = json.load(open(out[:-4] + ".json"))
    if meta.get("rows") != 60:
        fail(f"sidecar rows {meta.get('rows')}")
    # After the first run ended, the same --out is free again.
    third = subprocess.run([gemm] + gemm_sweep(2) + FAST + ["--out", out], capture_output=True, text=True, timeout=60)
    if third.returncode != 0:
        fail(f"a later run with the same --out exit {third.returncode}: {third.stderr!r}")
    print(f"OK: second run refused ({lines[0]}); first run kept all 60 rows; the lock ends with the run")
    shutil.rmtree(work, ignore_errors=True)


def our_lines(stderr):
    """The bench's own lines (Google Benchmark's context block goes to stderr too), less
    warnings about the environment (OPENBLAS_CORETYPE set on the machine), which a
    good input may print before measuring."""
    return [l for l in stderr.splitlines()
            if (l.startswith("bench_") or l.startswith("gpucal")) and ": warning: " not in l]


def snapshot(folder):
    """{name: bytes} of every file in a folder."""
    return {n: open(os.path.join(folder, n), "rb").read() for n in sorted(os.listdir(folder))
            if os.path.isfile(os.path.join(folder, n))}


def check_failed_write(proc, out, before):
    """A rerun that failed mid-run: one line, the earlier result as it was, this run's rows partial."""
    lines = our_lines(proc.stderr)
    if proc.returncode != 1:
        fail(f"exit {proc.returncode}, expected 1; stderr {proc.stderr[-2000:]!r}")
    if len(lines) != 1 or "cannot write" not in lines[0]:
        fail(f"expected one 'cannot write' line, got {lines!r}")
    after = snapshot(os.path.dirname(out))
    for name, data in before.items():
        if after.get(name) != data:
            fail(f"{name} of the earlier run changed ({len(data)} bytes before, {len(after.get(name, b''))} after)")
    partial = out + ".partial"
    rows = check_whole(partial) if os.path.exists(partial) else []
    if rows:
        if f"whole in '{partial}'" not in lines[0]:
            fail(f"the error line does not name {partial}: {lines[0]!r}")
        meta = json.load(open(out[:-4] + ".json.partial"))  # valid JSON: never a half-written sidecar
        if "start_time" not in meta:
            fail("the partial sidecar lacks start_time")
    empty = [n for n, data in after.items() if not data]
    if empty:
        fail(f"empty files left: {empty}")
    leftovers = [n for n in after if ".tmp." in n]
    if leftovers:
        fail(f"temporary files left: {leftovers}")
    return rows, lines[0]


def check_nothing_left(folder, label, proc, allowed):
    """A run that could not write even its header: an error, and no file (empty or not) left."""
    if proc.returncode not in (1, 2):
        fail(f"{label}: exit {proc.returncode} on a full disk, expected 1 or 2; stderr {proc.stderr[-1500:]!r}")
    if not our_lines(proc.stderr):
        fail(f"{label}: no line on stderr")
    left = []
    for root, _, names in os.walk(folder):
        left += [os.path.relpath(os.path.join(root, n), folder) for n in names]
    # gpucal run's folder lock is empty by design (flock on it keeps two runs out of one folder),
    # and its logs/ hold what each bench printed, which a full disk leaves empty: no result file.
    left = sorted(n for n in left if n not in allowed and os.path.basename(n) != ".gpucal-run.lock"
                  and not (n.startswith(os.path.join("suite", "logs")) and n.endswith(".log")))
    if left:
        fail(f"{label}: files left on a full disk: {left}")


def fresh_outputs_on_a_full_disk(gemm, gpucal, folder, preexec=None, allowed=()):
    coll, memory = bench(gemm, "collectives"), bench(gemm, "memory")
    runs = [("bench_gemm", [gemm] + gemm_sweep(3) + FAST + ["--out", os.path.join(folder, "gemm.csv")]),
            ("bench_memory", [memory, "--kernel", "copy", "--bytes", "64K"] + FAST +
             ["--out", os.path.join(folder, "memory.csv")]),
            ("bench_collectives", [coll, "--sizes", "64", "--collective", "allreduce"] + FAST +
             ["--out", os.path.join(folder, "collectives.csv")])]
    if gpucal:
        runs.append(("gpucal run", [gpucal, "run", "--suite", "smoke", "--backend", "host", "--no-plots",
                                    "--bin-dir", os.path.dirname(os.path.dirname(gemm)),
                                    "--out", os.path.join(folder, "suite")]))
    for label, cmd in runs:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, preexec_fn=preexec)
        check_nothing_left(folder, label, proc, allowed)
    return [label for label, _ in runs]


def cmd_full_disk(gemm, mode, gpucal):
    work = tempfile.mkdtemp(prefix="gpucal_full_")
    args = gemm_sweep(400) + FAST + ["--min-samples", "10"]
    good = gemm_sweep(3) + FAST + ["--min-samples", "10"]
    if mode == "rlimit":
        # Learn the sizes of a small run, then cap every file a little past the sidecar's size:
        # the samples file or the CSV hits the cap mid-run, often inside a write.
        folder = os.path.join(work, "out")
        os.makedirs(folder)
        out = os.path.join(folder, "run.csv")
        subprocess.run([gemm] + good + ["--out", out], check=True, capture_output=True, timeout=120)
        limit = os.path.getsize(out[:-4] + ".json") + 3000
        before = snapshot(folder)

        def cap(size):
            def apply():
                # SIGXFSZ at its default action (it kills), as a shell's `ulimit -f` leaves it:
                # the programs ignore it themselves and report the failed write.
                signal.signal(signal.SIGXFSZ, signal.SIG_DFL)
                resource.setrlimit(resource.RLIMIT_FSIZE, (size, size))
            return apply
        proc = subprocess.run([gemm] + args + ["--out", out], capture_output=True, text=True, timeout=600,
                              preexec_fn=cap(limit))
        rows, line = check_failed_write(proc, out, before)
        fresh = os.path.join(work, "fresh")
        os.makedirs(fresh)
        labels = fresh_outputs_on_a_full_disk(gemm, None, fresh, cap(100))
        print(f"OK (rlimit {limit} B per file): exit 1, '{line}', {len(rows)} whole rows kept partial, the earlier "
              f"result byte for byte; {', '.join(labels)} on a full disk left no file")
    else:
        if os.geteuid() != 0:
            print("SKIP: mounting a tmpfs needs root")
            sys.exit(SKIP)
        mnt = os.path.join(work, "mnt")
        os.makedirs(mnt)
        if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=96k", "tmpfs", mnt], capture_output=True).returncode:
            print("SKIP: cannot mount a tmpfs here (no CAP_SYS_ADMIN); the rlimit test covers the path")
            sys.exit(SKIP)
        try:
            out = os.path.join(mnt, "run.csv")
            subprocess.run([gemm] + good + ["--out", out], check=True, capture_output=True, timeout=120)
            before = snapshot(mnt)
            proc = subprocess.run([gemm] + args + ["--out", out], capture_output=True, text=True, timeout=600)
            rows, line = check_failed_write(proc, out, before)
            if "No space left on device" not in line:
                fail(f"expected ENOSPC, got {line!r}")
            if rows:
                fit = subprocess.run([gpucal, "fit", out + ".partial", "-o", os.path.join(work, "c.json")],
                                     capture_output=True, text=True, timeout=120)
                if fit.returncode != 0:
                    fail(f"gpucal fit {out}.partial: exit {fit.returncode}: {fit.stderr[-500:]!r}")
            # Fill what is left, then fresh outputs: not even a header fits.
            for name in os.listdir(mnt):
                os.remove(os.path.join(mnt, name))
            fd = os.open(os.path.join(mnt, "filler"), os.O_WRONLY | os.O_CREAT)
            try:
                while os.write(fd, b"x" * 512):
                    pass
            except OSError:
                pass
            os.close(fd)
            labels = fresh_outputs_on_a_full_disk(gemm, gpucal, mnt, allowed=("filler",))
            print(f"OK (96 KiB tmpfs): exit 1, '{line}', {len(rows)} whole rows kept partial (gpucal fit reads them), "
                  f"the earlier result byte for byte; {', '.join(labels)} on a full disk left no file")
        finally:
            subprocess.run(["umount", "-l", mnt])
    shutil.rmtree(work, ignore_errors=True)


def finished_points(stream, seen):
    """Google Benchmark prints a point's line after its row is written: those points are finished."""
    try:
        for line in stream:
            line = re.sub(r"\x1b\[[0-9;]*m", "", line)
            word = line.split(" ", 1)[0]
            if "/" in word and not line.startswith("-"):
                seen.append(word.split("/iterations:")[0])
    except OSError:  # the pty closes with the process
        pass


def kill_run(cmd, out, victim, delay, env=None):
    # stdout on a pseudo-terminal: line buffered, so Google Benchmark's line for a point shows
    # as soon as the point (and its row) is done.
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdout=slave, stderr=subprocess.DEVNULL, env=env, start_new_session=True)
    os.close(slave)
    seen = []
    reader = threading.Thread(target=finished_points, args=(io.TextIOWrapper(os.fdopen(master, "rb", 0),
                                                                             errors="replace"), seen))
    reader.start()
    # Kill mid-run: after the first row is in the file, at a random moment.
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        if os.path.exists(out + ".partial") and open(out + ".partial", "rb").read().count(b"\n") >= 2:
            break
        time.sleep(0.01)
    time.sleep(delay)
    if proc.poll() is not None:
        reader.join(timeout=10)
        return None, f"the run ended by itself (exit {proc.returncode}) before the kill"
    target = proc.pid
    if victim != "launcher":
        # The rank to kill: a child process of mpirun whose OMPI rank matches.
        for pid in subprocess.run(["pgrep", "-s", str(proc.pid)], capture_output=True, text=True).stdout.split():
            try:
                environ = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
            except OSError:
                continue
            if f"OMPI_COMM_WORLD_RANK={victim}".encode() in environ:
                target = int(pid)
    finished_before = list(seen)
    try:
        os.kill(target, signal.SIGKILL)
    except ProcessLookupError:
        pass
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        return None, "the other ranks hung after the kill"
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # ranks left behind by a killed launcher
    except ProcessLookupError:
        pass
    reader.join(timeout=10)
    return finished_before, None


def cmd_kill9(gemm, gpucal, runs, mpirun):
    work = tempfile.mkdtemp(prefix="gpucal_kill9_")
    rng = random.Random(20240601)
    coll = bench(gemm, "collectives")
    totals = {"runs": 0, "rows": 0, "torn": 0, "lost": 0, "finished": 0}
    kinds = ["gemm", "gemm", "threads"] + (["mpi-rank0", "mpi-rank1", "mpi-launcher"] if mpirun else [])
    for i in range(runs):
        kind = kinds[i % len(kinds)]
        folder = os.path.join(work, f"run{i}")
        os.makedirs(folder)
        if kind == "gemm":
            name = "gemm"
            cmd = [gemm] + gemm_sweep(300) + FAST + ["--min-samples", "20"]
        else:
            name = "collectives"
            cmd = [coll, "--sizes", "4K:1M:+4K", "--collective", "allreduce,allgather", "--dtype", "fp32,fp64",
                   "--min-samples", "5"] + FAST
            if kind == "threads":
                cmd += ["--threads", "2"]
            else:
                cmd = shlex.split(mpirun) + ["-np", "2"] + cmd
        out = os.path.join(folder, name + ".csv")
        cmd += ["--out", out, "--benchmark_color=false"]
        victim = {"mpi-rank0": "0", "mpi-rank1": "1"}.get(kind, "launcher")
        delay = rng.uniform(0.0, 1.5)
        env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
        finished, problem = kill_run(cmd, out, victim, delay, env)
        if problem:
            fail(f"run {i} ({kind}): {problem}")
        # Killed mid-run: the rows are in the partial files (FILE.csv is never a partial one).
        if os.path.exists(out):
            fail(f"run {i} ({kind}): {out} exists although the run was killed before it finished")
        rows, torn = read_rows(out + ".partial") if os.path.exists(out + ".partial") else ([], "")
        samples = out[:-4] + ".samples.csv.partial"
        counts = sample_counts(samples) if os.path.exists(samples) else {}
        for r in rows:
            if r["status"] == "ok" and counts.get(r["point"], 0) != int(r["samples"]):
                fail(f"run {i} ({kind}): {r['point']}: samples file has {counts.get(r['point'], 0)}, row says {r['samples']}")
        have = {r["point"] for r in rows}
        lost = [p for p in finished if p not in have]
        totals["runs"] += 1
        totals["rows"] += len(rows)
        totals["torn"] += 1 if torn else 0
        totals["lost"] += len(lost)
        totals["finished"] += len(finished)
        if lost:
            fail(f"run {i} ({kind}): {len(lost)} finished point(s) missing from the CSV: {lost[:3]}")
        if rows:
            proc = subprocess.run([gpucal, "fit", out + ".partial", "-o", os.path.join(folder, "calibration.json")],
                                  capture_output=True, text=True, timeout=120)
            if proc.returncode != 0:
                fail(f"run {i} ({kind}): gpucal fit exit {proc.returncode}: {proc.stderr[-500:]!r}")
        print(f"run {i:2d} {kind:12s} killed {delay:.2f} s after its first row: {len(rows):3d} rows, "
              f"{len(finished):3d} reported finished, torn last line: {'yes' if torn else 'no'}")
    print(f"OK: {totals['runs']} kill -9 runs, {totals['rows']} rows kept, {totals['finished']} points reported "
          f"finished before the kill, {totals['lost']} lost, {totals['torn']} torn last line(s)")
    shutil.rmtree(work, ignore_errors=True)


def cmd_watchdog(gemm, mpirun):
    coll = bench(gemm, "collectives")
    work = tempfile.mkdtemp(prefix="gpucal_watchdog_")
    timeout_s = 2
    cases = [("threads", [coll, "--threads", "2"])]
    if mpirun:
        cases.append(("mpirun", shlex.split(mpirun) + ["-np", "2", coll]))
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    for label, prefix in cases:
        out = os.path.join(work, label + ".csv")
        cmd = prefix + ["--sizes", "64,128,256,512", "--collective", "allreduce", "--timeout", str(timeout_s),
                        "--inject-rank-fault", "hang-sink@2", "--out", out, "--min-samples", "3"] + FAST
        start = time.time()
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=env)
        took = time.time() - start
        if proc.returncode == 0:
            fail(f"{label}: exit 0 although rank 0 hung writing a row")
        if "watchdog" not in proc.stderr or not ("writing its row" in proc.stderr or "next point" in proc.stderr):
            fail(f"{label}: no watchdog line naming the row write or the hand-over: {proc.stderr[-1500:]!r}")
        if took > timeout_s + 20:
            fail(f"{label}: took {took:.1f} s with --timeout {timeout_s}")
        rows = check_whole(out + ".partial")  # the run did not finish: its rows stay partial
        if len(rows) != 2:
            fail(f"{label}: {len(rows)} rows kept, expected the 2 written before the hang")
        print(f"OK ({label}): ended after {took:.1f} s (exit {proc.returncode}), 2 rows kept")
    shutil.rmtree(work, ignore_errors=True)


def cmd_quiet(gemm):
    """Every bench with --quiet leaves stderr empty, whatever the host's environment: once with
    OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE unset and once set (some hosts set them), where the
    run without --quiet warns about them and the sidecar records them."""
    for openblas in (None, {"OPENBLAS_CORETYPE": "Haswell", "OPENBLAS_L2_SIZE": "512"}):
        env = {k: v for k, v in os.environ.items() if k not in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")}
        env.update(openblas or {})
        quiet_runs(gemm, env, openblas)


def quiet_runs(gemm, env, openblas):
    work = tempfile.mkdtemp(prefix="gpucal_quiet_")
    runs = {"gemm": gemm_sweep(1), "attention": ["--batch", "1", "--heads", "2", "--seq", "16", "--head-dim", "16"],
            "collectives": ["--sizes", "64", "--collective", "allreduce"], "p2p": ["--sizes", "64"],
            "memory": ["--kernel", "copy", "--bytes", "64K"]}
    for name, axes in runs.items():
        out = os.path.join(work, name + ".csv")
        for quiet in (True, False):
            cmd = [bench(gemm, name)] + axes + [a for a in FAST if quiet or a != "--quiet"] + ["--out", out]
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=300, env=env)
            if proc.returncode != 0:
                fail(f"bench_{name}: exit {proc.returncode}: {proc.stderr[-1000:]!r}")
            if quiet and proc.stderr.strip():
                fail(f"bench_{name} --quiet{' with ' + str(openblas) if openblas else ''}: stderr is not empty: "
                     f"{proc.stderr[-1000:]!r}")
            warned = f"bench_{name}: warning: OPENBLAS_CORETYPE=Haswell" in proc.stderr
            if not quiet and name == "gemm" and warned != bool(openblas):
                fail(f"bench_gemm without --quiet, OPENBLAS_* {'set' if openblas else 'unset'}: "
                     f"{'no' if openblas else 'a'} warning: {proc.stderr[-1000:]!r}")
            if "Library was built as DEBUG" in proc.stderr:
                fail(f"bench_{name}: the library's DEBUG warning on stderr")
        sidecar = json.load(open(out[:-4] + ".json"))
        if openblas and sidecar.get("environment", {}).get("OPENBLAS_CORETYPE") != "Haswell":
            fail(f"bench_{name}: the sidecar's environment lacks OPENBLAS_CORETYPE: {sidecar.get('environment')!r}")
        library = sidecar["libraries"].get("google_benchmark", {})
        if library.get("build_type") not in ("debug", "release") or not library.get("version"):
            fail(f"bench_{name}: sidecar libraries.google_benchmark is {library!r}")
    print(f"OK: {len(runs)} benches quiet with --quiet (OPENBLAS_* {'set' if openblas else 'unset'}), no DEBUG "
          f"warning without it; the sidecar names the library ({library['version']}, {library['build_type']})")
    shutil.rmtree(work, ignore_errors=True)


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        sys.exit(2)
    what, gemm = sys.argv[1], sys.argv[2]
    if what == "lock":
        cmd_lock(gemm)
    elif what == "full-disk":
        cmd_full_disk(gemm, sys.argv[3], sys.argv[4])
    elif what == "kill9":
        cmd_kill9(gemm, sys.argv[3], int(sys.argv[4]), sys.argv[5] if len(sys.argv) > 5 else "")
    elif what == "quiet":
        cmd_quiet(gemm)
    elif what == "watchdog":
        cmd_watchdog(gemm, sys.argv[3] if len(sys.argv) > 3 else "")
    else:
        print(__doc__)
        sys.exit(2)


if __name__ == "__main__":
    main()
