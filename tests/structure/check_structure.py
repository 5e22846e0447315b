#!/usr/bin/env python3
"""The tree's rules, checked from the sources (docs/extending.md, "Layout").

  layers    core/ includes only core/; app/ includes core/ and app/; a bench includes core/ and
            its own folder (bench_step, which runs the other benches' ops, also theirs); inside
            app/ a room (sub-folder, or main.cpp) includes only its own and lower rooms of
            APP_ROOMS; every quoted include is a path from the repository root that exists, or
            a generated file
  citations a file a source comment or script names (a path from the repository root, or an
            .md file) exists in the repository
  sizes     no source file over 500 lines, no function over 80 (Universal Ctags finds their ends)

Usage: check_structure.py ROOT layers|citations|sizes ...   Exit 0 when every rule holds,
1 with one line per breach, 77 (skipped) where ROOT holds no git checkout of the sources (a moved
build) or, for `sizes`, where ctags is missing.
"""
import os
import re
import shutil
import subprocess
import sys

SOURCE_EXT = ('.cpp', '.h', '.cu', '.cuh', '.hip', '.inc', '.cc')
SCRIPT_EXT = ('.py', '.sh')
# Written into the build tree by CMake, so not under the repository root.
GENERATED = {'gpucal/version.h', 'cublaslt_tile_names.inc', 'cublaslt_stages_names.inc',
             'bench_collectives/collective_list.h', 'app/export/chakra_et.pb.h',
             'app/import/xla_perf_table.pb.h'}
# Files a run writes (named in messages and comments), not files of the repository.
OUTPUT_NAMES = {'summary.md', 'ratios.md', 'NOTES.md', 'notes.md', 'report.md', 'fleet.md', 'history.md'}
# The rooms of app/, lowest first: a file includes headers of its own room and of the rooms before
# it, never of one after it (docs/extending.md, "Layout").
APP_ROOMS = ('common', 'fit', 'import', 'compare', 'predict', 'export', 'run', 'report', 'check', 'history',
             'fleet', 'list', 'main.cpp')
MAX_FILE_LINES = 500
MAX_FUNCTION_LINES = 80
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def tracked_files(root):
    out = subprocess.run(['git', '-C', root, 'ls-files', '--cached', '--others', '--exclude-standard'],
                         capture_output=True, text=True, check=True).stdout.split()
    return [f for f in out if os.path.isfile(os.path.join(root, f))]


def layer_of(path):
    top = path.split('/', 1)[0]
    if top in ('core', 'app') or top.startswith('bench_'):
        return top
    return None


def allowed(src_layer, target_layer):
    if src_layer == 'core':
        return target_layer == 'core'
    if src_layer == 'app':
        return target_layer in ('core', 'app')
    if src_layer == 'bench_step':
        return target_layer == 'core' or target_layer.startswith('bench_')
    return target_layer in ('core', src_layer)


def app_room(path):
    """The room of an app/ path ('main.cpp' for app/main.cpp), None outside app/."""
    parts = path.split('/')
    return parts[1] if parts[0] == 'app' and len(parts) > 1 else None


def app_room_breach(f, inc):
    """Why `f` may not include `inc` under APP_ROOMS, or None."""
    src, dst = app_room(f), app_room(inc)
    if src is None or dst is None or src == dst:
        return None
    for room in (src, dst):
        if room not in APP_ROOMS:
            return f'app/{room} is not a room of APP_ROOMS (tests/structure/check_structure.py): place it there'
    if APP_ROOMS.index(dst) > APP_ROOMS.index(src):
        return f'app/{src} may not include {inc} (app/{dst} is above it: {" < ".join(APP_ROOMS)})'
    return None


