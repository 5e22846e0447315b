#!/usr/bin/env python3
"""Every command the README and docs/ show is run, in order, in a scratch copy of the tree, and
what it prints is compared with the page.

A shell block (```sh, ```bash, ```shell, ```console or unlabelled) runs as one `bash -e` script
in the page's scratch copy (the tree's files, with `build` the build folder and the build's
programs on PATH, so `gpucal` and `build/app/gpucal` both work); the blocks of a page run in
order, so a block may use what an earlier one wrote. A ```console block is a transcript: each
`$ command` line runs and the lines up to the next `$ ` are what it must print, compared line by
line; a `...` line stands for any number of lines the page leaves out. A transcript whose first
line is `# figures vary by machine` is compared for its shape: every number matches any number.

A command line that ends in `# exits N` (or `# exits N or M`) must exit so; any other must exit
0. A page whose blocks use `results/smoke` without making it starts from the main job's folder:
`gpucal run --suite smoke --backend host`, as `bash .ci/smoke` runs it, made once and copied into
each such page's scratch copy.

A block is not run here when its first line (after a `#!` line) says so and why:
  `# GPU only`           needs a GPU;
  `# Slurm only`         needs a Slurm allocation (sbatch, srun);
  `# set-up`             the set-up commands themselves (CI runs .ci/run on a clean clone);
  `# needs `TOOL         a tool the tree does not hold (OSU, ASTRA-sim), named on that line.
Every other block runs; a block that fails, or a transcript that differs, is one problem naming
the page, the line and the first difference. A shell block that fails is run once more before it
counts: its benches measure on a shared machine, where a timing the machine spoiled is flagged
suspect and left out (then the page's predict refuses); a block that fails twice is a problem, one
that passes the second time is printed as a note with its first failure.

usage: run_doc_commands.py [--root SOURCE_DIR] [--build BUILD_DIR] [--page PAGE ...]
Exit 0 when every block ran as shown, 1 with one line per problem."""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_docs import SHELL_INFOS, code_blocks  # noqa: E402

NOT_HERE = ('# GPU only', '# Slurm only', '# set-up', '# needs ')
EXITS = re.compile(r'\s#\s*exits\s+(\d+)(?:\s+or\s+(\d+))?\s*$')
SHAPE = '# figures vary by machine'
BLOCK_TIMEOUT_S = 600
NUMBER = re.compile(r'[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?')


def pages(root, chosen):
    if chosen:
        return [os.path.join(root, p) for p in chosen]
    return [os.path.join(root, 'README.md')] + sorted(glob.glob(os.path.join(root, 'docs', '*.md')))


def scratch_copy(root, build):
    """A copy of the tree's files (tracked, and new ones git does not ignore), `build` linked."""
    dest = tempfile.mkdtemp(prefix='gpucal_docs_')
    files = subprocess.run(['git', '-C', root, 'ls-files', '-z', '-co', '--exclude-standard'], check=True,
                           capture_output=True).stdout.decode().split('\0')
    for f in filter(None, files):
        src = os.path.join(root, f)
        if not os.path.isfile(src):
            continue
        os.makedirs(os.path.join(dest, os.path.dirname(f)), exist_ok=True)
        shutil.copy2(src, os.path.join(dest, f), follow_symlinks=False)
    link = os.path.join(dest, 'build')
    if os.path.lexists(link):
        shutil.rmtree(link) if os.path.isdir(link) and not os.path.islink(link) else os.remove(link)
    os.symlink(os.path.abspath(build), link)
    return dest


def environment(build):
    env = dict(os.environ)
    dirs = [os.path.join(os.path.abspath(build), 'app')] + sorted(
        d for d in glob.glob(os.path.join(os.path.abspath(build), 'bench_*')) if os.path.isdir(d))
    env['PATH'] = os.pathsep.join(dirs + [env.get('PATH', '')])
    # Open MPI refuses root without these (CI runs as root); --oversubscribe is the page's own.
    env.update(OMPI_ALLOW_RUN_AS_ROOT='1', OMPI_ALLOW_RUN_AS_ROOT_CONFIRM='1')
    return env


def with_exit_codes(script):
    """The block as a script in which a line ending `# exits N [or M]` must exit so."""
    out = []
    for line in script.split('\n'):
        m = EXITS.search(line)
        if m:
            codes = ' '.join(filter(None, m.groups()))
            line = (f'set +e; ( {line[:m.start()]} ); rc=$?; set -e; '
                    f'case " {codes} " in *" $rc "*) ;; *) echo "exit $rc, the page says {codes}" >&2; exit 1;; esac')
        out.append(line)
    return '\n'.join(out)


def marker(body):
    """The block's first line, or its second after a #! line."""
    lines = [x.strip() for x in body if x.strip()]
    if lines and lines[0].startswith('#!') and len(lines) > 1:
        return lines[1]
    return lines[0] if lines else ''


