"""The docs agree with each other and with the daemon.

Text checks over README.md, docs/ (not architecture.md, which describes
the code), the unit, /etc/default/umadfs and the scripts: one mount point,
option and key names, ESPIPE lists, prompts, the TID default, the timeout
line's len=.  Where a doc states a behaviour, a mount on the simulated
fabric checks it (TIDs, len=, seeks, `head -n1` vs `read`, queue_limit).
The examples' speed names are checked against libibmad's own field
offsets and names (a small C program built here).
"""

import errno
import os
import re
import shutil
import subprocess
import sys

import pytest

import simfabric as sim
from checks import need
from diags import active_fabric
from madfiles import Recv, write_text

REPO = sim.REPO
DOCS = [REPO / "README.md", REPO / "docs" / "umadfs.8",
        REPO / "tests" / "bench" / "README.md"] + \
    sorted(p for p in (REPO / "docs").glob("*.md") if p.name != "architecture.md")
CONFIG = [REPO / "packaging" / "umadfs.service.in",
          REPO / "packaging" / "umadfs.default", REPO / "scripts" / "run.sh"] + \
    sorted(p for p in (REPO / "scripts" / "examples").iterdir() if p.is_file())
MOUNT_POINT = "/run/umadfs"
PORT = "ibsim0/ports/1"


def _text(path):
    # Roff escapes off, so that man page text reads as the others.
    return path.read_text().replace("\\-", "-")


# ---------------------------------------------------------------------------
# text only

def test_one_mount_point():
    """Every path to a mount in the docs and scripts is /run/umadfs."""
    seen = {}
    for p in DOCS + CONFIG:
        t = _text(p)
        for m in re.finditer(r"(/[\w.-]+(?:/[\w.-]+)*?)/(?:mlx5_0|ibsim0|rxe0|CA)/ports",
                             t):
            seen.setdefault(m.group(1), set()).add(p.name)
        for m in re.finditer(r"(?:^|[\s`'(])(/mnt/[\w.-]*|/ib)(?=[\s/`')]|$)", t,
                             re.M):
            seen.setdefault(m.group(1), set()).add(p.name)
    assert set(seen) <= {MOUNT_POINT}, seen
    assert "DEFAULT_MNT=/run/umadfs" in _text(REPO / "scripts" / "run.sh")
    assert "UMADFS_MOUNTPOINT=/run/umadfs" in \
        _text(REPO / "packaging" / "umadfs.service.in")
    assert "umadfs /run/umadfs" in _text(REPO / "docs" / "umadfs.8")


def test_queue_option_and_stats_key():
    """The option is queue_len=, the stats key queue_limit: every doc that
    names the key says it is the option's value."""
    for p in DOCS + CONFIG:
        t = _text(p)
        assert "queue_limit=" not in t and "-o queue_limit" not in t, p
        for m in re.finditer(r"queue_limit", t):
            near = t[max(0, m.start() - 200):m.end() + 200]
            assert "queue_len" in near, (p.name, near)
    for p in ("README.md", "docs/umadfs.8", "docs/files.md"):
        assert "queue_len" in _text(REPO / p), p


def test_no_channel_named_default():
    for p in DOCS:
        t = _text(p)
        assert not re.search(r"channel,?\s+(\.BR\s+)?`?default`?\s*[;)]", t), p
        assert "channel `default`" not in t, p


def test_tid_default_documented():
    t = _text(REPO / "docs" / "text-format.md")
    row = re.search(r"^\| `tid=` \|.*$", t, re.M).group(0)
    assert "| 0" not in row and "unique" in row, row
    assert "daemon-unique TID" in _text(REPO / "docs" / "files.md")


def test_timeout_len_documented():
    for p in ("docs/text-format.md", "docs/files.md"):
        t = _text(REPO / p)
        lines = [l for l in t.splitlines() if "error=timeout" in l and "len=" in l]
        for l in lines:
            assert "len=256" not in l, (p, l)
        assert re.search(r"len=24\b|\b24 for a request", t), p
    example = [l for l in _text(REPO / "docs" / "text-format.md").splitlines()
               if l.startswith("tid=") and "error=timeout" in l]
    assert example and all(" len=24 " in l for l in example)
    for l in example:
        assert len(l.split(" mad=")[1]) == 48, l


