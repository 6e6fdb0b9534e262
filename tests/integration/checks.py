"""Checks the test modules share (a test module is never imported as a
library): an errno expected of a call, and the peers a test needs.

Peers: the tools and files a test runs or builds against.  scripts/test.sh
installs every one (scripts/lib.sh's package lists); a test whose peer is
missing is skipped, and fails instead under CI=true, naming the package
to install, so that no pass of CI skips a test for want of a package."""

import errno
import os
import shutil

import pytest

# a tool (found on PATH) or a file (an absolute path) -> its Debian 12
# package, as scripts/lib.sh installs it
PACKAGE_OF = {
    "promtool": "prometheus",
    "prometheus-node-exporter": "prometheus-node-exporter",
    "cc": "build-essential",
    "nm": "binutils",
    "/usr/include/infiniband/mad.h": "libibmad-dev",
    "groff": "groff-base",
    "meson": "meson",
    "ninja": "ninja-build",
    "systemd-analyze": "systemd",
    "/lib/systemd/system-generators/systemd-fstab-generator": "systemd",
    "unshare": "util-linux",
    "setpriv": "util-linux",
    "mount": "mount",
    "mount.fuse3": "fuse3",
    "useradd": "passwd",
    "groupadd": "passwd",
    "dpkg-deb": "dpkg",
    "dpkg-buildpackage": "dpkg-dev",
    "strace": "strace",
    "ibdmchk": "ibutils",
    "check_lft_balance": "infiniband-diags",
}


def expect_errno(code, fn, *args):
    """fn(*args) must raise OSError with errno code; -> the OSError."""
    with pytest.raises(OSError) as ei:
        fn(*args)
    assert ei.value.errno == code, "%s%r: %s, want %s" % (
        fn.__name__, args, errno.errorcode.get(ei.value.errno),
        errno.errorcode[code])
    return ei.value


def have(peer):
    if peer.startswith("/"):
        return os.path.exists(peer)
    return shutil.which(peer) is not None


def need(*peers):
    """Every peer (a tool or a file of PACKAGE_OF) must be here: else the
    test is skipped, or under CI=true fails, naming the package."""
    for peer in peers:
        if not have(peer):
            msg = "%s missing: install %s (scripts/test.sh does)" % (
                peer, PACKAGE_OF[peer])
            if os.environ.get("CI") == "true":
                pytest.fail("CI=true: no test skips for want of a package: " + msg,
                            pytrace=False)
            pytest.skip(msg)
