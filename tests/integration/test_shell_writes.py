"""Every writable file as shells and programs write it (docs/files.md,
"Writing from a shell or a program"): bash's and dash's `echo X >`, `printf 'a\\nb\\n' >`
(bash writes each line, dash both at once), `sed ... >`, `tee`, `cp`,
`truncate -s 0`, Python's open/write/close and a write split in two.  Each
case asserts what the table says: the value after, the exit status, the
errno, `last_error`, and that nothing queued or stored was lost.  One quiet
fabric and one mount serve the whole module."""

import errno
import os
import subprocess
import time

import pytest

import diags as tm
import simfabric as sim
import madtext as mt
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
    f = sim.Fabric("two-switch.net").start()
    d = tmp_path_factory.mktemp("shell")
    m = None
    try:
        f.start_opensm("Hca3")
        for h in tm.HOSTS:
            f.wait_active(h, timeout=30)
        f.stop_opensm("Hca3")
        m = sim.Mount(f, "Hca1", d / "mnt", workdir=d).start()
        tm.sweep(m)
        yield f, m
    finally:
        if m is not None:
            m.unmount()
        f.stop()
    if m.problems():
        pytest.fail("\n".join(m.problems() + ["---- daemon log ----",
                                              m.log_excerpt()]), pytrace=False)


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


# ---------------------------------------------------------------------------
# Settings: one value, a line, taken whole when complete (its newline, or
# the close); a write of two lines refused whole

def value_cases(name, good, other, bad, why_bad, why_half, max_):
    """(idiom, lines, True or the errno, the value after (None: as before),
    last_error) for a setting called name.  Split, the bad value's first
    half is refused by the first write when no more bytes could make it a
    value (why_half), else the whole by the second."""
    two = "%s: expected one number from 0 to %s" % (name, max_) if max_ else \
        "%s: expected one word, fields or none" % name
    for idiom in IDIOMS:
        if idiom == "truncate":
            yield idiom, [], True, None, None
            continue
        yield idiom, [good], True, good, None
        yield idiom, [bad], errno.EINVAL, None, "%s: %s" % (
            name, why_half if idiom == "split" else why_bad)
        if "echo" not in idiom:
            # bash's printf writes each line: each a value, the last stays.
            if idiom == "bash printf":
                yield idiom, [good, other], True, other, None
            else:
                yield idiom, [good, other], errno.EINVAL, None, two


SETTINGS = [
    # file, value before, good, other, bad, why, why of its first half, max
    (P + ("timeout_ms",), "1000", "2000", "3000", "abc",
     "'abc' is not a number from 0 to 3600000", "'a' is not a number", 3600000),
    (P + ("retries",), "3", "5", "7", "-1", "'-1' is not a number from 0 to 100",
     "'-' is not a number", 100),
    (P + ("decode",), "fields", "none", "fields", "bits", "'bits' is not fields or none",
     "'bi' is not fields or none", None),
    (("fabric", "interval_ms"), "0", "5000", "7000", "5",
     "5 ms is below the floor of 1000 ms", "5 ms is below the floor", 86400000),
]


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s[0][-1])
def test_settings(fm, tmp_path, setting):
    """Each idiom on a setting: a good value taken (a split write joined:
    "20" then "00\\n" is 2000), a bad one refused by its write with the
    old value kept, two lines in one write refused whole (bash's printf
    writes them apart: both taken, the last stays), truncate changing
    nothing."""
    f, m = fm
    where, before, good, other, bad, why, why_half, max_ = setting
    path = m.path(*where)
    errors = m.path(*where[:-1], "last_error")
    for idiom, lines, want, after, reason in value_cases(where[-1], good, other, bad,
                                                         why, why_half, max_):
        with open(path, "w") as w:
            w.write(before + "\n")
        out = write_as(idiom, path, lines, tmp_path)
        expect(out, want, (idiom, lines))
        assert read(path) == (after or before) + "\n", (idiom, lines)
        if reason:
            assert read(errors).startswith(reason), (idiom, lines, read(errors))
    with open(path, "w") as w:
        w.write(before + "\n")


