"""fabric/nodes/0xGUID/ports/N/pkeys/IDX: every endport's and switch port's
PKeyTable against `smpquery pkeys`, and when a sweep reads a table again
(docs/files.md, "What a sweep asks").  See README.md for the fixtures."""

import os
import re
import subprocess
import time

from diags import HOSTS, active_fabric, lid_of, problems, sweep, sweep_kv

CAS = ("Hca1", "Hca2", "Hca3")
SWITCHES = ("Switch1", "Switch2")


def read(path):
    with open(path, "rb") as f:
        return f.read().decode()


def node_guid(f, host):
    return "0x%016x" % int(f.ibstat(host)["Node GUID"], 16)


def fabric_table(m, guid, port):
    d = m.path("fabric", "nodes", guid, "ports", str(port), "pkeys")
    names = os.listdir(d)
    assert sorted(int(n) for n in names) == list(range(len(names))), names
    return [int(read(d / str(i)), 16) for i in range(len(names))]


def first_sweep(m):
    """The view's first sweep (its first reader waits for it)."""
    assert "\nok 1\n" in read(m.path("fabric", "sweep"))


def check_tables(f, m):
    compared = 0
    for host in CAS + SWITCHES:
        guid = node_guid(f, host)
        nports = int(read(m.path("fabric", "nodes", guid, "num_ports")))
        ports = range(nports + 1) if host in SWITCHES else [1]
        for p in ports:
            want = f.pkeys(host, p)        # smpquery -D pkeys 0 P on host
            assert fabric_table(m, guid, p) == want, (host, p)
            compared += 1
    return compared


def test_pkeys_equal_smpquery(fabric, mount):
    """Each CA's port and every port of each switch (port 0 and the
    external ports: their lengths differ, PartitionCap and
    PartitionEnforcementCap), entry by entry."""
    m = mount("Hca1")
    first_sweep(m)
    assert check_tables(fabric, m) > 10
    guid = node_guid(fabric, "Hca2")
    assert read(m.path("fabric", "nodes", guid, "ports", "1", "pkeys", "0")) == "0xffff\n"


def set_pkey_entry1(m, lid, pkey):
    """Entry 1 of the table at lid := pkey, by a Set through m's send."""
    data = "ffff%04x" % pkey + "00" * 60
    with open(m.path("ibsim0", "ports", "1", "send"), "w") as s:
        s.write("class=smi method=set attr=PKeyTable attrmod=0 lid=%d data=%s\n"
                % (lid, data))


def wait_pkey_entry1(f, host, pkey):
    deadline = time.monotonic() + 10
    while f.pkeys(host, 1)[1] != pkey and time.monotonic() < deadline:
        time.sleep(0.2)
    assert f.pkeys(host, 1)[1] == pkey, "the Set did not take"


def test_pkeys_read_when_they_can_change(make_fabric, mount):
    """A table set behind the view's back (by another mount: another
    process) stands in the view while the port's state and LID stay (the
    snapshot before's is shared: no PKeyTable Get on a repeated sweep); a
    Set through the mount's own send, LID-routed or directed, has the next
    sweep read that node's table (a Get per block more); a port whose state moved
    has its table read again."""
    f = active_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    other = mount("Hca3", fabric=f)
    first_sweep(m)
    guid = node_guid(f, "Hca2")
    assert fabric_table(m, guid, 1)[:2] == [0xffff, 0]
    f.stop_opensm("Hca3")          # nobody to set the table back
    lid = lid_of(f, "Hca2")
    # entry 1 := 0x8001 (a full member of partition 0x0001), by a Set
    # through the other mount's send
    set_pkey_entry1(other, lid, 0x8001)
    wait_pkey_entry1(f, "Hca2", 0x8001)
    sweep(m)
    assert fabric_table(m, guid, 1)[1] == 0, "a repeated sweep read the table"
    # (a sweep more: Hca3, an SM's host until now, is asked whole by the
    # sweep after the one that found it without IsSM, then taken as its
    # link stands: files.md, "What a sweep asks")
    sweep(m)
    mads = sweep_mads(m)
    # The mount's own Sets: LID-routed, then directed (Hca2 from Hca1 in
    # two-switch.net: Hca1's port 1, Switch1's port 2).
    set_pkey_entry1(m, lid, 0x8002)
    wait_pkey_entry1(f, "Hca2", 0x8002)
    sweep(m)
    assert fabric_table(m, guid, 1) == f.pkeys("Hca2", 1)
    # that table's blocks of 32 and no more
    assert sweep_mads(m) == mads + (len(fabric_table(m, guid, 1)) + 31) // 32
    with open(m.path("ibsim0", "ports", "1", "send"), "w") as s:
        s.write("dr=0,1,2 method=set attr=PKeyTable attrmod=0 data=%s\n"
                % ("ffff8003" + "00" * 60))
    wait_pkey_entry1(f, "Hca2", 0x8003)
    sweep(m)
    assert fabric_table(m, guid, 1)[1] == 0x8003
    # Behind its back again, then the port goes down and comes back
    # (Init: no SM): its state moved
    set_pkey_entry1(other, lid, 0x8004)
    wait_pkey_entry1(f, "Hca2", 0x8004)
    sweep(m)
    assert fabric_table(m, guid, 1)[1] == 0x8003
    f.command('Unlink "Hca2"[1]')
    f.command('ReLink "Hca2"[1]')
    sweep(m)
    assert read(m.path("fabric", "nodes", guid, "ports", "1", "state")) != "4: ACTIVE\n"
    assert fabric_table(m, guid, 1) == f.pkeys("Hca2", 1)
    assert fabric_table(m, guid, 1)[1] == 0x8004


