#!/usr/bin/env python3
"""Checks umadfs's layering: which folder of src/ may include which.

Each module is a name with its .c under src/LAYER/ and its header under
include/umadfs/LAYER/ (main.c and supervisor are the process, layer ".").
Prints every include that goes against the rule below and every cycle of
modules (a includes b's header, b includes a's, perhaps through others),
then exits 1 if it found any.  Usage: scripts/check-layers.py [REPO]
"""
import os
import re
import sys

# What each layer may include besides itself (docs/architecture.md).
MAY_USE = {
    'base': set(),
    'mad': {'base'},
    'engine': {'base', 'mad'},
    'device': {'base', 'mad', 'engine'},
    'fuse': {'base'},
    'ca': {'base', 'mad', 'engine', 'device', 'fuse'},
    'channel': {'base', 'mad', 'engine', 'device', 'fuse'},
    'rq': {'base', 'device', 'fuse'},
    'fabric': {'base', 'mad', 'engine', 'device', 'fuse'},
    '.': {'base', 'mad', 'engine', 'device', 'fuse', 'ca', 'channel', 'rq', 'fabric'},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"umadfs/(?:(\w+)/)?(\w+)\.h"', re.M)


def modules(repo):
    """{module: (layer, [paths])} for every .c and .h of the daemon."""
    found = {}
    for top in ('src', 'include/umadfs'):
        for dirpath, _, names in os.walk(os.path.join(repo, top)):
            rel = os.path.relpath(dirpath, os.path.join(repo, top))
            for name in names:
                stem, ext = os.path.splitext(name)
                if ext not in ('.c', '.h'):
                    continue
                layer = rel.split(os.sep)[0]
                entry = found.setdefault(stem, (layer, []))
                if entry[0] != layer:
                    sys.exit(f'{stem}: in two layers ({entry[0]}, {layer})')
                entry[1].append(os.path.join(dirpath, name))
    return found


def cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
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
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    mods = modules(repo)
    graph = {m: set() for m in mods}
    bad = 0
    for mod, (layer, paths) in sorted(mods.items()):
        for path in paths:
            text = open(path, encoding='utf-8').read()
            for inc_layer, inc in INCLUDE.findall(text):
                inc_layer = inc_layer or '.'
                if inc not in mods or mods[inc][0] != inc_layer:
                    print(f'{os.path.relpath(path, repo)}: includes umadfs/{inc_layer}/{inc}.h, which does not exist')
                    bad += 1
                    continue
                if inc != mod:
                    graph[mod].add(inc)
                if inc_layer != layer and inc_layer not in MAY_USE[layer]:
                    print(f'{os.path.relpath(path, repo)}: layer {layer} includes {inc_layer}/{inc}.h (upward or sideways)')
                    bad += 1
    for comp in cycles(graph):
        print('cycle: ' + ' <-> '.join(comp))
        bad += 1
    print(f'{len(mods)} modules, {sum(len(g) for g in graph.values())} module dependencies, {bad} problems')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
