"""Every writable file as shells and programs write it (docs/files.md,
"Writing from a shell"): bash's and dash's `echo X >`, `printf 'a\\nb\\n' >`
(bash writes each line, dash both at once), `sed ... >`, `tee`, `cp`,
`truncate -s 0`, Python's open/write/close and a write split in two.  Each
case asserts what the table says: the value after, the exit status, the
errno, `last_error`, and that nothing queued or stored was lost.  One quiet
fabric and one mount serve the whole module."""

import errno
import os
import shutil
import subprocess

import pytest

import diags as tm
import fabric as fab
from madfiles import Recv, last_error, pdir, stats, write_send

SW2 = "0x0000000000200001"      # two-switch.net: Switch2; its port 2 is unlinked
P = ("ibsim0", "ports", "1")    # the local port


@pytest.fixture(scope="module")
def fm(tmp_path_factory):
    """(fabric, mount): a quiet two-switch fabric of the module's own (its
    ports made ACTIVE by opensm, which is then stopped), mounted on Hca1
    and swept once."""
    if not (os.path.exists("/dev/fuse") and os.access("/dev/fuse", os.R_OK | os.W_OK)):
        pytest.skip("/dev/fuse missing or not accessible")
    f = fab.Fabric("two-switch.net").start()
    d = tmp_path_factory.mktemp("shell")
    m = None
    try:
        f.start_opensm("Hca3")
        for h in tm.HOSTS:
            f.wait_active(h, timeout=30)
        f.stop_opensm("Hca3")
        m = fab.Mount(f, "Hca1", d / "mnt", workdir=d).start()
        tm.sweep(m)
        yield f, m
    finally:
        if m is not None:
            m.unmount()
        f.stop()
    if m.problems():
        pytest.fail("\n".join(m.problems() + ["---- daemon log ----",
                                              m.log_text()[-6000:]]), pytrace=False)


def sh(shell, script, *args):
    """shell -c script with args ($1...): (exit status, stderr)."""
    cp = subprocess.run([shell, "-c", script, "sh"] + [str(a) for a in args],
                        capture_output=True, text=True, timeout=30)
    return cp.returncode, cp.stderr


def test_write_only_files_refuse_readers(fm):
    """One rule, root too: a file without a read bit is not opened for
    reading (`cat send` and `cat counters/reset` fail alike), one without a
    write bit not for writing."""
    f, m = fm
    for path in (m.path(*P, "send"), m.path(*P, "counters", "reset"),
                 m.path("fabric", "nodes", SW2, "ports", "2", "counters", "reset")):
        assert os.stat(path).st_mode & 0o777 == 0o200, path
        for flags in (os.O_RDONLY, os.O_RDWR):
            with pytest.raises(OSError) as e:
                os.close(os.open(path, flags))
            assert e.value.errno == errno.EACCES, (path, flags)
        status, err = sh("bash", 'cat "$1"', path)
        assert status == 1 and "Permission denied" in err, (path, status, err)
    for path in (m.path(*P, "recv"), m.path(*P, "state"), m.path(*P, "last_error"),
                 m.path("fabric", "last_error"), m.path("fabric", "events")):
        with pytest.raises(OSError) as e:
            os.close(os.open(path, os.O_WRONLY))
        assert e.value.errno == errno.EACCES, path


# ---------------------------------------------------------------------------
# The idioms

IDIOMS = ("bash echo", "dash echo", "bash printf", "dash printf", "sed", "tee",
          "cp", "truncate", "python", "split")
ERRNOS = (errno.EINVAL, errno.EMSGSIZE, errno.EBUSY, errno.EACCES, errno.EPERM,
          errno.ENOENT, errno.EOPNOTSUPP, errno.ETIMEDOUT, errno.EFBIG)


class Outcome:
    """What an idiom's writer saw: ok, else the errno when it says it."""

    def __init__(self, status, err=None, stderr=""):
        self.ok = status == 0
        self.errno = err
        if err is None and not self.ok:
            # bash, sed, tee and cp print strerror(); dash says "I/O error".
            found = [e for e in ERRNOS if os.strerror(e) in stderr]
            self.errno = found[0] if found else None
        self.stderr = stderr

    def __repr__(self):
        return "Outcome(ok=%s, errno=%s, %r)" % (
            self.ok, self.errno and errno.errorcode[self.errno], self.stderr)


def run_sh(shell, script, *args):
    status, err = sh(shell, script, *args)
    return Outcome(status, stderr=err)


