#!/usr/bin/env python3
"""Every verb's output flags against each of its inputs: an output path that names a file the
command reads is refused (exit 2, one line naming the flag) and every input is byte for byte as
before (checksums before and after each case). Then the gates that checked nothing fail closed.

Usage: check_outputs_over_inputs.py GPUCAL WRITE_SYNTHETIC_RESULTS COMM_LOG WORK_DIR

The inputs: a results folder R (synthetic), a fleet folder F (five synthetic nodes), an
expectations file E (fleet baseline of F), a history H (F imported), a nccl-tests log L.
"""
import hashlib
import json
import os
import shutil
import subprocess
import sys

GPUCAL, SYNTH, LOG, WORK = sys.argv[1:5]
failures = []


def run(*args):
    return subprocess.run([GPUCAL, *args], capture_output=True, text=True, timeout=300)


def check(cond, what):
    if not cond:
        failures.append(what)


def digest_tree(paths):
    """{path: sha256} of every file under the given files and folders."""
    out = {}
    for p in paths:
        if os.path.isfile(p):
            out[p] = hashlib.sha256(open(p, 'rb').read()).hexdigest()
        else:
            for d, _, files in os.walk(p):
                for f in files:
                    q = os.path.join(d, f)
                    out[q] = hashlib.sha256(open(q, 'rb').read()).hexdigest()
    return out


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
R = os.path.join(WORK, 'results')
subprocess.run([SYNTH, R, '1', '1'], check=True)
F = os.path.join(WORK, 'fleet')
nodes = []
for i in range(1, 6):
    subprocess.run([SYNTH, os.path.join(F, 'nodes', f'n{i}'), '1', str(i)], check=True)
    nodes.append({'name': f'n{i}', 'status': 'ok', 'detail': ''})
with open(os.path.join(F, 'fleet.json'), 'w') as f:
    json.dump({'fleet_schema_version': 1, 'start_time': '2026-01-01T00:00:00Z', 'suite': 'fleet', 'cluster': 'c',
               'launcher': 'local', 'git_commit': 'test', 'nodes': nodes, 'steps': []}, f)
E = os.path.join(WORK, 'expect.json')
H = os.path.join(WORK, 'history.sqlite')
L = os.path.join(WORK, 'nccl.log')
shutil.copy(LOG, L)
for args in (['fleet', 'baseline', F, '--sku', 'synthetic', '-o', E],
             ['history', 'import', F, '--history', H, '--expect', 'none']):
    p = run(*args)
    if p.returncode != 0:
        sys.exit(f"setup: gpucal {' '.join(args)}: exit {p.returncode}: {p.stderr}")

n1 = os.path.join(F, 'nodes', 'n1')
read_in_results = [os.path.join(R, 'gemm.csv'), os.path.join(R, 'gemm.json'), os.path.join(R, 'collectives.csv')]
read_in_fleet = [os.path.join(F, 'fleet.json'), os.path.join(n1, 'gemm.csv'), os.path.join(n1, 'gemm.json'),
                 os.path.join(n1, 'memory.csv')]
read_in_node = [os.path.join(n1, 'gemm.csv'), os.path.join(n1, 'gemm.json')]

