#!/usr/bin/env python3
"""--prometheus of gpucal fleet report, gpucal check and gpucal history regressions: the .prom file
passes `promtool check metrics` and says what the verb decided.

Usage: check_prometheus.py GPUCAL WRITE_SYNTHETIC_RESULTS EXPECTATIONS_DIR WORK_DIR

The repository records no loadable fleet folder (results/fleet-local/ holds rendered reports
only), so the fleets are synthetic, as in check_fleet_cli.py: five nodes, n3 1.5x slower, n5 hung;
then six nights in a history where the last night's n2 is 1.25x slower. Exit 77 (skipped) only
where promtool (Debian package prometheus) is absent.
"""
import json
import os
import re
import shutil
import subprocess
import sys

GPUCAL, SYNTH, EXPECT, WORK = sys.argv[1:5]
PROMTOOL = shutil.which('promtool')
if not PROMTOOL:
    print('skipped: promtool is not installed (Debian package prometheus)')
    sys.exit(77)
failures = []
SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def check(cond, what):
    if not cond:
        failures.append(what)


def run(*args, rc=None):
    p = subprocess.run([GPUCAL, *args], capture_output=True, text=True)
    check(rc is None or p.returncode == rc, f"gpucal {' '.join(args)}: exit {p.returncode}, expected {rc}\n{p.stdout}{p.stderr}")
    return p


def samples(path):
    """{(name, ((label, value), ...)): value} of a .prom file that promtool accepts."""
    text = open(path).read()
    p = subprocess.run([PROMTOOL, 'check', 'metrics'], input=text, capture_output=True, text=True)
    check(p.returncode == 0, f'promtool check metrics < {path}: exit {p.returncode}\n{p.stdout}{p.stderr}')
    out = {}
    for line in text.splitlines():
        if line.startswith('#'):
            continue
        m = SAMPLE.match(line)
        check(m is not None, f'{path}: not a sample line: {line!r}')
        if m:
            labels = [(k, re.sub(r'\\(.)', lambda e: '\n' if e.group(1) == 'n' else e.group(1), v))
                      for k, v in LABEL.findall(m.group(2) or '')]
            out[(m.group(1), tuple(sorted(labels)))] = float(m.group(3))
    check(not [f for f in os.listdir(os.path.dirname(path)) if '.tmp.' in f], f'a temporary file left beside {path}')
    return out


def value(s, name, **labels):
    hits = [v for (n, ls), v in s.items() if n == name and all((k, labels[k]) in ls for k in labels)]
    return hits[0] if len(hits) == 1 else ('missing' if not hits else f'{len(hits)} samples')


def fleet(path, start, slow=None, hung=None, scale=1.5):
    os.makedirs(os.path.join(path, 'nodes'))
    nodes = []
    for i in range(1, 6):
        name = f'n{i}'
        nodes.append({'name': name, 'status': 'hung' if name == hung else 'ok', 'detail': ''})
        if name != hung:
            subprocess.run([SYNTH, os.path.join(path, 'nodes', name), str(scale if name == slow else 1.0), str(i)], check=True)
    with open(os.path.join(path, 'fleet.json'), 'w') as f:
        json.dump({'fleet_schema_version': 1, 'start_time': start, 'suite': 'fleet', 'cluster': 'syn"the\\tic',
                   'launcher': 'local', 'git_commit': 'test', 'nodes': nodes, 'steps': []}, f)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(os.path.join(WORK, 'prom'))
prom = lambda name: os.path.join(WORK, 'prom', name)

# fleet report: the nodes report.json names have gpucal_node_ok 0, the others 1.
main = os.path.join(WORK, 'fleet')
fleet(main, '2026-01-01T00:00:00Z', slow='n3', hung='n5')
run('fleet', 'report', main, '--expect', 'none', '--prometheus', prom('fleet.prom'), rc=1)
report = json.load(open(os.path.join(main, 'report.json')))
s = samples(prom('fleet.prom'))
check(report['suspect_nodes'] == ['n5', 'n3'], f"report.json names {report['suspect_nodes']}")
for node in ('n1', 'n2', 'n3', 'n4', 'n5'):
    want = 0 if node in report['suspect_nodes'] else 1
    got = value(s, 'gpucal_node_ok', node=node, cluster='syn"the\\tic')
    check(got == want, f'gpucal_node_ok{{node="{node}"}} {got}, expected {want}')
