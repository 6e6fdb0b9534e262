"""Checks the test modules share (a test module is never imported as a
library): an errno expected of a call."""

import errno

import pytest


def expect_errno(code, fn, *args):
    """fn(*args) must raise OSError with errno code; -> the OSError."""
    with pytest.raises(OSError) as ei:
        fn(*args)
    assert ei.value.errno == code, "%s%r: %s, want %s" % (
        fn.__name__, args, errno.errorcode.get(ei.value.errno),
        errno.errorcode[code])
    return ei.value
