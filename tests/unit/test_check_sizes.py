#!/usr/bin/env python3
"""scripts/check-sizes.py on small trees planted for it: a clean one
passes; a file over 800 lines, and a function over 60 (its definition's
head on two lines, a prototype and a struct before it not counted), each
fail it, and a function of exactly 60 lines passes."""
import sys

from planted import check, run


def function(name, lines, head='static int {}(int a,\n\t\tint b)\n{{\n'):
    """A definition of so many lines in all, its head on two lines."""
    text = head.format(name)
    body = lines - text.count('\n') - 1
    return text + '\ta += b;\n' * (body - 1) + '\treturn a;\n}\n'


def main():
    failures = 0
    clean = {
        'include/umadfs/base/num.h': 'int num_parse(const char *s);\n',
        'src/base/num.c': ('struct num { int a; };\nint num_parse(const char *s);\n\n' +
                           function('full', 60) + '\n' + function('small', 5)),
    }
    rc, out = run('check-sizes.py', clean)
    failures += check(rc == 0 and '2 functions, 0 over their limits' in out,
                      'a clean tree passes, a function of 60 lines too', out)

    long_fn = dict(clean)
    long_fn['src/base/num.c'] = 'int num_parse(const char *s);\n\n' + function('big', 61)
    rc, out = run('check-sizes.py', long_fn)
    failures += check(rc == 1 and 'src/base/num.c:3: big() is 61 lines (at most 60)' in out,
                      'a function of 61 lines fails', out)

    long_file = dict(clean)
    long_file['include/umadfs/base/num.h'] = '/* a line */\n' * 801
    rc, out = run('check-sizes.py', long_file)
    failures += check(rc == 1 and 'include/umadfs/base/num.h: 801 lines (at most 800)' in out,
                      'a file of 801 lines fails', out)
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
