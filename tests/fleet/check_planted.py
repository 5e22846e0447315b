#!/usr/bin/env python3
"""Checks one planted-fault run (tests/fleet/planted_faults.sh): the report names exactly the
planted nodes (as nodes: hung, slow or with all pairs slow) and no link. Prints the run's line of
the results table; exit 1 when the report missed a fault or named anything else.

With ALL (every node of the cluster), the run was made with --drain: each planted node must be
drained in Slurm with gpucal's finding as its reason, and no other node drained.

Usage: check_planted.py FLEET_DIR PLANTED(comma list) RUN SECONDS [ALL(comma list)]
"""
import json
import os
import subprocess
import sys

fleet, planted, run, seconds = sys.argv[1], set(sys.argv[2].split(',')), sys.argv[3], sys.argv[4]
try:
    report = json.load(open(os.path.join(fleet, 'report.json')))
except (OSError, ValueError) as e:
    print(f'| {run} | {seconds} | - | - | no report: {e} |')
    sys.exit(1)
named = set(report['suspect_nodes'])
links = report['suspect_links']
missed, extra = sorted(planted - named), sorted(named - planted)
reasons = {}
for s in report['suspects']:
    if s['subject'] in planted:
        reasons.setdefault(s['subject'], s['kind'] + (' ' + s['metric'] if s['metric'] else ''))
verdict = 'ok' if not missed and not extra and not links else f'missed {missed}, extra {extra}, links {links}'
if len(sys.argv) > 5:
    wrong = []
    for node in sys.argv[5].split(','):
        shown = subprocess.run(['scontrol', '-o', 'show', 'node', node], capture_output=True, text=True, timeout=30).stdout
        state = next((w.split('=', 1)[1] for w in shown.split() if w.startswith('State=')), '?')
        drained = 'DRAIN' in state and 'Reason=gpucal fleet' in shown
        if drained != (node in planted):
            wrong.append(f'{node} {state}')
    if wrong:
        verdict = (verdict + '; ' if verdict != 'ok' else '') + f'drain states wrong: {wrong}'
    elif verdict == 'ok':
        verdict = 'ok; drained: the planted nodes, no other'
named_text = ', '.join(f'{n} ({reasons.get(n, "?")})' for n in sorted(named)) or 'none'
print(f"| {run} | {seconds} | {named_text} | {', '.join(links) or 'none'} | {verdict} |")
sys.exit(0 if verdict == 'ok' or verdict.startswith('ok; ') else 1)
