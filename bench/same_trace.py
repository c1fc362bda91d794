#!/usr/bin/env python3
"""Whether two `carve show --format json` runs hold the same trace, call for call: the rule of
tests/common/inprocess.rs (`assert_same_trace`), for bench/inprocess-real-crates.sh. Times
(`*_ns`) and pids are left out, thread ids become their order of first appearance; the
function tables must be equal too. Prints `yes`, or `no: ` and the first difference."""
import json
import sys


def strip(value, tids):
    if isinstance(value, dict):
        out = {}
        for key, v in value.items():
            if key.endswith("_ns"):
                continue
            if key == "thread":
                if v not in tids:
                    tids.append(v)
                out[key] = tids.index(v)
            else:
                out[key] = strip(v, tids)
        return out
    if isinstance(value, list):
        return [strip(v, tids) for v in value]
    return value


def first_difference(a, b, path=""):
    if type(a) is not type(b):
        return f"{path}: {json.dumps(a)[:80]} vs {json.dumps(b)[:80]}"
    if isinstance(a, dict):
        for key in sorted(set(a) | set(b)):
            if key not in a or key not in b:
                return f"{path}.{key}: only in {'the first' if key in a else 'the second'}"
            d = first_difference(a[key], b[key], f"{path}.{key}")
            if d:
                return d
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} vs {len(b)} items"
        for i, (x, y) in enumerate(zip(a, b)):
            d = first_difference(x, y, f"{path}[{i}]")
            if d:
                return d
        return None
    return None if a == b else f"{path}: {json.dumps(a)[:80]} vs {json.dumps(b)[:80]}"


def main():
    try:
        first, second = (json.load(open(p)) for p in sys.argv[1:3])
    except (OSError, ValueError) as e:
        print(f"no: unreadable ({e})")
        return
    first_tids, second_tids = [], []
    a = [strip(c, first_tids) for c in first["calls"]]
    b = [strip(c, second_tids) for c in second["calls"]]
    if len(a) != len(b):
        print(f"no: {len(a)} vs {len(b)} calls")
        return
    for n, (x, y) in enumerate(zip(a, b)):
        d = first_difference(x, y)
        if d:
            print(f"no: call {n}{d}")
            return
    d = first_difference(first["functions"], second["functions"], "functions")
    print(f"no: {d}" if d else "yes")


if __name__ == "__main__":
    main()
