#!/usr/bin/env python3
"""Every bench's --help and every gpucal verb's --help ends with at least two worked examples,
at least one of them running that program.

Usage: check_help_examples.py GPUCAL BENCH...   (exit 0, or 1 with one line per program lacking them)
"""
import re
import subprocess
import sys


def examples(cmd):
    out = subprocess.run(cmd + ['--help'], capture_output=True, text=True, timeout=60).stdout
    if 'Examples:' not in out:
        return []
    return [l.strip() for l in out.split('Examples:', 1)[1].splitlines() if l.startswith('  ') and not l.startswith('      ')]


def main():
    gpucal, benches = sys.argv[1], sys.argv[2:]
    failures = []
    top = subprocess.run([gpucal, '--help'], capture_output=True, text=True, timeout=60).stdout
    listing = top.split('Subcommands:', 1)[1].split('Examples:', 1)[0] if 'Subcommands:' in top else ''
    verbs = re.findall(r'^  ([a-z][a-z-]+)\s', listing, re.M)
    if len(verbs) < 5:
        failures.append(f'gpucal --help lists {len(verbs)} verbs')
    for name, cmd in [('gpucal', [gpucal])] + [(f'gpucal {v}', [gpucal, v]) for v in verbs] + \
                     [(b.rsplit('/', 1)[-1], [b]) for b in benches]:
        found = examples(cmd)
        program = name.split()[0]
        if len(found) < 2:
            failures.append(f'{name} --help: {len(found)} example(s), expected at least 2')
        elif not any(program in e for e in found):
            failures.append(f'{name} --help: no example runs {program}')
    for f in failures:
        print(f)
    print(f'{len(verbs) + 1 + len(benches)} programs checked, {len(failures)} without examples')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
