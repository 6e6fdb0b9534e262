"""fabric/ beyond the topology: the ports' enabled and supported widths and
speeds against smpquery, fabric/sm against sminfo (one SM, two, none),
and a repeated sweep, which asks only what can change, against perfquery,
smpquery and the simulator's own changes."""

import os
import re
import time

import pytest

import diags as tm
import simfabric as sim

# two-switch.net with link speeds and widths set by the lines' comments
# (ibsim takes them as the port's enabled width and speed; both ends of
# every link are set, as ibsim wants).
SPEEDS_NET = """\
Switch	8 "Switch1"	# "speed switch one"
[1]	"Hca1"[1]	# "Hca1" lid 0 4xEDR
[2]	"Hca2"[1]	# "Hca2" lid 0 12xDDR
[7]	"Switch2"[7]	# "Switch2" lid 0 1xSDR
[8]	"Switch2"[8]	# "Switch2" lid 0 4xQDR

Switch	8 "Switch2"	# "speed switch two"
[1]	"Hca3"[1]
[7]	"Switch1"[7]	# "Switch1" lid 0 1xSDR
[8]	"Switch1"[8]	# "Switch1" lid 0 4xQDR

Hca	1 "Hca1"	# "speed hca one"
[1]	"Switch1"[1]	# "Switch1" lid 0 4xEDR

Hca	1 "Hca2"	# "speed hca two"
[1]	"Switch1"[2]	# "Switch1" lid 0 12xDDR

Hca	1 "Hca3"	# "speed hca three"
[1]	"Switch2"[1]
"""

GBPS = {"2.5 Gbps": "SDR", "5.0 Gbps": "DDR", "10.0 Gbps": "QDR",
        "14.0625 Gbps": "FDR", "25.78125 Gbps": "EDR", "53.125 Gbps": "HDR",
        "106.25 Gbps": "NDR"}
SPEED_ORDER = ["SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR", "XDR"]
WIDTH_ORDER = ["1X", "2X", "4X", "8X", "12X"]
IS_EXT_SPEEDS = 1 << 14     # PortInfo CapabilityMask
SW1, SW2, HCA2 = 0x200000, 0x200001, 0x100002   # two-switch.net's GUIDs
SMINFO = re.compile(r"sminfo: sm lid (\d+) sm guid 0x([0-9a-f]+), activity count "
                    r"(\d+) priority (\d+) state (\d+) SMINFO_(\w+)")
SM_STATES = {0: "notactive", 1: "discovering", 2: "standby", 3: "master"}


def read(m, *parts):
    with open(m.path("fabric", *parts)) as f:
        return f.read()


def sweep(m):
    """A sweep now, and its sweep file as a dict."""
    with open(m.path("fabric", "sweep"), "w") as f:
        f.write("1\n")
    return dict(ln.split(" ", 1) for ln in read(m, "sweep").splitlines()
                if " " in ln)


def node_dir(guid, *parts):
    return os.path.join("nodes", "0x%016x" % guid, *parts)


def words(value, table):
    """smpquery's "1X or 4X" / "2.5 Gbps or 10.0 Gbps" as a set of names."""
    if value in ("0", "No Extended Speed"):
        return set()
    return {table.get(w, w) for w in value.split(" or ")}


def ordered(names, order):
    return " ".join(n for n in order if n in names)


