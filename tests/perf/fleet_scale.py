#!/usr/bin/env python3
"""The operator's verbs at cluster scale, by simulation: a benchmark, not a ctest test.

    python3 tests/perf/fleet_scale.py [--gpucal build/app/gpucal]
        [--synth build/tests/calibration/write_synthetic_results] [--work /tmp/gpucal-fleet-scale]
        [--nodes 1024,4096] [--nights 30] [--night-nodes 1024] [--rounds 3]

Synthetic fleet folders as `gpucal fleet run` leaves them: per node the gemm, memory, collectives
and p2p results of the fleet suite (8 templates from tests/calibration/synthetic_results.h, a seed
each), per link `links/A--B/p2p.csv` for `--rounds` rounds of the circle method (each node in one
pair per round). Each node's and link's figures are scaled by noise drawn (log-normal) with the
relative spread measured between the healthy nodes of the local Slurm cluster
(tests/fleet/planted_faults.sh, `--statistic best`, robust sigma / median; SPREADS below), and four
subtle faults are planted:
  gemm_slow   its GEMM 20% slow (a slow GPU: the node's GEMM figure)
  link_half   every link it is in at half bandwidth (a bad NIC or rail)
  lat_up      every link it is in with +30% latency
  drift       everything 3% slower each night (for the history)
1. `fleet report` at each of --nodes: wall time and peak memory (/usr/bin/time), and whether it
   names exactly the planted nodes (targets: 4,096 nodes in <= 10 s and <= 1 GiB).
2. --nights nights of --night-nodes nodes, fresh noise each night, each recorded with `fleet report
   --history`: per night the report's true and false suspects, and from night 2 `history
   regressions`: the night the drift is named, and the healthy series flagged (targets: every
   planted fault named with 0 false suspects over 30 nights; the drift named by night 5).
Prints a Markdown table of each part, and precision and recall over the nights."""
import argparse
import csv
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time

# Relative robust spread (sigma / median) between healthy nodes, measured on the local Slurm cluster
# (6 nodes sharing 2 cores, `fleet report --statistic best`, report.json's `reference` of each
# metric, 2026-11-28): GEMM fp32 0.44%, STREAM copy 1.76%, 2-rank allreduce 6.3%, the link pairs'
# bandwidth 2.45%. A GPU fleet's spreads are its own: `fleet baseline` measures them.
SPREADS = {'gemm': 0.0044, 'memory': 0.0176, 'collectives': 0.063, 'link': 0.0245}
TEMPLATES = 8
PLANTED = {'gemm_slow': 'node00011', 'link_half': 'node00022', 'lat_up': 'node00033', 'drift': 'node00044'}
# The derived columns a bench's figure is read from, and whether they grow with time.
SCALED = {'time_us_median': 1, 'time_us_p10': 1, 'time_us_p90': 1, 'time_us_min': 1, 'time_us_max': 1,
          'time_us_mean': 1, 'time_us_stdev': 1, 'latency_us': 1, 'tflops': -1, 'bandwidth_gbps': -1,
          'busbw_gbps': -1, 'algbw_gbps': -1}


def read_template(path):
    with open(path, newline='') as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]


def write_scaled(path, header, rows, factor_of):
    """Rows with every derived column scaled: time x f, rates / f; factor_of(row dict) gives f."""
    idx = [(i, SCALED[c]) for i, c in enumerate(header) if c in SCALED]
    with open(path, 'w', newline='') as f:
        w = csv.writer(f, lineterminator='\n')
        w.writerow(header)
        for r in rows:
            fac = factor_of(dict(zip(header, r)))
            out = list(r)
            for i, sign in idx:
                if out[i] not in ('', 'nan'):
                    out[i] = repr(float(out[i]) * (fac if sign > 0 else 1 / fac))
            w.writerow(out)


