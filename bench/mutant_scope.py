#!/usr/bin/env python3
"""The mutants a run reached, as a --re for cargo mutants.

Usage: mutant_scope.py LIST.json APP.lines lines|functions

LIST.json is `cargo mutants --list --json`; APP.lines the run's lines by callgrind
(FILE:LINE per line, bench/callgrind_lines.py). `lines` keeps the mutants on a line the run
executed; `functions` those of every function the run reached a line of (whole functions).
Prints a regex matching their names (FILE:LINE:), empty when none is reached.
"""
import json
import re
import sys

mutants = json.load(open(sys.argv[1]))
scope = sys.argv[3]
run = {}
for l in open(sys.argv[2]):
    f, _, n = l.strip().rpartition(":")
    if f:
        run.setdefault(f, set()).add(int(n))


def reached(m):
    f, line = m["file"], m["span"]["start"]["line"]
    if scope != "functions":
        return line in run.get(f, ())
    fn = (m.get("function") or {}).get("span")
    return fn is not None and any(fn["start"]["line"] <= n <= fn["end"]["line"] for n in run.get(f, ()))


lines = {}
for m in mutants:
    if reached(m):
        lines.setdefault(m["file"], set()).add(m["span"]["start"]["line"])
parts = [re.escape(f) + ":(" + "|".join(str(n) for n in sorted(ls)) + "):" for f, ls in sorted(lines.items())]
print("^(" + "|".join(parts) + ")" if parts else "")
