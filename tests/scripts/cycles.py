#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""cycles.py BUILD_DIR: the import circles of baton's sources.

A file uses another when its object file refers to a symbol the other's
defines (nm: what the linker would resolve between them), which sees
through a header that declares the functions of several files (serve.h
did). The strongly connected components of that graph of more than one
file are the circles: each is printed, one a line, with its size. Also
every library file (src/ but the front ends src/cli/, src/serve/ and
src/acp/) that uses a front-end file, which must be none. Exit 0 when
there is neither a circle nor such a use, 1 otherwise, and 1 when BUILD_DIR
holds no object files of baton's libraries (nothing read is no pass).
ctest runs it as `cycles` (tests/layering/CMakeLists.txt).
"""
import glob
import os
import re
import subprocess
import sys

FRONT = ("src/cli/", "src/serve/", "src/acp/")


TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def objects(build):
    out = {}
    for o in glob.glob(os.path.join(build, "CMakeFiles", "*.dir", "**", "*.o"), recursive=True):
        if "/tests/" in o or "CMakeFiles/baton_" not in o:
            continue
        part = o.split(".dir/", 1)[1]
        if not part.startswith(("src/", "runners/", "parsers/")):
            continue
        if not os.path.exists(os.path.join(TOP, part[:-2])):
            continue  # a stale object of a file that is gone
        out[part[:-2]] = o
    return out


def symbols(path):
    defined, used = set(), set()
    text = subprocess.run(["nm", path], capture_output=True, text=True, check=True).stdout
    for line in text.splitlines():
        f = line.split()
        if len(f) == 2 and f[0] == "U":
            used.add(f[1])
        elif len(f) == 3 and f[1] in "TDBRC":
            defined.add(f[2])
    return defined, used


def sccs(nodes, edges):
    index, low, stack, on, out = {}, {}, [], set(), []
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in edges.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return out


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    objs = objects(build)
    if not objs or not any(f.startswith(FRONT) for f in objs):
        print(f"cycles: no object files of baton's libraries under {build}/CMakeFiles")
        return 1
    owner, uses = {}, {}
    for f, o in objs.items():
        d, u = symbols(o)
        uses[f] = u
        for s in d:
            owner[s] = f
    edges = {f: sorted({owner[s] for s in u if s in owner and owner[s] != f}) for f, u in uses.items()}
    circles = [c for c in sccs(objs, edges) if len(c) > 1]
    bad = []
    for f, to in edges.items():
        if f.startswith("src/") and not f.startswith(FRONT):
            bad += [f"{f} uses {t}" for t in to if t.startswith(FRONT)]
    for c in sorted(circles, key=len, reverse=True):
        print(f"circle of {len(c)}: {' '.join(os.path.basename(x) for x in c)}")
    print(f"{len(circles)} circles, {sum(len(c) for c in circles)} files in them")
    for b in bad:
        print(f"library uses a front end: {b}")
    return 1 if bad or circles else 0


if __name__ == "__main__":
    sys.exit(main())
