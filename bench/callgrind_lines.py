#!/usr/bin/env python3
"""The source lines a callgrind run executed, independent of carve.

Usage:
    callgrind_lines.py [--under DIR] [--base DIR] [--relative-to DIR] CALLGRIND_OUT...
    callgrind_lines.py --self-test

Prints the union, over the given callgrind output files, of the (source file, line) pairs with a
non-zero cost, one `file:line` a line, sorted. `--under DIR` keeps only files inside DIR (for
example a crate's src/). File names are made absolute (relative ones against `--base`, default
the current directory) and resolved through symlinks before they are compared; `--relative-to`
prints them relative to a directory instead of absolute.

Best read from `valgrind --tool=callgrind --dump-instr=no --compress-strings=no
--compress-pos=no`, but compressed names (`(12) name`), relative positions (`+3`, `-1`, `*`)
and instruction positions (`positions: instr line`) are understood too.

How the file of a cost line is found (Callgrind format, as callgrind_annotate reads it): `fl=`
names the file of the function that follows, `fi=` / `fe=` switch the file for the following
cost lines (code inlined from another file, and back), and `fn=` does not change it. A cost line
right after `calls=` is the call site, in the current file, carrying the callee's inclusive cost:
the line ran, so it counts. `cfl=`/`cfi=`/`cfn=`/`cob=` name the callee and do not move the
current file.
"""
import os
import re
import sys
import tempfile

NAME_RE = re.compile(r"^\((\d+)\)(?:\s(.*))?$")


def _name(table, value):
    """Undoes name compression: `(id) name` defines, `(id)` refers."""
    m = NAME_RE.match(value)
    if not m:
        return value
    if m.group(2) is not None:
        table[m.group(1)] = m.group(2)
        return m.group(2)
    return table.get(m.group(1), value)


def lines_of(path, base):
    """Yields (absolute file, line) for every cost line of `path` with a non-zero cost."""
    files = {}
    positions = ["line"]
    line_index = 0
    current_file = None
    prev = [0] * len(positions)
    with open(path, encoding="utf-8", errors="replace") as f:
        for raw in f:
            line = raw.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            c = line[0]
            if c.isdigit() or c in "+-*" or line.startswith("0x"):
                parts = line.split()
                n = len(positions)
                pos = []
                for i, tok in enumerate(parts[:n]):
                    if tok == "*":
                        v = prev[i]
                    elif tok[0] in "+-":
                        v = prev[i] + int(tok)
                    else:
                        v = int(tok, 0)
                    pos.append(v)
                while len(pos) < n:
                    pos.append(prev[len(pos)])
                prev = pos
                costs = parts[n:]
                if current_file is None or not any(int(x, 0) != 0 for x in costs):
                    continue
                if pos[line_index] <= 0:  # code with no source line (line 0): not a line of the file
                    continue
                yield current_file, pos[line_index]
                continue
            if "=" in line:
                key, value = line.split("=", 1)
                if key == "fl" or key in ("fi", "fe"):
                    name = _name(files, value)
                    current_file = None if name in ("???", "") else _absolute(name, base)
                elif key in ("cfl", "cfi"):
                    _name(files, value)  # may define a compressed name used later
                # fn=, cfn=, ob=, cob=, calls=, jump=, jcnd=...: do not move the current file
                continue
            m = re.match(r"^(\w[\w ]*):\s*(.*)$", line)
            if m and m.group(1) == "positions":
                positions = m.group(2).split()
                line_index = positions.index("line") if "line" in positions else 0
                prev = [0] * len(positions)


def _absolute(name, base):
    return os.path.realpath(name if os.path.isabs(name) else os.path.join(base, name))


def collect(paths, under=None, base=None):
    base = base or os.getcwd()
    under = os.path.realpath(under) if under else None
    out = set()
    for p in paths:
        for file, line in lines_of(p, base):
            if under is None or file == under or file.startswith(under + os.sep):
                out.add((file, line))
    return out


def render(pairs, relative_to=None):
    rel = os.path.realpath(relative_to) if relative_to else None
    rows = []
    for file, line in sorted(pairs):
        shown = os.path.relpath(file, rel) if rel else file
        rows.append(f"{shown}:{line}")
    return rows


def self_test():
    with tempfile.TemporaryDirectory() as d:
        src = os.path.join(d, "lib", "src")
        os.makedirs(src)
        out = os.path.join(d, "callgrind.out.1")
        with open(out, "w") as f:
            f.write(
                "# callgrind format\nversion: 1\ncreator: hand\npid: 1\ncmd: ./app\n"
                "positions: line\nevents: Ir\n\n"
                f"ob=(1) /bin/app\nfl=(1) {src}/lib.rs\nfn=(1) lib::f\n"
                "10 3\n11 0\n0 4\n"  # line 11 has no cost; line 0 is no source line
                f"fi=(2) {src}/inl.rs\n5 2\n"  # inlined from another file of the crate
                "fe=(1)\n12 1\n"  # back in lib.rs, through a compressed name
                f"cfl=(3) /rust/core/mod.rs\ncfn=(2) core::g\ncalls=1 7\n13 40\n"  # call site
                "14 1\n"  # still lib.rs: a call does not move the current file
                "fl=(3)\nfn=(2)\n7 40\n"  # the callee, outside the crate
                "fl=src/rel.rs\nfn=(3) lib::h\n+2 1\n+1 1\n* 1\n-2 0\n"  # relative name; positions relative to the previous cost line (7)
                "fl=???\nfn=(4) unknown\n1 5\n"
                "totals: 95\n"
            )
        got = render(collect([out], under=src, base=os.path.join(d, "lib")), relative_to=src)
        want = ["inl.rs:5", "lib.rs:10", "lib.rs:12", "lib.rs:13", "lib.rs:14", "rel.rs:9", "rel.rs:10"]
        if got != want:
            print(f"self-test FAILED:\n  got  {got}\n  want {want}", file=sys.stderr)
            return 1
        print("self-test passed")
        return 0


def main(argv):
    if argv == ["--self-test"]:
        return self_test()
    under = base = relative_to = None
    files = []
    it = iter(argv)
    for a in it:
        if a == "--under":
            under = next(it)
        elif a == "--base":
            base = next(it)
        elif a == "--relative-to":
            relative_to = next(it)
        elif a in ("-h", "--help"):
            print(__doc__)
            return 0
        else:
            files.append(a)
    if not files:
        print(__doc__, file=sys.stderr)
        return 2
    for row in render(collect(files, under=under, base=base), relative_to):
        print(row)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
