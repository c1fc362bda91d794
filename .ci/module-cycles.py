#!/usr/bin/env python3
"""No import cycle between the generator's modules (issue 31).

Reads every .rs file under generator/src, takes each file as one module (tests are left out,
inline `mod tests` blocks and files declared `#[cfg(test)] mod tests;`: a test may use anything), and draws an edge A -> B for every path in A that
names module B: `use crate::b::...`, `crate::b::x` in code, `super::b` and `self::b`. A path
naming an item of a module (`crate::plan::Plan`) points at the deepest module file it reaches.
A module's edges to its own submodules (its `mod x;` and `pub use x::...`) count too. Then:
  - files: any cycle between module files fails;
  - stages: the same edges between the top-level folders and files of generator/src fail when
    they loop (a stage calling back up).
Prints each cycle found, exits 1 if any. `--edges` prints the edges (file level), `--stages`
the stage-level edges.

Usage: .ci/module-cycles.py [--edges] [--stages] [SRC_DIR]   (default: generator/src)
"""
import os
import re
import sys


def module_of(path, src):
    rel = os.path.relpath(path, src)[:-3]  # strip .rs
    parts = rel.split(os.sep)
    if parts[-1] in ("lib", "main") and len(parts) == 1:
        return ()
    if parts[-1] == "mod":
        parts = parts[:-1]
    return tuple(parts)


def strip_tests_and_comments(text):
    # Drop line comments and doc comments, string literals (crudely), and `#[cfg(test)] mod x { .. }`.
    out = []
    for line in text.split("\n"):
        line = re.sub(r'"([^"\\]|\\.)*"', '""', line)
        i = line.find("//")
        if i >= 0:
            line = line[:i]
        out.append(line)
    text = "\n".join(out)
    while True:
        m = re.search(r"#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod\s+\w+\s*\{", text)
        if not m:
            break
        depth, j = 0, m.end() - 1
        while j < len(text):
            if text[j] == "{":
                depth += 1
            elif text[j] == "}":
                depth -= 1
                if depth == 0:
                    break
            j += 1
        text = text[: m.start()] + text[j + 1 :]
    return text


def use_paths(text):
    """Every path a file names, as a list of segments: `use` trees expanded."""
    paths = []
    for m in re.finditer(r"\buse\s+([^;]+);", text):
        paths.extend(expand(m.group(1).strip()))
    body = re.sub(r"\buse\s+[^;]+;", "", text)
    for m in re.finditer(r"\b((?:crate|super|self)(?:::\w+)+)", body):
        paths.append(m.group(1).split("::"))
    return paths


def expand(tree):
    # An alias (`x as y`) goes before the spaces do: `classes` does not end in one.
    tree = re.sub(r"\s+as\s+\w+", "", tree)
    tree = re.sub(r"\s+", "", tree)
    if "{" not in tree:
        return [[s for s in tree.split("::") if s]]
    i = tree.index("{")
    prefix = [s for s in tree[:i].split("::") if s]
    inner = tree[i + 1 : tree.rindex("}")]
    parts, depth, cur = [], 0, ""
    for ch in inner:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += ch == "{"
        depth -= ch == "}"
        cur += ch
    if cur:
        parts.append(cur)
    out = []
    for p in parts:
        if p == "self":
            out.append(prefix)
        else:
            out.extend(prefix + q for q in expand(p))
    return out


