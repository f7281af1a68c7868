"""`kgroup consumer-groups` / `kgroup.tools.consumer_groups`: Kafka's ConsumerGroupCommand tables.

Where Kafka's DescribeConsumerGroupTest / ListConsumerGroupTest pin an output (header columns as
`output.trim().split("\\s+")`, messages), the same is checked here; the rows come from the sample
dumps (data/samples) and from a live coordinator driven by simulated consumers.
"""
from __future__ import annotations

import re
import warnings

import pytest

from kgroup import Cluster, Coordinator
from kgroup.clients import ConsumerGroupConsumer, Simulation
from kgroup.tools import consumer_groups as cg, describe, list_groups, open_dump

from kgroup_testing import SAMPLES, run_cli


@pytest.fixture(scope="module")
def billing():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return open_dump(SAMPLES / "kip848-log-dir")


def header(text: str) -> list[str]:
    """The header line as Kafka's tests read it: trimmed, split on whitespace."""
    return next(line for line in text.splitlines() if line.startswith("GROUP")).split()


# ---------------------------------------------------------------------------- Kafka's pinned headers

# DescribeConsumerGroupTest.checkOffsetsArgsHeaderOutput / checkMembersArgsHeaderOutput / checkStateArgsHeaderOutput
OFFSETS = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST", "CLIENT-ID"]
OFFSETS_VERBOSE = OFFSETS[:3] + ["LEADER-EPOCH"] + OFFSETS[3:]
MEMBERS = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
MEMBERS_VERBOSE = MEMBERS + ["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"]
STATE = ["GROUP", "COORDINATOR", "(ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]
STATE_VERBOSE = STATE[:5] + ["GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"]


@pytest.mark.parametrize("extra, expected", [
    ([], OFFSETS), (["--offsets"], OFFSETS), (["--verbose"], OFFSETS_VERBOSE),
    (["--offsets", "--verbose"], OFFSETS_VERBOSE),
    (["--members"], MEMBERS), (["--members", "--verbose"], MEMBERS_VERBOSE),
    (["--state"], STATE), (["--state", "--verbose"], STATE_VERBOSE)])
def test_describe_headers_are_kafkas(capsys, extra, expected):
    code, out, err = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "kip848-log-dir"), "--describe",
                         "--group", "billing-app", *extra)
    assert code == 0, err
    assert header(out) == expected


def test_offsets_rows_have_lag_from_the_log_dir(billing):
    rows = cg.collect_offsets(billing, ["billing-app"])[0].rows
    by_tp = {(r["TOPIC"], r["PARTITION"]): r for r in rows}
    assert len(rows) == 9
    # the same numbers `kgroup dump describe` shows from replication-offset-checkpoint
    assert (by_tp[("invoices", 0)]["CURRENT-OFFSET"], by_tp[("invoices", 0)]["LOG-END-OFFSET"],
            by_tp[("invoices", 0)]["LAG"]) == (620, 625, 5)
    assert by_tp[("orders", 5)]["LAG"] == 30 and by_tp[("orders", 5)]["CLIENT-ID"] == "billing-1"
    # the member with the most partitions first, as Kafka sorts them
    assert [r["CLIENT-ID"] for r in rows] == ["billing-0"] * 5 + ["billing-1"] * 4


def test_offsets_table_lines_up_as_kafkas_printf(capsys):
    code, out, _ = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "kip848-log-dir"), "--describe",
                       "--group", "billing-app")
    lines = out.split("\n")
    assert lines[0] == ""  # Kafka's format starts every line with "\n"
    head = lines[1]
    # %-15s %-15s %-10s %-15s %-15s %-15s %-22s %-15s %s
    assert head.index("TOPIC") == 16 and head.index("PARTITION") == 32 and head.index("CURRENT-OFFSET") == 43
    assert head.index("CONSUMER-ID") == 91 and head.index("HOST") == 91 + 23 and head.endswith("CLIENT-ID")


def test_missing_group_is_kafkas_message(capsys):
    # DescribeConsumerGroupTest.testDescribeNonExistingGroup
    code, out, err = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "kip848-log-dir"), "--describe",
                         "--group", "missing.group")
    assert "Error: Consumer group 'missing.group' does not exist." in out
    assert code == 1 and "no such group in the dump: missing.group" in err


@pytest.mark.parametrize("view", [[], ["--members"], ["--state"]])
def test_empty_group_says_no_active_members_on_stderr(capsys, view):
    # DescribeConsumerGroupTest.testDescribeOffsetsOfExistingGroupWithNoMembers and friends
    code, out, err = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "offsets"), "--describe", "--group",
                         "billing", *view)
    assert code == 0
    assert "\nConsumer group 'billing' has no active members.\n" in err
    if not view:  # the committed offsets, without a consumer
        assert [line.split() for line in out.strip().splitlines()[1:]] == [
            ["billing", "orders", "0", "150", "-", "-", "-", "-", "-"],
            ["billing", "orders", "1", "250", "-", "-", "-", "-", "-"]]