def test_espipe_lists_agree():
    man = _text(REPO / "docs" / "umadfs.8")
    espipe = man.split(".B ESPIPE", 1)[1].split(".TP", 1)[0].split(".SH", 1)[0]
    row = [l for l in _text(REPO / "docs" / "bad-input.md").splitlines()
           if "`ESPIPE`" in l]
    assert len(row) == 1
    files = _text(REPO / "docs" / "files.md")
    for f in ("send", "umad", "recv_bin"):
        assert re.search(r"\b%s\b" % f, espipe), f
        assert "`%s`" % f in row[0], f
    assert "`recv`" not in row[0]
    assert "ESPIPE" in files


def test_root_only_commands_have_root_prompts():
    """A `$ ` prompt (any user) never writes a MAD file, reads recv or
    makes a channel: those are root's (`# `)."""
    root_only = re.compile(r">\s*\S*(send|register|umad|timeout_ms|retries)\b|"
                           r"\brecv\b|\bmkdir\b.*agents|\brmdir\b")
    for p in DOCS:
        for l in _text(p).splitlines():
            if l.startswith("$ ") and root_only.search(l):
                pytest.fail("%s: %s" % (p.name, l))


def test_line_readers_documented_alike():
    """Every doc that tells how recv is read gives the same rule (one line
    for a read under 32 KiB, a seek that moves nothing), and none still
    says head cannot seek."""
    for p in (REPO / "README.md", REPO / "docs" / "umadfs.8",
              REPO / "docs" / "text-format.md", REPO / "docs" / "user-guide.md",
              REPO / "docs" / "files.md", REPO / "docs" / "rq.md"):
        t = _text(p)
        assert "cannot seek" not in t and "Illegal seek" not in t, p.name
    for p in ("docs/files.md", "docs/umadfs.8", "docs/rq.md", "docs/user-guide.md"):
        assert "32 KiB" in _text(REPO / p), p
    files = _text(REPO / "docs" / "files.md")
    assert "read -r line" in files and "head -n1" in files and "moves nothing" in files
    src = _text(REPO / "include" / "umadfs" / "fuse" / "readq.h")
    assert "#define READQ_BATCH_MIN (32u << 10)" in src


def test_guide_outputs_match_its_ca():
    """The guide says its outputs come from ibsim0: no mlx5_0 path in it."""
    t = _text(REPO / "docs" / "user-guide.md")
    assert "ibsim0" in t
    assert not re.search(r"/mlx5_0/", t)


def test_readme_prefix_and_performance():
    t = _text(REPO / "README.md")
    assert "--prefix=/usr" in t and "/usr/local/sbin" in t
    perf = t.split("\n## Performance\n", 1)[1].split("\n## ", 1)[0]
    assert len(perf.strip().splitlines()) <= 5, perf
    assert "tests/bench/README.md" in perf
    bench = _text(REPO / "tests" / "bench" / "README.md")
    assert "row  what" in bench and "What the engine changes bought" in bench


def test_no_ca_and_hotplug_documented():
    """No CA at start: an empty mount until one appears, in the words the
    daemon logs; the tree follows the kernel's CAs (EIO for a removed one's
    files), in every doc that tells."""
    msg = "libibumad reports no CA: the mount is empty until one appears"
    for p in ("README.md", "docs/files.md", "docs/umadfs.8"):
        t = re.sub(r"\s+", " ", _text(REPO / p)).replace('"', "")
        t = t.replace("\\fB", "").replace("\\fR", "")
        assert msg in t, p
        assert "EIO" in t and "restart" not in t.split(msg)[1][:300], p
    src = (REPO / "src" / "main.c").read_text()
    assert msg.split(": the")[0] in src and "empty until one" in src


# ---------------------------------------------------------------------------
# what the docs say, on a mount

def _read_line(path, timeout=10):
    cp = subprocess.run(["bash", "-c", 'read -r line < "$1" && echo "$line"',
                         "bash", str(path)], capture_output=True, text=True,
                        timeout=timeout)
    assert cp.returncode == 0, cp.stderr
    return cp.stdout.rstrip("\n")


