#!/usr/bin/env python3
"""Counts the carved tests (#[test] functions of the files given) and those whose only checks are
bare variant matches (`assert!(matches!(result, Some(_)))`: a wildcard inside and no literal),
or that check nothing but the `.unwrap()` getting the result out or drop it (`let _ =`; no mock
either),
the same rule as generator/src/report/bare.rs, for suites a carve without that count wrote.
Usage: bench/bare-checks.py FILE...   Prints: tests bare_only
"""
import re
import sys


def bare(pattern):
    words = re.split(r"[^A-Za-z0-9_]+", pattern)
    wildcard = ".." in pattern or "_" in words
    literal = any(c in pattern for c in "\"'-") or any(
        w[:1].isdigit() or w in ("true", "false") for w in words)
    return wildcard and not literal


def macro_args(text, start):
    """The text inside the parentheses opening at text[start]."""
    depth = 0
    for i in range(start, len(text)):
        if text[i] == "(":
            depth += 1
        elif text[i] == ")":
            depth -= 1
            if depth == 0:
                return text[start + 1:i]
    return text[start + 1:]


tests = bare_only = 0
for path in sys.argv[1:]:
    source = open(path).read()
    for chunk in source.split("#[test]")[1:]:
        tests += 1
        if "#[should_panic" in chunk.split("fn ", 1)[0]:
            continue
        checks = []
        for m in re.finditer(r"\b(assert\w*)!\s*\(", chunk):
            args = macro_args(chunk, m.end() - 1)
            inner = re.match(r"\s*matches!\s*\(", args)
            if m.group(1) == "assert" and inner:
                body = macro_args(args, inner.end() - 1)
                checks.append(bare(body.split(",", 1)[1]) if "," in body else False)
            else:
                checks.append(False)
        # A test with no check but the unwrap getting its result out says as little.
        unwrap_only = not checks and "mock" not in chunk and (
            re.search(r"\.(unwrap|unwrap_err)\(\)", chunk) or "let _ =" in chunk)
        if (checks and all(checks)) or unwrap_only:
            bare_only += 1
print(tests, bare_only)
