"""Write the sample `__consumer_offsets` dumps in data/samples/ by running scripted scenarios.

    .venv/bin/python data/make_samples.py                 # all samples into data/samples/
    .venv/bin/python data/make_samples.py --only offsets  # one sample
    .venv/bin/python data/make_samples.py --out /tmp/s    # elsewhere (the tests compare the bytes)

Every scenario runs through kgroup's coordinator on a `ManualClock` with seeded member ids, so
a run gives byte-identical files every time. For a sample `<name>` it writes:

- `<name>/__consumer_offsets-<p>/00000000000000000000.log` (+ `.index`, `.timeindex`): the
  segments, as a broker's log dir holds them (`Coordinator.log.write`);
- `<name>/__share_group_state-<p>/...`: the same for the share coordinator's records, if any;
- `<name>.dump-log.txt`: what `kafka-dump-log.sh --offsets-decoder --files <those .log files>`
  prints (Kafka 3.8+ form; `--share-group-state-decoder` for `__share_group_state`), run from
  this folder;
- `<name>.console.jsonl`: what `kafka-console-consumer.sh --formatter ...` prints with the
  newest formatter (one JSON object per record, one per line; the default read_uncommitted
  isolation, so aborted transactional records are printed too, and markers are not).

Adding a scenario: write a function that takes nothing and returns the `Coordinator` it ran,
decorate it with `@scenario("name", "one line on what it shows")`; `main` picks it up.
"""
from __future__ import annotations

import argparse
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a checkout without installing
    sys.path.insert(0, str(ROOT))

from kgroup import Cluster, Coordinator, ManualClock  # noqa: E402
from kgroup.clients import (ClassicConsumer, ConsumerConfig, ConsumerGroupConsumer, Simulation,  # noqa: E402
                            StreamsApplication, StreamsConfig, TopologyBuilder, rolling_restart)
from kgroup.dumps import read_dump, render_dump_log, render_jsonl  # noqa: E402
from kgroup.dumps.metadata import write_cluster_metadata  # noqa: E402
from kgroup.groups.share.persister import CoordinatorPersister, DeliveryState, StateBatch  # noqa: E402
from kgroup.protocol import request  # noqa: E402

SAMPLES = Path(__file__).resolve().parent / "samples"
#: Topics every scenario's cluster knows (seeded, so topic ids are the same every run).
TOPICS = {"orders": 6, "payments": 2, "audit": 1}


@dataclass(frozen=True)
class Scenario:
    name: str
    description: str
    run: Callable[[], Coordinator]
    #: also write the broker's KRaft metadata log (`__cluster_metadata-0`) and its
    #: `replication-offset-checkpoint`, from the scenario's cluster
    log_dir: bool = False


SCENARIOS: dict[str, Scenario] = {}


def scenario(name: str, description: str, *, log_dir: bool = False):
    """Register a sample: `fn()` runs the scenario and returns its coordinator. `log_dir=True`
    writes the metadata log next to the segments, as a KRaft broker's log dir holds it."""
    def register(fn: Callable[[], Coordinator]) -> Callable[[], Coordinator]:
        if name in SCENARIOS:
            raise ValueError(f"two samples named {name!r}")
        SCENARIOS[name] = Scenario(name, description, fn, log_dir)
        return fn
    return register


def coordinator(**config: int) -> Coordinator:
    """A fresh deterministic coordinator (clock at 2024-06-10T06:13:20Z, seeded member ids)."""
    return Coordinator(cluster=Cluster(TOPICS, seed=7), config=config or None, clock=ManualClock(), seed=0)


# -- request helpers ---------------------------------------------------------------------------

def commit(c: Coordinator, group: str, offsets: dict[tuple[str, int], int], *, metadata: str = "",
           version: int = 9, retention_ms: int | None = None) -> None:
    """A standalone (admin-style) OffsetCommit, checked for errors."""
    topics: dict[str, list] = {}
    for (t, p), off in offsets.items():
        topics.setdefault(t, []).append({"partition_index": p, "committed_offset": off,
                                         "committed_leader_epoch": 0, "committed_metadata": metadata})
    kw = {} if retention_ms is None else {"retention_time": retention_ms}
    r = c.handle(request("OffsetCommit", version, group_id=group, generation_id_or_member_epoch=-1, member_id="",
                         topics=[{"name": t, "partitions": ps} for t, ps in topics.items()], **kw))
    _check([p.error_code for t in r.topics for p in t.partitions], "OffsetCommit")