def test_values_without_newline(fm, tmp_path):
    """A value without its newline is complete at close: taken then, or
    refused then (which a shell's builtin never sees: dup2 closes quietly,
    so bash exits 0 and last_error alone says it; Python's close raises).
    A descriptor held open takes it at its close."""
    f, m = fm
    timeout, interval = m.path(*P, "timeout_ms"), m.path("fabric", "interval_ms")
    assert sh("bash", 'printf %s 2000 > "$1"', timeout) == (0, "")
    assert read(timeout) == "2000\n"
    assert sh("bash", 'printf %s 5 > "$1"', interval) == (0, "")
    assert read(interval) == "0\n"
    assert fabric_error(m).startswith("interval_ms: 5 ms is below the floor of 1000 ms")
    with pytest.raises(OSError) as e:
        with open(interval, "w") as w:
            w.write("5")
    assert e.value.errno == errno.EINVAL and read(interval) == "0\n"
    # Held open, it waits for the close; a shell's `printf %s 3000 >&3`
    # closes a copy of the descriptor when it ends (and so does each
    # command the shell forks with it), which takes the value then.
    fd = os.open(timeout, os.O_WRONLY)
    try:
        assert os.write(fd, b"3000") == 4
        assert read(timeout) == "2000\n"
    finally:
        os.close(fd)
    assert read(timeout) == "3000\n"
    cp = subprocess.run(["bash", "-c", 'exec 3> "$1"; printf %s 4000 >&3; read -r v < "$1"; '
                         'echo $v', "sh", str(timeout)],
                        capture_output=True, text=True, timeout=30)
    assert (cp.returncode, cp.stdout) == (0, "4000\n"), cp
    with open(timeout, "w") as w:
        w.write("1000\n")


# ---------------------------------------------------------------------------
# Actions: one per write, done before the write returns

def action_cases(one, two, bad, why):
    """(idiom, lines, True or the errno, the lines acted on, last_error) for
    an action file: one is a good line, two two good lines.  Split, the
    first write is the first half of the first line, alone: a word's half
    is refused, nothing done ("1" is one byte: whole, done, and what
    follows it then judged alone)."""
    whole = len(one) == 1
    for idiom in IDIOMS:
        if idiom == "truncate":
            yield idiom, [], True, [], None
        elif idiom == "split":
            yield idiom, [one], errno.EINVAL, [one] if whole else [], why
            yield idiom, two, errno.EINVAL, two[:1] if whole else [], why
        elif idiom == "bash printf":
            yield idiom, two, True, two, None        # a write per line: both done
        elif "echo" in idiom:
            yield idiom, [one], True, [one], None
        else:
            yield idiom, [one], True, [one], None
            yield idiom, two, errno.EINVAL, [], why  # one write of two lines
        if idiom != "truncate":
            yield idiom, [bad], errno.EINVAL, [], why


def actions_done(m):
    """fabric/events.log's action lines, as dicts."""
    return [dict(tm.KV.findall(ln)) for ln in read(m.path("fabric", "events.log"))
            .splitlines() if "event=action" in ln]


def test_admin(fm, tmp_path):
    """Each idiom on the admin of an unlinked port (Switch2's port 2:
    Polling, and Polling again after enable); printf 'disable\\nenable\\n'
    from bash runs both, one write of the two lines neither."""
    f, m = fm
    admin = m.path("fabric", "nodes", SW2, "ports", "2", "admin")
    assert read(admin).startswith("2: Polling\n")
    why = "admin: expected disable, enable or reset, optionally followed by force"
    for idiom, lines, want, done, reason in action_cases(
            "enable", ["disable", "enable"], "enabel", why):
        n = len(actions_done(m))
        out = write_as(idiom, admin, lines, tmp_path)
        expect(out, want, (idiom, lines))
        new = actions_done(m)[n:]
        assert [(a["action"], a["guid"], a["port"], a["result"]) for a in new] == \
            [(w, SW2, "2", "ok") for w in done], (idiom, lines, new)
        if reason:
            assert fabric_error(m) == reason, (idiom, lines)
        assert read(admin).startswith("2: Polling\n"), (idiom, lines)


@pytest.mark.parametrize("where", ["fabric", "local"])
def test_counters_reset(fm, tmp_path, where):
    """Each idiom on counters/reset (Switch2's port 2, or the local port):
    "1" clears the counters as perfquery shows them, anything else is
    refused and clears nothing; bash's printf '1\\n1\\n' resets twice."""
    f, m = fm
    if where == "fabric":
        node, port = "Switch2", 2
        path = m.path("fabric", "nodes", SW2, "ports", "2", "counters", "reset")
        args = (str(tm.lid_of(f, "Hca1", "0,1,7")), "2")
    else:
        node, port = "Hca1", 1
        path = m.path(*P, "counters", "reset")
        args = ()
    value = 0
    for idiom, lines, want, done, reason in action_cases(
            "1", ["1", "1"], "2", "counters/reset: expected 1"):
        if not value:
            tm.perf_set(f, node, port, "PortCounters", {"SymbolErrorCounter": 1234})
        n = len(actions_done(m))
        out = write_as(idiom, path, lines, tmp_path)
        expect(out, want, (idiom, lines))
        value = tm.perfquery(f, "Hca1", *args)["SymbolErrorCounter"]
        assert value == (0 if done else 1234), (idiom, lines)
        new = actions_done(m)[n:]
        assert [(a["action"], a["result"]) for a in new] == \
            [("counters_reset", "ok")] * len(done), (idiom, lines, new)
        if reason and where == "fabric":
            assert fabric_error(m) == reason, (idiom, lines)


# ---------------------------------------------------------------------------
# register: lines, each a registration, made in order