# (verb words with {OUT} for the output, the output flag, the inputs the verb reads: targets)
CASES = [
    (['fit', R, '-o', '{OUT}'], '-o', read_in_results),
    (['compare', R, R, '--markdown', '{OUT}'], '--markdown', read_in_results),
    (['compare', R, R, '--junit', '{OUT}'], '--junit', read_in_results),
    (['compare', R, R, '--json', '{OUT}'], '--json', read_in_results),
    (['predict', R, '--model', 'llama3-8b', '--scale', '8', '--layers', '1', '--allow-missing', '--output', '{OUT}'],
     '--out', read_in_results),
    (['export', R, '--to', 'calculon', '--out', '{OUT}'], '--out', read_in_results + [R]),
    (['check', n1, '--expect', E, '--junit', '{OUT}'], '--junit', [E] + read_in_node),
    (['check', n1, '--expect', E, '--json', '{OUT}'], '--json', [E] + read_in_node),
    (['check', n1, '--expect', E, '--markdown', '{OUT}'], '--markdown', [E] + read_in_node),
    (['check', n1, '--expect', E, '--prometheus', '{OUT}'], '--prometheus', [E] + read_in_node),
    (['fleet', 'report', F, '--expect', E, '--markdown', '{OUT}'], '--markdown', [E] + read_in_fleet),
    (['fleet', 'report', F, '--expect', E, '--html', '{OUT}'], '--html', [E] + read_in_fleet),
    (['fleet', 'report', F, '--expect', E, '--json', '{OUT}'], '--json', [E] + read_in_fleet),
    (['fleet', 'report', F, '--expect', E, '--junit', '{OUT}'], '--junit', [E] + read_in_fleet),
    (['fleet', 'report', F, '--expect', E, '--history', '{OUT}'], '--history', [E] + read_in_fleet),
    (['fleet', 'report', F, '--expect', E, '--prometheus', '{OUT}'], '--prometheus', [E] + read_in_fleet),
    (['fleet', 'baseline', F, '--sku', 's', '-o', '{OUT}'], '-o', read_in_fleet),
    (['history', 'show', '--history', H, '--html', '{OUT}'], '--html', [H]),
    (['history', 'regressions', '--history', H, '--junit', '{OUT}'], '--junit', [H]),
    (['history', 'regressions', '--history', H, '--json', '{OUT}'], '--json', [H]),
    (['history', 'regressions', '--history', H, '--prometheus', '{OUT}'], '--prometheus', [H]),
    (['history', 'import', F, '--history', '{OUT}', '--expect', E], '--history', [E] + read_in_fleet),
    (['import', L, '--out', '{OUT}'], '--out', [L]),
]
inputs = [R, F, E, H, L]
pristine = os.path.join(WORK, 'pristine')
os.makedirs(pristine)
for p in inputs:
    (shutil.copytree if os.path.isdir(p) else shutil.copy)(p, os.path.join(pristine, os.path.basename(p)))


def restore():
    """Puts every input back as it was (a case that overwrote one must not spoil the next)."""
    for p in inputs:
        shutil.rmtree(p, ignore_errors=True) if os.path.isdir(p) else (os.path.exists(p) and os.remove(p))
        (shutil.copytree if os.path.isdir(os.path.join(pristine, os.path.basename(p))) else shutil.copy)(
            os.path.join(pristine, os.path.basename(p)), p)


cases = 0
for words, flag, targets in CASES:
    for target in targets:
        before = digest_tree(inputs)
        args = [target if w == '{OUT}' else w for w in words]
        p = run(*args)
        cases += 1
        label = f"gpucal {' '.join(args)}"
        check(p.returncode == 2, f"{label}: exit {p.returncode}, expected 2 (refused)\n{p.stderr}")
        lines = p.stderr.strip().splitlines()
        check(len(lines) == 1 and flag in lines[0] and target.split('/')[-1] in lines[0]
              and 'not expected' not in lines[0] and 'write the output elsewhere' in lines[0],
              f"{label}: not the output guard's one line naming {flag} and the file: {p.stderr!r}")
        after = digest_tree(inputs)
        changed = sorted(k for k in set(before) | set(after) if before.get(k) != after.get(k))
        check(not changed, f"{label}: inputs changed: {changed}")
        if changed or any(not os.path.exists(i) for i in inputs):
            restore()
print(f"{cases} output-over-input cases refused with the inputs untouched" if not failures else "")

# Gates that checked nothing exit non-zero.
empty = os.path.join(WORK, 'empty_metrics.json')
doc = json.load(open(E))
doc['metrics'] = {}
json.dump(doc, open(empty, 'w'))
p = run('check', n1, '--expect', empty)
check(p.returncode == 2 and "'metrics' is empty" in p.stderr, f"check, empty metrics: exit {p.returncode}: {p.stderr}")
typo = os.path.join(WORK, 'typo_metric.json')
doc = json.load(open(E))
doc['metrics'] = {'gemm_bf16_tflop': list(doc['metrics'].values())[0]}
json.dump(doc, open(typo, 'w'))
p = run('check', n1, '--expect', typo)
check(p.returncode == 2 and "unknown metric 'gemm_bf16_tflop'" in p.stderr and 'gemm_bf16_tflops' in p.stderr,
      f"check, misspelt metric: exit {p.returncode}: {p.stderr}")
