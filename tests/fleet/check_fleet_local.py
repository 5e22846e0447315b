#!/usr/bin/env python3
"""gpucal fleet run with the local launcher (every "node" is this machine): the three phases,
the fleet folder's layout, the manifest and the report; then a run stopped by SIGTERM keeps what
it measured and leaves nothing running.

Usage: check_fleet_local.py GPUCAL WORK_DIR
The figures themselves are not judged: four "nodes" sharing this machine's cores are not four
nodes (tests/fleet/planted_faults.sh measures real namespaces and judges the report).
"""
import csv
import json
import re
import os
import shutil
import signal
import subprocess
import sys
import time

GPUCAL, WORK = sys.argv[1:3]
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
out = os.path.join(WORK, 'fleet')
nodes = ['a', 'b', 'c', 'd']
p = subprocess.run([GPUCAL, 'fleet', 'run', out, '--launcher', 'local', '--nodes', ','.join(nodes), '--suite', 'fleet-smoke',
                    '--backend', 'host', '--pattern', 'ring', '--groups', '2', '--link-timeout', '120', '--rails', '2'],
                   capture_output=True, text=True, timeout=540)
check(p.returncode in (0, 1), f'fleet run exit {p.returncode}\n{p.stdout}{p.stderr}')
manifest = json.load(open(os.path.join(out, 'fleet.json')))
check([n['name'] for n in manifest['nodes']] == nodes, f"manifest nodes {manifest['nodes']}")
check(all(n['status'] == 'ok' for n in manifest['nodes']), f"a node is not ok: {manifest['nodes']}")
check(manifest.get('end_time') and manifest['launcher'] == 'local' and manifest['suite'] == 'fleet-smoke', 'manifest fields')
rounds = manifest['schedule']['rounds']
check(len(rounds) == 2 and sorted(tuple(p) for r in rounds for p in r) == [('a', 'b'), ('a', 'd'), ('b', 'c'), ('c', 'd')],
      f'ring schedule {rounds}')
for n in nodes:
    for bench in ('gemm', 'memory', 'collectives', 'p2p'):
        check(os.path.isfile(os.path.join(out, 'nodes', n, bench + '.csv')), f'nodes/{n}/{bench}.csv missing')
for a, b in (('a', 'b'), ('b', 'c'), ('c', 'd'), ('a', 'd')):
    for bench in ('p2p', 'collectives'):
        check(os.path.isfile(os.path.join(out, 'links', f'{a}--{b}', bench + '.csv')), f'links/{a}--{b}/{bench}.csv missing')
check(os.path.isfile(os.path.join(out, 'fleet', 'collectives.csv')), 'fleet/collectives.csv missing')
for g in ('g1', 'g2'):
    check(os.path.isfile(os.path.join(out, 'fleet', 'groups', g, 'collectives.csv')), f'fleet/groups/{g} missing')
steps = manifest['steps']


def step_log(s):
    # A failed step's log: what failed, so a rare failure can be told from a flaky machine.
    path = os.path.join(out, s.get('log') or '')
    try:
        return f"{s['phase']} {s['nodes']}: {s.get('detail', '')}\n" + open(path, errors='replace').read()[-3000:]
    except OSError:
        return f"{s['phase']} {s['nodes']}: {s.get('detail', '')} (no log at {path})"


check(sum(s['phase'] == 'link' for s in steps) == 12 and all(s['status'] == 'ok' for s in steps),
      f"steps: {[(s['phase'], s['nodes'], s['status']) for s in steps]}\n" +
      '\n'.join(step_log(s) for s in steps if s['status'] != 'ok'))
report = json.load(open(os.path.join(out, 'report.json')))
gemm = [t for t in report['node_metrics'] if t['metric'] == 'gemm_fp32_tflops']
check(gemm and len(gemm[0]['rows']) == 4, 'report has no GEMM row per node')
check(any(t['metric'] == 'p2p_bw_gbps' for t in report['link_capacity']), 'report has no link table')
# --rails 2: each pair's rails step (rank i of one node with rank i of the other, both ways), read
# into a table per rail.
check(manifest.get('rails') == 2, f"manifest rails {manifest.get('rails')}")
for a, b in (('a', 'b'), ('b', 'c'), ('c', 'd'), ('a', 'd')):
    path = os.path.join(out, 'links', f'{a}--{b}', 'rails', 'p2p.csv')
    rows = list(csv.DictReader(open(path))) if os.path.isfile(path) else []
    check(sorted(re.search(r'/rail(\d+)/', r['point']).group(1) for r in rows) == ['0', '1']
          and all(r['pattern'] == 'rails' and r['status'] == 'ok' and r['direction'] == 'bi' for r in rows),
          f'{path}: {[(r["point"], r["status"]) for r in rows]}')
