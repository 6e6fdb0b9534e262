#!/usr/bin/env python3
"""Checks umadfs's layering: which folder of src/ may include and call which.

A layer is a folder of src/ (inner tiers are folders too: fabric/snapshot),
its headers under the same path in include/umadfs/.  A module is a name:
its .c, and its header if it has one (main.c and supervisor are the
process, layer ".").  Prints, then exits 1 if it found any:
- every include that goes against MAY_USE below (upward or sideways);
- every cycle of modules, by includes and by calls: a module calls
  another when its .c calls a function that the other's .c defines, so a
  circle through a private header (health_priv.h, engine_priv.h: headers
  under src/, which the include rule cannot see) is found too;
- every function a module's header declares that the module's .c does
  not define (defined in another file, or nowhere): a .c defines what its
  own header declares.  (A header with no .c of its name, madtext.h the
  codec's text, and a private header, x_priv.h, declare what several
  files of their folder define.)
Usage: scripts/check-layers.py [REPO]
"""
import os
import re
import sys

BASE = {'base'}
BELOW_FEATURES = {'base', 'mad', 'engine', 'device', 'fuse'}
# What each layer may include besides itself (docs/architecture.md).  The
# fabric's tiers: the snapshot and how it is made; what is wrong with it;
# the threads that keep it current; the files; fabric.c on top.
MAY_USE = {
    'base': set(),
    'mad': BASE,
    'engine': {'base', 'mad'},
    'device': {'base', 'mad', 'engine'},
    'fuse': BASE,
    'ca': BELOW_FEATURES,
    'channel': BELOW_FEATURES,
    'rq': {'base', 'device', 'fuse'},
    'fabric/snapshot': {'base', 'mad', 'engine', 'device'},
    'fabric/problems': {'base', 'mad', 'device', 'fabric/snapshot'},
    'fabric/watch': BELOW_FEATURES | {'fabric/snapshot', 'fabric/problems'},
    'fabric/files': BELOW_FEATURES | {'fabric/snapshot', 'fabric/problems',
                                      'fabric/watch'},
    'fabric': BELOW_FEATURES | {'fabric/snapshot', 'fabric/problems',
                                'fabric/watch', 'fabric/files'},
    '.': BELOW_FEATURES | {'ca', 'channel', 'rq', 'fabric'},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"umadfs/((?:\w+/)*)(\w+)\.h"', re.M)
# A function's definition at the top level (this code's style: the return
# type, the name and the parameters, then the opening brace).
DEFINITION = re.compile(r'^((?:[A-Za-z_]\w*[ \t*]+)+)(\w+)\s*\(([^;{}]*)\)\s*\{', re.M)
# A prototype in a header.
PROTOTYPE = re.compile(r'^((?:[A-Za-z_]\w*[ \t*]+)+)(\w+)\s*\(([^;{}()]*(?:\([^()]*\)[^;{}()]*)*)\)'
                       r'\s*(?:__attribute__\s*\(\(.*?\)\)\s*)?;', re.M | re.S)
CALL = re.compile(r'\b([A-Za-z_]\w*)\s*\(')


def code_of(path):
    """The file's text without comments, strings and preprocessor lines
    (line count kept)."""
    text = open(path, encoding='utf-8').read()
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)
    text = re.sub(r"'(?:[^'\\\n]|\\.)*'", "''", text)
    return re.sub(r'^[ \t]*#[^\n]*(?:\\\n[^\n]*)*', '', text, flags=re.M)


def layer_of(rel_dir):
    """The layer a folder (relative to src/ or include/umadfs/) is in."""
    parts = [] if rel_dir in ('', '.') else rel_dir.split(os.sep)
    if not parts:
        return '.'
    if parts[0] == 'fabric' and len(parts) > 1:
        return 'fabric/' + parts[1]
    return parts[0]


def modules(repo):
    """{module: (layer, [paths])} for every .c and .h of the daemon."""
    found = {}
    for top in ('src', 'include/umadfs'):
        for dirpath, _, names in os.walk(os.path.join(repo, top)):
            layer = layer_of(os.path.relpath(dirpath, os.path.join(repo, top)))
            for name in names:
                stem, ext = os.path.splitext(name)
                if ext not in ('.c', '.h'):
                    continue
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
        for w in sorted(graph[v]):
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


def check_includes(repo, mods, graph):
    bad = 0
    for mod, (layer, paths) in sorted(mods.items()):
        for path in paths:
            for inc_dir, inc in INCLUDE.findall(open(path, encoding='utf-8').read()):
                inc_layer = layer_of(inc_dir.rstrip('/').replace('/', os.sep))
                if inc not in mods or mods[inc][0] != inc_layer:
                    print(f'{os.path.relpath(path, repo)}: includes umadfs/{inc_dir}{inc}.h, '
                          'which does not exist')
                    bad += 1
                    continue
                if inc != mod:
                    graph[mod].add(inc)
                if inc_layer != layer and inc_layer not in MAY_USE[layer]:
                    print(f'{os.path.relpath(path, repo)}: layer {layer} includes '
                          f'{inc_dir}{inc}.h (upward or sideways)')
                    bad += 1
    return bad


def definitions(mods):
    """{function: module} of every function a .c defines but static."""
    defs = {}
    for mod, (_, paths) in mods.items():
        for path in paths:
            if path.endswith('.c'):
                for m in DEFINITION.finditer(code_of(path)):
                    if 'static' not in m.group(1).split():
                        defs[m.group(2)] = mod
    return defs


def add_calls(mods, defs, graph):
    """A module to the modules whose functions its .c calls."""
    for mod, (_, paths) in mods.items():
        for path in paths:
            if path.endswith('.c'):
                for name in CALL.findall(code_of(path)):
                    callee = defs.get(name)
                    if callee and callee != mod:
                        graph[mod].add(callee)


def check_declared(repo, mods, defs):
    """Each function a module's header declares is defined by its .c."""
    bad = 0
    for mod, (_, paths) in sorted(mods.items()):
        if not any(p.endswith('.c') for p in paths):
            continue
        for path in paths:
            if not path.endswith('.h'):
                continue
            for m in PROTOTYPE.finditer(code_of(path)):
                words = m.group(1).split()
                name = m.group(2)
                if 'typedef' in words or 'static' in words or name in ('if', 'while'):
                    continue
                where = defs.get(name)
                if where == mod:
                    continue
                rel = os.path.relpath(path, repo)
                if where:
                    print(f'{rel}: declares {name}(), which {where}.c defines, not {mod}.c')
                else:
                    print(f'{rel}: declares {name}(), which no .c defines')
                bad += 1
    return bad


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    mods = modules(repo)
    graph = {m: set() for m in mods}
    bad = check_includes(repo, mods, graph)
    defs = definitions(mods)
    add_calls(mods, defs, graph)
    bad += check_declared(repo, mods, defs)
    for comp in cycles(graph):
        print('cycle (includes and calls): ' + ' <-> '.join(comp))
        bad += 1
    print(f'{len(mods)} modules, {sum(len(g) for g in graph.values())} module dependencies, '
          f'{bad} problems')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