def test_tids_and_timeout_len(fabric, mount):
    m = mount("Hca1")
    p = m.path(PORT)
    (p / "send").write_text("dr=0 method=get attr=NodeInfo\n"
                            "dr=0 method=get attr=NodeInfo\n")
    tids = {_read_line(p / "recv").split()[0], _read_line(p / "recv").split()[0]}
    assert len(tids) == 2 and "tid=0x0" not in tids, tids
    # A LID nobody has: the request comes back with error=timeout; under
    # the simulator whole (len=256), as the docs say.
    (p / "send").write_text("class=smi method=get attr=NodeInfo lid=0x777 "
                            "tid=0x42 timeout=100 retries=0\n")
    line = _read_line(p / "recv")
    assert line.startswith("tid=0x42 ") and " error=timeout " in line, line
    assert " len=256 " in line, line


def test_queue_limit_is_queue_len(fabric, mount):
    m = mount("Hca1", options=["queue_len=77"])
    stats = dict(l.split() for l in m.path(PORT, "stats").read_text().splitlines())
    assert stats["queue_limit"] == "77"


def _blocks_after(text, marker, n):
    """The n ``` blocks that follow the first line starting with marker."""
    rest = text[text.index("\n" + marker):]
    return re.findall(r"^```[a-z]*\n(.*?)^```$", rest, re.M | re.S)[:n]