def resolve(segments, here, modules):
    """The deepest module file a path reaches, from module `here`."""
    if not segments:
        return None
    head, rest = segments[0], segments[1:]
    if head == "crate":
        base = ()
    elif head == "super":
        base = here[:-1]
        while rest and rest[0] == "super":
            base, rest = base[:-1], rest[1:]
    elif head == "self":
        base = here
    else:
        # `mod x;`-relative names (`use x::y` after `mod x;`) in the 2018 edition: a child.
        if here + (head,) in modules:
            base, rest = here + (head,), rest
        else:
            return None
    target = base
    for s in rest:
        if target + (s,) in modules:
            target = target + (s,)
        else:
            break
    return target


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    src = args[0] if args else "generator/src"
    files = []
    for root, _, names in os.walk(src):
        for n in names:
            if n.endswith(".rs"):
                files.append(os.path.join(root, n))
    modules = {module_of(f, src): f for f in files}
    # Modules declared `#[cfg(test)] mod x;` (a file of tests) are left out, as inline ones are.
    for m, f in list(modules.items()):
        for sub in re.findall(r"#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", open(f).read()):
            modules.pop(m + (sub,), None)
    edges = {m: set() for m in modules}
    for m, f in modules.items():
        text = strip_tests_and_comments(open(f).read())
        for segs in use_paths(text):
            t = resolve(segs, m, modules)
            if t is not None and t != m:
                edges[m].add(t)
        for sub in re.findall(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;", text, re.M):
            if m + (sub,) in modules:
                edges[m].add(m + (sub,))
    name = lambda m: "::".join(m) or "lib"
    if "--edges" in sys.argv:
        for m in sorted(edges):
            for t in sorted(edges[m]):
                print(f"{name(m)} -> {name(t)}")
    status = 0
    # Files: a parent declaring its children is not a use; only its other edges count.
    use_edges = {m: {t for t in ts if not (t[:-1] == m and declared(modules[m], t[-1]) and not uses(modules[m], t[-1]))} for m, ts in edges.items()}
    for cyc in cycles(use_edges):
        print("module cycle: " + " -> ".join(name(m) for m in cyc + [cyc[0]]))
        status = 1
    stage = lambda m: m[0] if m else "lib"
    stage_edges = {}
    for m, ts in use_edges.items():
        for t in ts:
            a, b = stage(m), stage(t)
            if a != b and a != "lib":
                stage_edges.setdefault(a, set()).add(b)
                stage_edges.setdefault(b, set())
    if "--stages" in sys.argv:
        for a in sorted(stage_edges):
            for b in sorted(stage_edges[a]):
                print(f"stage {a} -> {b}")
    for cyc in cycles(stage_edges):
        print("stage cycle: " + " -> ".join(cyc + [cyc[0]]))
        status = 1
    if status == 0:
        print(f"module-cycles: no cycle among {len(modules)} modules and {len(stage_edges)} stages")
    return status


def declared(path, sub):
    return re.search(rf"^\s*(pub(\([^)]*\))?\s+)?mod\s+{sub}\s*;", open(path).read(), re.M) is not None


def uses(path, sub):
    """Whether the parent names anything of child `sub` beyond declaring it."""
    text = strip_tests_and_comments(open(path).read())
    text = re.sub(rf"^\s*(pub(\([^)]*\))?\s+)?mod\s+{sub}\s*;", "", text, flags=re.M)
    return re.search(rf"\b{sub}::", text) is not None or re.search(rf"\buse\s+[^;]*\b{sub}\b", text) is not None


def cycles(edges):
    """One cycle per strongly connected component with more than one node (Tarjan)."""
    index, low, on, stack, out, counter = {}, {}, set(), [], [], [0]

    def strong(v):
        work = [(v, iter(sorted(edges.get(v, ()))))]
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        while work:
            node, it = work[-1]
            advanced = False
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter[0]
                    counter[0] += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    advanced = True
                    break
                if w in on:
                    low[node] = min(low[node], index[w])
            if advanced:
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(path_in(comp, edges))

    for v in sorted(edges):
        if v not in index:
            strong(v)
    return out


def path_in(comp, edges):
    """A cycle through the component's first node, for the message."""
    comp_set = set(comp)
    start = min(comp)
    prev, queue, seen = {}, [start], {start}
    while queue:
        v = queue.pop(0)
        for w in sorted(edges.get(v, ())):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return list(reversed(path))
            if w in comp_set and w not in seen:
                seen.add(w)
                prev[w] = v
                queue.append(w)
    return comp


if __name__ == "__main__":
    sys.exit(main())
