#!/usr/bin/env python3
"""scripts/check-layers.py on small trees planted for it: a clean one
passes; a call circle through a private header, an include upward
between the fabric's tiers and a function its own header declares but
another file defines each fail it."""
import os
import subprocess
import sys
import tempfile

CHECKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..',
                       'scripts', 'check-layers.py')


def tree(files):
    """A repository of files {path: text}; its path."""
    root = tempfile.mkdtemp(prefix='check-layers-')
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as f:
            f.write(text)
    return root


def run(files):
    cp = subprocess.run([sys.executable, CHECKER, tree(files)], capture_output=True,
                        text=True)
    return cp.returncode, cp.stdout


CLEAN = {
    'include/umadfs/base/num.h': 'int num_parse(const char *s);\n',
    'src/base/num.c': '#include "umadfs/base/num.h"\nint num_parse(const char *s)\n{\n\treturn 0;\n}\n',
    'src/fabric/problems/judge_priv.h': 'int judge_add(int k);\nint judge_links(void);\n',
    'src/fabric/problems/judge.c': '#include "judge_priv.h"\nint judge_add(int k)\n{\n\treturn k;\n}\n',
    'src/fabric/problems/links.c': ('#include "judge_priv.h"\n#include "umadfs/base/num.h"\n'
                                    'int judge_links(void)\n{\n\treturn judge_add(num_parse(""));\n}\n'),
}


def check(cond, what, out):
    if not cond:
        print('FAIL: %s\n%s' % (what, out))
        return 1
    return 0


def main():
    failures = 0
    rc, out = run(CLEAN)
    failures += check(rc == 0 and '0 problems' in out, 'a clean tree passes', out)

    circle = dict(CLEAN)
    circle['src/fabric/problems/judge.c'] = (
        '#include "judge_priv.h"\nint judge_add(int k)\n{\n\treturn k ? judge_links() : 0;\n}\n')
    rc, out = run(circle)
    failures += check(rc == 1 and 'cycle (includes and calls): judge <-> links' in out,
                      'a call circle through a private header fails', out)

    upward = dict(CLEAN)
    upward['include/umadfs/fabric/files/view.h'] = 'int view_show(void);\n'
    upward['src/fabric/files/view.c'] = ('#include "umadfs/fabric/files/view.h"\n'
                                         'int view_show(void)\n{\n\treturn 0;\n}\n')
    upward['src/fabric/problems/links.c'] = ('#include "judge_priv.h"\n'
                                             '#include "umadfs/fabric/files/view.h"\n'
                                             'int judge_links(void)\n{\n\treturn judge_add(view_show());\n}\n')
    rc, out = run(upward)
    failures += check(rc == 1 and 'layer fabric/problems includes fabric/files/view.h' in out,
                      'an include upward between tiers fails', out)

    elsewhere = dict(CLEAN)
    elsewhere['include/umadfs/base/num.h'] = 'int num_parse(const char *s);\nint num_max(void);\n'
    elsewhere['src/base/other.c'] = 'int num_max(void)\n{\n\treturn 9;\n}\n'
    rc, out = run(elsewhere)
    failures += check(rc == 1 and 'declares num_max(), which other.c defines, not num.c' in out,
                      'a declaration defined in another file fails', out)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
