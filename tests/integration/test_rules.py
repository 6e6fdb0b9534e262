"""The Prometheus alerting rules (packaging/prometheus/): promtool's own
checks and unit tests, an alert for every error kind of fabric/problems,
and the rules firing on series exactly as a mount's metrics.prom writes
them when the simulator is told to break something."""

import json
import re
import subprocess
from pathlib import Path

import pytest

import diags as tm
import simfabric as sim

RULES = sim.REPO / "packaging" / "prometheus" / "umadfs-alerts.yml"
RULES_TEST = sim.REPO / "packaging" / "prometheus" / "umadfs-alerts.test.yml"
PROBLEM_KINDS = sim.REPO / "src" / "fabric" / "problems" / "problem.c"


def promtool(*args, **kw):
    return subprocess.run(["promtool", *args], capture_output=True, text=True,
                          timeout=60, **kw)


@pytest.mark.promtool
def test_rules_pass_promtool():
    r = promtool("check", "rules", str(RULES))
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr
    r = promtool("test", "rules", str(RULES_TEST))
    assert r.returncode == 0 and "SUCCESS" in r.stdout, r.stdout + r.stderr


def error_kinds():
    """The error kinds as problem.c's table has them."""
    kinds = re.findall(r'\{ "(\w+)", SEVERITY_ERROR \}', PROBLEM_KINDS.read_text())
    assert len(kinds) >= 12, kinds
    return kinds


def test_every_error_kind_has_an_alert():
    text = RULES.read_text()
    alerted = set(re.findall(r"kind: (\w+)\}", text))
    missing = [k for k in error_kinds() if k not in alerted]
    assert not missing, "error kinds without an alert: %s" % missing
    # and each alert of a kind watches that kind (sweep_failed: sweep_ok)
    for block in text.split("- alert: ")[1:]:
        kind = re.search(r"kind: (\w+)\}", block)
        if kind and kind[1] not in ("sweep_failed", "counter_rising"):
            assert 'umadfs_problem{kind="%s"}' % kind[1] in block, block


def series_of(prom, names):
    """input_series for promtool from metrics.prom lines of these names."""
    out = []
    for ln in prom.splitlines():
        m = re.match(r"^(\w+)(\{.*\})? (\S+)$", ln)
        if m and m[1] in names:
            out.append({"series": m[1] + (m[2] or ""),
                        "values": " ".join([m[3]] * 6)})
    return out


# The groups of -o fabric_metrics= the rules need (the rules file says so).
RULES_GROUPS = "sweep+problems"


def test_rules_need_the_groups_they_say():
    """Every series the rules read is in a family of the groups their
    file names (tests/bench/series.py's list of each group's)."""
    series = tm.series()
    text = RULES.read_text()
    read = set(re.findall(r"\b(umadfs_\w+)\b", text.split("groups:", 1)[1]))
    families = set()
    for g in RULES_GROUPS.split("+"):
        families |= set(series.FAMILIES[g])
        assert "`%s`" % g in text, g
    assert read and read <= families, read - families


@pytest.mark.promtool
@pytest.mark.parametrize("groups", [None, RULES_GROUPS], ids=["all", "rules-groups"])
def test_alerts_fire_on_a_mounts_metrics(make_fabric, mount, tmp_path, groups):
    """A cable pulled with no SM left: metrics.prom passes promtool check
    metrics, and its series make UmadfsLinkMissing fire for both ends
    and UmadfsSmMissing once, with the labels the mount wrote; with the
    default families, and with only the groups the rules need."""
    f = tm.active_fabric(make_fabric)
    m = mount("Hca1", fabric=f,
              options=("fabric_metrics=" + groups,) if groups else ())
    with open(m.path("fabric", "sweep"), "w") as s:
        s.write("1\n")
    f.stop_opensm("Hca3")
    f.command('Unlink "Switch1"[7]')
    with open(m.path("fabric", "sweep"), "w") as s:
        s.write("1\n")
    prom = open(m.path("fabric", "metrics.prom")).read()
    assert ("umadfs_port_state{" in prom) == (groups is None)
    with open(m.path("fabric", "metrics.prom")) as mf:
        r = subprocess.run(["promtool", "check", "metrics"], stdin=mf,
                           capture_output=True, text=True,
                           env=sim.go_peer_env())
    assert r.returncode == 0, r.stdout + r.stderr
    series = series_of(prom, ("umadfs_problem",))
    kinds = [re.search(r'kind="(\w+)"', s["series"])[1] for s in series]
    assert kinds.count("link_missing") == 2 and "sm_missing" in kinds, prom

    def fired(alert):
        test = {"rule_files": [str(RULES)], "evaluation_interval": "1m",
                "tests": [{"interval": "1m", "input_series": series,
                           "alert_rule_test": [{"eval_time": "5m",
                                                "alertname": alert,
                                                "exp_alerts": []}]}]}
        tf = tmp_path / ("%s.yml" % alert)
        tf.write_text(json.dumps(test))
        r = promtool("test", "rules", str(tf))
        # Expecting none, promtool prints what did fire.
        assert r.returncode == 1, r.stdout + r.stderr
        out = r.stdout + r.stderr
        return re.findall(r"Labels:\{([^}]*)\}", out.split("got:")[1])

    got = fired("UmadfsLinkMissing")
    assert len(got) == 2 and all('port="7"' in g and 'severity="critical"' in g
                                 for g in got), got
    assert len(fired("UmadfsSmMissing")) == 1