def txn_commit(c: Coordinator, group: str, producer_id: int, offsets: dict[tuple[str, int], int]) -> None:
    """A TxnOffsetCommit (what `sendOffsetsToTransaction` sends), checked for errors."""
    topics: dict[str, list] = {}
    for (t, p), off in offsets.items():
        topics.setdefault(t, []).append({"partition_index": p, "committed_offset": off,
                                         "committed_leader_epoch": 0, "committed_metadata": ""})
    r = c.handle(request("TxnOffsetCommit", 3, transactional_id=f"tx-{producer_id}", group_id=group,
                         producer_id=producer_id, producer_epoch=0, generation_id=-1, member_id="",
                         group_instance_id=None, topics=[{"name": t, "partitions": ps} for t, ps in topics.items()]))
    _check([p.error_code for t in r.topics for p in t.partitions], "TxnOffsetCommit")


def end_txn(c: Coordinator, group: str, producer_id: int, *, commit: bool) -> None:
    """The transaction coordinator's WriteTxnMarkers for the group's partition."""
    r = c.handle(request("WriteTxnMarkers", 1, markers=[{
        "producer_id": producer_id, "producer_epoch": 0, "transaction_result": commit, "coordinator_epoch": 1,
        "topics": [{"name": "__consumer_offsets", "partition_indexes": [c.partition_for(group)]}]}]))
    _check([p.error_code for m in r.markers for t in m.topics for p in t.partitions], "WriteTxnMarkers")


def _check(codes: list, what: str) -> None:
    bad = [code for code in codes if code.value != 0]
    if bad:
        raise RuntimeError(f"{what} failed: {bad}")


# -- scenarios ---------------------------------------------------------------------------------

@scenario("offsets", "standalone commits: overwrite with metadata, a v2 commit with retention, "
                     "OffsetDelete of one partition, DeleteGroups of a whole group")
def offsets() -> Coordinator:
    c = coordinator()
    commit(c, "billing", {("orders", 0): 100, ("orders", 1): 200, ("orders", 2): 300})
    c.advance(5_000)
    commit(c, "billing", {("orders", 0): 150}, metadata="checkpoint-1")
    c.advance(5_000)
    commit(c, "reports", {("payments", 0): 10}, version=2, retention_ms=86_400_000)
    c.advance(5_000)
    r = c.handle(request("OffsetDelete", 0, group_id="billing",
                         topics=[{"name": "orders", "partitions": [{"partition_index": 2}]}]))
    _check([r.error_code] + [p.error_code for t in r.topics for p in t.partitions], "OffsetDelete")
    c.advance(5_000)
    commit(c, "scratch", {("audit", 0): 1})
    c.advance(5_000)
    r = c.handle(request("DeleteGroups", 2, groups_names=["scratch"]))
    _check([x.error_code for x in r.results], "DeleteGroups")
    c.advance(5_000)
    commit(c, "billing", {("orders", 1): 250})
    return c


@scenario("static-rolling-restart", "a classic group of three static consumers (KIP-345) formed, "
                                    "auto-committing, then restarted one by one without a rebalance")
def static_rolling_restart() -> Coordinator:
    c = coordinator()
    sim = Simulation(c, processing_ms=1_000, tick_ms=500)
    for i in range(3):
        sim.add(ClassicConsumer(c, ConsumerConfig("orders-app", ("orders",), client_id=f"c{i}",
                                                  group_instance_id=f"orders-app-{i}",
                                                  auto_commit_interval_ms=10_000)))
    sim.run_until_stable("orders-app")
    sim.run(rolling_restart(sim, gap_ms=5_000, settle_ms=10_000) + 10_000)
    sim.run_until_stable("orders-app")
    return c


@scenario("transactions", "transactional offset commits: one committed (a plain commit written between "
                          "its record and its marker wins), one aborted, one left open")
def transactions() -> Coordinator:
    c = coordinator()
    g = "payments-app"
    commit(c, g, {("payments", 0): 10, ("payments", 1): 10})
    c.advance(2_000)
    txn_commit(c, g, 1000, {("payments", 0): 20, ("payments", 1): 20})
    c.advance(1_000)
    commit(c, g, {("payments", 1): 25})
    c.advance(1_000)
    end_txn(c, g, 1000, commit=True)      # payments-0 -> 20; payments-1 stays 25 (written later)
    c.advance(2_000)
    txn_commit(c, g, 1001, {("payments", 0): 999})
    c.advance(1_000)
    end_txn(c, g, 1001, commit=False)     # never visible
    c.advance(2_000)
    txn_commit(c, g, 1002, {("payments", 1): 30})  # no marker: still pending at the end
    c.advance(1_000)
    return c


