#!/usr/bin/env python3
"""One meaning per flag: every long flag of gpucal's verbs (nested verbs included) takes the same
kind of value in every verb that has it: a switch everywhere or a value everywhere, and the same
kind of value (FILE, DIR, INT, a set of choices). `gpucal list flags --as json` is the table
(app/list/flag_listing.cpp); docs/flags.md shows it. A flag whose defaults differ between verbs is
allowed (each row shows its own), two kinds of value are not.

usage: check_flags.py GPUCAL
Exit 0 when each flag has one kind, 1 with one line per flag that has several."""
import collections
import json
import subprocess
import sys


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out = subprocess.run([sys.argv[1], "list", "flags", "--as", "json"], capture_output=True, text=True, timeout=60)
    if out.returncode != 0:
        print(f"gpucal list flags exited {out.returncode}: {out.stderr.strip()}")
        return 1
    rows = json.loads(out.stdout)
    takes = collections.defaultdict(dict)
    for row in rows:
        takes[row["flag"]].setdefault(row["takes"], []).append(row["verbs"])
    # A verb that refuses one of a flag's words (check's --expect has no `none`) takes the same kind
    # of value: choices a|b|FILE and a|FILE are one kind when one's words hold the other's.
    for flag, kinds in takes.items():
        for small in sorted(kinds, key=len):
            big = next((k for k in kinds if k != small and set(small.split("|")) < set(k.split("|"))), None)
            if big and "|" in small:
                kinds[big] += kinds.pop(small)
    problems = [f"{flag}: {len(kinds)} meanings: " + "; ".join(f"{k} in {', '.join(v)}" for k, v in kinds.items())
                for flag, kinds in sorted(takes.items()) if len(kinds) > 1]
    # The test can fail: the table must hold the flags every verb is known to take.
    for flag, kind in (("--out", "DIR"), ("--output", "FILE"), ("--as", "{text,markdown,json}"), ("--json", "FILE")):
        if set(takes.get(flag, {})) != {kind}:
            problems.append(f"{flag}: expected to take {kind}, the table says {sorted(takes.get(flag, {}))}")
    for p in problems:
        print(p)
    print(f"{len(takes)} flags in {len(rows)} rows; {len(problems)} problem(s)")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
