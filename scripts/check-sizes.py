#!/usr/bin/env python3
"""Checks the daemon's sizes (issue 29): no C file of src/ or include/
over FILE_MAX lines, no function over FUNCTION_MAX.

A function is counted from the first line of its definition (the return
type) to its closing brace, both included: a definition at the top level
in this code's style (the return type, the name and the parameters, then
the opening brace, on one line or several), which ends at the first '}'
in column 0 after it.  Prints each file and function over its limit,
then exits 1 if it found any.
Usage: scripts/check-sizes.py [REPO]
"""
import os
import re
import sys

FILE_MAX = 800
FUNCTION_MAX = 60

# The start of a definition: a line in column 0 that begins with a type
# and reaches a name and '(' (static int foo(, struct x *bar(, int main().
START = re.compile(r'^(?!typedef\b|struct\s+\w+\s*\{|enum\b|union\b|#)'
                   r'(?:[A-Za-z_]\w*[ \t*]+)+\**([A-Za-z_]\w*)\s*\(')


def functions(lines):
    """(name, first line, last line) of each function defined, from 1."""
    out = []
    i = 0
    while i < len(lines):
        m = START.match(lines[i])
        if not m:
            i += 1
            continue
        # The definition's head runs to a line that opens its body ('{'
        # alone in column 0, or ending the head); a ';' first: a prototype.
        j = i
        while j < len(lines) and not lines[j].rstrip().endswith(';') and \
                lines[j].rstrip() != '{' and not lines[j].rstrip().endswith('{'):
            j += 1
        if j == len(lines) or lines[j].rstrip().endswith(';'):
            i = j + 1
            continue
        k = j + 1 if lines[j].rstrip() != '}' else j
        while k < len(lines) and not lines[k].startswith('}'):
            k += 1
        out.append((m.group(1), i + 1, k + 1))
        i = k + 1
    return out


def sources(repo):
    for top in ('src', 'include'):
        for dirpath, _, names in os.walk(os.path.join(repo, top)):
            for name in sorted(names):
                if name.endswith(('.c', '.h')):
                    yield os.path.join(dirpath, name)


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..')
    bad = nfiles = nfuncs = 0
    for path in sorted(sources(repo)):
        rel = os.path.relpath(path, repo)
        with open(path, encoding='utf-8') as f:
            lines = f.read().split('\n')
        if lines and lines[-1] == '':
            lines.pop()
        nfiles += 1
        if len(lines) > FILE_MAX:
            print(f'{rel}: {len(lines)} lines (at most {FILE_MAX})')
            bad += 1
        for name, first, last in functions(lines):
            nfuncs += 1
            if last - first + 1 > FUNCTION_MAX:
                print(f'{rel}:{first}: {name}() is {last - first + 1} lines '
                      f'(at most {FUNCTION_MAX})')
                bad += 1
    print(f'{nfiles} files, {nfuncs} functions, {bad} over their limits')
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main())