for rail in ('rail0_bw_gbps', 'rail1_bw_gbps'):
    table = [t for t in report['link_pairs'] if t['metric'] == rail]
    check(table and len(table[0]['rows']) == 4, f'report has no {rail} row per pair')
check(all(n['sku'] == 'host' for n in report['nodes']), f"SKU not matched: {[n['sku'] for n in report['nodes']]}")

# Stopped mid-run: exit 128 + SIGTERM, the manifest says so, no bench is left running.
stopped = os.path.join(WORK, 'stopped')
proc = subprocess.Popen([GPUCAL, 'fleet', 'run', stopped, '--launcher', 'local', '--nodes', 'a,b', '--suite', 'fleet-smoke',
                         '--backend', 'host'], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
for _ in range(600):  # up to 60 s for the node phase to start measuring
    if os.path.isdir(os.path.join(stopped, 'nodes', 'a')):
        break
    time.sleep(0.1)
time.sleep(2)
proc.send_signal(signal.SIGTERM)
try:
    output, _ = proc.communicate(timeout=60)
except subprocess.TimeoutExpired:
    proc.kill()
    output = ''
    failures.append('a stopped fleet run did not end within 60 s')
check(proc.returncode == 128 + signal.SIGTERM, f'stopped run exit {proc.returncode}\n{output}')
m = json.load(open(os.path.join(stopped, 'fleet.json')))
check(m.get('stopped_by_signal') == signal.SIGTERM and m.get('end_time'), f'stopped manifest: {m}')
time.sleep(1)
left = subprocess.run(['pgrep', '-f', stopped], capture_output=True, text=True).stdout.split()
check(not left, f'processes left running: {left}')

# The default --backend auto on a node without a GPU: the node phase runs the host's threads
# (gpucal run --threads auto), where `--threads all` would refuse every CPU node.
auto = os.path.join(WORK, 'auto')
p = subprocess.run([GPUCAL, 'fleet', 'run', auto, '--launcher', 'local', '--nodes', 'a,b', '--suite', 'fleet-smoke',
                    '--phases', 'node'], capture_output=True, text=True, timeout=300)
m = json.load(open(os.path.join(auto, 'fleet.json')))
check(all(n['status'] == 'ok' for n in m['nodes']) and all(s['status'] == 'ok' for s in m['steps']),
      f"--backend auto on CPU nodes: {m['nodes']} {[(s['phase'], s['status']) for s in m['steps']]}\n" +
      '\n'.join(step_log(s) for s in m['steps'] if s['status'] != 'ok'))
check(all(re.search(r"--threads \S*auto", s['command']) for s in m['steps']), 'the node phase did not pass --threads auto')
# Each node's health verdict beside its results (gpucal check --health before the benches).
for n in m['nodes']:
    path = os.path.join(auto, 'nodes', n['name'] + '.health.json')
    verdict = json.load(open(path)).get('verdict') if os.path.exists(path) else None
    check(verdict in ('pass', 'nothing checked', 'fail'), f"{n['name']}: no health verdict in {path} ({verdict})")

# A node whose gpucal run fails: the manifest and the report say why, from the node's log (here a
# bin dir that has only what the link phase needs, so the suite is incomplete on every node).
partial_bin = os.path.join(WORK, 'partial-bin')
os.makedirs(partial_bin)
for bench in ('bench_p2p', 'bench_collectives'):
    os.symlink(os.path.join(os.path.dirname(os.path.abspath(GPUCAL)), '..', bench, bench), os.path.join(partial_bin, bench))
failing = os.path.join(WORK, 'failing')
p = subprocess.run([GPUCAL, 'fleet', 'run', failing, '--launcher', 'local', '--nodes', 'a,b,c', '--suite', 'fleet-smoke',
                    '--backend', 'host', '--phases', 'node', '--no-health', '--bin-dir', partial_bin],
                   capture_output=True, text=True, timeout=300)
m = json.load(open(os.path.join(failing, 'fleet.json')))
cause = 'gpucal run exited 1: gpucal: error: suite fleet-smoke incomplete: gemm not built'
check(p.returncode == 1 and all(n['status'] == 'failed' and cause in n.get('detail', '') for n in m['nodes']),
      f"failed nodes' cause (exit {p.returncode}): {m['nodes']}")
check(cause in p.stdout, f'the report does not say why the nodes failed:\n{p.stdout}')

for f in failures:
    print('FAIL:', f)
print(f"{'FAILED' if failures else 'ok'}: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
