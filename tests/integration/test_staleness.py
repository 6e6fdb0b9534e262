"""The view is never stale beyond a bound (issue 28), with interval_ms 0
(no timed sweeps) throughout: a change whose trap or Report never arrives
shows within 10 s (the light sweep: every port asked again within
fabric_light_sweep=, 8 s by default, one slice a second), a lost SM
within 5 s (the traps' check, every second, says so at once and asks a
sweep; a silent SM is asked once every 10 s, and a sweep follows its
return), and after a storm of flaps the view equals a sweep's once the
ports settle.

The bounds are the design's (docs/files.md, "What guards the view"), not
speed targets: on these small fabrics a slice asks every port, so what is
measured is about a second; the assertions hold the documented bound."""

import os
import select
import signal
import time

import pytest

import diags as tm
import simfabric as sim
from diags import sweep_kv

SW1 = "0x0000000000200000"     # two-switch.net
SW2 = "0x0000000000200001"
HCA2 = "0x0000000000100002"
HCA3_DESC = '"umadfs-node3 HCA-1"'   # the SM's node
STALE_BOUND = 10.0             # any change, no trap needed
LINK_PROBLEMS = ("link_missing", "node_missing", "link_moved", "link_unexpected",
                 "port_not_active", "link_degraded")
SM_LOST_BOUND = 5.0            # the SM lost, the daemon can tell


def wait_kv(m, pred, timeout):
    deadline = time.monotonic() + timeout
    while True:
        kv = sweep_kv(m)
        if pred(kv) or time.monotonic() > deadline:
            return kv
        time.sleep(0.1)


class Events:
    """fabric/events from now on, read without blocking."""

    def __init__(self, m):
        self.fd = os.open(m.path("fabric", "events"), os.O_RDONLY | os.O_NONBLOCK)
        self.buf = b""

    def until(self, pred, timeout):
        """Reads until pred(lines) or timeout; the lines (dicts) read."""
        deadline = time.monotonic() + timeout
        while True:
            lines = [dict(tm.KV.findall(ln)) for ln in self.buf.decode().splitlines()]
            left = deadline - time.monotonic()
            if pred(lines) or left <= 0:
                return lines
            if select.select([self.fd], [], [], left)[0]:
                try:
                    self.buf += os.read(self.fd, 1 << 16)
                except BlockingIOError:
                    pass

    def close(self):
        os.close(self.fd)


def kinds(lines, event):
    return [e for e in lines if e.get("event") == event]


@pytest.fixture
def viewed(make_fabric, mount):
    """scripts/run.sh's fabric: opensm on Hca3, the mount on Hca1, swept
    once and subscribed to the SM's traps."""
    f = tm.active_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    kv = wait_kv(m, lambda kv: kv["traps"] == "subscribed", 20)
    assert kv["traps"] == "subscribed" and kv["guard"] == "traps+light_sweep", kv
    assert kv["light_sweep_ms"] == "8000", kv
    return f, m


def test_first_read_says_checking_not_no_sweep(make_fabric, mount):
    """A mount whose fabric/ nobody opened asks nothing (no light sweep, no
    SM check before the first sweep); the first read of sweep comes with a
    sweep's figures and its traps line never says there was no sweep;
    fabric_light_sweep= sets the cycle."""
    f = tm.active_fabric(make_fabric)
    m = mount("Hca1", fabric=f, options=("fabric_light_sweep=3000",))
    time.sleep(2)
    text = open(m.path("fabric", "sweep")).read()
    assert "no sweep yet" not in text, text
    kv = dict(ln.split(" ", 1) for ln in text.splitlines() if " " in ln)
    assert kv["ok"] == "1" and kv["traps"] in ("checking", "subscribed"), text
    assert kv["light_sweeps"] == "0" and kv["trap_check_mads"] == "0", text
    assert kv["light_sweep_ms"] == "3000", text
    assert int(kv["confirmed_age_ms"]) >= 0, text
    kv = wait_kv(m, lambda kv: int(kv["light_sweeps"]) >= 2, 10)
    # 5 links (one end each) and 9 free switch ports: 14 a slice
    assert int(kv["light_sweep_mads"]) == 14 * int(kv["light_sweeps"]), kv


