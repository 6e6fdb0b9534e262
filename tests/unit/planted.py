"""Trees planted for a checker of scripts/ (check-layers.py,
check-sizes.py): a repository written from {path: text}, the checker run
on it, and a check that reports what failed."""
import os
import subprocess
import sys
import tempfile

SCRIPTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'scripts')


def tree(files):
    """A repository of files {path: text}; its path."""
    root = tempfile.mkdtemp(prefix='planted-')
    for path, text in files.items():
        full = os.path.join(root, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, 'w') as f:
            f.write(text)
    return root


def run(checker, files):
    """scripts/CHECKER on a tree of files: its exit status and output."""
    cp = subprocess.run([sys.executable, os.path.join(SCRIPTS, checker), tree(files)],
                        capture_output=True, text=True)
    return cp.returncode, cp.stdout


def check(cond, what, out):
    """1 (and what failed, with the checker's output) unless cond."""
    if not cond:
        print('FAIL: %s\n%s' % (what, out))
        return 1
    return 0