def test_port_speeds_equal_smpquery(make_fabric, mount, tmp_path):
    net = tmp_path / "speeds.net"
    net.write_text(SPEEDS_NET)
    f = make_fabric(str(net))
    f.start_opensm("Hca3")
    for h in tm.HOSTS:
        f.wait_active(h, timeout=30)
    m = mount("Hca1", fabric=f)
    assert sweep(m)["ok"] == "1"
    checked = 0
    for g in os.listdir(m.path("fabric", "nodes")):
        guid = int(g, 16)
        ports = sorted(int(p) for p in os.listdir(m.path("fabric", node_dir(guid, "ports"))))
        switch = read(m, node_dir(guid, "node_type")) == "2: switch\n"
        if switch:
            lid = int(read(m, node_dir(guid, "ports", "0", "lid")), 16)
            cap = sim.parse_smpquery(tm.tool(f, "Hca2", "smpquery", "portinfo",
                                             str(lid), "0").stdout)
        for p in ports:
            if not switch:
                lid = int(read(m, node_dir(guid, "ports", str(p), "lid")), 16)
            pi = sim.parse_smpquery(tm.tool(f, "Hca2", "smpquery", "portinfo",
                                            str(lid), str(p)).stdout)
            # Extended speeds count where the CapabilityMask says so: a
            # switch's port 0's (its other ports show 0x0 there).
            ext = int((cap if switch else pi)["CapMask"], 16) & IS_EXT_SPEEDS
            ours = {k: read(m, node_dir(guid, "ports", str(p), k))[:-1] for k in (
                "link_width", "link_speed", "link_width_enabled", "link_width_supported",
                "link_speed_enabled", "link_speed_supported")}

            def speeds(field):
                names = words(pi["LinkSpeed" + field], GBPS)
                if ext:
                    names |= words(pi["LinkSpeedExt" + field], GBPS)
                return ordered(names, SPEED_ORDER)

            active = words(pi["LinkSpeedExtActive"], GBPS) if ext else set()
            want = {
                "link_width": pi["LinkWidthActive"],
                "link_speed": (active or words(pi["LinkSpeedActive"], GBPS)).pop(),
                "link_width_enabled": ordered(words(pi["LinkWidthEnabled"], {}), WIDTH_ORDER),
                "link_width_supported": ordered(words(pi["LinkWidthSupported"], {}),
                                                WIDTH_ORDER),
                "link_speed_enabled": speeds("Enabled"),
                "link_speed_supported": speeds("Supported"),
            }
            assert ours == want, (g, p, pi)
            checked += 1
    assert checked == 2 * 9 + 3     # switch ports 0-8, one per HCA
    # What the net file set, as the files say it.
    sw1 = node_dir(SW1, "ports")
    assert read(m, sw1, "7", "link_width_enabled") == "1X\n"
    assert read(m, sw1, "7", "link_width") == "1X\n"
    assert read(m, sw1, "1", "link_speed") == "EDR\n"
    assert read(m, sw1, "1", "link_speed_enabled") == "SDR DDR QDR FDR EDR\n"
    assert read(m, sw1, "2", "link_width") == "12X\n"
    assert read(m, sw1, "2", "link_speed") == "DDR\n"
    # The mount's own port: its link_speed is what its local rate file names.
    ca = [c for c in os.listdir(m.mountpoint) if c != "fabric"][0]
    with open(m.path(ca, "ports", "1", "rate")) as fd:
        rate = fd.read()
    hca1 = node_dir(0x100000, "ports", "1")
    assert rate == "100 Gb/sec (4X EDR)\n"
    assert read(m, hca1, "rate") == rate
    assert read(m, hca1, "link_speed") == "EDR\n"


def parse_sminfo(out):
    mm = SMINFO.search(out)
    assert mm, out
    lid, guid, act, prio, state, _ = mm.groups()
    return {"lid": int(lid), "guid": int(guid, 16), "act_count": int(act),
            "priority": int(prio), "state": SM_STATES[int(state)]}


def sm_file(m):
    """fabric/sm: (the master's key value lines as a dict, [standby dicts])."""
    master, standby = {}, []
    for line in read(m, "sm").splitlines():
        if line.startswith("standby "):
            kv = dict(w.split("=", 1) for w in line.split()[1:])
            standby.append(kv)
            continue
        k, v = line.split(" ", 1)
        assert k not in master, line
        master[k] = v
    return master, standby


def as_sminfo(kv):
    """fabric/sm's keys and values in parse_sminfo's terms."""
    return {"lid": int(kv["lid"]), "guid": int(kv["guid"], 16),
            "act_count": int(kv["act_count"]), "priority": int(kv["priority"]),
            "state": kv["state"]}


def same_sm(ours, before, after):
    """ours is what sminfo says but for ActCount, which moves: it must lie
    between sminfo's two readings around the sweep."""
    fixed = ("lid", "guid", "priority", "state")
    assert {k: ours[k] for k in fixed} == {k: before[k] for k in fixed} == \
        {k: after[k] for k in fixed}, (ours, before, after)
    assert before["act_count"] <= ours["act_count"] <= after["act_count"], \
        (ours, before, after)


