#!/usr/bin/env python3
"""Device, driver and library facts for .ci/gpu-check, as JSON: nvidia-smi's view of each
GPU, which file of each vendor library our executables load on this machine (ldd with the
environment gpu-check runs them in) and its version asked of that very file at run time
(cudaRuntimeGetVersion, cudaDriverGetVersion, cublasLtGetVersion, cudnnGetVersion,
ncclGetVersion, nvrtcVersion), PyTorch's versions, and the host.

  gpu_facts.py --out facts.json --executable BENCH [--executable ...]
"""
import argparse
import ctypes
import json
import os
import platform
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gpucal_bundle import ldd, wheel_library_dirs  # noqa: E402

NVIDIA_SMI_FIELDS = ["name", "driver_version", "memory.total", "clocks.max.sm", "clocks.max.mem", "power.limit",
                     "pci.bus_id", "compute_cap", "mig.mode.current", "ecc.mode.current", "persistence_mode"]


def nvidia_smi():
    """[{field: value}] per GPU, or {"error": why}."""
    exe = shutil.which("nvidia-smi")
    if not exe:
        return {"error": "nvidia-smi not found"}
    proc = subprocess.run([exe, "--query-gpu=" + ",".join(NVIDIA_SMI_FIELDS), "--format=csv,noheader"],
                          capture_output=True, text=True, timeout=60)
    if proc.returncode != 0:
        return {"error": (proc.stderr or proc.stdout).strip()[:300]}
    return [dict(zip(NVIDIA_SMI_FIELDS, (v.strip() for v in line.split(",")))) for line in proc.stdout.splitlines()
            if line.strip()]


def _int_out(lib, fn, count=1):
    vals = [ctypes.c_int(0) for _ in range(count)]
    rc = getattr(lib, fn)(*[ctypes.byref(v) for v in vals])
    return [v.value for v in vals] if rc == 0 else None


def library_version(name, path):
    """The version the loaded file reports, by the library's own call."""
    lib = ctypes.CDLL(path)
    if name.startswith("libcudart"):
        rt, drv = _int_out(lib, "cudaRuntimeGetVersion"), _int_out(lib, "cudaDriverGetVersion")
        return {"cudaRuntimeGetVersion": rt and rt[0], "cudaDriverGetVersion": drv and drv[0]}
    if name.startswith("libcublasLt"):
        lib.cublasLtGetVersion.restype = ctypes.c_size_t
        return {"cublasLtGetVersion": lib.cublasLtGetVersion()}
    if name.startswith("libcudnn.so"):
        lib.cudnnGetVersion.restype = ctypes.c_size_t
        return {"cudnnGetVersion": lib.cudnnGetVersion()}
    if name.startswith("libnccl"):
        v = _int_out(lib, "ncclGetVersion")
        return {"ncclGetVersion": v and v[0]}
    if name.startswith("libnvrtc.so"):
        v = _int_out(lib, "nvrtcVersion", 2)
        return {"nvrtcVersion": v and f"{v[0]}.{v[1]}"}
    if name.startswith("libcuda.so"):
        v = _int_out(lib, "cuDriverGetVersion")
        return {"cuDriverGetVersion": v and v[0]}
    return {}


def vendor_libraries(executables, env):
    """soname -> {path, version...} of the vendor libraries the executables resolve to."""
    found = {}
    for exe in executables:
        for so, path in ldd(exe, env).items():
            if so in found or not any(so.startswith(p) for p in ("libcu", "libnccl", "libnvrtc", "libnvidia")):
                continue
            entry = {"path": os.path.realpath(path) if path else None}
            if path:
                try:
                    entry.update(library_version(so, path))
                except (OSError, AttributeError) as e:
                    entry["version_error"] = str(e)[:200]
            found[so] = entry
    for extra in ("libnvrtc.so.13", "libcuda.so.1"):  # loaded at run time (cuDNN, the runtime), not NEEDED
        if extra not in found:
            try:
                found[extra] = {"path": "loaded by name", **library_version(extra, extra)}
            except OSError as e:
                found[extra] = {"path": None, "error": str(e)[:200]}
    return found


def torch_side():
    try:
        import torch  # noqa: PLC0415
        from torch_common import torch_facts  # noqa: PLC0415
        return torch_facts(torch)
    except Exception as e:  # noqa: BLE001 (no torch here is a fact, not a failure)
        return {"error": f"{type(e).__name__}: {e}"[:300]}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--executable", action="append", default=[])
    a = ap.parse_args(argv)
    facts = {
        "nvidia_smi": nvidia_smi(),
        "wheel_library_dirs": wheel_library_dirs(),
        "LD_LIBRARY_PATH": os.environ.get("LD_LIBRARY_PATH", ""),
        "vendor_libraries": vendor_libraries(a.executable, dict(os.environ)),
        "pytorch": torch_side(),
        "host": {"kernel": platform.release(), "machine": platform.machine(), "cpus": os.cpu_count(),
                 "python": sys.version.split()[0], "platform": platform.platform()},
    }
    with open(a.out, "w") as f:
        json.dump(facts, f, indent=2, default=str)
    smi = facts["nvidia_smi"]
    gpus = ", ".join(f"{g['name']} (driver {g['driver_version']}, {g['memory.total']})" for g in smi) \
        if isinstance(smi, list) else smi.get("error")
    print(f"GPUs: {gpus}")
    for so, e in facts["vendor_libraries"].items():
        versions = {k: v for k, v in e.items() if k not in ("path",)}
        print(f"  {so}: {e.get('path')} {versions}")
    t = facts["pytorch"]
    print(f"PyTorch: {t.get('torch', t.get('error'))}, CUDA {t.get('cuda')}, cuDNN {t.get('cudnn')}, NCCL {t.get('nccl')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
