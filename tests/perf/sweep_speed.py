#!/usr/bin/env python3
"""How many layouts a second `gpucal predict --sweep` ranks: a benchmark, not a ctest test.

    python3 tests/perf/sweep_speed.py [--gpucal build/app/gpucal] [--results DIR] [--rounds 5]

Without --results it first makes one (`gpucal run --suite smoke --backend host`, about a minute).
Each round runs the same sweep, llama3-8b cut to 2 layers at 1/8 width, sequence 256, over
tp 1,2,4,8 x pp 1,2 x dp 1,2,4,...,128 x micro-batch 1,2,4,8 x zero 0..3 x cp 1,2,4 = 3072 layouts,
every one valid at the one global batch 1024 (--allow-missing, as the smoke folder lacks some
shapes; a skipped layout would be counted apart, not in the rate), writing the ranked JSON as a
user's sweep does. A round's figure is ranked layouts / wall seconds of the whole command
(start-up, loading the results and writing the ranking included). Prints each round and
the median, p10 and p90 over rounds."""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

SWEEP = ['tp=1,2,4,8', 'pp=1,2', 'dp=1,2,4,8,16,32,64,128', 'micro-batch=1,2,4,8', 'zero=0,1,2,3', 'cp=1,2,4']
MODEL = ['--model', 'llama3-8b', '--layers', '2', '--scale', '8', '--seq', '256', '--global-batch', '1024']


def main():
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--gpucal', default=os.path.join(here, 'build', 'app', 'gpucal'))
    ap.add_argument('--results', default='')
    ap.add_argument('--rounds', type=int, default=5)
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix='sweep_speed_')
    results = a.results
    if not results:
        results = os.path.join(work, 'smoke')
        subprocess.run([a.gpucal, 'run', '--suite', 'smoke', '--backend', 'host', '--no-plots', '--out', results],
                       check=False, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    rates = []
    for r in range(a.rounds):
        out = os.path.join(work, f'sweep{r}.json')
        start = time.perf_counter()
        p = subprocess.run([a.gpucal, 'predict', results, *MODEL, '--allow-suspect', '--allow-missing', '--quiet', '--sweep', *SWEEP,
                            '--output', out], capture_output=True, text=True)
        seconds = time.perf_counter() - start
        if p.returncode != 0:
            sys.exit(f'gpucal predict exited {p.returncode}: {p.stderr.strip().splitlines()[-1:]}')
        doc = json.load(open(out))
        layouts = len(doc['ranked'])
        rates.append(layouts / seconds)
        print(f'round {r + 1}: {layouts} layouts ranked ({len(doc["skipped"])} skipped) '
              f'in {seconds:.3f} s: {layouts / seconds:.0f} layouts/s')
    rates.sort()
    q = statistics.quantiles(rates, n=10) if len(rates) > 1 else [rates[0]] * 9
    print(f'layouts/s over {len(rates)} rounds: median {statistics.median(rates):.0f}, '
          f'p10 {q[0]:.0f}, p90 {q[-1]:.0f}')


if __name__ == '__main__':
    main()
