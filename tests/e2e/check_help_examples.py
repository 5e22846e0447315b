#!/usr/bin/env python3
"""Every bench's --help and every gpucal verb's --help (nested verbs included) ends with at least
two worked examples, at least one of them running that program; and every example's command line
parses: each gpucal or bench_* command in it (after `&&`, inside `sbatch --wrap '...'`, after an
`mpirun ... ` or `srun ... ` launcher) runs with GPUCAL_PARSE_ONLY=1, which stops the program once
its command line parses, so a renamed flag, a value of the wrong kind or an unknown verb in an
example fails here (checks that combine flags, made when a verb runs, are not reached). Files and devices the examples name are not looked at (docs' commands run for real:
tests/docs/run_doc_commands.py).

Usage: check_help_examples.py GPUCAL BENCH...   (exit 0, or 1 with one line per problem)
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

LAUNCHERS = ('mpirun', 'srun', 'sbatch')


def examples(cmd):
    out = subprocess.run(cmd + ['--help'], capture_output=True, text=True, timeout=60).stdout
    if 'Examples:' not in out:
        return []
    return [l.strip() for l in out.split('Examples:', 1)[1].splitlines() if l.startswith('  ') and not l.startswith('      ')]


def subcommands(cmd):
    out = subprocess.run(cmd + ['--help'], capture_output=True, text=True, timeout=60).stdout
    listing = out.split('Subcommands:', 1)[1].split('Examples:', 1)[0] if 'Subcommands:' in out else ''
    return re.findall(r'^  ([a-z][a-z-]+)\s', listing, re.M)


def commands_of(example, programs):
    """The argv of each gpucal or bench_* command an example runs, the program mapped to the build's."""
    out = []
    for part in re.split(r'\s&&\s|\s\|\s|;\s', example):
        words = shlex.split(re.sub(r'\$\([^)]*\)', 'X', part))  # `$(date +%F)`: one word
        if words and words[0] == 'sbatch' and any(w.startswith('--wrap') for w in words):
            wrap = next(w for w in words if w.startswith('--wrap'))
            inner = wrap.split('=', 1)[1] if '=' in wrap else words[words.index(wrap) + 1]
            out += commands_of(inner, programs)
            continue
        while words and words[0] not in programs and (words[0] in LAUNCHERS or words[0].startswith('-') or
                                                       re.fullmatch(r'\d+', words[0]) or words[0] == 'env'):
            words.pop(0)  # a launcher and its options: `mpirun -np 8 bench_collectives ...`
        if words and words[0] in programs:
            out.append([programs[words[0]]] + words[1:])
    return out


def parse_failures(name, examples, programs, scratch):
    """Each example's commands, run in `scratch` with GPUCAL_PARSE_ONLY=1. The input files an example
    names (a log's name: *.log, *.txt, *.txtpb) are made there empty, since CLI11 checks that a
    positional file exists while parsing."""
    env = dict(os.environ, GPUCAL_PARSE_ONLY='1')
    failures = []
    for example in examples:
        commands = commands_of(example, programs)
        if not commands:
            failures.append(f'{name} --help: the example `{example}` runs no gpucal or bench_* command')
        for argv in commands:
            for word in argv[1:]:
                if re.fullmatch(r'[\w.-]+\.(log|txt|txtpb)', word):
                    open(os.path.join(scratch, word), 'a').close()
            r = subprocess.run(argv, capture_output=True, text=True, timeout=60, env=env, cwd=scratch)
            if r.returncode != 0:
                why = (r.stderr.strip() or r.stdout.strip()).split('\n')[0]
                failures.append(f'{name} --help: the example `{example}` does not parse: {why}')
    return failures


def main():
    gpucal, benches = sys.argv[1], sys.argv[2:]
    failures = []
    verbs = subcommands([gpucal])
    verbs += [f'{v} {n}' for v in list(verbs) for n in subcommands([gpucal, v])]
    programs = {'gpucal': os.path.abspath(gpucal), **{b.rsplit('/', 1)[-1]: os.path.abspath(b) for b in benches}}
    scratch = tempfile.mkdtemp(prefix='help_examples_')
    checked = 0
    if len(verbs) < 5:
        failures.append(f'gpucal --help lists {len(verbs)} verbs')
    for name, cmd in [('gpucal', [gpucal])] + [(f'gpucal {v}', [gpucal] + v.split()) for v in verbs] + \
                     [(b.rsplit('/', 1)[-1], [b]) for b in benches]:
        found = examples(cmd)
        program = name.split()[0]
        if len(found) < 2:
            failures.append(f'{name} --help: {len(found)} example(s), expected at least 2')
        elif not any(program in e for e in found):
            failures.append(f'{name} --help: no example runs {program}')
        failures += parse_failures(name, found, programs, scratch)
        checked += len(found)
    shutil.rmtree(scratch, ignore_errors=True)
    for f in failures:
        print(f)
    print(f'{len(verbs) + 1 + len(benches)} programs, {checked} examples parsed; {len(failures)} problem(s)')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
