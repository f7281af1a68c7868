"""End to end: an incident, the dump, and the reset plan recovered from before it.

Two KIP-848 consumers process `orders` and auto-commit. A bad deploy then commits offsets far
past records it never processed, and the consumers are stopped. The coordinator's log is written
as a broker writes it; `kgroup consumer-groups --reset-offsets --to-committed-at <before>` must
give exactly the offsets the group had committed before the incident, in the CSV that
`kafka-consumer-groups.sh --reset-offsets --from-file` reads.
"""
from __future__ import annotations

from kgroup import Cluster, Coordinator
from kgroup.cli import main
from kgroup.clients import ConsumerGroupConsumer, Simulation
from kgroup.dumps.replay import format_ms
from kgroup.tools.consumer_groups import committed_offsets
from kgroup.tools.reset_offsets import parse_reset_plan

SKIPPED = 10_000  # records the bad deploy claims to have processed


def test_reset_plan_recovered_from_before_a_bad_deploy(tmp_path, capsys):
    c = Coordinator(cluster=Cluster({"orders": 3}, seed=1))
    sim = Simulation(c)
    consumers = [sim.add(ConsumerGroupConsumer(c, "app", ["orders"], name=n, auto_commit_interval_ms=1_000))
                 for n in ("a", "b")]
    sim.run_until_stable("app")
    sim.run(10_000)
    before = c.now()
    good = {tp: o.offset for tp, o in committed_offsets(c, "app").items()}  # the live view, same tool
    assert len(good) == 3 and all(o > 0 for o in good.values())

    sim.run(2_000)
    for consumer in consumers:  # the bad deploy: positions far past what was processed, committed
        for tp in list(consumer.positions):
            consumer.positions[tp] += SKIPPED
        consumer.commit()
    sim.run(3_000)
    for consumer in consumers:
        consumer.close()
    sim.run(1_000)
    bad = {tp: o.offset for tp, o in committed_offsets(c, "app").items()}
    assert all(bad[tp] >= good[tp] + SKIPPED for tp in good)

    dump = tmp_path / "dump"
    c.log.write(dump)

    # the group as Kafka's tool describes it now: every partition committed, no members
    code = main(["consumer-groups", "--dump", str(dump), "--describe", "--group", "app"])
    out, err = capsys.readouterr()
    assert code == 0 and "Consumer group 'app' has no active members." in err
    assert {(r.split()[1], int(r.split()[2])): int(r.split()[3]) for r in out.strip().splitlines()[1:]} == bad

    # the plan from before the incident, exported, read back as Kafka's --from-file reads it
    code = main(["consumer-groups", "--dump", str(dump), "--reset-offsets", "--group", "app", "--all-topics",
                 "--to-committed-at", format_ms(before), "--export"])
    out, err = capsys.readouterr()
    assert code == 0, err
    # the group is Empty: no warning about an active group, nothing left out (only the note that
    # c.log.write() leaves out the cluster metadata)
    assert "resets only inactive groups" not in err and "left out" not in err
    assert parse_reset_plan(out, ["app"]) == {"app": good}

    # the dry run names the same offsets, in Kafka's table
    code = main(["consumer-groups", "--dump", str(dump), "--reset-offsets", "--group", "app", "--all-topics",
                 "--to-committed-at", format_ms(before), "--dry-run"])
    out, _ = capsys.readouterr()
    rows = [line.split() for line in out.strip().splitlines()]
    assert rows[0] == ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]
    assert {(r[1], int(r[2])): int(r[3]) for r in rows[1:]} == good

    # and the timeline shows the jump: a block whose offsets moved by the skipped records
    code = main(["consumer-groups", "--dump", str(dump), "--timeline", "--group", "app"])
    out, _ = capsys.readouterr()
    assert code == 0 and out.count("=== ") >= 3 and "OffsetCommit" in out
