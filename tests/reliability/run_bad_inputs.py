#!/usr/bin/env python3
"""Table-driven bad-input test: runs every case of a table (bad_inputs.txt) and checks that
the program refused it the documented way: the expected exit code, exactly one line of its
own on stderr containing the expected fragment, no library's own text in it (LIBRARY_TEXT:
json.exception, std::, stoi, Could not convert, status '...), no crash (signal), no sanitizer
report and no hang (a per-case timeout). A case that exits 0 is a silent accept, a failure.

Table lines:  EXIT | PROGRAM | STDERR FRAGMENT | ARGUMENTS (shell words)
PROGRAM is bench_gemm, bench_attention, bench_collectives, bench_p2p, bench_memory, bench_step, gpucal, or
mpi2:bench_NAME (under `mpirun -np 2`) / threads2:bench_NAME (appends --threads 2).
ARGUMENTS may hold placeholders, expanded per case in a fresh folder:
  {tmp}                   the case's folder
  {file:NAME=TEXT}        writes TEXT (\\n, \\t, \\xNN escapes) to {tmp}/NAME, gives its path
  {dir:NAME|FILE=TEXT|...} a folder {tmp}/NAME holding each FILE with its TEXT (escapes as above),
                          gives the folder's path
  {link:NAME=TARGET}      a symbolic link {tmp}/NAME to TARGET (itself: a loop), gives its path
  {stdout:PATH}           not an argument: the program's standard output goes to PATH (/dev/full)
  {calib:EDITS}           a copy of a valid calibration.json with EDITS applied; EDITS are
                          ';'-separated  /json/pointer=JSON  or  -/json/pointer (delete)
  {results:EDITS}         a copy of a valid results folder with EDITS: FILE.csv:ROW:COLUMN=TEXT
                          (ROW 0 = first data row), FILE:append=TEXT, FILE:cut=N (drop the last N bytes)

usage: run_bad_inputs.py --table T --bin-dir DIR --synthetic PATH --gpucal PATH
                         [--mpirun CMD] [--only PROGRAM] [--jobs N] [--work DIR]
"""
import argparse
import concurrent.futures
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

TIMEOUT_S = 60
SANITIZER = ("AddressSanitizer", "runtime error:", "LeakSanitizer", "UndefinedBehaviorSanitizer")
# A library's own words instead of the problem's: nlohmann::json's, the C++ library's, CLI11's,
# std::filesystem's ("status 'x': ..."). Every message names the file, field or flag itself.
LIBRARY_TEXT = ("json.exception", "std::", "stoi", "stod", "Could not convert", "status '", "basic_string",
                "bad_alloc", "what():")


def unescape(text):
    return text.encode("latin-1").decode("unicode_escape").encode("latin-1")


def json_pointer_parts(pointer):
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def edit_json(doc, edit):
    delete = edit.startswith("-/")
    pointer, value = (edit[1:], None) if delete else edit.split("=", 1)
    parts = json_pointer_parts(pointer)
    node = doc
    for p in parts[:-1]:
        node = node[int(p)] if isinstance(node, list) else node[p]
    last = parts[-1]
    key = int(last) if isinstance(node, list) else last
    if not delete and not isinstance(node, list) and key not in node and value is not None:
        pass  # adding a key is an edit too
    elif isinstance(node, list) and key >= len(node) or (isinstance(node, dict) and key not in node):
        if delete or value is None:
            raise KeyError(f"edit {edit!r}: no {pointer} in the base document")
    if delete:
        del node[key]
    else:
        node[key] = json.loads(value)