def test_static_members_get_the_group_instance_id_column(capsys):
    code, out, _ = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "static-rolling-restart"), "--describe",
                       "--group", "orders-app", "--members")
    assert header(out) == ["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
    rows = [line.split() for line in out.strip().splitlines()[1:]]
    assert sorted((r[2], r[5]) for r in rows) == [("orders-app-0", "2"), ("orders-app-1", "2"), ("orders-app-2", "2")]


def test_state_of_a_classic_group(capsys):
    code, out, _ = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "static-rolling-restart"), "--describe",
                       "--group", "orders-app", "--state")
    assert out.strip().splitlines()[1].split() == ["orders-app", "__consumer_offsets-5", "(-)", "range", "Stable", "3"]


def test_describe_options_are_checked_with_kafkas_words(capsys):
    dump = str(SAMPLES / "offsets")
    code, _, err = run_cli(capsys, "consumer-groups", "--dump", dump, "--describe")
    assert code == 2 and "Option [describe] takes one of these options: [all-groups], [group]" in err
    code, _, err = run_cli(capsys, "consumer-groups", "--dump", dump, "--describe", "--group", "g", "--members", "--state")
    assert code == 2 and "takes at most one of these options" in err
    code, _, err = run_cli(capsys, "consumer-groups", "--dump", dump, "--list", "--describe")
    assert code == 2 and "Command must include exactly one action" in err


# ---------------------------------------------------------------------------- --list

def test_list_plain_and_filtered(capsys):
    dump = str(SAMPLES / "offsets")
    code, out, _ = run_cli(capsys, "consumer-groups", "--dump", dump, "--list")
    assert sorted(out.split()) == ["billing", "reports"]
    # ListConsumerGroupTest: GROUP [TYPE] [STATE], the group column 10 wider than the longest id (at least 15)
    code, out, _ = run_cli(capsys, "consumer-groups", "--dump", dump, "--list", "--type", "--state")
    lines = out.splitlines()
    assert lines[0].split() == ["GROUP", "TYPE", "STATE"] and lines[0].index("TYPE") == 26
    assert sorted(line.split() for line in lines[1:]) == [["billing", "Classic", "Empty"], ["reports", "Classic", "Empty"]]
    code, out, _ = run_cli(capsys, "consumer-groups", "--dump", dump, "--list", "--state", "stable")
    assert out.splitlines() == ["GROUP                     STATE               "]
    code, out, _ = run_cli(capsys, "consumer-groups", "--dump", dump, "--list", "--type", "consumer")
    assert out.splitlines()[1:] == []


def test_list_rejects_an_unknown_state_as_kafka_does(capsys):
    code, _, err = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "offsets"), "--list", "--state", "bogus")
    assert code == 2 and "Invalid state list 'bogus'. Valid states are: PreparingRebalance" in err


def test_at_a_moment_before_the_group_formed(capsys):
    code, out, err = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "kip848-log-dir"), "--at", "offset:0",
                         "--describe", "--group", "billing-app", "--members", "--verbose")
    assert header(out) == MEMBERS_VERBOSE


# ---------------------------------------------------------------------------- a live coordinator

def test_live_coordinator_views_as_dataframes():
    c = Coordinator(cluster=Cluster({"orders": 4}, seed=1))
    sim = Simulation(c)
    for name in ("a", "b"):
        sim.add(ConsumerGroupConsumer(c, "app", ["orders"], name=name, auto_commit_interval_ms=1_000))
    sim.run_until_stable("app")
    sim.run(3_000)
    offsets = describe(c, ["app"])
    assert list(offsets.columns) == OFFSETS_VERBOSE
    assert sorted(offsets["PARTITION"]) == [0, 1, 2, 3] and set(offsets["CLIENT-ID"]) == {"a", "b"}
    assert offsets.attrs["states"] == {"app": "Stable"}
    # a live cluster knows its log end offsets (nothing produced: 0)
    assert set(offsets["LOG-END-OFFSET"]) == {0}
    members = describe(c, ["app"], view="members")
    assert sorted(members["#PARTITIONS"]) == [2, 2] and set(members["CURRENT-EPOCH"]) == {c.groups["app"].group_epoch}
    assert re.fullmatch(r"orders:\d,\d", members["CURRENT-ASSIGNMENT"][0])
    state = describe(c, ["app"], view="state")
    assert state.iloc[0]["ASSIGNMENT-STRATEGY"] == "uniform" and state.iloc[0]["#MEMBERS"] == 2
    assert list(list_groups(c)["TYPE"]) == ["Consumer"]


def test_a_dump_without_metadata_says_why_kip848_partitions_are_missing(capsys):
    code, out, err = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "kip848-upgrade"), "--describe",
                         "--group", "shipping", "--members")
    assert code == 0
    assert "holds no cluster metadata: KIP-848 and share groups name topics by id" in err
    assert [r.split()[-1] for r in out.strip().splitlines()[1:]] == ["0", "0", "0"]
    code, _, err = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "kip848-log-dir"), "--list")
    assert "warning" not in err