def sweep_mads(m):
    """The last sweep's MADs less its detail counters' Gets: a slice of the
    ports has them in turn, by the sweep's number (test_traffic), and the
    sweep the traps' check asks when it finds the stopped SM silent comes
    before one of the test's sweeps or after, as the check's second falls
    (3-9 Gets more or less in a sweep of 50: CI's ASan pass saw 56 for 52
    once)."""
    kv = sweep_kv(m)
    return int(kv["mads"]) - int(kv["detail_mads"])


def partitioned(tmp_path, make_fabric, limited_only=False):
    """opensm with a partitions file (-P): the default partition, and
    0x0001 with Hca1 a full and Hca2 a limited member (and, limited_only,
    0x0002 with Hca2 and Hca3 both limited), the tables programmed."""
    f = make_fabric("two-switch.net")
    guid = {h: int(f.ibstat(h)["ports"][1]["Port GUID"], 16) for h in CAS}
    conf = tmp_path / "partitions.conf"
    conf.write_text("Default=0x7fff, ipoib : ALL=full ;\n"
                    "storage=0x0001 : 0x%016x=full, 0x%016x=limited ;\n"
                    % (guid["Hca1"], guid["Hca2"]) +
                    ("scratch=0x0002 : 0x%016x=limited, 0x%016x=limited ;\n"
                     % (guid["Hca2"], guid["Hca3"]) if limited_only else ""))
    f.start_opensm("Hca3", extra_args=("-P", str(conf)))
    for h in HOSTS:
        f.wait_active(h, timeout=30)
    deadline = time.monotonic() + 20
    while 0x0001 not in f.pkeys("Hca2", 1) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert 0x0001 in f.pkeys("Hca2", 1) and 0x8001 in f.pkeys("Hca1", 1)
    while limited_only and 0x0002 not in f.pkeys("Hca3", 1) and \
            time.monotonic() < deadline:
        time.sleep(0.5)
    return f


def test_pkeys_of_partitions_equal_smpquery(tmp_path, make_fabric, mount):
    """The tables opensm programs from a partitions file, membership bits
    too, entry by entry."""
    f = partitioned(tmp_path, make_fabric)
    m = mount("Hca1", fabric=f)
    first_sweep(m)
    check_tables(f, m)
    hca2 = fabric_table(m, node_guid(f, "Hca2"), 1)
    assert 0x0001 in hca2 and 0x8001 not in hca2        # limited
    assert 0x0001 not in fabric_table(m, node_guid(f, "Hca3"), 1)


def pktr(f, host, lid, port):
    """`saquery --smkey 1 PKTR LID/PORT`: the table's entries, its blocks'
    records in order.  (One endport at a time: umad2sim hands saquery the
    first RMPP segment of an answer only, two records.)"""
    out = f.run_tool(["saquery", "--smkey", "1", "PKTR", "%d/%d" % (lid, port)],
                     host).stdout
    table = []
    for rec in out.split("PKeyTableRecord dump:")[1:]:
        kv = dict(re.findall(r"^\s*(LID|Port|Block)\.+(\d+)$", rec, re.M))
        assert (int(kv["LID"]), int(kv["Port"])) == (lid, port), rec
        table[int(kv["Block"]) * 32:] = [int(k, 16) for k in
                                         re.findall(r"0x[0-9a-fA-F]{4}", rec)]
    assert table, out
    return table


def pktr_members(f):
    """{(PKey without the bit, "full" or "limited"): {(lid, port)}} of
    every endport (each CA's port 1, each switch's port 0) by saquery."""
    want = {}
    for host in HOSTS:
        lid, port = lid_of(f, host), 0 if host in SWITCHES else 1
        for k in pktr(f, "Hca1", lid, port):
            if k & 0x7fff:
                side = "full" if k & 0x8000 else "limited"
                want.setdefault((k & 0x7fff, side), set()).add((lid, port))
    return want