def test_lost_report_switch_link(viewed):
    """The guide's cable, Switch1[7]: the trap and the Report are routed
    through it and lost (ibsim: 'routing failed'); the light sweep finds
    the link down within the bound."""
    f, m = viewed
    ev = Events(m)
    try:
        t0 = time.monotonic()
        f.command('Unlink "Switch1"[7]')
        lines = ev.until(lambda ls: len(kinds(ls, "link_down")) >= 2, STALE_BOUND + 5)
        took = time.monotonic() - t0
    finally:
        ev.close()
    downs = {(e["guid"], e["port"]) for e in kinds(lines, "link_down")}
    assert downs == {(SW1, "7"), (SW2, "7")}, lines
    assert took <= STALE_BOUND, took
    kv = sweep_kv(m)
    assert kv["links"] == "4", kv
    assert {(p["guid"], p["port"]) for p in tm.problems(m, "link_missing")} == \
        {(SW1, "7"), (SW2, "7")}
    if "routing failed" in f.log_text():
        # The Report was lost: the light sweep is what saw it.
        assert int(kv["light_sweep_changes"]) >= 1, kv


def test_light_sweep_alone(make_fabric, mount):
    """No traps at all: a cable pulled and put back shows by the light
    sweep alone, the port brought to Active by the SM too."""
    f = tm.active_fabric(make_fabric)
    m = mount("Hca1", fabric=f, options=("fabric_traps=off",))
    kv = sweep_kv(m)
    assert kv["guard"] == "light_sweep", kv
    ev = Events(m)
    try:
        t0 = time.monotonic()
        f.command('Unlink "Hca2"[1]')
        lines = ev.until(lambda ls: kinds(ls, "node_gone"), STALE_BOUND + 5)
        assert [e["guid"] for e in kinds(lines, "node_gone")] == [HCA2], lines
        assert time.monotonic() - t0 <= STALE_BOUND
        t0 = time.monotonic()
        f.command('ReLink "Hca2"[1]')
        lines = ev.until(lambda ls: kinds(ls, "node_appeared"), STALE_BOUND + 5)
        assert [e["guid"] for e in kinds(lines, "node_appeared")] == [HCA2], lines
        assert time.monotonic() - t0 <= STALE_BOUND
    finally:
        ev.close()
    f.wait_active("Hca2")
    deadline = time.monotonic() + STALE_BOUND
    while "state=Active" not in links_of(m, HCA2) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert "state=Active" in links_of(m, HCA2), links(m)
    kv = sweep_kv(m)
    assert kv["trap_reports"] == "0" and int(kv["light_sweep_changes"]) >= 2, kv
    assert int(kv["confirmed_age_ms"]) <= 8000 + 2000, kv
    seen = links(m)
    tm.sweep(m)
    assert links(m) == seen


def links(m):
    return sorted(open(m.path("fabric", "links")).read().splitlines())


def links_of(m, guid):
    return "\n".join(ln for ln in links(m) if guid in ln)


def test_sm_cable_pulled(viewed):
    """The SM's own cable: no trap reaches it, no Report comes, the SM no
    longer answers SMInfo: within 5 s the traps line says so and a sweep
    shows the SM's node gone and sm_missing."""
    f, m = viewed
    ev = Events(m)
    try:
        t0 = time.monotonic()
        f.command('Unlink "Switch2"[1]')
        lines = ev.until(lambda ls: any(e.get("problem") == "sm_missing"
                                        for e in kinds(ls, "problem_raised")),
                         SM_LOST_BOUND + 5)
        took = time.monotonic() - t0
    finally:
        ev.close()
    assert any(e.get("problem") == "sm_missing" for e in kinds(lines, "problem_raised")), lines
    assert HCA3_DESC in [e["node_desc"] for e in kinds(lines, "node_gone")], lines
    assert took <= SM_LOST_BOUND, took
    kv = sweep_kv(m)
    assert kv["traps"].startswith("none: "), kv
    assert kv["guard"] == "light_sweep", kv


def test_sm_stopped(viewed):
    """kill -STOP of opensm: within 5 s sm_missing and the traps line; after
    kill -CONT, subscribed again and the problem cleared."""
    f, m = viewed
    proc = f.opensm["Hca3"][0]
    t0 = time.monotonic()
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        deadline = t0 + SM_LOST_BOUND + 5
        while not tm.problems(m, "sm_missing") and time.monotonic() < deadline:
            time.sleep(0.1)
        took = time.monotonic() - t0
        assert tm.problems(m, "sm_missing"), open(m.path("fabric", "problems")).read()
        assert took <= SM_LOST_BOUND, took
        assert sweep_kv(m)["traps"].startswith("none: the SM at LID 1 does not answer")
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    kv = wait_kv(m, lambda kv: kv["traps"] == "subscribed", 20)
    assert kv["traps"] == "subscribed", kv
    deadline = time.monotonic() + 10
    while tm.problems(m, "sm_missing") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not tm.problems(m, "sm_missing")


