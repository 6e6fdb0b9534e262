"""Acting on the fabric: a port's admin (disable, enable, reset) against
ibportstate doing the same to the same port, the refusal to cut this
host's own route, counters/reset against perfquery -R, the local CA's
counters/reset, and bad input with its errno and fabric/last_error; a
node cut off (ring3.net): what is sent to it ends as no answer, never as
another node's."""

import errno
import os
import re
import time
from types import SimpleNamespace

import pytest

import diags as tm
import simfabric as sim
from madfiles import Recv, write_send

SW1, SW2 = "0x0000000000200000", "0x0000000000200001"   # two-switch.net
HCA1, HCA2, HCA3 = "0x0000000000100000", "0x0000000000100002", "0x0000000000100004"
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
    return sim.parse_smpquery(tm.tool(f, "Hca1", "smpquery", "portinfo", str(lid),
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
    """A quiet two-switch fabric (no SM), mounted on Hca1, swept once.  No
    traps: their check of the SM would send SMInfo to its old LID (Hca3,
    behind Switch2 port 1) every second, and these tests count that port's
    traffic."""
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f, options=("fabric_traps=off",))
    tm.sweep(m)
    return f, m


def test_admin_does_what_ibportstate_does(quiet):
    f, m = quiet
    lid = tm.lid_of(f, "Hca1", "0,1,7")          # Switch2, Hca3's switch
    admin = port_file(m, SW2, 1, "admin")
    assert read(admin).splitlines()[0] == "5: LinkUp"
    for op, state in (("disable", "Disabled"), ("enable", "Polling"),
                      ("reset", "Polling")):
        assert write(admin, op + "\n") == len(op) + 1
        ours = portinfo(f, lid, 1)
        assert ours["PhysLinkState"] == state, ours
        assert read(admin).splitlines()[0] == {"Disabled": "3: Disabled",
                                                   "Polling": "2: Polling"}[state]
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
    # Refusals are no actions, but the journal has who tried what.
    assert "warning: fabric: uid 0: admin of %s port 1 refused (EBUSY): admin: " \
        "disable of %s port 1 would cut this host's route to it (the local port)" \
        % (HCA1, HCA1) in m.log_text()
    assert m.log_text().count("refused (EBUSY)") == 6
    # Another port of the same switch is not on the route.
    assert write(port_file(m, SW1, 3, "admin"), "disable") == 7
    # force: done, and the answer is lost with the route (ibsim drops what
    # crosses a Disabled port): ETIMEDOUT, as on a real fabric.  Hca2, whose
    # route does not cross it, sees it and puts it back.
    refused(write(port_file(m, SW1, 1, "admin"), "disable force\n"), errno.ETIMEDOUT,
            m, "disable of %s port 1: PortInfo Set: no answer" % SW1)
    pi = sim.parse_smpquery(tm.tool(f, "Hca2", "smpquery", "portinfo", str(lid),
                                    "1").stdout)
    assert pi["PhysLinkState"] == "Disabled"
    tm.tool(f, "Hca2", "ibportstate", str(lid), "1", "enable")
    pi = sim.parse_smpquery(tm.tool(f, "Hca2", "smpquery", "portinfo", str(lid),
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
    assert m.log_text().count("warning: fabric: uid 0: admin of %s port 1 refused "
                              "(EINVAL): admin: expected disable" % SW2) == len(BAD_WORDS)


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
            assert "fabric: uid 0: %s of %s port 1 refused (ENOENT): %s: node" \
                % (name, HCA2, name) in m.log_text()
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
    # The next sweep reads the drop as a reset, not a counter rising; the
    # set's LinkDownedCounter 0 -> 5 was five downs, link_flapping, which
    # stands its window and counts none more for the reset.
    tm.sweep(m)
    assert read(os.path.join(cdir, "symbol_error")) == "0\n"
    left = [p for p in tm.problems(m) if p.get("port") == "1" and p["guid"] == SW2]
    assert [(p["problem"], p["flaps"], p["seen_by"]) for p in left] == [
        ("link_flapping", str(tm.ERROR_VALUES["LinkDownedCounter"]), "LinkDownedCounter")], left
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
    log = m.log_text()
    assert log.count("warning: fabric: uid 0: counters/reset of %s port 1 refused "
                     "(EINVAL): counters/reset: expected 1\n" % SW2) == 6, log
    assert log.count("warning: ibsim0/1: uid 0: counters reset refused (EINVAL): "
                     "expected 1\n") == 6, log


def test_action_on_a_node_moved(quiet):
    """The route or the LID the snapshot has for a node leads to another
    node now: the action fails with EHOSTUNREACH and that node is left
    alone.  Hca3's cable is moved to Hca2's switch port (no SM: no trap,
    no refresh), then given Hca2's LID (as an SM reusing a LID would)."""
    f, m = quiet
    lid2 = tm.lid_of(f, "Hca1", "0,1,2")
    sw1 = tm.lid_of(f, "Hca1", "0,1")
    tm.perf_set(f, "Hca3", 1, "PortCounters", {"SymbolErrorCounter": 5})
    for c in ('Unlink "Hca2"[1]', 'Unlink "Hca3"[1]', 'Link "Switch1"[2] "Hca3"[1]'):
        f.command(c)
    hca3_port = sim.parse_smpquery(tm.tool(f, "Hca3", "smpquery", "-D", "portinfo",
                                           "0", "1").stdout)
    refused(write(port_file(m, HCA2, 1, "admin"), "enable"), errno.EHOSTUNREACH, m,
            "enable of %s port 1: NodeInfo Get: the route leads to node %s, not %s"
            % (HCA2, HCA3, HCA2))
    # The new link made Active (ibsim routes by LID only over Active
    # ports), and Hca3 at Hca2's LID.
    for args in ((str(sw1), "2", "arm"), ("-D", "0,1,2", "1", "arm"),
                 (str(sw1), "2", "active"), ("-D", "0,1,2", "1", "active")):
        tm.tool(f, "Hca1", "ibportstate", *args)
    f.command('Baselid "Hca3"[1] %d' % lid2)
    refused(write(port_file(m, HCA2, 1, "counters", "reset"), "1"), errno.EHOSTUNREACH,
            m, "counters_reset of %s port 1: NodeInfo Get: LID %d is node %s, not %s"
            % (HCA2, lid2, HCA3, HCA2))
    assert tm.perfquery(f, "Hca3")["SymbolErrorCounter"] == 5
    now = sim.parse_smpquery(tm.tool(f, "Hca3", "smpquery", "-D", "portinfo", "0",
                                     "1").stdout)
    assert now["PhysLinkState"] == hca3_port["PhysLinkState"] == "LinkUp"
    assert [(e["action"], e["guid"], e["result"], e["errno"]) for e in actions(m)] == \
        [(a, HCA2, "failed", "EHOSTUNREACH") for a in ("enable", "counters_reset")]
    assert "fabric: uid 0: enable of %s port 1 failed: NodeInfo Get: the route " \
        "leads to node %s" % (HCA2, HCA3) in m.log_text()


# ---------------------------------------------------------------------------
# A node cut off the fabric.  On a ring of three switches (ring3.net,
# opensm on Hca6, the mount on Hca1), the switch port that is Hca4's only
# link is disabled and enabled again through its admin file.  ibsim leaves
# it Polling: nothing crosses it any more, and a LID-routed MAD to Hca4's
# LID is dropped ("no route") and given back at once.  What was sent there
# must end as no answer, never as another node's (umad2sim gives a dropped
# request back addressed from this port's own LID: resent as it came
# back, it reached this host's own PMA, and a counters reset cleared the
# mount's counters and said ok).

RING_HOSTS = ("Hca1", "Hca2", "Hca3", "Hca4", "Hca5", "Hca6")     # ring3.net: SW2 too
HCA4 = "0x0000000000100006"
HCA4_SYMBOL_ERRORS = 5          # set on Hca4 before the cut
OWN_SYMBOL_ERRORS = 9           # and on the mount's own port


def symbol_errors(f, host):
    """SymbolErrorCounter of host's port as perfquery sees it from host
    itself (Hca4 cannot be reached from elsewhere)."""
    return tm.perfquery(f, host)["SymbolErrorCounter"]


@pytest.fixture
def cut(make_fabric, mount):
    """The ring, swept, counters set, Hca4's link disabled and enabled.
    Traps off: a trap's refresh would take Hca4 out of the snapshot at a
    moment of opensm's choosing, and these tests act on it while the
    snapshot still has it (as an action written just after the enable)."""
    f = make_fabric("ring3.net")
    f.start_opensm("Hca6")
    for h in RING_HOSTS:
        f.wait_active(h, timeout=30)
    m = mount("Hca1", fabric=f, options=["fabric_traps=off"])
    tm.sweep(m)
    lid4 = tm.lid_of(f, "Hca1", "0,1,7,2")
    tm.perf_set(f, "Hca4", 1, "PortCounters", {"SymbolErrorCounter": HCA4_SYMBOL_ERRORS})
    tm.perf_set(f, "Hca1", 1, "PortCounters", {"SymbolErrorCounter": OWN_SYMBOL_ERRORS})
    admin = port_file(m, SW2, 2, "admin")
    assert write(admin, "disable") == 7
    assert write(admin, "enable") == 6
    assert open(admin).readline() == "2: Polling\n"
    return SimpleNamespace(f=f, m=m, lid4=lid4)


def test_send_to_a_cut_lid_times_out(cut):
    """A PMA Get written to send for the cut LID ends as a timeout line,
    addressed as it was sent, and not as this host's own answer."""
    with Recv(cut.m) as r:
        t0 = time.monotonic()
        write_send(cut.m, "class=perf method=get attr=PortCounters lid=%d "
                   "data=00010000 timeout=100 retries=2 tid=0x44\n" % cut.lid4)
        ln = r.line(timeout=5)
        dt = time.monotonic() - t0
        r.assert_empty(0.3)
    assert ln["error"] == "timeout" and ln["method"] == "get", ln.text
    assert ln.tid == 0x44 and ln.int("lid") == cut.lid4, ln.text
    assert 0.27 <= dt <= 1.0, dt
    assert symbol_errors(cut.f, "Hca1") == OWN_SYMBOL_ERRORS


def test_counters_reset_of_a_cut_node_fails(cut):
    """counters/reset of Hca4 just after its link was disabled and enabled:
    no answer (ETIMEDOUT), said in last_error, events and the log; no
    counter moves, Hca4's (as perfquery sees them from Hca4) or this
    host's."""
    t0 = time.monotonic()
    refused(write(port_file(cut.m, HCA4, 1, "counters", "reset"), "1"), errno.ETIMEDOUT,
            cut.m, "counters_reset of %s port 1: NodeInfo Get: no answer (3 tries)" % HCA4)
    assert time.monotonic() - t0 >= 0.55     # 3 tries of 200 ms, none answered
    assert symbol_errors(cut.f, "Hca4") == HCA4_SYMBOL_ERRORS
    assert symbol_errors(cut.f, "Hca1") == OWN_SYMBOL_ERRORS
    last = actions(cut.m)[-1]
    assert (last["action"], last["guid"], last["port"], last["result"], last["errno"]) == \
        ("counters_reset", HCA4, "1", "failed", "ETIMEDOUT"), last
    assert "fabric: uid 0: counters_reset of %s port 1 failed: NodeInfo Get: no " \
        "answer (3 tries)" % HCA4 in cut.m.log_text()


def test_admin_of_a_cut_node_fails(cut):
    """enable of Hca4's port, its route gone: ETIMEDOUT, the port as it
    was (as Hca4 sees it)."""
    before = cut.f.portinfo("Hca4", 1)
    refused(write(port_file(cut.m, HCA4, 1, "admin"), "enable"), errno.ETIMEDOUT,
            cut.m, "enable of %s port 1: NodeInfo Get: no answer (3 tries)" % HCA4)
    assert cut.f.portinfo("Hca4", 1) == before
    last = actions(cut.m)[-1]
    assert (last["action"], last["guid"], last["result"], last["errno"]) == \
        ("enable", HCA4, "failed", "ETIMEDOUT"), last
    assert "fabric: uid 0: enable of %s port 1 failed" % HCA4 in cut.m.log_text()