def test_sm_equals_sminfo(fabric, mount):
    m = mount("Hca1")
    before = parse_sminfo(tm.tool(fabric, "Hca2", "sminfo").stdout)
    sweep(m)
    after = parse_sminfo(tm.tool(fabric, "Hca2", "sminfo").stdout)
    master, standby = sm_file(m)
    assert list(master) == ["guid", "lid", "priority", "state", "act_count"]
    assert master["guid"] == "0x%016x" % before["guid"]
    same_sm(as_sminfo(master), before, after)
    assert before["state"] == "master" and standby == []


def test_two_sms_master_and_standby(make_fabric, mount):
    f = make_fabric("two-switch.net")
    f.start_opensm("Hca3", ("-p", "5"))
    for h in tm.HOSTS:
        f.wait_active(h, timeout=30)
    f.start_opensm("Hca2", ("-p", "1"))
    lid2 = tm.lid_of(f, "Hca2", port=1)
    deadline = time.monotonic() + 30
    while True:     # until the second one has found the master and stands by
        out = tm.tool(f, "Hca1", "sminfo", str(lid2), check=False).stdout
        if SMINFO.search(out) and parse_sminfo(out)["state"] == "standby":
            break
        assert time.monotonic() < deadline, out
        time.sleep(0.5)
    m = mount("Hca1", fabric=f)
    before = [parse_sminfo(tm.tool(f, "Hca2", "sminfo", *a).stdout)
              for a in ((), (str(lid2),))]
    sweep(m)
    after = [parse_sminfo(tm.tool(f, "Hca2", "sminfo", *a).stdout)
             for a in ((), (str(lid2),))]
    master, standby = sm_file(m)
    assert len(standby) == 1, standby
    same_sm(as_sminfo(master), before[0], after[0])
    same_sm(as_sminfo(standby[0]), before[1], after[1])
    assert master["state"] == "master" and standby[0]["state"] == "standby"
    assert master["priority"] == "5" and standby[0]["priority"] == "1"


def test_no_sm_empty(make_fabric, mount):
    f = tm.quiet_fabric(make_fabric)    # ports Active, their SM gone
    m = mount("Hca1", fabric=f)
    kv = sweep(m)
    assert kv["ok"] == "1"
    assert read(m, "sm") == ""
    # sminfo finds no SM at the LID the ports still name either.
    assert tm.tool(f, "Hca2", "sminfo", check=False).returncode != 0
    assert int(kv["timeouts"]) >= 1     # the SMInfo asked there


def switch_ports(m):
    """Ports of the fabric's switches, port 0 included."""
    return sum(int(read(m, node_dir(g, "num_ports"))) + 1 for g in (SW1, SW2))


