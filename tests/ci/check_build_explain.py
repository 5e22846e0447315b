#!/usr/bin/env python3
""".ci/build --main --explain: the main job's line naming the backends it builds and why not the
others, for each case a node can be in. PATH holds only stand-ins for nvcc, nvidia-smi, hipcc and
rocminfo (scripts printing what the real tools print on such a node) and the basic commands, and
CUDA_HOME names a missing folder, so the machine's own toolkits do not count.

usage: check_build_explain.py SOURCE_ROOT
"""
import os
import shutil
import subprocess
import sys
import tempfile

CASES = [
    # ({stand-in tool: what it prints}, the line .ci/build prints)
    ({}, "backends built: host (CUDA off: nvcc not found under {home}/bin or on PATH; "
         "HIP off: hipcc not found on PATH); a GPU node's prerequisites: docs/building.md"),
    ({"nvcc": ""}, "backends built: host (CUDA off: nvcc found, but nvidia-smi -L lists no GPU; "
                   "HIP off: hipcc not found on PATH); a GPU node's prerequisites: docs/building.md"),
    ({"nvcc": "", "nvidia-smi": "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0)"},
     "backends built: host, cuda (HIP off: hipcc not found on PATH)"),
    ({"hipcc": "", "rocminfo": "  Name:                    gfx942"},
     "backends built: host, hip (CUDA off: nvcc not found under {home}/bin or on PATH)"),
    ({"hipcc": "", "rocminfo": "  Name:                    AMD EPYC"},
     "backends built: host (CUDA off: nvcc not found under {home}/bin or on PATH; "
     "HIP off: hipcc found, but rocminfo lists no gfx agent); a GPU node's prerequisites: docs/building.md"),
]


def main():
    root = os.path.abspath(sys.argv[1])
    if not os.path.exists(os.path.join(root, ".ci/build")):
        print("skipped: no .ci/build beside this build (a relocated build)")
        sys.exit(77)
    failures = 0
    for tools, expected in CASES:
        with tempfile.TemporaryDirectory() as tmp:
            bin_dir = os.path.join(tmp, "bin")
            os.makedirs(bin_dir)
            for basic in ("bash", "grep", "sed", "cat", "dirname", "nproc", "env"):
                found = shutil.which(basic)
                if found:
                    os.symlink(found, os.path.join(bin_dir, basic))
            for name, prints in tools.items():
                path = os.path.join(bin_dir, name)
                with open(path, "w") as f:
                    f.write("#!/bin/bash\n" + (f"echo '{prints}'\n" if prints else ""))
                os.chmod(path, 0o755)
            home = os.path.join(tmp, "no-cuda")
            env = {"PATH": bin_dir, "CUDA_HOME": home, "HOME": tmp}
            run = subprocess.run([os.path.join(bin_dir, "bash"), os.path.join(root, ".ci/build"), "--main",
                                  "--explain"], env=env, capture_output=True, text=True, timeout=60)
            lines = [l for l in run.stdout.splitlines() if l.startswith("backends built: ")]
            want = expected.format(home=home)
            if run.returncode != 0 or lines != [want]:
                failures += 1
                print(f"FAIL with {sorted(tools) or 'no GPU tools'}: exit {run.returncode}; got {lines}, "
                      f"expected [{want!r}]\n{run.stderr[-800:]}")
            else:
                print(f"ok   {sorted(tools) or 'no GPU tools'}: {want}")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