REG = "class=0x%x oui=0x001405 methods=get"
REG_BAD = "class=nope methods=get"


def register_cases():
    """(idiom, lines, True or the errno, the classes registered after,
    last_error's start)."""
    a, b = REG % 0x32, REG % 0x33
    bad_why = "register line 1: unknown class 'nope'"
    for idiom in IDIOMS:
        if idiom == "truncate":
            yield idiom, [], True, [], None
            continue
        split = idiom == "split"     # half a line is a line of its own: refused
        yield idiom, [a], errno.EINVAL if split else True, [] if split else [0x32], None
        yield idiom, [REG_BAD], errno.EINVAL, [], bad_why
        if "echo" not in idiom:
            yield idiom, [a, b], errno.EINVAL if split else True, \
                [] if split else [0x32, 0x33], None
            # A bad line after a good one: the good one stays registered
            # (one write: a short write up to the bad line, whose rest the
            # writer writes again, as line 1 of that write: refused).
            yield idiom, [a, REG_BAD], errno.EINVAL, [] if split else [0x32], \
                None if split else bad_why


def test_register(fm, tmp_path):
    f, m = fm
    agents = m.path(*P, "agents")
    for n, (idiom, lines, want, classes, why) in enumerate(register_cases()):
        d = agents / ("sh%d" % n)
        os.mkdir(d)
        try:
            out = write_as(idiom, d / "register", lines, tmp_path)
            expect(out, want, (idiom, lines))
            got = [int(ln.split("class=")[1].split()[0], 16)
                   for ln in read(d / "register").splitlines()]
            assert got == classes, (idiom, lines, got)
            if why:
                assert last_error(d).startswith(why), (idiom, lines, last_error(d))
        finally:
            os.rmdir(d)


# ---------------------------------------------------------------------------
# umad: one frame per write; text is no frame

def test_umad(fm, tmp_path):
    """Text written to umad by any idiom is refused (a frame is 88 bytes at
    least), nothing sent and what recv queued kept; a frame copied by cp
    or written by Python goes out; truncate does nothing."""
    f, m = fm
    p = pdir(m)
    frame = mt.pack_umad(mt.dr_smp(0x11, tid=0x7777))
    (tmp_path / "frame").write_bytes(frame)
    with Recv(m) as r:
        for n, idiom in enumerate(IDIOMS):
            write_send(m, GOOD % (0x6000 + n) + "\n")   # an answer queued before
            s0 = stats(p)
            out = write_as(idiom, p / "umad", ["dr=0 method=get attr=NodeInfo"], tmp_path)
            expect(out, True if idiom == "truncate" else errno.EINVAL, (idiom,))
            if idiom != "truncate":
                assert last_error(p).startswith("frame of "), (idiom, last_error(p))
            assert stats(p)["sent"] == s0["sent"], idiom
            assert r.line().tid == 0x6000 + n, idiom
        s0 = stats(p)
        assert sh("bash", 'cp "$1" "$2"', tmp_path / "frame", p / "umad") == (0, "")
        with open(p / "umad", "wb") as w:
            w.write(frame)
        assert stats(p)["sent"] == s0["sent"] + 2
        r.assert_empty(0.2)      # the answers went to those opens, closed


# ---------------------------------------------------------------------------
# sweep: any write asks a sweep and returns once it is complete

def sweep_age_ms(m):
    return int(dict(ln.split(" ", 1) for ln in read(m.path("fabric", "sweep"))
                    .splitlines() if " " in ln)["age_ms"])


def test_sweep(fm, tmp_path):
    """Every idiom that writes returns after a sweep made since it began;
    truncate asks none."""
    f, m = fm
    path = m.path("fabric", "sweep")
    for idiom in IDIOMS:
        for lines in (["1"], ["now", "again"]) if "echo" not in idiom else (["1"],):
            t0 = time.monotonic()
            out = write_as(idiom, path, lines, tmp_path)
            elapsed_ms = (time.monotonic() - t0) * 1000
            expect(out, True, (idiom, lines))
            if idiom == "truncate":
                assert sweep_age_ms(m) >= elapsed_ms, idiom
            else:
                assert sweep_age_ms(m) <= elapsed_ms + 50, (idiom, lines)


def test_a_reused_inode_reads_its_own_value(fm):
    """A channel made where one was just removed may get its files' inode
    numbers; a stat's value is handed to the next open of the same node
    only (Python's open stats: last_error's text once went to the new
    register, read within 50 ms)."""
    f, m = fm
    agents = m.path(*P, "agents")
    for n in range(120):
        d = agents / "reuse"
        os.mkdir(d)
        with pytest.raises(OSError):
            with open(d / "register", "w") as w:
                w.write(REG_BAD + "\n")
        assert last_error(d).startswith("register line 1: unknown class 'nope'")
        os.rmdir(d)
        os.mkdir(d)
        try:
            assert (read(d / "register"), read(d / "last_error")) == ("", ""), n
        finally:
            os.rmdir(d)