def test_text_format_set_examples(make_fabric, mount):
    """text-format.md's examples of named fields on send: each Set line is
    answered status=0x0000 on the simulated fabric (with $data cut out of
    a Get as the page shows, and run as it shows), and the SA query by a
    quoted description is answered."""
    m = mount("Hca1", fabric=active_fabric(make_fabric))
    p = m.path(PORT)
    lines, shell = _blocks_after(_text(REPO / "docs" / "text-format.md"),
                                 "On `send`, the same keys set those fields", 2)
    # The cut, as the page runs it (its `# ` prompts off, its output left out).
    script = "".join(l[2:] + "\n" for l in shell.splitlines() if l.startswith("# "))
    cp = subprocess.run(["bash", "-e", "-c", script], cwd=p, capture_output=True,
                        text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert cp.returncode == 0, cp
    assert re.search(r"^tid=0x[0-9a-f]+ class=smi-dr .* status=0x0000 attr=PortInfo ",
                     cp.stdout, re.M), cp.stdout
    with Recv(p / "recv") as r:
        write_text(p / "send", "dr=0,1 method=get attr=PortInfo attrmod=3\n")
        data = r.line()["mad"][128:256]
        sets = 0
        for line in lines.splitlines():
            write_text(p / "send", line.replace("$data", data) + "\n")
            ln = r.line()
            assert ln["method"] == "getresp" and "error" not in ln, (line, ln)
            if " method=set " in " %s " % line:
                sets += 1
                assert ln["status"] == "0x0000", (line, ln.text)
                for k, v in re.findall(r"(\w+\.\w+)=(\S+)", line):
                    assert ln.field(k) == int(v, 0), (line, ln.text)
    assert sets >= 2


# ---------------------------------------------------------------------------
# the examples' speed names, against libibmad

HELPER = r"""
#include <stdio.h>
#include <string.h>
#include <infiniband/mad.h>
/* PortInfo with one field set, as the named fields of a recv line
 * (Mellanox ExtendedPortInfo, which has none: its data in hex), and
 * libibmad's name for the value. */
static void print_fields(unsigned char *d)
{
	static const int used[] = {
		IB_PORT_LID_F, IB_PORT_SMLID_F, IB_PORT_CAPMASK_F,
		IB_PORT_LOCAL_PORT_F, IB_PORT_LINK_WIDTH_ACTIVE_F, IB_PORT_STATE_F,
		IB_PORT_PHYS_STATE_F, IB_PORT_LMC_F, IB_PORT_LINK_SPEED_ACTIVE_F,
		IB_PORT_LINK_SPEED_EXT_ACTIVE_F,
	};
	for (unsigned i = 0; i < sizeof(used) / sizeof(used[0]); i++)
		printf("%sPortInfo.%s=%u", i ? "," : "", mad_field_name(used[i]),
		       mad_get_field(d, 0, used[i]));
}

int main(void)
{
	static const struct { int f; int v; } set[] = {
		{ IB_PORT_LINK_SPEED_ACTIVE_F, 1 }, { IB_PORT_LINK_SPEED_ACTIVE_F, 2 },
		{ IB_PORT_LINK_SPEED_ACTIVE_F, 4 },
		{ IB_PORT_LINK_SPEED_EXT_ACTIVE_F, 1 }, { IB_PORT_LINK_SPEED_EXT_ACTIVE_F, 2 },
		{ IB_PORT_LINK_SPEED_EXT_ACTIVE_F, 4 }, { IB_PORT_LINK_SPEED_EXT_ACTIVE_F, 8 },
	};
	for (unsigned i = 0; i < sizeof(set) / sizeof(set[0]); i++) {
		unsigned char d[64] = { 0 };
		char name[64];
		int v = set[i].v;

		mad_set_field(d, 0, IB_PORT_CAPMASK_F, 1u << 14);
		if (set[i].f == IB_PORT_LINK_SPEED_EXT_ACTIVE_F) {
			mad_set_field(d, 0, IB_PORT_LINK_SPEED_ACTIVE_F, 4);
			mad_dump_linkspeedext(name, sizeof(name), &v, sizeof(v));
		} else {
			mad_dump_linkspeed(name, sizeof(name), &v, sizeof(v));
		}
		mad_set_field(d, 0, set[i].f, v);
		printf("portinfo ");
		print_fields(d);
		printf(" %s\n", name);
	}
	{
		unsigned char d[64] = { 0 };

		mad_set_field(d, 0, IB_MLNX_EXT_PORT_LINK_SPEED_ACTIVE_F, 1);
		printf("mlnx ");
		for (int j = 0; j < 64; j++)
			printf("%02x", d[j]);
		printf(" FDR10\n");
	}
	return 0;
}
"""

GBPS = {"2.5 Gbps": "SDR", "5.0 Gbps": "DDR", "10.0 Gbps": "QDR",
        "14.0625 Gbps": "FDR", "25.78125 Gbps": "EDR", "53.125 Gbps": "HDR",
        "106.25 Gbps": "NDR"}


def test_speed_names_match_libibmad(tmp_path):
    need("cc", "/usr/include/infiniband/mad.h")
    cc = shutil.which("cc")
    src = tmp_path / "speeds.c"
    src.write_text(HELPER)
    exe = tmp_path / "speeds"
    subprocess.run([cc, str(src), "-o", str(exe), "-libmad"], check=True,
                   capture_output=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    sys.path.insert(0, str(REPO / "scripts" / "examples"))
    try:
        import umadfs_mad as um
    finally:
        sys.path.pop(0)
    names = set()
    zero = None
    for line in out:
        kind, data, name = line.split(" ", 2)
        if kind == "mlnx":
            pi = um.portinfo(zero)
            pi["speed_active"] = 4
            pi["fdr10"] = um.mlnx_fdr10_active(bytes(64) + bytes.fromhex(data))
            assert um.link_speed(pi) == "FDR10"
            continue
        answer = dict(kv.split("=") for kv in data.split(","))
        zero = {k: "0" for k in answer}
        got = um.link_speed(um.portinfo(answer))
        assert got == GBPS[name], (name, got)
        names.add(got)
    assert names == {"SDR", "DDR", "QDR", "FDR", "EDR", "HDR", "NDR"}
    # Without IsExtendedSpeedsSupported the extended field is not looked at.
    pi = dict(zero, **{"PortInfo.LinkSpeedActive": "4",
                       "PortInfo.LinkSpeedExtActive": "8"})
    assert um.link_speed(um.portinfo(pi)) == "QDR"


def test_guide_series_table_is_series_py():
    """The user guide's series per group of -o fabric_metrics= at 1k, 4k
    and 16k are tests/bench/series.py's (the families' counts it holds a
    mount to in test_fabric.py)."""
    table = subprocess.run([sys.executable, str(REPO / "tests" / "bench" / "series.py"),
                            "--table"], capture_output=True, text=True,
                           check=True).stdout
    assert table in (REPO / "docs" / "user-guide.md").read_text()


def test_architecture_names_every_module():
    """docs/architecture.md's module table names every .c of src/ (by its
    path under src/, or its name)."""
    text = (REPO / "docs" / "architecture.md").read_text()
    missing = []
    for c in sorted((REPO / "src").rglob("*.c")):
        rel = c.relative_to(REPO / "src").as_posix()
        if "`%s`" % rel not in text and "`%s`" % c.name not in text:
            missing.append(rel)
    assert not missing, "docs/architecture.md names no " + ", ".join(missing)
