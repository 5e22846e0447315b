#!/usr/bin/env python3
"""gpu-bundle: carry a gpucal build to a GPU machine that has the NVIDIA driver, CUDA 13,
PyTorch and its nvidia-* wheels, CMake, and none of our Debian libraries.

  gpucal_bundle.py [--build-dir DIR] [--jobs N] [--out FILE]      configure + build (CUDA on,
                   HIP off, MPI off, sm_90 unless --cuda-archs), bundle, then --check the bundle
  gpucal_bundle.py --from BUILD --out FILE [--compress none|gz|xz] [--check]
                                                                  bundle an existing build
  gpucal_bundle.py --check FILE [--unpack-to DIR] [--tests REGEX] unpack elsewhere and test it
  gpucal_bundle.py --wheel-lib-path                               PyTorch's nvidia lib folders

The bundle (one tar) holds gpucal/build: every executable of the build tree at its place,
every ctest file (relocatable: tests name paths relative to themselves), the copied test
scripts, and gpucal/build/lib with every shared library the executables need that is
neither a system library (glibc, libgcc_s, libstdc++) nor a vendor library the GPU
machine provides (CUDA runtime, cuBLAS(Lt), cuDNN, NCCL, NVRTC, the driver; ROCm's on AMD).
Each copied library's RUNPATH is set to $ORIGIN (patchelf), so bundled libraries find each
other (glibc applies an executable's RUNPATH to its direct dependencies only); executables'
RUNPATH becomes $ORIGIN/../lib:$ORIGIN/../../lib alone. --check clears LD_LIBRARY_PATH,
requires every non-vendor dependency of every bundled file to resolve inside the bundle
(vendor ones may be missing), scans the ctest files for absolute paths of the original
build, then runs a subset of host tests from the unpacked copy (CHECK_TESTS: unit tests,
one end-to-end run per bench, the gpucal CLI) with only vendor library folders on
LD_LIBRARY_PATH (PyTorch's wheels where present, else the build machine's).
"""
import argparse
import glob
import importlib.util
import json
import os
import re
import shutil
import struct
import subprocess
import sys
import tarfile
import tempfile
import time

SYSTEM = re.compile(r"^(linux-vdso|linux-gate|ld-linux[^/]*|libc|libm|libdl|libpthread|librt|libresolv|libutil|"
                    r"libgcc_s|libstdc\+\+)\.so")
VENDOR = re.compile(r"^lib(cuda|cudart|cublas|cublasLt|cudnn[a-z_]*|nccl|nvrtc[a-z-]*|nvidia-[a-z-]+|nvJitLink|"
                    r"amdhip64|hsa-runtime64|hipblaslt|rccl|rocm_smi64)\.so")
DEFAULT_DIRS = {"/lib", "/usr/lib", "/lib64", "/usr/lib64", "/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu"}
# Host tests run from the unpacked copy by --check: unit tests of every folder and one end
# to end run per bench (no MPI: Open MPI's plugins are found by absolute paths).
CHECK_TESTS = (r"^(GpuInit\.|Llc\.|Telemetry\.|CsvJson\.LoadedLibraries|gemm_host_done_when$|attention_host_done_when$|"
               r"p2p_host_copy$|collectives_single_process$|gemm_set_llm_list$|calibration\.GpucalCli\.CompareOfAScaledRun|"
               r"cmake_find_wheel_libraries$|gpu_check_host_ratios$|gpu_check_host_targets$|gpu_check_host_runner$)")
BUNDLE_ROOT = "gpucal"


def log(msg):
    print(f"gpu-bundle: {msg}", flush=True)


def die(msg, code=1):
    print(f"gpu-bundle: {msg}", file=sys.stderr, flush=True)
    sys.exit(code)


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, **kw)


def is_elf(path):
    try:
        with open(path, "rb") as f:
            return f.read(4) == b"\x7fELF"
    except OSError:
        return False