def check_layers(root, files):
    fileset = set(files)
    errors = []
    for f in files:
        if not f.endswith(SOURCE_EXT):
            continue
        text = open(os.path.join(root, f), encoding='utf-8', errors='replace').read()
        for lineno, line in enumerate(text.splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            inc = m.group(1)
            if why := app_room_breach(f, inc):
                errors.append(f'{f}:{lineno}: {why}')
            if inc in GENERATED:
                continue
            if inc not in fileset:
                errors.append(f'{f}:{lineno}: include "{inc}" is not a path from the repository root')
                continue
            src, dst = layer_of(f), layer_of(inc)
            if src and dst and not allowed(src, dst):
                errors.append(f'{f}:{lineno}: {src}/ may not include {inc} ({dst}/ is not below it)')
            elif src is None and f.startswith(('core/', 'app/')):
                pass
    return errors


CITED_PATH = re.compile(r'(?<![\w./-])((?:core|app|bench_\w+|tests|docs|plots|cmake|\.ci)/[\w./-]*\w)')
CITED_MD = re.compile(r'(?<![\w/.-])([\w-]{2,}\.md)\b')


def check_citations(root, files):
    fileset = set(files)
    dirs = {os.path.dirname(f) for f in files}
    dirs |= {d.rsplit('/', i)[0] for d in list(dirs) for i in range(1, d.count('/') + 1)}
    basenames = {os.path.basename(f) for f in files}
    errors = []
    for f in files:
        if not f.endswith(SOURCE_EXT + SCRIPT_EXT) and not os.path.basename(f) == 'CMakeLists.txt':
            continue
        if f.startswith('tests/fixtures/'):
            continue
        for lineno, line in enumerate(open(os.path.join(root, f), encoding='utf-8', errors='replace'), 1):
            if INCLUDE.match(line):
                continue
            for m in CITED_PATH.finditer(line):
                p = m.group(1).rstrip('.')
                if '*' in p or '<' in p or '$' in p or '{' in p:
                    continue
                stem = p.rstrip('/')
                if stem in fileset or stem in dirs or stem in GENERATED:
                    continue
                # "core/backend/cudnn_graph.*", "bench_gemm/gemm_op.{h,cpp}" and the like
                if any(x.startswith(stem) for x in fileset):
                    continue
                # an executable of the build tree: bench_memory/bench_memory, app/gpucal
                if os.path.basename(stem) in (stem.split('/')[0], 'gpucal'):
                    continue
                errors.append(f'{f}:{lineno}: names {p}, which is not in the repository')
            for m in CITED_MD.finditer(line):
                name = m.group(1)
                if name in basenames or name in OUTPUT_NAMES:
                    continue
                errors.append(f'{f}:{lineno}: cites {name}, which is not in the repository')
    return errors


def function_lengths(root, files):
    tags = subprocess.run(['ctags', '--c++-kinds=f', '--fields=+ne', '--language-force=C++', '-o', '-', *files],
                          cwd=root, capture_output=True, text=True, check=True).stdout
    for line in tags.splitlines():
        parts = line.split('\t')
        fields = dict(p.split(':', 1) for p in parts[3:] if ':' in p)
        if 'line' in fields and 'end' in fields:
            yield parts[1], parts[0], int(fields['line']), int(fields['end']) - int(fields['line']) + 1


def check_sizes(root, files):
    if shutil.which('ctags') is None:
        print('skipped: Universal Ctags (package universal-ctags) is not installed')
        sys.exit(77)
    code = [f for f in files if f.endswith(SOURCE_EXT + SCRIPT_EXT) and not f.startswith('tests/fixtures/')]
    errors = []
    for f in code:
        n = sum(1 for _ in open(os.path.join(root, f), encoding='utf-8', errors='replace'))
        if n > MAX_FILE_LINES:
            errors.append(f'{f}: {n} lines (at most {MAX_FILE_LINES})')
    cxx = [f for f in code if f.endswith(SOURCE_EXT)]
    listed = set()
    exceptions_file = os.path.join(root, 'tests/structure/size_exceptions.txt')
    if os.path.exists(exceptions_file):
        listed = {l.strip() for l in open(exceptions_file) if l.strip() and not l.startswith('#')}
    long_ones = set()
    for f, name, start, n in function_lengths(root, cxx):
        if n > MAX_FUNCTION_LINES:
            long_ones.add(f'{f}:{name}')
            if f'{f}:{name}' not in listed:
                errors.append(f'{f}:{start}: function {name} is {n} lines (at most {MAX_FUNCTION_LINES})')
    for entry in sorted(listed - long_ones):
        errors.append(f'tests/structure/size_exceptions.txt: {entry} is within the limit now: remove its line')
    return errors


def main():
    if len(sys.argv) < 3:
        print(__doc__)
        return 2
    root = sys.argv[1]
    if not os.path.isdir(os.path.join(root, 'core')) or not os.path.exists(os.path.join(root, '.git')):
        print(f'skipped: {root} holds no git checkout of the sources')
        return 77
    files = tracked_files(root)
    checks = {'layers': check_layers, 'citations': check_citations, 'sizes': check_sizes}
    errors = []
    for name in sys.argv[2:]:
        if name not in checks:
            print(f'check_structure: unknown check {name!r} ({", ".join(checks)})')
            return 2
        errors += checks[name](root, files)
    for e in errors:
        print(e)
    print(f'{len(errors)} breach(es) of: {" ".join(sys.argv[2:])}')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