def make_templates(synth, work):
    """TEMPLATES node folders (no samples, no attention) and a link p2p.csv with pingpong rows."""
    out = []
    for t in range(TEMPLATES):
        d = os.path.join(work, 'templates', f't{t}')
        if not os.path.isdir(d):
            subprocess.run([synth, d, '1.0', str(100 + t)], check=True, stdout=subprocess.DEVNULL)
        bench = {}
        for b in ('gemm', 'memory', 'collectives', 'p2p'):
            bench[b] = read_template(os.path.join(d, b + '.csv'))
            bench[b + '.json'] = open(os.path.join(d, b + '.json')).read()
        out.append(bench)
    # The link folders' p2p: sendrecv rows across two nodes, plus pingpong rows for the latency
    # (8 B: 2.5 us one way, the order of an InfiniBand half round trip).
    header, rows = out[0]['p2p']
    header = header + ['latency_us']
    col = {c: i for i, c in enumerate(header)}
    link_rows = []
    for r in rows:
        r = r + ['']
        if r[col['pattern']] == 'sendrecv':
            link_rows.append(r)
    for size in (8, 64, 512):
        r = list(link_rows[0])
        r[col['pattern']], r[col['direction']], r[col['size_bytes']] = 'pingpong', '', str(size)
        r[col['point']] = f'p2p/pingpong/r0-r1/s{size}'
        lat = 2.5 + size / 25e3
        r[col['latency_us']], r[col['bandwidth_gbps']] = repr(lat), repr(size / lat / 1e3)
        for c in ('time_us_median', 'time_us_p10', 'time_us_p90', 'time_us_min', 'time_us_max', 'time_us_mean'):
            r[col[c]] = repr(2 * lat)
        r[col['time_us_stdev']] = '0.01'
        link_rows.append(r)
    return out, (header, link_rows, col)


