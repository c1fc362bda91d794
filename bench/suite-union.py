#!/usr/bin/env python3
"""Mutation score of two suites together: a base suite and the survivors another one kills.

Usage: bench/suite-union.py --work DIR [--base distilled] [--added explored] CRATE...

Reads what bench/mutants.sh left in WORK/CRATE:
  mutants-BASE/mutants.out/outcomes.json    the base suite on its scope (e.g. --scope lines)
  mutants-ADDED/mutants.out/outcomes.json   the added suite on the base's survivors only
                                            (bench/mutants.sh --suites ADDED --only-missed-by BASE)
A mutant is caught by the two suites together when either catches it (or times out under
it), so the union's score is (base caught + timeouts + added's kills of the base's
survivors) over the base's mutants built. The added run must have been made on this base
run's survivors: its alive-before.txt has to equal the base's missed.txt, or the crate is
reported as not comparable.

Prints a markdown row per crate (tests of each suite from WORK/CRATE/suite-*/) and the mean
of the scores. A benchmark, not a test: not part of .ci/run or of `cargo test`.
"""
import argparse
import glob
import json
import os
import sys


def outcomes(path):
    """{mutant name: summary} of a cargo-mutants outcomes.json."""
    out = {}
    for o in json.load(open(path))["outcomes"]:
        scenario = o.get("scenario")
        if isinstance(scenario, dict) and "Mutant" in scenario:
            out[scenario["Mutant"]["name"]] = o.get("summary")
    return out


def names(path):
    return sorted(l.rstrip("\n") for l in open(path) if l.strip())


def tests(work, crate, suite):
    n = 0
    for f in glob.glob(os.path.join(work, crate, f"suite-{suite}", "*.rs")):
        n += open(f).read().count("#[test]")
    return n


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--work", required=True)
    p.add_argument("--base", default="distilled")
    p.add_argument("--added", default="explored")
    p.add_argument("crates", nargs="+")
    a = p.parse_args()
    print(f"| crate | tests {a.base} | tests {a.added} | built | score {a.base} | "
          f"missed by {a.base} | of those, caught by {a.added} | score together |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    base_scores, union_scores = [], []
    for c in a.crates:
        d = os.path.join(a.work, c)
        bm, am = os.path.join(d, f"mutants-{a.base}"), os.path.join(d, f"mutants-{a.added}")
        try:
            base = outcomes(os.path.join(bm, "mutants.out", "outcomes.json"))
            added = outcomes(os.path.join(am, "mutants.out", "outcomes.json"))
            alive = names(os.path.join(am, "alive-before.txt"))
        except (OSError, ValueError, KeyError) as e:
            print(f"| {c} | not scored: {e} |")
            continue
        missed = sorted(n for n, s in base.items() if s == "MissedMutant")
        if alive != missed:
            print(f"| {c} | not comparable: {am} was not run on {bm}'s survivors "
                  f"(bench/mutants.sh --suites {a.added} --only-missed-by {a.base}) |")
            continue
        caught = sum(1 for s in base.values() if s in ("CaughtMutant", "Timeout"))
        built = caught + len(missed)
        killed = sum(1 for n in missed if added.get(n) in ("CaughtMutant", "Timeout"))
        if not built:
            print(f"| {c} | no mutant built |")
            continue
        bs, us = 100 * caught / built, 100 * (caught + killed) / built
        base_scores.append(bs)
        union_scores.append(us)
        print(f"| {c} | {tests(a.work, c, a.base)} | {tests(a.work, c, a.added)} | {built} | "
              f"{bs:.1f}% | {len(missed)} | {killed} | {us:.1f}% |")
    if base_scores:
        n = len(base_scores)
        print(f"| mean of {n} | | | | {sum(base_scores) / n:.1f}% | | | "
              f"{sum(union_scores) / n:.1f}% |")


if __name__ == "__main__":
    sys.exit(main())