def needed(path):
    """DT_NEEDED sonames of a 64-bit little-endian ELF file, read from its dynamic segment
    (no binutils needed: the GPU machine may lack readelf)."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"\x7fELF" or data[4] != 2 or data[5] != 1:
        return []
    phoff, = struct.unpack_from("<Q", data, 0x20)
    phentsize, phnum = struct.unpack_from("<HH", data, 0x36)
    loads, dynamic = [], None
    for i in range(phnum):
        p_type, _, p_offset, p_vaddr, _, p_filesz, _, _ = struct.unpack_from("<IIQQQQQQ", data, phoff + i * phentsize)
        if p_type == 1:  # PT_LOAD
            loads.append((p_vaddr, p_offset, p_filesz))
        elif p_type == 2:  # PT_DYNAMIC
            dynamic = (p_offset, p_filesz)
    if not dynamic:
        return []
    entries, strtab = [], None
    for off in range(dynamic[0], dynamic[0] + dynamic[1], 16):
        tag, val = struct.unpack_from("<qQ", data, off)
        if tag == 0:  # DT_NULL
            break
        if tag == 1:  # DT_NEEDED
            entries.append(val)
        elif tag == 5:  # DT_STRTAB (a virtual address)
            strtab = next((val - v + o for v, o, n in loads if v <= val < v + n), None)
    if strtab is None:
        return []
    return [data[strtab + e:data.index(b"\0", strtab + e)].decode() for e in entries]


def ldd(path, env=None, version_errors=None):
    """soname -> resolved path (None when not found), as the loader resolves path's closure.
    Symbol-version failures ("version `GLIBCXX_3.4.30' not found") are appended to
    version_errors when given."""
    proc = subprocess.run(["ldd", path], capture_output=True, text=True, env=env)
    found = {}
    for line in (proc.stdout + proc.stderr).splitlines():
        m = re.match(r"\s*(\S+)\s+=>\s+(not found|\S+)", line)
        if m:
            found[m.group(1)] = None if m.group(2) == "not found" else m.group(2)
        elif version_errors is not None and re.search(r"version `[^']+' not found", line):
            version_errors.append(line.strip())
    return found


def symbol_versions(paths):
    """The newest GLIBC_ and GLIBCXX_ symbol versions the files need (objdump -T)."""
    newest = {}
    for path in paths:
        out = subprocess.run(["objdump", "-T", path], capture_output=True, text=True).stdout
        for name, version in re.findall(r"\b(GLIBC|GLIBCXX)_([0-9.]+)\b", out):
            key = tuple(int(x) for x in version.split("."))
            if key > newest.get(name, (0,)):
                newest[name] = key
    return {k: ".".join(map(str, v)) for k, v in newest.items()}


def wheel_library_dirs():
    """lib folders of PyTorch's nvidia-* wheels (site-packages/nvidia/*/lib), asked of the
    running Python; empty where there are none."""
    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        spec = None
    roots = list(spec.submodule_search_locations) if spec and spec.submodule_search_locations else []
    dirs = []
    for root in roots:  # nvidia/<package>/lib (cu12 wheels), nvidia/cu13/lib (CUDA 13 wheels), ...
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames[:] = sorted(d for d in dirnames if dirpath.count(os.sep) - root.count(os.sep) < 2)
            if any(f.startswith("lib") and ".so" in f for f in filenames) and dirpath not in dirs:
                dirs.append(dirpath)
    return dirs


def executables(build):
    """ELF executables of the build tree (not under CMakeFiles), relative paths."""
    out = []
    for dirpath, dirnames, filenames in os.walk(build):
        dirnames[:] = [d for d in dirnames if d not in ("CMakeFiles", "Testing", "lib", "out") and not d.startswith(".")]
        for name in filenames:
            p = os.path.join(dirpath, name)
            if os.access(p, os.X_OK) and not os.path.islink(p) and is_elf(p) and not name.endswith((".so", ".o")):
                out.append(os.path.relpath(p, build))
    return sorted(out)


def test_files(build):
    """Everything ctest reads, the copied test scripts (build/test_scripts.txt, written by
    cmake/GpucalTesting.cmake), and the (empty) output folders."""
    files, dirs = [], []
    listed = os.path.join(build, "test_scripts.txt")
    if os.path.exists(listed):
        files = [l.strip() for l in open(listed) if l.strip() and os.path.exists(os.path.join(build, l.strip()))]
        files.append("test_scripts.txt")
    for dirpath, dirnames, filenames in os.walk(build):
        dirnames[:] = [d for d in dirnames if d not in ("CMakeFiles", "Testing", "lib") and not d.startswith(".")]
        rel = os.path.relpath(dirpath, build)
        parts = rel.split(os.sep)
        if "out" in parts or "plot_test" in parts:
            continue
        for d in dirnames:
            if d in ("out",):
                dirs.append(os.path.normpath(os.path.join(rel, d)))
        for name in filenames:
            if name == "CTestTestfile.cmake" or name.endswith(("_gtests.cmake", "_gtests_include.cmake")):
                files.append(os.path.normpath(os.path.join(rel, name)))
    return sorted(set(files)), sorted(dirs)


def collect_libraries(build, exes):
    """Non-system, non-vendor libraries the executables need (transitively through
    non-vendor libraries), soname -> path; plus the folders vendor libraries came from."""
    wanted, vendor_dirs, queue, seen = {}, set(), [os.path.join(build, e) for e in exes], set()
    while queue:
        obj = queue.pop()
        if obj in seen:
            continue
        seen.add(obj)
        resolved = ldd(obj)
        for so in needed(obj):
            path = resolved.get(so)
            if SYSTEM.match(so):
                continue
            if VENDOR.match(so):
                if path and os.path.dirname(os.path.realpath(path)) not in DEFAULT_DIRS:
                    vendor_dirs.add(os.path.dirname(path))
                continue
            if not path:
                die(f"{obj} needs {so}, which is not found here")
            if so not in wanted:
                wanted[so] = os.path.realpath(path)
                queue.append(wanted[so])
    return wanted, sorted(vendor_dirs)


def git_commit(source):
    try:
        return subprocess.run(["git", "-C", source, "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def cache_value(build, key):
    try:
        for line in open(os.path.join(build, "CMakeCache.txt")):
            if line.startswith(key + ":"):
                return line.split("=", 1)[1].strip()
    except OSError:
        pass
    return ""


def make_bundle(build, out, compress):
    build = os.path.abspath(build)
    if not shutil.which("patchelf"):
        die("patchelf is needed (Debian package patchelf; .ci/install-deps installs it)")
    exes = executables(build)
    if not exes:
        die(f"no executables under {build}: build it first")
    files, out_dirs = test_files(build)
    libs, vendor_dirs = collect_libraries(build, exes)
    stage = tempfile.mkdtemp(prefix="gpucal-bundle-")
    try:
        root = os.path.join(stage, BUNDLE_ROOT, "build")
        for rel in exes + files:
            dst = os.path.join(root, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copy2(os.path.join(build, rel), dst)
        for rel in out_dirs:
            os.makedirs(os.path.join(root, rel), exist_ok=True)
        os.makedirs(os.path.join(root, "lib"), exist_ok=True)
        for so, path in sorted(libs.items()):
            dst = os.path.join(root, "lib", so)
            shutil.copy2(path, dst)
            os.chmod(dst, 0o755)
            run(["strip", "--strip-unneeded", dst], capture_output=True)
            run(["patchelf", "--set-rpath", "$ORIGIN", dst])
        for rel in exes:
            dst = os.path.join(root, rel)
            run(["strip", "--strip-unneeded", dst], capture_output=True)
            # build/lib from the executable's own folder, however deep (the fuzz targets are three down).
            run(["patchelf", "--set-rpath", "$ORIGIN/" + "../" * rel.count(os.sep) + "lib", dst])
        source = cache_value(build, "CMAKE_HOME_DIRECTORY") or cache_value(build, "gpucal_SOURCE_DIR")
        manifest = {
            "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            "git_commit": git_commit(source) if source else "unknown",
            "original_build_dir": build,
            "original_source_dir": source,
            "cuda_architectures": cache_value(build, "CMAKE_CUDA_ARCHITECTURES"),
            "backends": {k: cache_value(build, k) for k in ("GPUCAL_CUDA", "GPUCAL_HIP", "GPUCAL_MPI")},
            "executables": exes,
            "bundled_libraries": sorted(libs),
            "vendor_libraries": sorted({so for e in exes for so in needed(os.path.join(build, e)) if VENDOR.match(so)}),
            "build_machine_vendor_dirs": vendor_dirs,
            # The target's glibc and libstdc++ must be at least these (neither is bundled).
            "needs": symbol_versions([os.path.join(root, e) for e in exes] + list(libs.values())),
        }
        with open(os.path.join(stage, BUNDLE_ROOT, "MANIFEST.json"), "w") as f:
            json.dump(manifest, f, indent=2)
        os.makedirs(os.path.dirname(os.path.abspath(out)) or ".", exist_ok=True)
        mode = {"none": "w", "gz": "w:gz", "xz": "w:xz"}[compress]
        tmp = out + ".tmp"
        kwargs = {"preset": 6} if compress == "xz" else {}
        with tarfile.open(tmp, mode, **kwargs) as tar:
            tar.add(os.path.join(stage, BUNDLE_ROOT), arcname=BUNDLE_ROOT)
        os.replace(tmp, out)
    finally:
        shutil.rmtree(stage, ignore_errors=True)
    size = os.path.getsize(out)
    log(f"{os.path.normpath(out)}: {size / 2**20:.1f} MiB ({compress}), {len(exes)} executables, {len(files)} test files, "
        f"{len(libs)} bundled libraries: {', '.join(sorted(libs))}")
    log(f"vendor libraries left to the GPU machine: {', '.join(manifest['vendor_libraries']) or 'none'}; "
        f"it needs glibc >= {manifest['needs'].get('GLIBC', '?')}, libstdc++ >= GLIBCXX_{manifest['needs'].get('GLIBCXX', '?')}")
    return size


def unpack(bundle, dest):
    os.makedirs(dest, exist_ok=True)
    with tarfile.open(bundle) as tar:
        tar.extractall(dest)
    root = os.path.join(dest, BUNDLE_ROOT)
    with open(os.path.join(root, "MANIFEST.json")) as f:
        return root, json.load(f)


def check_libraries(build, executables, env, bundle_root=None):
    """Problems: a dependency of an executable (or of a library in build/lib) that is not
    found, or, for a bundle (bundle_root given), a non-vendor one that resolves outside it
    (system libraries may resolve anywhere). Returns (problems, missing vendor sonames)."""
    problems, missing_vendor = [], set()
    objects = [os.path.join(build, e) for e in executables] + sorted(glob.glob(os.path.join(build, "lib", "*.so*")))
    inside = os.path.realpath(bundle_root) + os.sep if bundle_root else None
    for obj in objects:
        version_errors = []
        resolved = ldd(obj, env, version_errors)
        problems += [f"{os.path.relpath(obj, build)}: {e}" for e in version_errors]
        for so in needed(obj):
            path = resolved.get(so)
            if VENDOR.match(so):
                if not path:
                    missing_vendor.add(so)
                continue
            if SYSTEM.match(so) and so not in resolved:
                continue  # the dynamic loader itself: ldd prints it without "=>"
            if not path:
                problems.append(f"{os.path.relpath(obj, build)}: {so} not found")
            elif inside and not SYSTEM.match(so) and not os.path.realpath(path).startswith(inside):
                problems.append(f"{os.path.relpath(obj, build)}: {so} resolves outside the bundle ({path})")
    return problems, sorted(missing_vendor)


def absolute_paths_left(root, manifest):
    """Lines of the ctest files that still name the original build or source folder
    (comments and CTest's own _BACKTRACE_TRIPLES excepted)."""
    bad = []
    needles = [p for p in (manifest.get("original_build_dir"), manifest.get("original_source_dir")) if p]
    for dirpath, _, filenames in os.walk(os.path.join(root, "build")):
        for name in filenames:
            if not name.endswith(".cmake"):
                continue
            path = os.path.join(dirpath, name)
            for n, line in enumerate(open(path, errors="replace"), 1):
                if line.startswith("#"):
                    continue
                line = re.sub(r'_BACKTRACE_TRIPLES "[^"]*"', "", line)
                if any(needle in line for needle in needles):
                    bad.append(f"{os.path.relpath(path, root)}:{n}: {line.strip()[:160]}")
    return bad


def vendor_env(manifest):
    """The environment tests run in: LD_LIBRARY_PATH = vendor library folders only."""
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    dirs = wheel_library_dirs() or [d for d in manifest.get("build_machine_vendor_dirs", []) if os.path.isdir(d)]
    if dirs:
        env["LD_LIBRARY_PATH"] = os.pathsep.join(dirs)
    return env, dirs


def check_bundle(bundle, dest, tests_regex, keep):
    own = dest is None
    dest = dest or tempfile.mkdtemp(prefix="gpucal-unpacked-")
    try:
        root, manifest = unpack(bundle, dest)
        log(f"unpacked {bundle} into {root}")
        clean = dict(os.environ)
        clean.pop("LD_LIBRARY_PATH", None)
        build = os.path.join(root, "build")
        problems, missing = check_libraries(build, manifest["executables"], clean, root)
        log(f"ldd, LD_LIBRARY_PATH cleared: {len(problems)} problem(s); vendor libraries left to the machine: "
            f"{', '.join(missing) or 'none'}")
        absolute = absolute_paths_left(root, manifest)
        env, dirs = vendor_env(manifest)
        log(f"vendor folders for the tests: {', '.join(dirs) or 'none'}")
        for p in problems + absolute:
            print("  " + p)
        if problems:
            die("the bundle does not resolve its own libraries")
        if absolute:
            die("ctest files name the original build or source folder: the tests are not relocatable")
        if tests_regex:
            ctest = shutil.which("ctest") or die("ctest not found on PATH")
            cmd = [ctest, "--test-dir", os.path.join(root, "build"), "-R", tests_regex, "--output-on-failure",
                   "-j", str(min(4, os.cpu_count() or 1))]
            log("running host tests from the unpacked copy: " + " ".join(cmd[1:]))
            proc = subprocess.run(cmd, env=env, capture_output=True, text=True)
            sys.stdout.write(proc.stdout[-6000:])
            summary = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", proc.stdout)
            if proc.returncode != 0 or not summary or int(summary.group(3)) == 0:
                die("host tests failed (or none ran) from the unpacked copy")
            log(f"{summary.group(3)} host tests passed from {root}")
        return 0
    finally:
        if own and not keep:
            shutil.rmtree(dest, ignore_errors=True)


def configure_and_build(source, build, jobs, archs):
    env = dict(os.environ)
    if os.path.isdir("/usr/local/cuda/bin"):
        env["PATH"] = "/usr/local/cuda/bin:" + env.get("PATH", "")
    launcher = []
    if shutil.which("ccache"):
        launcher = [f"-DCMAKE_{lang}_COMPILER_LAUNCHER=ccache" for lang in ("C", "CXX", "CUDA")]
        env.setdefault("CCACHE_BASEDIR", os.path.dirname(os.path.abspath(source)))
    generator = ["-G", "Ninja"] if shutil.which("ninja") else []
    run(["cmake", "-S", source, "-B", build, *generator, "-DCMAKE_BUILD_TYPE=Release", "-DGPUCAL_CUDA=ON",
         "-DGPUCAL_HIP=OFF", "-DGPUCAL_MPI=OFF", f"-DCMAKE_CUDA_ARCHITECTURES={archs}",
         # unity batches as in .ci/build (docs/building.md): about half the build time
         "-DCMAKE_UNITY_BUILD=ON", "-DCMAKE_UNITY_BUILD_BATCH_SIZE=16", *launcher], env=env)
    run(["cmake", "--build", build, "-j", str(jobs)], env=env)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build-dir", default="build-gpu", help="where the CUDA-only build goes (default build-gpu)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--cuda-archs", default="90",
                    help="CMAKE_CUDA_ARCHITECTURES of the build (default 90: H100 and H200; '80;90' adds A100)")
    ap.add_argument("--from", dest="from_build", help="bundle this existing build instead of building")
    ap.add_argument("--out", default=".gpu/gpucal-gpu.tar.xz", help="the bundle (default .gpu/gpucal-gpu.tar.xz)")
    ap.add_argument("--compress", choices=["none", "gz", "xz"], help="default: from --out's suffix")
    ap.add_argument("--check", nargs="?", const="", metavar="BUNDLE",
                    help="unpack BUNDLE (or the one just made) elsewhere and test it")
    ap.add_argument("--no-check", action="store_true", help="build and bundle only")
    ap.add_argument("--unpack-to", help="for --check: unpack here and keep it")
    ap.add_argument("--tests", default=CHECK_TESTS, help="ctest -R regex run from the unpacked copy ('' for none)")
    ap.add_argument("--wheel-lib-path", action="store_true", help="print PyTorch's nvidia lib folders, ':'-joined")
    a = ap.parse_args(argv)
    if a.wheel_lib_path:
        print(os.pathsep.join(wheel_library_dirs()))
        return 0
    if a.check:  # check an existing bundle only
        return check_bundle(a.check, a.unpack_to, a.tests, a.unpack_to is not None)
    compress = a.compress or ("xz" if a.out.endswith(".xz") else "gz" if a.out.endswith(".gz") else "none")
    build = a.from_build
    if not build:
        source = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
        build = a.build_dir
        configure_and_build(source, build, a.jobs, a.cuda_archs)
    elif not os.path.isfile(os.path.join(build, "CMakeCache.txt")):
        die(f"--from {build}: not a CMake build folder", 2)
    make_bundle(build, a.out, compress)
    if a.no_check or (a.from_build and a.check is None):
        return 0
    return check_bundle(a.out, a.unpack_to, a.tests, a.unpack_to is not None)


if __name__ == "__main__":
    sys.exit(main())