def transcript(lines):
    """[(command, expected lines)] of a console block."""
    steps = []
    for line in lines:
        if line.startswith('$ '):
            steps.append((line[2:], []))
        elif steps:
            steps[-1][1].append(line)
    return steps


def shape(line, figures_vary):
    return NUMBER.sub('N', line.rstrip()) if figures_vary else line.rstrip()


def matches(have, want, figures_vary):
    """'' when `have` (printed lines) is what `want` shows ('...' for any lines), else the first
    difference."""
    have = [shape(x, figures_vary) for x in have]
    want = [shape(x, figures_vary) for x in want]
    while have and not have[-1]:
        have.pop()
    while want and not want[-1]:
        want.pop()

    def walk(i, j):
        if j == len(want):
            return i == len(have)
        if want[j] == '...':
            return any(walk(k, j + 1) for k in range(i, len(have) + 1))
        return i < len(have) and have[i] == want[j] and walk(i + 1, j + 1)

    if walk(0, 0):
        return ''
    for k, line in enumerate(want):
        if line == '...':
            break
        if k >= len(have) or have[k] != line:
            got = have[k] if k < len(have) else '(nothing)'
            return f'line {k + 1} reads {line!r}, the command prints {got!r}'
    return f'the page shows {len(want)} line(s), the command prints {len(have)}'


def run_script(script, cwd, env):
    try:
        r = subprocess.run(['bash', '-e', '-o', 'pipefail', '-c', with_exit_codes(script)], cwd=cwd, env=env, capture_output=True,
                           text=True, timeout=BLOCK_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        return None, f'did not finish in {BLOCK_TIMEOUT_S} s'
    if r.returncode != 0:
        last = (r.stderr.strip() or r.stdout.strip()).split('\n')[-1]
        return None, f'exit {r.returncode}: {last}'
    return r.stdout.split('\n'), ''


def main_job_results(build, env, cache):
    """The main job's results/smoke, made once (`gpucal run --suite smoke`) and shared by the pages
    that start from it: (its folder, '') or (None, why it could not be made)."""
    if 'smoke' not in cache:
        folder = os.path.join(tempfile.mkdtemp(prefix='gpucal_docs_smoke_'), 'smoke')
        _, why = run_script(f'gpucal run --suite smoke --backend host --out {folder} >/dev/null', os.path.dirname(folder),
                            env)
        cache['smoke'] = (None if why else folder, why)
    return cache['smoke']


def run_page(page, root, build, env, counts, cache):
    problems = []
    rel = os.path.relpath(page, root)
    scratch = scratch_copy(root, build)
    text = open(page, encoding='utf-8').read()
    runnable = '\n'.join('\n'.join(body) for _, info, body in code_blocks(text)
                         if info in SHELL_INFOS and not marker(body).startswith(NOT_HERE))
    try:
        if re.search(r'results/smoke\b', runnable) and not re.search(r'--out results/smoke\s', runnable):
            folder, why = main_job_results(build, env, cache)
            if why:
                return [f'{rel}: the main job\'s results/smoke: {why}']
            shutil.copytree(folder, os.path.join(scratch, 'results', 'smoke'))
        for start, info, body in code_blocks(text):
            if info not in SHELL_INFOS or not any(line.strip() for line in body):
                continue
            first = marker(body)
            if first.startswith(NOT_HERE):
                counts['elsewhere'] += 1
                continue
            counts['run'] += 1
            if info != 'console':
                _, why = run_script('\n'.join(body), scratch, env)
                if why:
                    _, again = run_script('\n'.join(body), scratch, env)
                    if again:
                        problems.append(f'{rel}:{start}: {again}')
                    else:
                        print(f'note: {rel}:{start}: passed when run again (first run: {why})')
                continue
            figures_vary = first == SHAPE
            for command, want in transcript(body):
                counts['commands'] += 1
                have, why = run_script(command, scratch, env)
                if why:
                    problems.append(f'{rel}:{start}: `{command}`: {why}')
                    break
                diff = matches(have, want, figures_vary)
                if diff:
                    problems.append(f'{rel}:{start}: `{command}`: {diff}')
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return problems


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap.add_argument('--root', default=here)
    ap.add_argument('--build', default=None)
    ap.add_argument('--page', nargs='*', default=[])
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    build = os.path.abspath(a.build or os.path.join(root, 'build'))
    if not os.access(os.path.join(build, 'app', 'gpucal'), os.X_OK):
        print(f'{build}/app/gpucal is not built')
        return 77
    env = environment(build)
    counts = {'run': 0, 'elsewhere': 0, 'commands': 0}
    problems = []
    cache = {}
    for page in pages(root, a.page):
        problems += run_page(page, root, build, env, counts, cache)
    if cache.get('smoke', (None,))[0]:
        shutil.rmtree(os.path.dirname(cache['smoke'][0]), ignore_errors=True)
    for p in problems:
        print(p)
    print(f"{counts['run']} block(s) run ({counts['commands']} transcript command(s) compared), "
          f"{counts['elsewhere']} marked for a GPU, Slurm or the set-up; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
