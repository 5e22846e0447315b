#!/usr/bin/env python3
"""gpucal fleet report / baseline, gpucal check and gpucal history on synthetic fleet folders.

Usage: check_fleet_cli.py GPUCAL WRITE_SYNTHETIC_RESULTS EXPECTATIONS_DIR WORK_DIR

Five synthetic nodes (tests/calibration/synthetic_results.h, a seed each), n3 1.5x slower in
every figure, n5 hung (fleet.json): the report must name exactly n5 and n3. Then check against a
shipped SKU and a baseline written from the fleet, and six nightly runs through the history where
only the last run's n2 regresses.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

GPUCAL, SYNTH, EXPECT, WORK = sys.argv[1:5]
failures = []


def run(*args, rc=None):
    p = subprocess.run([GPUCAL, *args], capture_output=True, text=True)
    if rc is not None and p.returncode != rc:
        failures.append(f"gpucal {' '.join(args)}: exit {p.returncode}, expected {rc}\n{p.stdout}{p.stderr}")
    return p


def check(cond, what):
    if not cond:
        failures.append(what)


def fleet(path, start, slow=None, hung=None, scale=1.5, cluster='synthetic', slow_link=None):
    os.makedirs(os.path.join(path, 'nodes'))
    nodes = []
    for i in range(1, 6):
        name = f'n{i}'
        status = 'hung' if name == hung else 'ok'
        nodes.append({'name': name, 'status': status, 'detail': 'no answer to a probe' if status == 'hung' else ''})
        if status == 'hung':
            continue
        factor = scale if name == slow else 1.0
        subprocess.run([SYNTH, os.path.join(path, 'nodes', name), str(factor), str(i)], check=True)
    if slow_link:  # every pair of n1..n4 measured (links/a--b), slow_link 1.5x slower
        for a in range(1, 5):
            for b in range(a + 1, 5):
                pair = f'n{a}--n{b}'
                subprocess.run([SYNTH, os.path.join(path, 'links', pair), str(scale if pair == slow_link else 1.0), f'{a}{b}'],
                               check=True, stdout=subprocess.DEVNULL)
    manifest = {'fleet_schema_version': 1, 'start_time': start, 'suite': 'fleet', 'cluster': cluster,
                'launcher': 'local', 'git_commit': 'test', 'nodes': nodes, 'steps': []}
    with open(os.path.join(path, 'fleet.json'), 'w') as f:
        json.dump(manifest, f)


shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
main = os.path.join(WORK, 'fleet')
fleet(main, '2026-01-01T00:00:00Z', slow='n3', hung='n5')

# The report names exactly the hung node and the slow one.
p = run('fleet', 'report', main, '--expect', 'none', rc=1)
report = json.load(open(os.path.join(main, 'report.json')))
check(report['suspect_nodes'] == ['n5', 'n3'], f"suspects {report['suspect_nodes']}, expected ['n5', 'n3']\n{p.stdout}")
check(report['suspect_links'] == [], f"links {report['suspect_links']}")
check(any(s['subject'] == 'n3' and s['metric'] == 'gemm_bf16_tflops' and s['fleet_median'] for s in report['suspects']),
      'n3 is named without its GEMM figure and the fleet median')
html = open(os.path.join(main, 'report.html')).read()
check(html.count('<svg') >= 3 and '<script' not in html and 'http' not in html.replace('http://www.w3.org/2000/svg', ''),
      'report.html is not a self-contained page with plots')
check('cluster synthetic' in html, 'report.html does not name the cluster')


def svg_texts(svg):
    return [''.join(t.itertext()) for t in svg.iter('{http://www.w3.org/2000/svg}text')]


# report.html read on paper: axis titles with units, the flagged nodes and links named in the SVG
# text, a colour bar and cell values on the pair heatmaps; no "cluster ," without a cluster name.
links = os.path.join(WORK, 'links_fleet')
fleet(links, '2026-01-02T00:00:00Z', slow='n3', hung='n5', cluster='', slow_link='n2--n4')
run('fleet', 'report', links, '--expect', 'none', rc=1)
page = open(os.path.join(links, 'report.html')).read()
check(not re.search(r'cluster\s*[,<]', page, re.I), f"report.html names an empty cluster: {re.search(r'<h1>.*?</p>', page).group(0)}")
svgs = []
for text in re.findall(r'<svg.*?</svg>', page, re.S):
    try:
        svgs.append(ET.fromstring(text))
    except ET.ParseError as e:
        failures.append(f'report.html: an SVG that does not parse: {e}: {text[:200]}')
strip = next((s for s in svgs if 'gemm_bf16_tflops (TFLOP/s, higher is better)' in svg_texts(s)), None)
check(strip is not None, 'no strip plot with the axis title "gemm_bf16_tflops (TFLOP/s, higher is better)"')
if strip is not None:
    check('n3' in svg_texts(strip), f'the flagged node n3 is not named in the strip plot text: {svg_texts(strip)}')
heatmaps = [s for s in svgs if s.find("{http://www.w3.org/2000/svg}g[@class='colorbar']") is not None]
check(len(heatmaps) >= 1, 'no pair heatmap with a colour bar (<g class="colorbar">)')
for h in heatmaps[:1]:
    texts = svg_texts(h)
    check(any(t.startswith('pairs: min ') for t in texts) and any(t.startswith('colour: ') for t in texts),
          f'the colour bar has no range: {texts}')
    cells = [t for t in h.iter('{http://www.w3.org/2000/svg}text') if t.get('class') == 'cell-value']
    check(len(cells) == 12, f'{len(cells)} cell values in a 4-node heatmap of 6 pairs, expected 12')

# A node whose health check failed (nodes/<name>.health.json, written by the node phase) is named
# as a health suspect whatever its speed; a node that exposes none of the checks is a note only.
health = os.path.join(WORK, 'health_fleet')
fleet(health, '2026-01-03T00:00:00Z')
json.dump({'node': 'n2', 'verdict': 'fail', 'reason': 'gpu_row_remap gpu3 pending 1, failure 0'},
          open(os.path.join(health, 'nodes', 'n2.health.json'), 'w'))
json.dump({'node': 'n4', 'verdict': 'nothing checked', 'reason': 'nothing checked'},
          open(os.path.join(health, 'nodes', 'n4.health.json'), 'w'))
for n in ('n1', 'n3', 'n5'):
    json.dump({'node': n, 'verdict': 'pass', 'reason': ''}, open(os.path.join(health, 'nodes', n + '.health.json'), 'w'))
run('fleet', 'report', health, '--expect', 'none', rc=1)
r = json.load(open(os.path.join(health, 'report.json')))
check(r['suspect_nodes'] == ['n2'] and any(s['kind'] == 'health' and s['metric'] == 'gpu_row_remap' for s in r['suspects']),
      f"health: suspects {r['suspect_nodes']} {r['suspects']}")
check(any('expose none of the health checks (n4)' in n for n in r['notes']), f"health: no note for n4: {r['notes']}")

junit = open(os.path.join(main, 'report.junit.xml')).read()
check('<failure' in junit and 'n3' in junit, 'report.junit.xml has no failure for n3')
check('n3' in open(os.path.join(main, 'report.md')).read(), 'report.md does not name n3')

# check: the synthetic device matches no shipped SKU; against H100 SXM its copy misses the floor.
node1 = os.path.join(main, 'nodes', 'n1')
p = run('check', node1, rc=2)
check('no file in' in p.stderr and 'Synthetic GPU' in p.stderr, f'auto without a match: {p.stderr}')
p = run('check', node1, '--expect', os.path.join(EXPECT, 'h100_sxm.json'), '--junit', os.path.join(WORK, 'check.xml'), rc=1)
check('hbm_copy_gbps' in p.stdout and 'fail' in p.stdout, p.stdout)
check('<failure' in open(os.path.join(WORK, 'check.xml')).read(), 'check JUnit without a failure')

# baseline from the fleet (n5 hung, n3 slow: the median and MAD ignore n3), then check against it.
base = os.path.join(WORK, 'baseline.json')
run('fleet', 'baseline', main, '--sku', 'synthetic', '-o', base, rc=0)
doc = json.load(open(base))
check(doc['match']['device_regex'] == '^Synthetic GPU$' and 'gemm_bf16_tflops' in doc['metrics'], json.dumps(doc)[:300])
run('check', node1, '--expect', base, rc=0)
run('check', os.path.join(main, 'nodes', 'n3'), '--expect', base, rc=1)

# baseline --statistic best: the file says so, its figures are the fastest samples', and a report
# reading median figures against it notes the mismatch.
best = os.path.join(WORK, 'baseline_best.json')
run('fleet', 'baseline', main, '--sku', 'synthetic', '--statistic', 'best', '-o', best, rc=0)
doc_best = json.load(open(best))
check(doc_best['generated_by'].get('statistic') == 'best' and doc['generated_by'].get('statistic') == 'median',
      f"generated_by: {doc_best['generated_by']} / {doc['generated_by']}")
check(doc_best['metrics']['gemm_bf16_tflops']['typical']['value'] > doc['metrics']['gemm_bf16_tflops']['typical']['value'],
      'the best-sample baseline is not above the median one')
run('fleet', 'report', main, '--expect', best, '--json', os.path.join(WORK, 'report_best.json'), rc=1)
notes = json.load(open(os.path.join(WORK, 'report_best.json')))['notes']
check(any('made from best figures' in n for n in notes), f'no note of the statistic mismatch: {notes}')

# History: five quiet nights, then n2 20% slower; only n2's figures regress.
history = os.path.join(WORK, 'history.sqlite')
nights = []
for night in range(6):
    path = os.path.join(WORK, f'night{night}')
    fleet(path, f'2026-02-0{night + 1}T02:00:00Z', slow='n2' if night == 5 else None, scale=1.25)
    nights.append(path)
run('history', 'import', *nights, '--history', history, '--expect', 'none', rc=0)
p = run('history', 'regressions', '--history', history, '--json', os.path.join(WORK, 'regressions.json'), rc=1)
trends = json.load(open(os.path.join(WORK, 'regressions.json')))['trends']
regressed = sorted({t['node'] for t in trends if t['regression']})
check(regressed == ['n2'], f'regressions on {regressed}, expected n2 only\n{p.stdout}')
# --ignore-metrics leaves a metric's series unjudged (and out of the fleet's spread); a name that is
# no metric is refused.
p = run('history', 'regressions', '--history', history, '--ignore-metrics', 'gemm_bf16_tflops,hbm_copy_gbps', '--json',
        os.path.join(WORK, 'regressions_ignored.json'), rc=1)
left = {t['metric'] for t in json.load(open(os.path.join(WORK, 'regressions_ignored.json')))['trends']}
check(left and not left & {'gemm_bf16_tflops', 'hbm_copy_gbps'}, f'--ignore-metrics: still judged {sorted(left)}')
p = run('history', 'regressions', '--history', history, '--ignore-metrics', 'gemm_bf17_tflops', rc=2)
check('--ignore-metrics' in p.stderr and len(p.stderr.strip().splitlines()) == 1, f'a bad metric: {p.stderr}')
p = run('history', 'show', '--history', history, '--metric', 'gemm_bf16_tflops', '--html', os.path.join(WORK, 'trends.html'), rc=0)
check('n2' in p.stdout and '<svg' in open(os.path.join(WORK, 'trends.html')).read(), p.stdout)
check(re.search(r'date\s+02-01\s+02-02\s+02-03\s+02-04\s+02-05\s+02-06\n', p.stdout), f'no dated columns: {p.stdout}')

# From night 2: one earlier night judges, with the fleet's spread, and says so.
short = os.path.join(WORK, 'short.sqlite')
run('history', 'import', nights[0], nights[1], '--history', short, '--expect', 'none', rc=0)
p = run('history', 'regressions', '--history', short, '--json', os.path.join(WORK, 'short.json'), rc=0)
trends = [t for t in json.load(open(os.path.join(WORK, 'short.json')))['trends'] if not t['node'].startswith('(fleet')]
check(trends and all(t['basis'] == '1 earlier night, spread from the fleet (5 nodes)' and not t['regression'] for t in trends),
      f'night 2 is not judged on the fleet\'s spread:\n{p.stdout}')
run('history', 'import', nights[5], '--history', short, '--expect', 'none', rc=0)
p = run('history', 'regressions', '--history', short, '--json', os.path.join(WORK, 'short.json'), rc=1)
regressed = sorted({t['node'] for t in json.load(open(os.path.join(WORK, 'short.json')))['trends'] if t['regression']})
check(regressed == ['n2'], f'night 3: regressions on {regressed}, expected n2 only\n{p.stdout}')
p = run('history', 'show', '--history', short, '--node', 'n2', '--metric', 'hbm_copy_gbps', rc=0)
check(re.search(r'02-03\.\.02-05', p.stdout) and re.search(r'n2\s+\S+\s+\S+\s+missing\s+\S+\n', p.stdout) and '3 night(s) without a run' in p.stdout,
      f'the nights between 02-02 and 02-06 are not shown missing: {p.stdout}')

# --baseline: from the first night, node figures against the floors of fleet baseline's file made
# from a trusted night; pairs and metrics without a floor keep their history's verdict.
night_base = os.path.join(WORK, 'night_baseline.json')
run('fleet', 'baseline', nights[0], '--sku', 'synthetic', '-o', night_base, rc=0)
first = os.path.join(WORK, 'first.sqlite')
run('history', 'import', nights[1], '--history', first, '--expect', 'none', rc=0)
p = run('history', 'regressions', '--history', first, '--json', os.path.join(WORK, 'first.json'), rc=1)
check('judged nothing' in p.stderr, f'one night without a baseline file judged something: {p.stderr}')
p = run('history', 'regressions', '--history', first, '--baseline', night_base, '--json', os.path.join(WORK, 'first.json'), rc=0)
trends = json.load(open(os.path.join(WORK, 'first.json')))['trends']
check(trends and all(t['basis'] == 'floor of night_baseline.json (5 nodes)' and not t['regression'] for t in trends),
      f'night 1 is not judged against the baseline file:\n{p.stdout}')
run('history', 'import', nights[5], '--history', first, '--expect', 'none', rc=0)
p = run('history', 'regressions', '--history', first, '--baseline', night_base, '--junit', os.path.join(WORK, 'first.xml'), rc=1)
flagged = sorted({line.split()[1] for line in p.stdout.splitlines() if line.endswith('REGRESSION')})
check(flagged == ['n2'], f'against the baseline file: regressions on {flagged}, expected n2 only\n{p.stdout}')
check('against floor of night_baseline.json' in open(os.path.join(WORK, 'first.xml')).read(), 'the JUnit failure names no baseline file')
p = run('history', 'regressions', '--history', first, '--baseline', os.path.join(main, 'fleet.json'), rc=2)
check('fleet.json' in p.stderr and len(p.stderr.strip().splitlines()) == 1, f'a baseline that is no expectations file: {p.stderr}')
p = run('history', 'regressions', '--history', first, '--baseline', night_base, '--json', night_base, rc=2)
check(json.load(open(night_base))['sku'] == 'synthetic', '--json over --baseline overwrote the baseline file')

run('history', 'import', nights[0], '--history', history, '--expect', 'none', rc=0)  # again: replaced, not doubled
p = run('history', 'show', '--history', history, '--node', 'n1', '--metric', 'hbm_copy_gbps', rc=0)
check('6 run(s)' in p.stdout, f'a re-import added a run: {p.stdout}')

# Bad input: one line, exit 2.
for args in (['fleet', 'report', os.path.join(WORK, 'absent')], ['fleet', 'schedule', '--nodes', '0'],
             ['fleet', 'schedule', '--nodes', '8', '--pattern', 'random:9'], ['check', node1, '--expect', base + '.absent'],
             ['history', 'show', '--history', os.path.join(main, 'fleet.json')]):
    p = run(*args, rc=2)
    check(len(p.stderr.strip().splitlines()) == 1, f"gpucal {' '.join(args)}: not one line: {p.stderr}")

# A misspelt flag of a nested verb is named, with the nearest flag of that verb.
p = run('fleet', 'report', main, '--statistik', 'best', rc=2)
check('unknown flag --statistik (did you mean --statistic?)' in p.stderr, f'no suggestion for a fleet report flag: {p.stderr}')

for f in failures:
    print('FAIL:', f)
print(f"{'FAILED' if failures else 'ok'}: {len(failures)} failure(s)")
sys.exit(1 if failures else 0)