def edit_results(folder, edit):
    m = re.match(r"([\w.]+):append=(.*)$", edit, re.S)
    if m:
        with open(os.path.join(folder, m.group(1)), "ab") as f:
            f.write(unescape(m.group(2)))
        return
    m = re.match(r"([\w.]+):cut=(\d+)$", edit)
    if m:
        path = os.path.join(folder, m.group(1))
        size = os.path.getsize(path)
        with open(path, "r+b") as f:
            f.truncate(size - int(m.group(2)))
        return
    m = re.match(r"([\w.]+):(\d+):(\w+)=(.*)$", edit, re.S)
    if not m:
        raise ValueError(f"bad results edit {edit!r}")
    import csv
    path = os.path.join(folder, m.group(1))
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    col = rows[0].index(m.group(3))
    rows[1 + int(m.group(2))][col] = m.group(4)
    with open(path, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows(rows)


class Bases:
    """A valid results folder and its calibration.json, made once per run."""

    def __init__(self, work, synthetic, gpucal):
        self.results = os.path.join(work, "base_results")
        shutil.rmtree(self.results, ignore_errors=True)
        subprocess.run([synthetic, self.results], check=True, capture_output=True)
        self.calibration = os.path.join(self.results, "calibration.json")
        subprocess.run([gpucal, "fit", self.results], check=True, capture_output=True)
        with open(self.calibration) as f:
            self.calibration_doc = json.load(f)


def expand(args, tmp, bases):
    def one(match):
        kind, body = match.group(1), match.group(2)
        if kind == "tmp":
            return tmp
        if kind == "file":
            name, text = body.split("=", 1)
            path = os.path.join(tmp, name)
            with open(path, "wb") as f:
                f.write(unescape(text))
            return path
        if kind == "dir":
            name, *files = body.split("|")
            folder = os.path.join(tmp, name)
            os.makedirs(folder, exist_ok=True)
            for item in files:
                fname, text = item.split("=", 1)
                with open(os.path.join(folder, fname), "wb") as f:
                    f.write(unescape(text))
            return folder
        if kind == "link":
            name, target = body.split("=", 1)
            path = os.path.join(tmp, name)
            os.symlink(target, path)
            return path
        if kind == "calib":
            doc = json.loads(json.dumps(bases.calibration_doc))
            for edit in body.split(";"):
                edit_json(doc, edit)
            path = os.path.join(tmp, "calibration.json")
            with open(path, "w") as f:
                json.dump(doc, f)
            return path
        if kind == "results":
            folder = os.path.join(tempfile.mkdtemp(dir=tmp, prefix="r"), "results")
            shutil.copytree(bases.results, folder)
            os.remove(os.path.join(folder, "calibration.json"))
            for edit in body.split(";"):
                edit_results(folder, edit)
            return folder
        raise ValueError(kind)
    def expand_word(word):
        text, saved = protect(word)
        for k, ph in enumerate(saved):
            m = re.match(r"\{(tmp|file|dir|link|calib|results)(?::(.*))?\}$", ph, re.S)
            saved[k] = one(m)
        return restore(text, saved)
    return [expand_word(a) for a in args]


PLACEHOLDER = re.compile(r"\{(tmp\}|file:|dir:|link:|calib:|results:)")


def protect(text):
    """Placeholders may hold spaces, quotes and braces (JSON): cut them out before the shell
    split, by matching braces, and put them back after."""
    out, saved, i = "", [], 0
    while i < len(text):
        m = PLACEHOLDER.match(text, i)
        if not m:
            out += text[i]
            i += 1
            continue
        depth, j = 0, i
        while j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
            if depth == 0:
                break
        saved.append(text[i:j])
        out += f"\x00{len(saved) - 1}\x00"
        i = j
    return out, saved


def restore(word, saved):
    return re.sub("\x00(\\d+)\x00", lambda m: saved[int(m.group(1))], word)


def parse_table(path):
    cases = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = [p.strip() for p in line.split(" | ", 3)]
            if len(parts) != 4:
                raise SystemExit(f"{path}:{lineno}: expected 'EXIT | PROGRAM | FRAGMENT | ARGS'")
            text, saved = protect(parts[3])
            cases.append({"line": lineno, "rc": int(parts[0]), "program": parts[1], "fragment": parts[2],
                          "args": [restore(w, saved) for w in shlex.split(text)]})
    return cases


def run_case(case, opts, bases):
    tmp = tempfile.mkdtemp(prefix=f"case{case['line']}_", dir=opts.work)
    program = case["program"]
    prefix = []
    if program.startswith("mpi2:"):
        program = program[5:]
        prefix = shlex.split(opts.mpirun) + ["-np", "2"]
    threads = program.startswith("threads2:")
    if threads:
        program = program[9:]
    exe = os.path.abspath(opts.gpucal if program == "gpucal" else os.path.join(opts.bin_dir, program, program))
    stdout_to = [a[8:-1] for a in case["args"] if a.startswith("{stdout:") and a.endswith("}")]
    words = [a for a in case["args"] if not (a.startswith("{stdout:") and a.endswith("}"))]
    args = expand(words, tmp, bases) + (["--threads", "2"] if threads else [])
    cmd = prefix + [exe] + args
    where = f"line {case['line']}: {program} {' '.join(case['args'])}"
    try:
        if stdout_to:
            with open(stdout_to[0], "w") as sink:
                proc = subprocess.run(cmd, stdout=sink, stderr=subprocess.PIPE, text=True, errors="replace",
                                      timeout=TIMEOUT_S, cwd=tmp)
        else:
            proc = subprocess.run(cmd, capture_output=True, text=True, errors="replace", timeout=TIMEOUT_S, cwd=tmp)
    except subprocess.TimeoutExpired:
        return f"HANG ({TIMEOUT_S} s) {where}"
    finally:
        pass
    ours = [l for l in proc.stderr.splitlines() if l.strip()]
    problems = []
    if prefix:
        # mpirun reports a non-zero exit with a note of its own (not ours to avoid); what must
        # not appear is MPI_Abort's banner: every rank leaves through MPI_Finalize.
        if "MPI_ABORT was invoked" in proc.stderr:
            problems.append("MPI_Abort banner (not a clean exit)")
        ours = [l for l in ours if l.startswith(program + ": ")]
    if proc.returncode < 0 or proc.returncode >= 128:
        problems.append(f"crashed (exit {proc.returncode})")
    elif proc.returncode == 0:
        problems.append("silently accepted (exit 0)")
    elif proc.returncode != case["rc"]:
        problems.append(f"exit {proc.returncode}, expected {case['rc']}")
    if any(s in proc.stderr for s in SANITIZER):
        problems.append("sanitizer report")
    if len(ours) != 1:
        problems.append(f"{len(ours)} stderr lines, expected 1")
    elif not ours[0].startswith(program + ": "):
        problems.append(f"stderr line does not start with '{program}: '")
    if case["fragment"] not in proc.stderr:
        problems.append(f"stderr lacks {case['fragment']!r}")
    leaked = [t for t in LIBRARY_TEXT if t in proc.stderr]
    if leaked:
        problems.append(f"a library's text instead of the problem's: {', '.join(leaked)}")
    shutil.rmtree(tmp, ignore_errors=True)
    if problems:
        return f"FAIL {where}: {'; '.join(problems)}\n    stderr: {proc.stderr.strip()[-1500:]!r}"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--table", required=True)
    ap.add_argument("--bin-dir", required=True, help="build folder holding bench_*/bench_*")
    ap.add_argument("--gpucal", required=True)
    ap.add_argument("--synthetic", required=True, help="write_synthetic_results binary")
    ap.add_argument("--mpirun", default="mpirun --oversubscribe")
    ap.add_argument("--only", help="run only the cases of this program (bench_gemm, gpucal, mpi2:..., ...)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", default=None)
    opts = ap.parse_args()
    # Cases run in their own folders (cwd): paths given relative to ctest's folder are made absolute.
    for name in ("table", "bin_dir", "gpucal", "synthetic", "work"):
        if getattr(opts, name):
            setattr(opts, name, os.path.abspath(getattr(opts, name)))
    opts.work = opts.work or tempfile.mkdtemp(prefix="gpucal_bad_inputs_")
    os.makedirs(opts.work, exist_ok=True)
    cases = parse_table(opts.table)
    if opts.only:
        cases = [c for c in cases if c["program"].split(":")[-1] == opts.only]
    bases = Bases(opts.work, opts.synthetic, opts.gpucal)
    with concurrent.futures.ThreadPoolExecutor(max_workers=opts.jobs) as pool:
        results = list(pool.map(lambda c: run_case(c, opts, bases), cases))
    failures = [r for r in results if r]
    for r in failures:
        print(r)
    print(f"{len(cases)} bad inputs: {len(cases) - len(failures)} refused with one line and the expected exit code, "
          f"{len(failures)} not")
    sys.exit(1 if failures or not cases else 0)


if __name__ == "__main__":
    main()
