#!/usr/bin/env python3
"""bench_step --list prints the step it would time: the same facts and every operation, in the
derivation's order, as `bench_gemm --list-all` with the same model flags (one derivation), and
runs nothing (no file written, exit 0).

Usage: check_step_list.py BENCH_STEP BENCH_GEMM WORK_DIR MODEL_FLAGS...
"""
import os
import shutil
import subprocess
import sys

step, gemm, work, flags = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
out = os.path.join(work, 'step.csv')
listed = subprocess.run([step, *flags, '--list', '--out', out], capture_output=True, text=True, timeout=60)
every = subprocess.run([gemm, *flags, '--list-all'], capture_output=True, text=True, timeout=60)
failures = []
if listed.returncode != 0 or every.returncode != 0:
    failures.append(f'exit {listed.returncode} / {every.returncode}: {listed.stderr}{every.stderr}')
ops = [line for line in listed.stdout.splitlines() if line and not line.startswith('#')]
if len(ops) < 10 or ops[0] != 'bench,op_role,calls_per_step,dtype,shape,flops_per_call':
    failures.append(f'{len(ops)} lines, first {ops[:1]}')
if listed.stdout != every.stdout:
    failures.append('bench_step --list differs from bench_gemm --list-all:\n' + listed.stdout[:2000] + '\n---\n' + every.stdout[:2000])
benches = {line.split(',')[0] for line in ops[1:]}
if not {'gemm', 'attention', 'memory', 'collectives'} <= benches:
    failures.append(f'benches listed: {sorted(benches)}')
if os.listdir(work):
    failures.append(f'--list wrote {os.listdir(work)}')
for f in failures:
    print('FAIL:', f)
print(f"{'FAILED' if failures else 'ok'}: {len(ops) - 1} operations listed")
sys.exit(1 if failures else 0)
