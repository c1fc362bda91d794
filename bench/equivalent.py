#!/usr/bin/env python3
"""Survivors of the carved suite killed by the explored tests (issue 28), raw and without the
mutants bench/equivalent-mutants.tsv argues no test can tell from the original.

Reads WORK/CRATE/mutants-full/missed.txt (what the carved suite left alive, bench/mutants.sh
--suites full) and WORK/CRATE/mutants-explored/missed.txt (what carved + explored tests left
alive of those, bench/mutants.sh --suites explored --only-missed-by full).

Usage: bench/equivalent.py --work DIR CRATE...
"""
import os
import sys


def lines(path):
    with open(path) as f:
        return {l.rstrip("\n") for l in f if l.strip()}


def main(argv):
    if len(argv) < 3 or argv[0] != "--work":
        print(__doc__.strip().splitlines()[-1], file=sys.stderr)
        return 2
    work, crates = argv[1], argv[2:]
    here = os.path.dirname(os.path.abspath(__file__))
    equivalent = {}
    with open(os.path.join(here, "equivalent-mutants.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            crate, name, _why = line.rstrip("\n").split("\t")
            equivalent.setdefault(crate, set()).add(name)
    print("| crate | survivors of the carved suite | argued equivalent | killed by the explored tests | killed (raw) | killed, equivalent ones left out |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    raw, kept = [], []
    for c in crates:
        try:
            full = lines(os.path.join(work, c, "mutants-full", "missed.txt"))
            alive = lines(os.path.join(work, c, "mutants-explored", "missed.txt")) & full
        except OSError as e:
            print(f"| {c} | not scored: {e} |")
            continue
        eq = equivalent.get(c, set()) & full
        killed = len(full) - len(alive)
        if eq & (full - alive):
            print(f"| {c} | an 'equivalent' mutant was killed: {sorted(eq & (full - alive))[0]} |")
            continue
        r = killed / len(full) if full else 0.0
        k = killed / (len(full) - len(eq)) if len(full) > len(eq) else 0.0
        raw.append(r)
        kept.append(k)
        print(f"| {c} | {len(full)} | {len(eq)} | {killed} | {100 * r:.1f}% | {100 * k:.1f}% |")
    if raw:
        print(f"| mean of {len(raw)} | | | | {100 * sum(raw) / len(raw):.1f}% | {100 * sum(kept) / len(kept):.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