n3 = next(n for n in report['nodes'] if n['name'] == 'n3')['metrics']['gemm_bf16_tflops']['value']
check(abs(value(s, 'gpucal_gemm_bf16_tflops', node='n3') - n3) <= 1e-9 * n3, 'gpucal_gemm_bf16_tflops of n3 is not report.json\'s')
check(value(s, 'gpucal_last_run_timestamp_seconds') == 1767225600, 'last run timestamp is not fleet.json\'s start_time')
check('cluster="syn\\"the\\\\tic"' in open(prom('fleet.prom')).read(), 'the cluster label is not escaped')

# check: against H100 SXM the synthetic copy misses its floor; a metric without a verdict has no check_ok.
node1 = os.path.join(main, 'nodes', 'n1')
run('check', node1, '--expect', os.path.join(EXPECT, 'h100_sxm.json'), '--json', os.path.join(WORK, 'check.json'),
    '--prometheus', prom('check.prom'), rc=1)
s = samples(prom('check.prom'))
for m in json.load(open(os.path.join(WORK, 'check.json')))['metrics']:
    ok = value(s, 'gpucal_check_ok', metric=m['metric'])
    want = {'pass': 1, 'fail': 0}.get(m['status'], 'missing')
    check(ok == want, f"gpucal_check_ok{{metric=\"{m['metric']}\"}} {ok} for status {m['status']}")
    check(value(s, 'gpucal_check_status', metric=m['metric'], status=m['status']) == 1, f"no status 1 for {m['metric']}")
check(value(s, 'gpucal_check_ok', metric='hbm_copy_gbps', sku='h100_sxm') == 0, 'hbm_copy_gbps is not a miss')

# history regressions: n2's figures regress on the last night, n1's do not.
history = os.path.join(WORK, 'history.sqlite')
nights = []
for night in range(6):
    nights.append(os.path.join(WORK, f'night{night}'))
    fleet(nights[-1], f'2026-02-0{night + 1}T02:00:00Z', slow='n2' if night == 5 else None, scale=1.25)
run('history', 'import', *nights, '--history', history, '--expect', 'none', rc=0)
run('history', 'regressions', '--history', history, '--prometheus', prom('regressions.prom'), rc=1)
s = samples(prom('regressions.prom'))
check(value(s, 'gpucal_regression', node='n2', metric='gemm_bf16_tflops') == 1, 'n2 gemm_bf16_tflops is not a regression')
check(value(s, 'gpucal_regression', node='n1', metric='gemm_bf16_tflops') == 0, 'n1 gemm_bf16_tflops is a regression')
check(value(s, 'gpucal_last_run_timestamp_seconds') == 1770343200, 'last run timestamp is not the last night\'s')

# Bad input: an unwritable path and an output over an input, one line naming --prometheus, exit 2.
for args in (['fleet', 'report', main, '--expect', 'none', '--prometheus', os.path.join(WORK, 'absent', 'x.prom')],
             ['check', node1, '--expect', 'auto', '--prometheus', os.path.join(WORK, 'absent', 'x.prom')],
             ['history', 'regressions', '--history', history, '--prometheus', os.path.join(WORK, 'absent', 'x.prom')],
             ['history', 'regressions', '--history', history, '--prometheus', history],
             ['fleet', 'report', main, '--prometheus', os.path.join(main, 'fleet.json')]):
    if args[0] == 'check':
        args[3] = os.path.join(EXPECT, 'h100_sxm.json')
    p = run(*args, rc=2)
    lines = p.stderr.strip().splitlines()
    check(len(lines) == 1 and '--prometheus' in lines[0], f"gpucal {' '.join(args)}: {p.stderr!r}")

for f in failures:
    print('FAIL:', f)
print(f"{'FAILED' if failures else 'ok'}: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