absent = os.path.join(WORK, 'absent_metric.json')
doc = json.load(open(E))
doc['metrics'] = {'internode_latency_us': {'unit': 'us', 'better': 'lower', 'typical': {'value': 10, 'source': 'test'},
                                           'floor': {'value': 20, 'source': 'test'}}}
json.dump(doc, open(absent, 'w'))
p = run('check', n1, '--expect', absent)
check(p.returncode == 1 and 'judged nothing' in p.stderr, f"check, nothing measured: exit {p.returncode}: {p.stderr}")

typo_history = os.path.join(WORK, 'typo.sqlite')
for verb in ('show', 'regressions'):
    p = run('history', verb, '--history', typo_history)
    check(p.returncode == 2 and 'does not exist' in p.stderr, f"history {verb} on a typo: exit {p.returncode}: {p.stderr}")
    check(not os.path.exists(typo_history), f"history {verb} created {typo_history}")
other = os.path.join(WORK, 'other_app.sqlite')
if shutil.which('sqlite3'):
    subprocess.run(['sqlite3', other, 'CREATE TABLE notes(id INTEGER, text TEXT); INSERT INTO notes VALUES(1, "x");'],
                   check=True)
    before = digest_tree([other])
    for args in (['history', 'show', '--history', other], ['history', 'regressions', '--history', other],
                 ['history', 'import', F, '--history', other, '--expect', 'none']):
        p = run(*args)
        check(p.returncode == 2 and 'another application' in p.stderr, f"gpucal {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    check(digest_tree([other]) == before, "another application's SQLite file was changed")
p = run('history', 'show', '--history', H, '--metric', 'gemm_bf16_tflop')
check(p.returncode == 2 and "did you mean 'gemm_bf16_tflops'" in p.stderr, f"history show --metric typo: {p.stderr}")
p = run('history', 'regressions', '--history', H, '--node', 'n9')
check(p.returncode == 2 and "unknown node 'n9'" in p.stderr, f"history regressions --node typo: {p.stderr}")
p = run('history', 'regressions', '--history', H)  # one run recorded: nothing can be judged
check(p.returncode == 1 and 'judged nothing' in p.stderr, f"history regressions with one run: exit {p.returncode}: {p.stderr}")
p = run('fleet', 'report', F, '--expect', 'none', '--ignore-metrics', 'p2p_bw_gbs')
check(p.returncode == 2 and "unknown metric 'p2p_bw_gbs'" in p.stderr, f"fleet report --ignore-metrics typo: {p.stderr}")

# A fleet whose link and fleet phases measured nothing: findings, exit 1, JUnit failures.
dead = os.path.join(WORK, 'dead_links')
shutil.copytree(F, dead)
manifest = json.load(open(os.path.join(dead, 'fleet.json')))
manifest['steps'] = [{'phase': 'link', 'round': 1, 'nodes': ['n1', 'n2'], 'status': 'failed', 'rc': 1, 'log': 'l1'},
                     {'phase': 'link', 'round': 1, 'nodes': ['n3', 'n4'], 'status': 'timed out', 'rc': -1, 'log': 'l2'},
                     {'phase': 'fleet', 'round': 0, 'nodes': ['n1'], 'status': 'failed', 'rc': 1, 'log': 'f'}]
json.dump(manifest, open(os.path.join(dead, 'fleet.json'), 'w'))
p = run('fleet', 'report', dead, '--expect', 'none')
check(p.returncode == 1 and 'link phase [phase]: measured nothing' in p.stdout and 'fleet phase [phase]' in p.stdout,
      f"fleet report, phases that measured nothing: exit {p.returncode}: {p.stdout}")
check('failures="2"' in open(os.path.join(dead, 'report.junit.xml')).read(), 'JUnit lacks the two phase failures')

for f in failures:
    print('FAIL:', f)
print(f"{'FAILED' if failures else 'ok'}: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