def pkey_table_gets(f):
    """The PKeyTable Gets of a first sweep: one per 32 entries of each CA's
    port and each switch port, as `smpquery pkeys` reads their tables."""
    gets = 0
    for host in tm.HOSTS:
        ni = sim.parse_smpquery(tm.tool(f, host, "smpquery", "-D", "nodeinfo",
                                        "0").stdout)
        ports = [1] if host.startswith("Hca") else range(int(ni["NumPorts"]) + 1)
        gets += sum(-(-len(f.pkeys(host, p)) // 32) for p in ports)
    return gets


def error_counters(m, guid, port):
    d = m.path("fabric", node_dir(guid, "ports", str(port), "counters"))
    return {tm.SYSFS_BASIC[n]: int(open(os.path.join(d, n)).read())
            for n in tm.SYSFS_BASIC if n != "port_xmit_wait"}


def check_switch_counters(f, m, lids):
    """Every error counter of ports 7 and 8 of both switches equals
    perfquery's."""
    for guid, lid in lids.items():
        for port in (7, 8):
            peer = tm.perfquery(f, "Hca2", str(lid), str(port))
            ours = error_counters(m, guid, port)
            assert ours == {k: peer[k] for k in ours}, (guid, port, ours, peer)


def test_repeated_sweep_asks_less_and_sees_changes(make_fabric, mount):
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)

    def sweep(m):
        """The sweep file, its MADs less the detail counters' Gets (the
        first sweep's for every port, then a slice in turn: test_traffic)."""
        kv = globals()["sweep"](m)
        kv["mads"] = str(int(kv["mads"]) - int(kv["detail_mads"]))
        return kv
    first = sweep(m)
    again = sweep(m)
    nodes, switches = int(first["nodes"]), int(first["switches"])
    # Not again: NodeDescription and ClassPortInfo of every node, each
    # switch's forwarding table (one block each: nothing changed, so they
    # are the sweep before's), each port's PKeyTable (its state and LID as
    # they were), each switch's SL-to-VL probe (it goes with the forwarding
    # table).  SwitchInfo is asked again for its LinearFDBTop (the
    # forwarding table's size: fabric_routes).  A switch's PortCounters
    # are one sum in both: its error counters are 0 (the first sweep's
    # ports are 0 by it: test_first_sweep_takes_the_sum_of_0).
    saved = 2 * nodes + switches + pkey_table_gets(f)
    assert (first["sl2vl_mads"], again["sl2vl_mads"]) == (str(switches), "0")
    saved += switches
    # Light sweeps guard the view: each CA behind a link that stands (all
    # but this host's) is the sweep before's, its NodeInfo and PortInfo
    # not asked, nor its switch port's PortInfo; only its counters are.
    remote = int(first["cas"]) - 1
    assert (first["cas_kept"], again["cas_kept"]) == ("0", str(remote))
    assert (first["ports_kept"], again["ports_kept"]) == ("0", str(remote))
    saved += 3 * remote
    assert int(again["mads"]) == int(first["mads"]) - saved, (first, again)
    assert (first["lfts_read"], again["lfts_read"]) == (str(switches), "0")
    steady = int(again["mads"])
    lids = {SW1: tm.lid_of(f, "Switch1"), SW2: tm.lid_of(f, "Switch2")}
    # What a switch costs when its ports are asked: each port's (0 too)
    # PortCounters beside the sum.
    each = int(read(m, node_dir(SW1, "num_ports"))) + 1

    # An error counter grows: the sum moved, every port of that switch asked.
    tm.perf_set(f, "Switch1", 7, "PortCounters", {"SymbolErrorCounter": 5})
    assert int(sweep(m)["mads"]) == steady + each
    check_switch_counters(f, m, lids)
    # Nothing moved since: the ports keep them.
    assert int(sweep(m)["mads"]) == steady
    check_switch_counters(f, m, lids)
    # Data counters are each port's PortCountersExtended, asked every time.
    tm.perf_set(f, "Switch1", 8, "PortCountersExtended", {"PortXmitData": 0x123456789a})
    assert int(sweep(m)["mads"]) == steady
    data = int(read(m, node_dir(SW1, "ports", "8", "counters", "port_xmit_data")))
    assert 0x123456789a <= data < 0x123456789a + 10000     # (4-byte words)

    # Cleared (a PerfMgt Set, as perfquery -R sends): the sum went down.
    tm.tool(f, "Hca2", "perfquery", "-R", str(lids[SW1]), "7")
    sweep(m)
    assert error_counters(m, SW1, 7)["SymbolErrorCounter"] == 0
    check_switch_counters(f, m, lids)

    # A saturated sum says nothing of its ports: each is asked while it is.
    tm.perf_set(f, "Switch2", 7, "PortCounters", {"SymbolErrorCounter": 65535})
    sweep(m)
    tm.perf_set(f, "Switch2", 8, "PortCounters", {"SymbolErrorCounter": 3})
    assert int(sweep(m)["mads"]) == steady + each
    check_switch_counters(f, m, lids)
    assert error_counters(m, SW2, 8)["SymbolErrorCounter"] == 3

    # A sum that is not what its ports add up to (ibsim's PortXmitDiscards
    # sum stops at 255): each port asked, every sweep.
    tm.perf_set(f, "Switch1", 8, "PortCounters", {"PortXmitDiscards": 300})
    sweep(m)
    tm.perf_set(f, "Switch1", 7, "PortCounters", {"PortXmitDiscards": 2})
    sweep(m)
    check_switch_counters(f, m, lids)
    assert error_counters(m, SW1, 7)["PortXmitDiscards"] == 2


def test_first_sweep_takes_the_sum_of_0(make_fabric, mount):
    """A switch whose PMA sums its ports: at the first sweep a sum whose
    error counters are all 0 gives each port 0 without asking it (counters
    only grow: as ibqueryerrors takes the sum); a sum above 0 has every
    port of that switch asked."""
    f = tm.quiet_fabric(make_fabric)
    lids = {SW1: tm.lid_of(f, "Switch1"), SW2: tm.lid_of(f, "Switch2")}

    def first_sweep(hca):
        # (No Reports: under the simulator a subscription holds the port's
        # issm, and a second mount's sweep would ask its SMInfo.)
        m = mount(hca, fabric=f, options=("fabric_traps=off",))
        kv = sweep(m)
        check_switch_counters(f, m, lids)
        return m, int(kv["mads"]) - int(kv["detail_mads"])
    tm.perf_set(f, "Switch1", 7, "PortCounters", {"SymbolErrorCounter": 5})
    m, moved = first_sweep("Hca1")
    assert error_counters(m, SW1, 7)["SymbolErrorCounter"] == 5
    assert error_counters(m, SW2, 7)["SymbolErrorCounter"] == 0
    each = int(read(m, node_dir(SW1, "num_ports"))) + 1
    tm.tool(f, "Hca2", "perfquery", "-R", str(lids[SW1]), "7")
    m2, quiet = first_sweep("Hca1")
    assert error_counters(m2, SW1, 7)["SymbolErrorCounter"] == 0
    # Switch1's ports, each asked, where the sum of 0 asked none.
    assert moved == quiet + each, (moved, quiet, each)


def test_kept_ca_asked_again_after_its_link_went_down(make_fabric, mount):
    """While light sweeps guard the view, a repeated sweep takes each CA
    behind a link that stands from the sweep before (cas_kept), the view
    unchanged.  A LinkDownedCounter that moved at either end of its link
    (the link went down and up between two sweeps, unseen: ibsim counts
    none, so the test sets it as a port counts it) has the sweep after ask
    it again.  With light sweeps off, every sweep asks every CA."""
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    sweep(m)
    def view():
        """topology without its header's date, and links."""
        return {"topology": re.sub(r"generated on .*", "", read(m, "topology")),
                "links": read(m, "links")}
    before = view()
    hca2 = {a: read(m, node_dir(HCA2, a)) for a in ("node_desc", "fw_ver")}
    hca2["lid"] = read(m, node_dir(HCA2, "ports", "1", "lid"))
    kv = sweep(m)
    assert (kv["cas_kept"], kv["guard"]) == ("2", "light_sweep"), kv
    assert view() == before
    assert {a: read(m, node_dir(HCA2, a)) for a in ("node_desc", "fw_ver")} == \
        {a: hca2[a] for a in ("node_desc", "fw_ver")}
    assert read(m, node_dir(HCA2, "ports", "1", "lid")) == hca2["lid"]

    # Hca2's end (Hca2 is kept, its counters read: marked), then Switch2's
    # end of Hca3's link.
    for node, port in (("Hca2", 1), ("Switch2", 1)):
        tm.perf_set(f, node, port, "PortCounters", {"LinkDownedCounter": 1})
        assert [sweep(m)["cas_kept"] for _ in range(3)] == ["2", "1", "2"], node

    # Hca2 given another LID while its link stands: its PortCounters Get
    # at the old one (sent once: a probe of its link) goes unanswered, so
    # the same sweep asks its PortInfo (and its switch port's) and then
    # its counters at the new LID; the lost Get is not its fault.
    f.command('Baselid "Hca2"[1] 77')
    assert tm.lid_of(f, "Hca2") == 77
    kv = sweep(m)
    assert int(read(m, node_dir(HCA2, "ports", "1", "lid")), 0) == 77
    # No SM routes LID 77 here, so the Gets there are lost too: Hca2 is
    # unresponsive for its two at the new LID, not for the one at the old.
    assert int(kv["timeouts"]) >= 3, kv
    assert [p["pma_timeouts"] for p in tm.problems(m, "node_unresponsive")
            if p["guid"] == "0x%016x" % HCA2] == ["2"], tm.problems(m)

    m2 = mount("Hca1", fabric=f, options=("fabric_light_sweep=0",))
    sweep(m2)
    kv = sweep(m2)
    assert (kv["cas_kept"], kv["guard"]) == ("0", "none"), kv


def ibnetdiscover_guids(f):
    """The node GUIDs ibnetdiscover finds from Hca1."""
    out = tm.tool(f, "Hca1", "ibnetdiscover").stdout
    return {int(g, 16) for g in re.findall(r'^(?:Switch|Ca)\s+\d+\s+"[SH]-([0-9a-f]{16})"',
                                             out, re.M)}


def kept_links_found_changed(make_fabric, mount):
    """One try of test_kept_link_found_changed_in_the_sweep: False when a
    light sweep saw a change before the sweep did (the view was then
    refreshed, not the sweep's to find)."""
    f = tm.quiet_fabric(make_fabric)
    # (No Reports: a refresh would show the changes before the sweep.)
    m = mount("Hca1", fabric=f, options=("fabric_traps=off",))
    sweep(m)
    assert sweep(m)["ports_kept"] == "2"    # Hca2's and Hca3's switch ports
    lid1 = str(tm.lid_of(f, "Switch1"))
    hca3 = int(os.readlink(m.path("fabric", node_dir(SW2, "ports", "1", "peer")))
               .split("/")[-3], 16)

    # Hca2's cable out (Switch1[2]): its PortCounters Get goes unanswered,
    # so its switch port is asked after all, Down: Hca2 is not in the
    # view, as ibnetdiscover does not find it.
    discards = tm.perfquery(f, "Hca1", lid1, "2")["PortXmitDiscards"]
    assert "not" not in f.command('Unlink "Hca2"[1]')
    kv = sweep(m)
    if kv["ports_kept"] != "2":
        return False
    assert int(kv["timeouts"]) >= 1, kv
    assert not os.path.exists(m.path("fabric", node_dir(HCA2)))
    assert read(m, node_dir(SW1, "ports", "2", "state")) == "1: DOWN\n"
    ours = {int(g, 16) for g in os.listdir(m.path("fabric", "nodes"))}
    assert HCA2 not in ours and ours == ibnetdiscover_guids(f)
    # That Get was sent once (a probe): the one discarded at that port.
    assert tm.perfquery(f, "Hca1", lid1, "2")["PortXmitDiscards"] == discards + 1
    sweep(m)

    # Hca3 moved from Switch2[1] to Switch2[2]: Switch2 keeps Hca3 with its
    # port 1; its port 2 (Down before) is asked, and reaches Hca3, so port
    # 1 is asked after all.
    assert "not" not in f.command('Unlink "Hca3"[1]')
    f.command('Link "Switch2"[2] "Hca3"[1]')
    if sweep(m)["ports_kept"] != "1":
        return False
    peer = os.readlink(m.path("fabric", node_dir(hca3, "ports", "1", "peer")))
    assert peer.endswith("/0x%016x/ports/2" % SW2), peer
    assert not os.path.lexists(m.path("fabric", node_dir(SW2, "ports", "1", "peer")))
    assert read(m, node_dir(SW2, "ports", "1", "state")) == "1: DOWN\n"
    state = sim.parse_smpquery(tm.tool(f, "Hca1", "smpquery", "-D", "portinfo",
                                       "0,1,7,2", "1").stdout)["LinkState"]
    assert state == "Initialize"    # (no SM)
    assert read(m, node_dir(hca3, "ports", "1", "state")) == "2: INIT\n"
    return True


def test_kept_link_found_changed_in_the_sweep(make_fabric, mount):
    """While light sweeps guard the view, a switch port with a kept CA
    behind it is the sweep before's too (ports_kept).  A change the light
    sweeps have not seen yet still shows in that sweep: the CA found at
    another port (moved) has its old port asked, Down; a CA whose
    counters go unanswered has its switch port asked, and is left out of
    the view when that port is Down.  (Light sweeps go round this fabric
    every second: a try they win is tried again.)"""
    for _ in range(3):
        if kept_links_found_changed(make_fabric, mount):
            return
    pytest.fail("the light sweeps saw each change first, three times")


def test_light_sweep_sees_a_link_trained_down(make_fabric, mount):
    """An Active link whose width changes without going down (ibsim sets
    both ends' LinkWidthActive at a LinkWidthEnabled Set, as a link that
    trains down to fewer lanes): the light sweep finds its switch port
    not as the view has it and refreshes that switch; the sweep after
    asks the CA again (its width is not its switch port's), and both
    ends then equal smpquery's."""
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f, options=("fabric_traps=off",))
    sweep(m)
    kv = sweep(m)
    assert kv["cas_kept"] == "2", kv
    ends = {"Switch1": (SW1, 2, "0,1"), "Hca2": (HCA2, 1, "0,1,2")}

    def widths():
        return {h: read(m, node_dir(g, "ports", str(p), "link_width"))[:-1]
                for h, (g, p, _) in ends.items()}

    def smpquery_widths():
        return {h: sim.parse_smpquery(tm.tool(f, "Hca1", "smpquery", "-D", "portinfo",
                                              path, str(p)).stdout)["LinkWidthActive"]
                for h, (_, p, path) in ends.items()}
    assert widths() == smpquery_widths() == {"Switch1": "4X", "Hca2": "4X"}
    # From Hca1's own process, not through the mount (not its Set).
    tm.tool(f, "Hca1", "ibportstate", "-D", "0,1", "2", "width", "1")
    assert smpquery_widths() == {"Switch1": "1X", "Hca2": "1X"}
    deadline = time.monotonic() + 10
    while widths()["Switch1"] != "1X":
        assert time.monotonic() < deadline, read(m, "sweep")
        time.sleep(0.1)
    kv2 = dict(ln.split(" ", 1) for ln in read(m, "sweep").splitlines() if " " in ln)
    assert int(kv2["light_sweep_changes"]) > int(kv["light_sweep_changes"]), kv2
    kv = sweep(m)
    assert (kv["cas_kept"], kv["ports_kept"]) == ("1", "1"), kv  # Hca3's
    assert widths() == smpquery_widths()