def circle_pairs(nodes, rounds):
    """rounds rounds of the circle method: each node in one pair per round."""
    n = len(nodes)
    ring = list(range(n))
    pairs = []
    for _ in range(rounds):
        for i in range(n // 2):
            a, b = nodes[ring[i]], nodes[ring[n - 1 - i]]
            pairs.append((a, b) if a < b else (b, a))
        ring = [ring[0]] + [ring[-1]] + ring[1:-1]
    return pairs


def write_fleet(path, n, night, templates, link, rounds, rng, start):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(os.path.join(path, 'nodes'))
    names = [f'node{i:05d}' for i in range(n)]
    drift = 1.03 ** night
    for i, name in enumerate(names):
        d = os.path.join(path, 'nodes', name)
        os.makedirs(d)
        t = templates[i % TEMPLATES]
        for b in ('gemm', 'memory', 'collectives', 'p2p'):
            fac = math.exp(rng.gauss(0, SPREADS['collectives' if b == 'p2p' else b]))
            if name == PLANTED['gemm_slow'] and b == 'gemm':
                fac *= 1.2
            if name == PLANTED['drift']:
                fac *= drift
            header, rows = t[b]
            write_scaled(os.path.join(d, b + '.csv'), header, rows, lambda r, f=fac: f)
            with open(os.path.join(d, b + '.json'), 'w') as f:
                f.write(t[b + '.json'])
    header, rows, col = link
    for a, b in circle_pairs(names, rounds):
        d = os.path.join(path, 'links', f'{a}--{b}')
        os.makedirs(d)
        noise = math.exp(rng.gauss(0, SPREADS['link']))
        half = PLANTED['link_half'] in (a, b)
        lat = PLANTED['lat_up'] in (a, b)
        drift_pair = drift if PLANTED['drift'] in (a, b) else 1.0

        def factor(r, noise=noise, half=half, lat=lat, drift_pair=drift_pair):
            f = noise * drift_pair
            if r['pattern'] == 'pingpong':
                return f * (1.3 if lat else 1.0)
            return f * (2.0 if half else 1.0)
        named = [list(r) for r in rows]
        for r in named:
            r[col['src_node']], r[col['dst_node']] = a, b
        write_scaled(os.path.join(d, 'p2p.csv'), header, named, factor)
        with open(os.path.join(d, 'p2p.json'), 'w') as f:
            f.write(templates[0]['p2p.json'])
    manifest = {'fleet_schema_version': 1, 'start_time': start, 'suite': 'fleet', 'cluster': 'simulated',
                'launcher': 'slurm', 'git_commit': 'simulated',
                'nodes': [{'name': x, 'status': 'ok', 'detail': ''} for x in names], 'steps': []}
    with open(os.path.join(path, 'fleet.json'), 'w') as f:
        json.dump(manifest, f)


def timed(cmd):
    """(exit code, wall s, peak RSS MiB) of cmd under /usr/bin/time."""
    started = time.monotonic()
    r = subprocess.run(['/usr/bin/time', '-f', '%M', *cmd], capture_output=True, text=True)
    wall = time.monotonic() - started
    rss = int(r.stderr.strip().splitlines()[-1]) / 1024
    return r.returncode, wall, rss, r


def suspects(fleet):
    report = json.load(open(os.path.join(fleet, 'report.json')))
    return set(report['suspect_nodes']), set(report['suspect_links'])


def report_scale(a, templates, link):
    print('\n| nodes | links | fleet report wall s | peak MiB | suspect nodes | planted named | false suspects |')
    print('| --- | --- | --- | --- | --- | --- | --- |')
    expected = {PLANTED[k] for k in ('gemm_slow', 'link_half', 'lat_up')}
    for n in a.nodes:
        path = os.path.join(a.work, f'fleet{n}')
        write_fleet(path, n, 0, templates, link, a.rounds, random.Random(n), '2026-01-01T02:00:00Z')
        rc, wall, rss, _ = timed([a.gpucal, 'fleet', 'report', path, '--expect', 'none'])
        nodes, links = suspects(path)
        print(f'| {n} | {n // 2 * a.rounds} | {wall:.2f} | {rss:.0f} | {len(nodes)} | '
              f'{len(expected & nodes)} of {len(expected)} | {sorted(nodes - expected)[:5]} (links {len(links)}) |')
        shutil.rmtree(path, ignore_errors=True)


def nights(a, templates, link):
    history = os.path.join(a.work, 'history.sqlite')
    if os.path.exists(history):
        os.remove(history)
    expected = {PLANTED[k] for k in ('gemm_slow', 'link_half', 'lat_up')}
    tp = fp = fn = 0
    drift_named, false_regressions, rows = None, 0, []
    path = os.path.join(a.work, 'night')
    for night in range(a.nights):
        start = f'2026-01-{night + 1:02d}T02:00:00Z' if night < 31 else f'2026-02-{night - 30:02d}T02:00:00Z'
        write_fleet(path, a.night_nodes, night, templates, link, a.rounds, random.Random(1000 + night), start)
        rc, wall, rss, _ = timed([a.gpucal, 'fleet', 'report', path, '--expect', 'none', '--history', history])
        nodes, _ = suspects(path)
        tp += len(expected & nodes)
        fn += len(expected - nodes)
        fp += len(nodes - expected - {PLANTED['drift']})
        line = f'| {night + 1} | {wall:.1f} | {sorted(nodes)} |'
        if night >= 1:
            out = os.path.join(a.work, 'regressions.json')
            rc, rwall, rrss, _ = timed([a.gpucal, 'history', 'regressions', '--history', history, '--json', out])
            flagged = {(t['node'], t['metric']) for t in json.load(open(out))['trends'] if t['regression']}
            drift_hits = {m for nd, m in flagged if nd == PLANTED['drift']}
            # Planted faults are steady from night 1: only the drift (the node, and the pairs it is
            # in) changes over time; the fleet as a whole does not.
            false = {x for x in flagged if PLANTED['drift'] not in x[0].split('--')}
            false_regressions += len(false)
            if drift_hits and drift_named is None:
                drift_named = night + 1
            line += f' {rwall:.1f} | {rrss:.0f} | {len(drift_hits)} | {sorted(false)[:3]} ({len(false)}) |'
        else:
            line += ' - | - | - | - |'
        print(line, flush=True)
    shutil.rmtree(path, ignore_errors=True)
    precision = tp / (tp + fp) if tp + fp else float('nan')
    recall = tp / (tp + fn) if tp + fn else float('nan')
    print(f'\nover {a.nights} nights of {a.night_nodes} nodes: planted faults named {tp} of {tp + fn} '
          f'(recall {recall:.3f}), false suspects {fp} (precision {precision:.3f}); the 3%-a-night drift first '
          f'named by history regressions on night {drift_named}; healthy series flagged: {false_regressions}')


def main():
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--gpucal', default=os.path.join(here, 'build', 'app', 'gpucal'))
    ap.add_argument('--synth', default=os.path.join(here, 'build', 'tests', 'calibration', 'write_synthetic_results'))
    ap.add_argument('--work', default='/tmp/gpucal-fleet-scale')
    ap.add_argument('--nodes', type=lambda s: [int(x) for x in s.split(',') if x], default=[1024, 4096])
    ap.add_argument('--nights', type=int, default=30)
    ap.add_argument('--night-nodes', type=int, default=1024)
    ap.add_argument('--rounds', type=int, default=3)
    a = ap.parse_args()
    os.makedirs(a.work, exist_ok=True)
    templates, link = make_templates(a.synth, a.work)
    print(f'spreads (relative sigma): {SPREADS}; planted: {PLANTED}; {a.rounds} link rounds')
    if a.nodes:
        report_scale(a, templates, link)
    if a.nights:
        print('\n| night | report s | suspect nodes | regressions s | peak MiB | drift metrics flagged | healthy series flagged |')
        print('| --- | --- | --- | --- | --- | --- | --- |')
        nights(a, templates, link)


if __name__ == '__main__':
    sys.exit(main())