def test_partitions_equal_saquery_pktr(tmp_path, make_fabric, mount):
    """fabric/partitions/0xPKEY/{full,limited}: the endports (a CA's port,
    a switch's port 0) whose table has the PKey with or without its
    membership bit, as the SA's PKeyTableRecords say."""
    f = partitioned(tmp_path, make_fabric)
    m = mount("Hca1", fabric=f)
    first_sweep(m)
    want = pktr_members(f)
    assert want[(1, "full")] == {(lid_of(f, "Hca1"), 1)}
    assert want[(1, "limited")] == {(lid_of(f, "Hca2"), 1)}
    parts = m.path("fabric", "partitions")
    assert sorted(os.listdir(parts)) == sorted({"0x%04x" % k for k, _ in want})
    got = {}
    for name in os.listdir(parts):
        for side in ("full", "limited"):
            for ln in read(parts / name / side).splitlines():
                kv = dict(w.split("=", 1) for w in ln.split()[:3])
                got.setdefault((int(name, 16), side), set()).add(
                    (int(kv["lid"]), int(kv["port"])))
    assert got == want
    # a line names the endport's node and its description
    line = read(parts / "0x0001" / "limited")
    assert line.startswith("guid=%s port=1 lid=%d node_desc=" % (
        node_guid(f, "Hca2"), lid_of(f, "Hca2"))), line


def partition_kinds(m):
    return [p for p in problems(m) if p["problem"] in (
        "partition_no_full_member", "pkey_enforcement_mismatch",
        "port_without_default_partition")]


def test_no_partition_problem_under_opensm(fabric, mount):
    """opensm's tables (0xffff on every port, enforcement left off) raise
    none.  (Without an SM no port is Active and no sweep is made; ibsim's
    own tables have 0xffff at index 0 too.)"""
    m = mount("Hca1")
    first_sweep(m)
    assert fabric.pkeys("Hca2", 1)[0] == 0xffff
    assert fabric.pkeys("Switch1", 1)[0] == 0xffff
    assert partition_kinds(m) == []


def test_partition_no_full_member(tmp_path, make_fabric, mount):
    """A partition whose members are all limited (0x0002: Hca2 and Hca3),
    as saquery PKTR shows them, is named; 0x0001 (a full member, Hca1)
    and the default partition are not."""
    f = partitioned(tmp_path, make_fabric, limited_only=True)
    m = mount("Hca1", fabric=f)
    first_sweep(m)
    members = pktr_members(f)
    pkeys = {k for k, _ in members}
    want = sorted(k for k in pkeys if (k, "full") not in members)
    assert want == [0x0002], members
    got = [p for p in partition_kinds(m) if p["problem"] == "partition_no_full_member"]
    assert [int(p["pkey"], 16) for p in got] == want, got
    assert got[0]["severity"] == "error" and "guid" not in got[0]
    assert got[0]["limited_members"] == "2"
    assert [p for p in partition_kinds(m) if p not in got] == []
    text = read(m.path("fabric", "metrics.prom"))
    assert 'umadfs_problem{kind="partition_no_full_member",severity="error",' \
        'pkey="0x0002"} 1' in text


def test_port_without_default_partition(make_fabric, mount):
    """An Active CA port whose table (set through the mount's own send,
    the SM stopped) has neither 0xffff nor 0x7fff, as smpquery pkeys shows
    it: a warning naming it; the others have 0xffff."""
    f = active_fabric(make_fabric)
    f.stop_opensm("Hca3")
    m = mount("Hca1", fabric=f)
    first_sweep(m)
    assert partition_kinds(m) == []
    lid = lid_of(f, "Hca2")
    with open(m.path("ibsim0", "ports", "1", "send"), "w") as s:
        s.write("class=smi method=set attr=PKeyTable attrmod=0 lid=%d data=%s\n"
                % (lid, "8001" + "00" * 62))
    deadline = time.monotonic() + 10
    while f.pkeys("Hca2", 1)[0] != 0x8001 and time.monotonic() < deadline:
        time.sleep(0.2)
    table = f.pkeys("Hca2", 1)
    assert table[0] == 0x8001 and not {0xffff, 0x7fff} & set(table), table
    m2 = mount("Hca1", fabric=f)    # a new view reads every table
    first_sweep(m2)
    got = partition_kinds(m2)
    assert [(p["problem"], p["guid"], p["port"], p["severity"]) for p in got] == [
        ("port_without_default_partition", node_guid(f, "Hca2"), "1", "warning")], got


def test_partition_members_metric(tmp_path, make_fabric, mount):
    """-o fabric_metrics=all+partitions: umadfs_partition_members counts
    each partition's full and limited endports as saquery PKTR lists them;
    the default (all) has no such family; promtool checks the text."""
    f = partitioned(tmp_path, make_fabric, limited_only=True)
    m = mount("Hca1", fabric=f, options=("fabric_metrics=all+partitions",))
    plain = mount("Hca2", fabric=f)
    first_sweep(m)
    first_sweep(plain)
    want = {(k, side): len(ports) for (k, side), ports in pktr_members(f).items()}
    prom = read(m.path("fabric", "metrics.prom"))
    got = {(int(k, 16), side): int(v) for k, side, v in re.findall(
        r'^umadfs_partition_members\{pkey="(0x[0-9a-f]{4})",membership="(\w+)"\} (\d+)$',
        prom, re.M)}
    assert got == want and (2, "full") not in got, (got, want)
    assert "umadfs_partition_members" not in read(plain.path("fabric", "metrics.prom"))
    r = subprocess.run(["promtool", "check", "metrics"], input=prom,
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