def test_sm_back_after_a_sweep_without_it(viewed):
    """opensm stopped long enough for a sweep to find it silent, then
    resumed: with no timed sweeps, the traps' check finds it answering
    again (within 10 s) and asks a sweep, which clears sm_missing."""
    f, m = viewed
    proc = f.opensm["Hca3"][0]
    os.kill(proc.pid, signal.SIGSTOP)
    try:
        deadline = time.monotonic() + SM_LOST_BOUND + 5
        while not tm.problems(m, "sm_missing") and time.monotonic() < deadline:
            time.sleep(0.1)
        tm.sweep(m)                     # a sweep that finds it silent
        assert tm.problems(m, "sm_missing")
    finally:
        os.kill(proc.pid, signal.SIGCONT)
    deadline = time.monotonic() + 20
    while tm.problems(m, "sm_missing") and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not tm.problems(m, "sm_missing"), open(m.path("fabric", "problems")).read()
    assert wait_kv(m, lambda kv: kv["traps"] == "subscribed", 5)["traps"] == "subscribed"


def test_silent_sm_asked_once(make_fabric, mount):
    """A master SM whose cable is pulled, no other to take over: each
    SMInfo sent to its LID is a packet Switch2 discards at port 1
    (perfquery's PortXmitDiscards there).  Once it is silent, the traps'
    check asks it once every 10 s and each sweep once, not three times a
    second (30 in 10 s, and 15 over 3 sweeps, before)."""
    f = tm.quiet_fabric(make_fabric)            # opensm stopped: silent
    m = mount("Hca1", fabric=f)
    tm.sweep(m)
    kv = wait_kv(m, lambda kv: kv["traps"].startswith("none: the SM at LID"), 10)
    assert kv["traps"].startswith("none: the SM at LID"), kv
    lid2 = str(tm.lid_of(f, "Hca1", "0,1,8"))
    assert "not" not in f.command('Unlink "Hca3"[1]')   # Switch2[1]
    tm.sweep(m)

    def discards():
        return tm.perfquery(f, "Hca1", lid2, "1")["PortXmitDiscards"]

    d0 = discards()
    time.sleep(12)
    d1 = discards()
    assert d1 - d0 <= 2, (d0, d1)               # one check every 10 s
    for _ in range(3):
        tm.sweep(m)
    d2 = discards()
    # Each sweep still looks for the SM, once; a check may fall between.
    assert 3 <= d2 - d1 <= 4, (d1, d2)
    assert tm.problems(m, "sm_missing")
    assert sweep_kv(m)["traps"].startswith("none: the SM at LID"), sweep_kv(m)


@pytest.mark.watchdog(300)
def test_storm_settles(tmp_path, make_fabric, mount):
    """150 Unlink/ReLink pairs of two HCA cables as fast as ibsim takes
    them: once the ports have settled (Active again, as the diags see
    them), the view equals a sweep's within the bound, with interval_ms 0."""
    f = tm.fat_tree(tmp_path, make_fabric, leaves=2, spines=1, hcas_per_leaf=3)
    for h in ("H0003", "H0004", "H0005", "H0006"):
        f.wait_active(h, timeout=30)
    m = mount("H0002", fabric=f)
    assert wait_kv(m, lambda kv: kv["traps"] == "subscribed", 20)["traps"] == "subscribed"
    before = links(m)
    storm = []
    for _ in range(150):
        storm += ['Unlink "H0003"[1]', 'Unlink "H0005"[1]',
                  'ReLink "H0003"[1]', 'ReLink "H0005"[1]']
    f.commands(storm, timeout=120)
    # opensm's trap aging ignores a port's traps past ten in its window:
    # its own light sweep (every 10 s) brings the ports back.  Where it
    # did not within two minutes (once, under the ASan daemon: H0003 left
    # Initializing), a HUP makes it sweep heavily (opensm(8), NOTES): the
    # view is judged once the SM has brought the ports back, not the SM.
    for h in ("H0003", "H0005"):
        try:
            f.wait_active(h, timeout=60)
        except sim.FabricError:
            for proc, _ in list(f.opensm.values()):
                proc.send_signal(signal.SIGHUP)
            f.wait_active(h, timeout=60)
    settled = time.monotonic()
    while links(m) != before and time.monotonic() - settled < STALE_BOUND:
        time.sleep(0.2)
    took = time.monotonic() - settled
    assert links(m) == before, (took, sweep_kv(m))
    assert took <= STALE_BOUND
    # The link's problems are gone (the storm's discards may stay counted).
    assert not [p for p in tm.problems(m) if p["problem"] in LINK_PROBLEMS], \
        open(m.path("fabric", "problems")).read()
    tm.sweep(m)
    assert links(m) == before
