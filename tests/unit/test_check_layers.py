#!/usr/bin/env python3
"""scripts/check-layers.py on small trees planted for it: a clean one
passes; a call circle through a private header, an include upward
between the fabric's tiers and a function its own header declares but
another file defines each fail it."""
import sys

from planted import check, run


CLEAN = {
    'include/umadfs/base/num.h': 'int num_parse(const char *s);\n',
    'src/base/num.c': '#include "umadfs/base/num.h"\nint num_parse(const char *s)\n{\n\treturn 0;\n}\n',
    'src/fabric/problems/judge_priv.h': 'int judge_add(int k);\nint judge_links(void);\n',
    'src/fabric/problems/judge.c': '#include "judge_priv.h"\nint judge_add(int k)\n{\n\treturn k;\n}\n',
    'src/fabric/problems/links.c': ('#include "judge_priv.h"\n#include "umadfs/base/num.h"\n'
                                    'int judge_links(void)\n{\n\treturn judge_add(num_parse(""));\n}\n'),
}


def main():
    failures = 0
    rc, out = run('check-layers.py', CLEAN)
    failures += check(rc == 0 and '0 problems' in out, 'a clean tree passes', out)

    circle = dict(CLEAN)
    circle['src/fabric/problems/judge.c'] = (
        '#include "judge_priv.h"\nint judge_add(int k)\n{\n\treturn k ? judge_links() : 0;\n}\n')
    rc, out = run('check-layers.py', circle)
    failures += check(rc == 1 and 'cycle (includes and calls): judge <-> links' in out,
                      'a call circle through a private header fails', out)

    upward = dict(CLEAN)
    upward['include/umadfs/fabric/files/view.h'] = 'int view_show(void);\n'
    upward['src/fabric/files/view.c'] = ('#include "umadfs/fabric/files/view.h"\n'
                                         'int view_show(void)\n{\n\treturn 0;\n}\n')
    upward['src/fabric/problems/links.c'] = ('#include "judge_priv.h"\n'
                                             '#include "umadfs/fabric/files/view.h"\n'
                                             'int judge_links(void)\n{\n\treturn judge_add(view_show());\n}\n')
    rc, out = run('check-layers.py', upward)
    failures += check(rc == 1 and 'layer fabric/problems includes fabric/files/view.h' in out,
                      'an include upward between tiers fails', out)

    elsewhere = dict(CLEAN)
    elsewhere['include/umadfs/base/num.h'] = 'int num_parse(const char *s);\nint num_max(void);\n'
    elsewhere['src/base/other.c'] = 'int num_max(void)\n{\n\treturn 9;\n}\n'
    rc, out = run('check-layers.py', elsewhere)
    failures += check(rc == 1 and 'declares num_max(), which other.c defines, not num.c' in out,
                      'a declaration defined in another file fails', out)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