def write_as(idiom, path, lines, tmp):
    """lines (each written with its newline) as idiom writes them to path.
    The echos take one line; printf writes its arguments with "%s\\n"
    (bash: a write(2) per line, dash: one); sed, tee and cp copy a file of
    the lines; truncate -s 0 writes nothing; python is open/write/close;
    split is two write(2)s on one open, cut inside the first line."""
    text = "".join(ln + "\n" for ln in lines)
    src = tmp / "src"
    src.write_text(text)
    if idiom.endswith(" echo"):
        assert len(lines) == 1, lines
        return run_sh(idiom.split()[0], 'echo "$1" > "$2"', lines[0], path)
    if idiom.endswith(" printf"):
        return run_sh(idiom.split()[0], 'p=$1; shift; printf "%s\\n" "$@" > "$p"',
                      path, *lines)
    if idiom in ("sed", "tee", "cp", "truncate"):
        script = {"sed": 'sed "" "$1" > "$2"', "tee": 'tee "$2" < "$1" > /dev/null',
                  "cp": 'cp "$1" "$2"', "truncate": 'truncate -s 0 "$2"'}[idiom]
        return run_sh("bash", script, src, path)
    try:
        if idiom == "python":
            with open(path, "w") as f:
                f.write(text)
        else:
            assert idiom == "split", idiom
            cut = max(1, len(lines[0]) // 2)
            fd = os.open(path, os.O_WRONLY)
            try:
                os.write(fd, text[:cut].encode())
                os.write(fd, text[cut:].encode())
            finally:
                os.close(fd)
    except OSError as e:
        return Outcome(1, e.errno)
    return Outcome(0)


def expect(out, ok_or_errno, what):
    """out is ok (True), or refused with that errno (dash's echo and printf
    name no errno: any refusal)."""
    if ok_or_errno is True:
        assert out.ok, (what, out)
    else:
        assert not out.ok and out.errno in (ok_or_errno, None), (what, out)
        if out.errno is None:
            assert what[0].startswith("dash"), (what, out)


# ---------------------------------------------------------------------------
# send: lines of MADs, each write parsed whole before anything is sent

GOOD = "dr=0 method=get attr=NodeInfo tid=0x%x"
BAD = "dr=0 method=get attr=NodeInfo bogus=1"
BAD_WHY = "unknown key 'bogus' at column 31"


def send_cases():
    """(idiom, lines, MADs sent, True or the errno, last_error's start)."""
    tid = iter(range(0x100, 0x1000))
    for idiom in IDIOMS:
        if idiom == "truncate":
            yield idiom, [], 0, True, None
            continue
        yield idiom, [GOOD % next(tid)], 1, True, None
        yield idiom, [BAD], 0, errno.EINVAL, "line 1: " + BAD_WHY
        if "echo" not in idiom:
            # bash's printf writes the good line alone: it goes out.
            yield idiom, [GOOD % next(tid), BAD], int(idiom == "bash printf"), \
                errno.EINVAL, "line %d: %s" % (1 if idiom == "bash printf" else 2, BAD_WHY)


def test_send(fm, tmp_path):
    """A refused write sends nothing of itself, and what recv had queued
    stays; split lines join; truncate sends nothing."""
    f, m = fm
    p = pdir(m)
    with Recv(m) as r:
        for n, (idiom, lines, sent, want, why) in enumerate(send_cases()):
            write_send(m, GOOD % (0x5000 + n) + "\n")   # an answer queued before
            s0 = stats(p)
            out = write_as(idiom, p / "send", lines, tmp_path)
            expect(out, want, (idiom, lines))
            assert stats(p)["sent"] == s0["sent"] + sent, (idiom, lines)
            got = sorted(ln.tid for ln in r.lines(1 + sent))
            assert got == sorted([0x5000 + n] + [int(ln.split("tid=")[1], 16)
                                                 for ln in lines[:sent]]), (idiom, lines)
            if why:
                assert last_error(p).startswith(why), (idiom, lines, last_error(p))
        r.assert_empty(0.1)


def test_send_long_line_keeps_its_reason(fm, tmp_path):
    """10 MB without a newline: refused as a line over 16384 bytes, and the
    close keeps that reason (bash's printf writes it 4 KiB at a time, so
    the first 16384 bytes were the open's unfinished line: the close used
    to report them discarded instead)."""
    f, m = fm
    p = pdir(m)
    s0 = stats(p)
    for shell in ("bash", "dash"):
        status, err = sh(shell, "printf '%10000000s' x > \"$1\"", p / "send")
        assert status != 0, (shell, err)
        assert last_error(p) == "line 1: longer than 16384 bytes", shell
    with pytest.raises(OSError) as e:
        with open(p / "send", "w") as w:
            w.write("x" * 10_000_000)
    assert e.value.errno == errno.EMSGSIZE
    assert last_error(p) == "line 1: longer than 16384 bytes"
    assert stats(p)["sent"] == s0["sent"]
    # A tail that is only unfinished is still reported at close.
    status, err = sh("bash", "printf %s 'dr=0 method=get' > \"$1\"", p / "send")
    assert status == 0, err
    assert last_error(p) == "closed with an unfinished line (no '\\n'): 15 bytes discarded"


# ---------------------------------------------------------------------------
# fabric/expected: a whole text per open, its lines refused as they come,
# taken at close; `clear` clears it

def read(path):
    with open(path) as f:
        return f.read()


def fabric_error(m):
    return read(m.path("fabric", "last_error")).rstrip("\n")


def set_expected(m, text):
    with open(m.path("fabric", "expected"), "w") as f:
        f.write(text)
    return read(m.path("fabric", "expected"))


NO_NODE = ("expected: a text without a node line: the expected topology is kept "
           "(write the word clear to clear it)")
NOT_A_LINE = ("expected: line 1 column 1: expected a node line (Switch, Ca, Rt), a "
              "port line ([N] ...), KEY=VALUE or a # comment")


def canonical(text):
    """A topology text less its "generated on" date (each text written is
    read back stamped with its own)."""
    return "".join(ln for ln in text.splitlines(True)
                   if not ln.startswith("# Topology file: generated on"))


def line_col(text, what):
    i = text.index(what)
    return text.count("\n", 0, i) + 1, i - (text.rfind("\n", 0, i) + 1) + 1


def expected_cases(r1):
    """(idiom, lines, True or the errno, the text expected reads after,
    last_error's start)."""
    t2 = r1.replace("4xSDR", "4xDDR")
    unknown = r1.replace('"H-0000000000100004"[1]', '"H-0000000000100009"[1]', 1)
    peer_why = 'expected: line %d column %d: no node is called "H-0000000000100009"' \
        % line_col(unknown, '"H-0000000000100009"')
    shell = ("bash echo", "dash echo", "bash printf", "dash printf")
    for idiom in IDIOMS:
        if idiom == "truncate":
            yield idiom, [], True, r1, None
            continue
        if "echo" not in idiom:
            yield idiom, t2.splitlines(), True, t2, None
            # A peer no node line names: only the close can tell, which a
            # shell's builtin never sees (dup2 closes quietly).
            yield idiom, unknown.splitlines(), True if idiom in shell else errno.EINVAL, \
                r1, peer_why
        yield idiom, ["not a topology"], errno.EINVAL, r1, NOT_A_LINE
        yield idiom, [""], True if idiom in shell else errno.EINVAL, r1, NO_NODE
        yield idiom, ["clear"], True, "", None


def test_expected(fm, tmp_path):
    """Each idiom: a good text taken, a bad line refused by its write (the
    shell exits non-zero), what needs the whole text refused at close, a
    blank text refused, `clear` clearing, truncate changing nothing; the
    old expectation kept by every refusal."""
    f, m = fm
    path = m.path("fabric", "expected")
    r1 = set_expected(m, read(m.path("fabric", "topology")))
    assert r1.count("4xSDR") == 10
    for idiom, lines, want, after, why in expected_cases(r1):
        if canonical(read(path)) != canonical(r1):
            set_expected(m, r1)
        out = write_as(idiom, path, lines, tmp_path)
        expect(out, want, (idiom, lines[:1]))
        assert canonical(read(path)) == canonical(after), (idiom, lines[:1])
        if why:
            assert fabric_error(m).startswith(why), (idiom, lines[:1], fabric_error(m))


def test_expected_refused_keeps_problems(fm, tmp_path):
    """The report of issue 28: with a node missing, `echo 'not a topology'
    > expected` cleared the expectation (its first close, before echo
    wrote, was taken as an empty text) and the errors of `problems` went
    with it.  Now it exits 1 and changes nothing; so does sed's malformed
    copy."""
    f, m = fm
    topo = read(m.path("fabric", "topology"))
    missing = topo + ('\ncaguid=0x100099\nCa\t1 "H-0000000000100099"\t# "gone"\n'
                      '[1]\t"S-0000000000200001"[2]\t# "umadfs test switch two" 4xSDR\n')
    before = set_expected(m, missing)
    tm.sweep(m)
    errors = [p for p in tm.problems(m) if p["severity"] == "error"]
    assert {"node_missing", "link_missing"} <= {p["problem"] for p in errors}, errors
    src = tmp_path / "topology"
    src.write_text(missing)
    for shell, script in (("bash", "echo 'not a topology' > \"$1\""),
                          ("dash", "echo 'not a topology' > \"$1\""),
                          ("bash", "sed s/Switch/Swtch/ \"$2\" > \"$1\"")):
        status, err = sh(shell, script, m.path("fabric", "expected"), src)
        assert status != 0, (shell, script, err)
        assert canonical(read(m.path("fabric", "expected"))) == canonical(before)
        tm.sweep(m)
        assert [p for p in tm.problems(m) if p["severity"] == "error"] == errors
    assert fabric_error(m) == ("expected: line 10 column 1: expected the node line of "
                               "the KEY= of line 6")     # sed's Swtch
    set_expected(m, topo)