@scenario("expiring-group", "a classic group that empties (its consumer leaves) and, with "
                            "offsets.retention.minutes=10, has its offsets and then itself expired")
def expiring_group() -> Coordinator:
    c = coordinator(**{"offsets.retention.minutes": 10, "offsets.retention.check.interval.ms": 60_000})
    sim = Simulation(c, processing_ms=1_000, tick_ms=500)
    consumer = sim.add(ClassicConsumer(c, ConsumerConfig("nightly-batch", ("audit",), client_id="batch-1")))
    sim.run_until_stable("nightly-batch")
    sim.run(12_000)
    consumer.close()                       # commits, then LeaveGroup: the group is Empty
    commit(c, "audit-tool", {("audit", 0): 7})
    c.advance(9 * 60_000)
    commit(c, "audit-tool", {("audit", 0): 8})  # recommitted in time: survives
    c.advance(3 * 60_000)                  # 12 minutes after leaving: nightly-batch expires
    return c


# -- writing -----------------------------------------------------------------------------------

def write_sample(s: Scenario, out: Path) -> list[Path]:
    """Run one scenario and write its segments and renderings under `out`; returns the files."""
    c = s.run()
    target = out / s.name
    if target.exists():
        shutil.rmtree(target)
    c.log.write(target)
    if s.log_dir:
        # the topics of the cluster's first moments in a snapshot, the ones created later in the log
        cluster = c.cluster
        if "__consumer_offsets" not in cluster:
            cluster.create_topic("__consumer_offsets", c.num_partitions)
        write_cluster_metadata(cluster, target, in_snapshot=[*TOPICS, "__consumer_offsets"], timestamp=c.now())
    c.share_state_log.write(target)  # the share coordinator's records, if any
    entries = list(read_dump(target))
    for e in entries:  # shown as kafka-dump-log shows paths given relative to `out`
        e.source = Path(e.source).relative_to(out).as_posix()
    dump_log = out / f"{s.name}.dump-log.txt"
    dump_log.write_text("".join(line + "\n" for line in render_dump_log(entries)), encoding="utf-8")
    console = out / f"{s.name}.console.jsonl"
    console.write_text("".join(j + "\n" for e in entries if (j := render_jsonl(e))), encoding="utf-8")
    return sorted(p for p in target.rglob("*") if p.is_file()) + [dump_log, console]


@scenario("kip848-upgrade", "a classic group of two consumers converted online to a KIP-848 consumer "
                            "group when a third, KIP-848 consumer joins; then a regex member and a leave")
def kip848_upgrade() -> Coordinator:
    c = coordinator()
    sim = Simulation(c, processing_ms=500, tick_ms=500)
    for i in range(2):
        sim.add(ClassicConsumer(c, ConsumerConfig("shipping", ("orders",), client_id=f"classic-{i}",
                                                  auto_commit_interval_ms=5_000)))
    sim.run_until_stable("shipping")
    sim.run(5_000)
    sim.add(ConsumerGroupConsumer(c, "shipping", ("orders",), name="kip848-0", seed=1))
    sim.run(30_000)
    regex = sim.add(ConsumerGroupConsumer(c, "shipping", pattern="pay.*", name="kip848-regex", seed=2))
    sim.run(30_000)
    regex.close()
    sim.run(20_000)
    return c


@scenario("streams-app", "a KIP-1071 Streams group: two instances of a stateful application (a "
                         "repartition step, a store, one standby) form the group, the coordinator creates the internal "
                         "topics, then a rolling bounce to topology epoch 1")
def streams_app() -> Coordinator:
    c = coordinator(**{"group.streams.num.standby.replicas": 1, "group.streams.initial.rebalance.delay.ms": 0})
    c.cluster.create_topic("clicks", 4)
    b = TopologyBuilder("clickstream")
    b.subtopology(sources=["clicks"], repartition_to=["by-user"])
    b.subtopology(repartition_from=["by-user"], stores=["visits"])
    sim = Simulation(c, processing_ms=500, tick_ms=500)
    apps = [sim.add(StreamsApplication(c, StreamsConfig("clickstream", b.build(epoch=0)), name=n, seed=i))
            for i, n in enumerate(("A", "B"))]
    sim.run_until_stable("clickstream")
    sim.run(10_000)
    for app in apps:                       # a rolling bounce: each instance comes back at topology epoch 1
        app.restart(b.build(epoch=1))
        sim.run_until_stable("clickstream")
    sim.run(10_000)
    return c