def test_repeated_sweep_sees_cable_and_lid_changes(make_fabric, mount):
    f = tm.quiet_fabric(make_fabric)
    m = mount("Hca1", fabric=f)
    sweep(m)
    sweep(m)
    peer = m.path("fabric", node_dir(HCA2, "ports", "1", "peer"))
    assert os.readlink(peer).endswith("/0x%016x/ports/2" % SW1)
    # The cable moves from Switch1[2] to Switch2[2].
    assert "not" not in f.command('Unlink "Hca2"[1]')
    f.command('Link "Switch2"[2] "Hca2"[1]')
    sweep(m)
    assert os.readlink(peer).endswith("/0x%016x/ports/2" % SW2)
    assert not os.path.lexists(m.path("fabric", node_dir(SW1, "ports", "2", "peer")))
    assert read(m, node_dir(SW1, "ports", "2", "state")) == "1: DOWN\n"
    state = sim.parse_smpquery(tm.tool(f, "Hca1", "smpquery", "-D", "portinfo",
                                       "0,1,7,2", "1").stdout)["LinkState"]
    words = {"Down": "DOWN", "Initialize": "INIT", "Armed": "ARMED", "Active": "ACTIVE"}
    assert read(m, node_dir(HCA2, "ports", "1", "state")).split()[1] == words[state]
    # Its LID changes.
    f.command('Baselid "Hca2"[1] 77')
    sweep(m)
    assert read(m, node_dir(HCA2, "ports", "1", "lid")) == "0x4d\n"
    # Its description is kept (it did not change), and it is ibsim's.
    desc = tm.tool(f, "Hca1", "smpquery", "-D", "nodedesc", "0,1,7,2").stdout
    desc = desc.split(":", 1)[1].strip(" .\n")
    assert desc and read(m, node_dir(HCA2, "node_desc")) == desc + "\n"
