"""`kgroup streams-groups` and `kgroup share-groups`: Kafka's StreamsGroupCommand and ShareGroupCommand
tables (headers as StreamsGroupCommandTest / ShareGroupCommandTest read them), on the sample dumps
and on live groups of simulated clients; and every command's --help with Kafka's option names.
"""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator
from kgroup.clients import ShareConsumer, Simulation
from kgroup.tools import describe, share_groups as sh

from kgroup_testing import SAMPLES, run_cli

STREAMS = str(SAMPLES / "streams-app")


def lines(text: str) -> list[list[str]]:
    return [line.split() for line in text.splitlines() if line.strip()]


@pytest.mark.parametrize("extra, expected", [
    (["--members"], ["GROUP", "MEMBER", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"]),
    (["--members", "--verbose"], ["GROUP", "TARGET-ASSIGNMENT-EPOCH", "TOPOLOGY-EPOCH", "MEMBER", "MEMBER-PROTOCOL",
                                  "MEMBER-EPOCH", "PROCESS", "CLIENT-ID", "ASSIGNMENTS"]),
    (["--state"], ["GROUP", "COORDINATOR", "(ID)", "STATE", "#MEMBERS"]),
    (["--state", "--verbose"], ["GROUP", "COORDINATOR", "(ID)", "STATE", "GROUP-EPOCH", "TARGET-ASSIGNMENT-EPOCH",
                                "#MEMBERS"]),
    ([], ["GROUP", "TOPIC", "PARTITION", "OFFSET-LAG"]),
    (["--offsets", "--verbose"], ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LEADER-EPOCH", "LOG-END-OFFSET",
                                  "OFFSET-LAG"])])
def test_streams_headers_are_kafkas(capsys, extra, expected):
    code, out, err = run_cli(capsys, "streams-groups", "--dump", STREAMS, "--describe", "--group", "clickstream", *extra)
    assert code == 0, err
    assert lines(out)[0] == expected


def test_streams_members_tasks_and_epochs(capsys):
    # testDescribeStreamsGroupWithStateAndVerboseOptions: APP_ID, "", "", "Stable", epoch, epoch, #members
    code, out, _ = run_cli(capsys, "streams-groups", "--dump", STREAMS, "--describe", "--group", "clickstream", "--state",
                       "--verbose")
    row = lines(out)[1]
    assert (row[0], row[3], row[4], row[5], row[6]) == ("clickstream", "Stable", "8", "8", "2")
    code, out, _ = run_cli(capsys, "streams-groups", "--dump", STREAMS, "--describe", "--group", "clickstream", "--members",
                       "--verbose")
    rows = out.splitlines()[1:]
    assert len(rows) == 2
    for r in rows:
        f = r.split()
        assert f[1:3] == ["8", "1"] and f[4:6] == ["streams", "8"]  # target epoch, topology epoch 1 after the bounce
        assert "ACTIVE: 0:[" in r and "; STANDBY: 1:[" in r and "TARGET-ACTIVE: " in r
    # Kafka's verbose format has no space between TOPOLOGY-EPOCH and MEMBER
    head = out.splitlines()[0]
    assert head.index("MEMBER") == head.index("TOPOLOGY-EPOCH") + 15


def test_streams_offsets_name_the_active_tasks_input_partitions(capsys):
    code, out, _ = run_cli(capsys, "streams-groups", "--dump", STREAMS, "--describe", "--group", "clickstream")
    topics = sorted((r[1], r[2]) for r in lines(out)[1:])
    assert topics == sorted([("clicks", str(p)) for p in range(4)]
                            + [("clickstream-by-user-repartition", str(p)) for p in range(4)])


def test_streams_list_and_missing_group(capsys):
    code, out, _ = run_cli(capsys, "streams-groups", "--dump", STREAMS, "--list", "--state")
    assert lines(out) == [["GROUP", "STATE"], ["clickstream", "Stable"]]
    code, out, err = run_cli(capsys, "streams-groups", "--dump", STREAMS, "--describe", "--group", "nope", "--state")
    assert "Error: Streams group 'nope' does not exist." in out and code == 1
    code, _, err = run_cli(capsys, "streams-groups", "--dump", STREAMS, "--list", "--state", "PreparingRebalance")
    assert code == 2 and "Valid states are: Empty, NotReady, Assigning, Reconciling, Stable, Dead" in err


def test_share_start_offsets_from_share_group_state(capsys):
    code, out, err = run_cli(capsys, "share-groups", "--dump", str(SAMPLES / "share-state"), "--describe", "--group",
                         "queue-app", "--offsets", "--verbose")
    assert code == 0, err
    rows = lines(out)
    assert rows[0] == ["GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "START-OFFSET"]
    # orders-0 ends at SPSO 120 (the KIP's durable-state example), orders-1 was reset to 50
    assert [(r[2], r[4]) for r in rows[1:]] == [("0", "120"), ("1", "50")]


@pytest.fixture(scope="module")
def share_group():
    c = Coordinator(cluster=Cluster({"orders": 2}, seed=1))
    sim = Simulation(c)
    for name in ("A", "B"):
        sim.add(ShareConsumer(c, "queue", ["orders"], name=name)).start()
    sim.run(6_000)   # B is assigned at its second heartbeat: its join's assignment waited for the batch
    return c


@pytest.mark.parametrize("extra, expected", [
    (False, ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "ASSIGNMENT"]),
    (True, ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS", "MEMBER-EPOCH", "ASSIGNMENT"])])
def test_share_members_headers_are_kafkas(share_group, extra, expected):
    out, _ = sh.format_members(sh.collect_members(share_group, ["queue"]), verbose=extra)
    rows = lines(out)
    assert rows[0] == expected
    assert [r[-1] for r in rows[1:]] == ["orders:0,1", "orders:0,1"]  # share-partitions are shared


def test_share_state_headers_are_kafkas(share_group):
    out, _ = sh.format_states(sh.collect_states(share_group, ["queue"]), verbose=True)
    assert lines(out)[0] == ["GROUP", "COORDINATOR", "(ID)", "STATE", "GROUP-EPOCH", "ASSIGNMENT-EPOCH", "#MEMBERS"]
    assert lines(out)[1][3] == "Stable"
    df = describe(share_group, ["queue"], tool="share", view="members")
    assert sorted(df["CLIENT-ID"]) == ["A", "B"]


@pytest.mark.parametrize("command, options", [
    ("consumer-groups", ["--list", "--describe", "--group", "--all-groups", "--offsets", "--members", "--verbose",
                         "--state", "--type", "--reset-offsets", "--all-topics", "--topic", "--to-offset", "--shift-by",
                         "--dry-run", "--export", "--to-committed-at", "--to-earliest-committed", "--timeline",
                         "--dump", "--at"]),
    ("streams-groups", ["--list", "--describe", "--group", "--all-groups", "--offsets", "--members", "--verbose",
                        "--state", "--timeline", "--dump", "--at"]),
    ("share-groups", ["--list", "--describe", "--group", "--all-groups", "--offsets", "--members", "--verbose",
                      "--state", "--timeline", "--dump", "--at"])])
def test_help_names_kafkas_options(capsys, command, options):
    code, out, _ = run_cli(capsys, command, "--help")
    assert code == 0
    for opt in options:
        assert opt in out, opt


def test_timeline_one_block_per_change(capsys):
    code, out, err = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "static-rolling-restart"), "--timeline",
                         "--group", "orders-app")
    assert code == 0, err
    blocks = out.split("=== ")[1:]
    assert blocks[0].startswith("2024-06-10T06:13:20.000Z  orders-app: GroupMetadata at offset 0")
    assert "Empty" in blocks[0] and "Stable" in blocks[1]
    # each static restart replaces one member id in place: a block naming the GroupMetadata record
    restarts = [b for b in blocks[2:] if ": GroupMetadata at offset" in b.splitlines()[0]]
    assert [b.splitlines()[0].split(" at offset ")[1].split()[0] for b in restarts] == ["8", "17", "28"]
    # no two consecutive blocks describe the group alike
    bodies = ["\n".join(b.splitlines()[1:]) for b in blocks]
    assert all(a != b for a, b in zip(bodies, bodies[1:]))


def test_timeline_keeps_transactions_as_the_coordinator_does(capsys):
    # transactions sample: 1000's offsets become visible at its COMMIT marker, 1001's ABORTed one
    # and 1002's open one never do
    code, out, _ = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "transactions"), "--timeline", "--group",
                       "payments-app")
    heads = [b.splitlines()[0] for b in out.split("=== ")[1:]]
    assert [h.split(": ", 1)[1] for h in heads] == [
        "OffsetCommit x2 at offsets 0-1 on __consumer_offsets-41",
        "OffsetCommit at offset 4 on __consumer_offsets-41",
        "transaction marker COMMIT (producer 1000) at offset 5 on __consumer_offsets-41"]
    last = out.split("=== ")[-1]
    assert [r.split()[2:5] for r in last.splitlines() if r.startswith("payments-app    payments")] == [
        ["0", "0", "20"], ["1", "0", "25"]]
