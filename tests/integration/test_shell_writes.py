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