@scenario("kip848-log-dir", "a broker's log dir: a KIP-848 consumer group (two members on orders and "
                           "invoices, a topic created during the run) with the KRaft metadata log that names "
                           "its topics, and the high watermarks that give its lag", log_dir=True)
def kip848_log_dir() -> Coordinator:
    c = coordinator()
    c.cluster.create_topic("invoices", 3)  # after the snapshot: only the metadata log's segment names it
    sim = Simulation(c, processing_ms=500, tick_ms=500)
    for i in range(2):
        sim.add(ConsumerGroupConsumer(c, "billing-app", ("orders", "invoices"), name=f"billing-{i}", seed=10 + i))
    sim.run_until_stable("billing-app")
    sim.run(20_000)
    # the high watermarks a broker would have checkpointed: a little ahead of the commits
    for tp, oam in sorted(c.offsets.store.group_offsets("billing-app").items()):
        c.cluster.set_end_offset(tp[0], tp[1], oam.offset + 5 * (tp[1] + 1))
    return c


@scenario("share-state", "the share coordinator's __share_group_state: the KIP-932 durable-state example "
                         "(SPSO 100 -> 120) for queue-app's orders-0 through Read/WriteShareGroupState, "
                         "a snapshot after every 3 updates, orders-1 reset by an admin (state epoch 1), "
                         "and a share-partition deleted")
def share_state() -> Coordinator:
    c = coordinator(**{"share.coordinator.snapshot.update.records.per.snapshot": 3})
    p = CoordinatorPersister(c)
    orders, payments = c.cluster.topic_id("orders"), c.cluster.topic_id("payments")
    ack, avail = DeliveryState.ACKNOWLEDGED, DeliveryState.AVAILABLE

    def ok(code) -> None:
        _check([code], "share coordinator request")

    def write(partition: int, start: int, *batches: tuple, state_epoch: int = 0) -> None:
        c.advance(1_000)
        ok(p.write_state("queue-app", orders, partition, state_epoch, 1, start,
                         tuple(StateBatch(*b) for b in batches)))

    # the group coordinator initialises the share-partitions it assigns
    ok(p.initialize_state("queue-app", orders, 0, 0, 100))
    ok(p.initialize_state("queue-app", orders, 1, 0, 0))
    ok(p.initialize_state("audit-queue", payments, 0, 0, 0))
    c.advance(500)
    for part in (0, 1):  # the share-partition leaders (leader epoch 1) load their state
        assert p.read_state("queue-app", orders, part, leader_epoch=1).error_code.value == 0
    # the KIP's example on orders-0 (acquisitions are not durable: only these writes happen)
    write(0, 110, (100, 109, ack, 1))       # acknowledge 100-109: SPSO=110
    write(0, -1, (110, 110, avail, 1))      # release 110
    write(0, -1, (119, 119, ack, 1))        # acknowledge 119
    write(0, -1, (111, 112, avail, 1))      # lock timeout 111, 112
    write(0, -1, (113, 118, ack, 1))        # acknowledge 113-118
    write(0, 111, (110, 110, ack, 2))       # acknowledge 110: SPSO=111
    write(0, 120, (111, 112, ack, 2))       # acknowledge 111, 112: SPSO=120
    # orders-1: some progress, then an admin resets it (AlterShareGroupOffsets): state epoch 1
    write(1, -1, (0, 4, ack, 1), (5, 5, DeliveryState.ARCHIVED, 5))
    c.advance(60_000)
    ok(p.initialize_state("queue-app", orders, 1, 1, 50))
    write(1, -1, (50, 59, ack, 1), state_epoch=1)
    # audit-queue's share-partition goes away (its offsets were deleted)
    c.advance(1_000)
    ok(p.delete_state("audit-queue", payments, 0))
    return c


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--out", type=Path, default=SAMPLES, help="where to write (default: data/samples)")
    parser.add_argument("--only", nargs="+", choices=sorted(SCENARIOS), help="just these samples")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in args.only or SCENARIOS:
        files = write_sample(SCENARIOS[name], args.out)
        size = sum(f.stat().st_size for f in files)
        print(f"{name}: {len(files)} files, {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
