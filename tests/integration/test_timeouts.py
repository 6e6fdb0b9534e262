"""Requests nothing answers: one timeout line after timeout x (retries +
1), the defaults of the timeout_ms and retries files; and an answer from
another LID than the one asked (path bits and LMC), not taken.  (dr=0,1,3:
Switch1's port 3, which has no link; test_send_vs_diags.py draws the
session fabric.)"""

import time

from diags import lid_of, tool
from madfiles import Recv, pdir, read_text, stats, write_send


def test_undeliverable_dr_times_out(fabric, mount):
    m = mount("Hca1")
    # The peer agrees that nothing answers there.
    cp = tool(fabric, "Hca1", "smpquery", "-D", "nodeinfo", "0,1,3", check=False)
    assert cp.returncode != 0
    before = stats(m)
    with Recv(m) as r:
        t0 = time.monotonic()
        write_send(m, "class=smi-dr method=get attr=NodeInfo dr=0,1,3 "
                   "timeout=100 retries=2 tid=0x77\n")
        ln = r.line(timeout=5)
        dt = time.monotonic() - t0
        r.assert_empty(0.5)     # exactly one line per request
    assert ln["error"] == "timeout", ln.text
    assert ln.tid == 0x77 and ln["method"] == "get" and ln["dr"] == "0,1,3"
    assert ln["attr"] == "NodeInfo"
    assert 0.27 <= dt <= 0.8, "timeout after %.3fs, expected ~0.3s" % dt
    after = stats(m)
    assert after["timeouts"] == before["timeouts"] + 1
    assert after["sent"] == before["sent"] + 1


def test_timeout_defaults_from_files(fabric, mount):
    m = mount("Hca1")
    p = pdir(m)
    with open(p / "timeout_ms", "w") as fh:
        fh.write("0x32\n")      # 50
    with open(p / "retries", "w") as fh:
        fh.write("1\n")
    assert read_text(p / "timeout_ms") == "50\n"
    assert read_text(p / "retries") == "1\n"
    with Recv(m) as r:
        t0 = time.monotonic()
        write_send(m, "dr=0,1,3 method=get attr=PortInfo tid=9\n")
        ln = r.line()
        dt = time.monotonic() - t0
    assert ln["error"] == "timeout" and ln.tid == 9
    assert 0.09 <= dt <= 0.5, dt


def test_answer_from_another_lid_is_not_taken(make_fabric, mount):
    """An answer counts only from the LID its request went to, but for the
    path bits of the port's LMC.  opensm with LMC 1 gives its own port
    (Hca3) two LIDs; the SA answers a request to the second from the
    first (umad2sim sends from the port's base LID).  A mount started
    after opensm reads LMC 1 and takes it; one started before reads LMC 0
    (libibumad's, from umad2sim's sysfs written at start): not the
    answer, a timeout, and a warning in its log."""
    f = make_fabric("two-switch.net")
    before = mount("Hca1", fabric=f)
    f.start_opensm("Hca3", extra_args=["-l", "1"])
    for h in ("Hca1", "Hca2", "Hca3"):
        f.wait_active(h, timeout=30)
    after = mount("Hca2", fabric=f)
    sm_lid = lid_of(f, "Hca1", "0,1,7,1")
    ask = "class=sa method=get attr=ClassPortInfo lid=%d timeout=150 retries=1\n"
    got = {}
    for m in (before, after):
        with Recv(m) as r:
            for lid in (sm_lid, sm_lid + 1):
                write_send(m, ask % lid)
                ln = r.line(timeout=5)
                got[m.sim_host, lid] = (ln.get("error"), ln.int("lid"))
    assert got == {("Hca1", sm_lid): (None, sm_lid),
                   ("Hca1", sm_lid + 1): ("timeout", sm_lid + 1),
                   ("Hca2", sm_lid): (None, sm_lid),
                   ("Hca2", sm_lid + 1): (None, sm_lid)}, got
    assert ("ibsim0/1: dropped an answer not from where its request went (1 so far): "
            "class 0x03 to LID 0x%x, answered by class 0x03 from LID 0x%x"
            % (sm_lid + 1, sm_lid)) in before.log_text()
    assert "dropped an answer" not in after.log_text()
