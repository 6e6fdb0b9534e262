"""Acting on the fabric: a port's admin (disable, enable, reset) against
ibportstate doing the same to the same port, the refusal to cut this
host's own route, counters/reset against perfquery -R, the local CA's
counters/reset, and bad input with its errno and fabric/last_error."""

import errno
import os
import re

import pytest

import diags as tm
import fabric as fab

SW1, SW2 = "0x0000000000200000", "0x0000000000200001"   # two-switch.net
HCA1, HCA2 = "0x0000000000100000", "0x0000000000100002"
KV = re.compile(r'(\w+)=("(?:[^"\\]|\\.)*"|\S+)')


def port_file(m, guid, port, *name):
    return m.path("fabric", "nodes", guid, "ports", str(port), *name)


def write(path, text):
    """Writes text in one write(2): the byte count, or the OSError."""
    fd = os.open(path, os.O_WRONLY)
    try:
        return os.write(fd, text.encode())
    except OSError as e:
        return e
    finally:
        os.close(fd)


def read(path):
    with open(path) as f:
        return f.read()


def portinfo(f, lid, port):
    return fab.parse_smpquery(tm.tool(f, "Hca1", "smpquery", "portinfo", str(lid),
                                      str(port)).stdout)


def events(m):
    return [dict(KV.findall(ln)) for ln in read(m.path("fabric", "events.log")).splitlines()]


def actions(m):
    return [e for e in events(m) if e.get("event") == "action"]


def refused(r, err, m, reason):
    assert isinstance(r, OSError) and r.errno == err, r
    assert reason in read(m.path("fabric", "last_error")), read(m.path("fabric", "last_error"))


@pytest.fixture
def quiet(make_fabric, mount):
    """A quiet two-switch fabric (no SM), mounted on Hca1, swept once."""
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    tm.sweep(m)
    return f, m


def test_admin_does_what_ibportstate_does(quiet):
    f, m = quiet
    lid = tm.lid_of(f, "Hca1", "0,1,7")          # Switch2, Hca3's switch
    admin = port_file(m, SW2, 1, "admin")
    assert read(admin) == "5: LinkUp\n"
    for op, state in (("disable", "Disabled"), ("enable", "Polling"),
                      ("reset", "Polling")):
        assert write(admin, op + "\n") == len(op) + 1
        ours = portinfo(f, lid, 1)
        assert ours["PhysLinkState"] == state, ours
        assert read(admin) == {"Disabled": "3: Disabled\n",
                               "Polling": "2: Polling\n"}[state]
        # The peer doing the same to the same port leaves it the same.
        tm.tool(f, "Hca1", "ibportstate", str(lid), "1", op)
        assert portinfo(f, lid, 1) == ours, op
    done = [(e["action"], e["guid"], e["port"], e["uid"], e["result"]) for e in actions(m)]
    assert done == [(op, SW2, "1", "0", "ok") for op in ("disable", "enable", "reset")]
    assert 'node_desc="umadfs test switch two"' in read(m.path("fabric", "events.log"))
    assert "fabric: uid 0: disable of %s port 1" % SW2 in m.log_text()


def test_admin_keeps_this_hosts_route(quiet):
    f, m = quiet
    lid = tm.lid_of(f, "Hca1", "0,1")            # Switch1: Hca1's uplink is its port 1
    for guid, port, where in ((SW1, 1, "the port the route enters by"),
                              (SW2, 7, "the port the route enters by"),
                              (HCA1, 1, "the local port")):
        for op in ("disable", "reset"):
            refused(write(port_file(m, guid, port, "admin"), op), errno.EBUSY, m,
                    "would cut this host's route to it (%s); write '%s force'"
                    % (where, op))
    assert portinfo(f, lid, 1)["PhysLinkState"] == "LinkUp"    # nothing sent
    assert actions(m) == []
    # Another port of the same switch is not on the route.
    assert write(port_file(m, SW1, 3, "admin"), "disable") == 7
    # force: done, and the answer is lost with the route (ibsim drops what
    # crosses a Disabled port): ETIMEDOUT, as on a real fabric.  Hca2, whose
    # route does not cross it, sees it and puts it back.
    refused(write(port_file(m, SW1, 1, "admin"), "disable force\n"), errno.ETIMEDOUT,
            m, "disable of %s port 1: PortInfo Set: no answer" % SW1)
    pi = fab.parse_smpquery(tm.tool(f, "Hca2", "smpquery", "portinfo", str(lid),
                                    "1").stdout)
    assert pi["PhysLinkState"] == "Disabled"
    tm.tool(f, "Hca2", "ibportstate", str(lid), "1", "enable")
    pi = fab.parse_smpquery(tm.tool(f, "Hca2", "smpquery", "portinfo", str(lid),
                                    "1").stdout)
    assert pi["PhysLinkState"] == "Polling"
    assert [(e["action"], e["port"], e["result"], e.get("errno")) for e in actions(m)] == \
        [("disable", "3", "ok", None), ("disable", "1", "failed", "ETIMEDOUT")]


BAD_WORDS = ["foo", "disable now", "\n", "enable force force", "Disable", "disable\nenable"]


def test_admin_bad_words(quiet):
    f, m = quiet
    for text in BAD_WORDS:
        r = write(port_file(m, SW2, 1, "admin"), text)
        refused(r, errno.EINVAL, m, "admin: expected disable, enable or reset, "
                "optionally followed by force")
    assert portinfo(f, tm.lid_of(f, "Hca1", "0,1,7"), 1)["PhysLinkState"] == "LinkUp"
    assert actions(m) == []


def test_action_on_a_node_gone(quiet):
    """A file held open while its node leaves the fabric: ENOENT."""
    f, m = quiet
    fds = [os.open(port_file(m, HCA2, 1, "admin"), os.O_WRONLY),
           os.open(port_file(m, HCA2, 1, "counters", "reset"), os.O_WRONLY)]
    try:
        f.command('Unlink "Hca2"[1]')
        assert tm.sweep(m) is None and HCA2 not in read(m.path("fabric", "topology"))
        for fd, text, name in ((fds[0], b"enable", "admin"),
                               (fds[1], b"1", "counters/reset")):
            with pytest.raises(OSError) as e:
                os.write(fd, text)
            assert e.value.errno == errno.ENOENT
            assert read(m.path("fabric", "last_error")) == \
                "%s: node %s port 1 is not in the current snapshot\n" % (name, HCA2)
    finally:
        for fd in fds:
            os.close(fd)


def error_counters(f, lid, port):
    pq = tm.perfquery(f, "Hca1", str(lid), str(port))
    return {k: pq[k] for k in tm.ERROR_VALUES
            if k in pq and k not in ("PortXmitData", "PortRcvData", "PortXmitPkts",
                                     "PortRcvPkts")}


def test_counters_reset_as_perfquery(quiet):
    f, m = quiet
    lid = tm.lid_of(f, "Hca1", "0,1,7")
    # Switch2's ports 1 (Hca3's link, quiet) and 2 (unlinked): ours on
    # one, perfquery -R and -x -R on the other.
    for port in (1, 2):
        tm.perf_set(f, "Switch2", port, "PortCounters", tm.ERROR_VALUES)
        tm.perf_set(f, "Switch2", port, "PortCountersExtended", tm.EXT_VALUES)
    tm.sweep(m)
    cdir = port_file(m, SW2, 1, "counters")
    assert read(os.path.join(cdir, "symbol_error")) == "1234\n"
    with pytest.raises(PermissionError):      # write-only, root too
        read(os.path.join(cdir, "reset"))
    before = len(events(m))
    assert write(os.path.join(cdir, "reset"), "1\n") == 2
    tm.tool(f, "Hca1", "perfquery", "-R", str(lid), "2")
    tm.tool(f, "Hca1", "perfquery", "-x", "-R", str(lid), "2")
    for port in (1, 2):
        assert set(error_counters(f, lid, port).values()) == {0}, port
    # The same extended counters cleared (ibsim's reset leaves PortRcvPkts
    # alone, for perfquery too).
    ours, peer = (tm.perfquery(f, "Hca1", "-x", str(lid), str(p)) for p in (1, 2))
    cleared = [k for k in tm.EXT_VALUES if peer[k] == 0]
    assert len(cleared) >= 7 and "PortXmitData" in cleared, peer
    assert [k for k in tm.EXT_VALUES if ours[k] == 0] == cleared, (ours, peer)
    # The next sweep reads the drop as a reset, not a counter rising.
    tm.sweep(m)
    assert read(os.path.join(cdir, "symbol_error")) == "0\n"
    assert not [p for p in tm.problems(m) if p.get("port") == "1" and p["guid"] == SW2]
    assert not [e for e in events(m)[before:] if e.get("event") == "counter_increased"
                and e.get("guid") == SW2 and e.get("port") == "1"]
    act = actions(m)
    assert [(e["action"], e["guid"], e["port"], e["result"]) for e in act] == \
        [("counters_reset", SW2, "1", "ok")]


def test_local_counters_reset(quiet):
    f, m = quiet
    tm.perf_set(f, "Hca1", 1, "PortCounters", tm.ERROR_VALUES)
    local = m.path("ibsim0", "ports", "1", "counters")
    assert read(os.path.join(local, "symbol_error")) == "1234\n"
    assert write(os.path.join(local, "reset"), "1") == 1
    pq = tm.perfquery(f, "Hca1")                  # its own port, as perfquery does
    assert pq["SymbolErrorCounter"] == 0 and pq["PortXmitDiscards"] == 0, pq
    assert read(os.path.join(local, "symbol_error")) == "0\n"
    ev = [e for e in actions(m) if e["action"] == "counters_reset"]
    assert [(e["port"], e["uid"], e["result"]) for e in ev] == [("ibsim0/1", "0", "ok")]
    assert "ibsim0/1: uid 0: counters reset" in m.log_text()


def test_counters_reset_bad_input(quiet):
    f, m = quiet
    for text in ["0", "2", "yes", "\n", "1 1", "-1"]:
        r = write(port_file(m, SW2, 1, "counters", "reset"), text)
        refused(r, errno.EINVAL, m, "counters/reset: expected 1")
        r = write(m.path("ibsim0", "ports", "1", "counters", "reset"), text)
        assert isinstance(r, OSError) and r.errno == errno.EINVAL, (text, r)
    assert actions(m) == []
