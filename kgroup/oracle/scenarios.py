"""Real-client scenarios for the differential harness (`kgroup.oracle.compare`).

Each is run once against Apache Kafka and once against `kgroup serve`; it drives unmodified
clients (librdkafka through confluent-kafka, kafka-python) and records what they saw. Names come
from `run.name` / `run.group`, so the two runs write the same keys. Needs the `serve` extra.
"""
from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from typing import Any

from kgroup.oracle.compare import Run, Scenario

#: how long one wait inside a scenario may take before it fails (loopback; generous for 2 cores)
WAIT_S = 45.0
_QUIET = {"log.connection.close": False, "log_level": 3}


def _ck():
    import confluent_kafka
    return confluent_kafka


def admin(run: Run):
    from confluent_kafka.admin import AdminClient
    return AdminClient({"bootstrap.servers": run.bootstrap, **_QUIET})


def topic(run: Run, base: str, partitions: int, records: int = 0) -> str:
    """Create a topic (CreateTopics, replication factor 1) and produce `records` records spread
    round-robin over its partitions; returns its name."""
    from confluent_kafka.admin import NewTopic
    name = run.name(base)
    a = admin(run)   # kept until the futures are done: the handle's end fails them
    for f in a.create_topics([NewTopic(name, partitions, 1)]).values():
        f.result(timeout=WAIT_S)
    if records:
        p = _ck().Producer({"bootstrap.servers": run.bootstrap, **_QUIET})
        for i in range(records):
            p.produce(name, key=b"k%d" % i, value=b"v%d" % i, partition=i % partitions)
        assert p.flush(WAIT_S) == 0, "records not delivered"
    return name


def consumer(run: Run, group: str, client_id: str, **conf: Any):
    """A librdkafka consumer; classic protocol, range, no auto commit unless `conf` says otherwise."""
    base = {"bootstrap.servers": run.bootstrap, "group.id": group, "client.id": client_id,
            "auto.offset.reset": "earliest", "enable.auto.commit": False, **_QUIET}
    return _ck().Consumer({**base, **conf})


def subscribed(c, topic_name: str):
    """`c` (a consumer or a share consumer) subscribed to `topic_name`; returns `c`."""
    c.subscribe([topic_name])
    return c


def assignment(c) -> list[list]:
    return sorted([tp.topic, tp.partition] for tp in c.assignment())


def poll_until(consumers: Iterable[Any], done: Callable[[], bool], what: str, timeout: float = WAIT_S) -> None:
    """Poll every consumer in turn (their rebalances happen inside poll) until `done()`; fails
    with `what` after `timeout` seconds."""
    consumers = list(consumers)
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")
        for c in consumers:
            c.poll(0.1)


def read_records(c, n: int, timeout: float = WAIT_S) -> set:
    """Poll `c` until it has read `n` distinct records; returns (topic, partition, offset)s."""
    read: set = set()
    deadline = time.monotonic() + timeout
    while len(read) < n:
        if time.monotonic() > deadline:
            raise TimeoutError(f"read {len(read)} of {n} records in {timeout:.0f} s")
        m = c.poll(0.1)
        if m is not None and m.error() is None:
            read.add((m.topic(), m.partition(), m.offset()))
    return read


def commit(c, offsets: list | None = None, timeout: float = WAIT_S) -> None:
    """A synchronous commit, retried while the broker answers a retriable error (a coordinator
    still loading its partition answers NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS)."""
    from confluent_kafka import KafkaError, KafkaException
    again = {KafkaError.NOT_COORDINATOR, KafkaError.COORDINATOR_LOAD_IN_PROGRESS, KafkaError.COORDINATOR_NOT_AVAILABLE}
    deadline = time.monotonic() + timeout
    while True:
        try:
            if offsets is None:
                c.commit(asynchronous=False)
            else:
                c.commit(offsets=offsets, asynchronous=False)
            return
        except KafkaException as e:
            err = e.args[0]
            if not (err.retriable() or err.code() in again) or time.monotonic() > deadline:
                raise
            time.sleep(0.2)


def committed(c, topic_name: str, partitions: int) -> dict:
    tps = [_ck().TopicPartition(topic_name, p) for p in range(partitions)]
    return {tp.partition: tp.offset for tp in c.committed(tps, timeout=WAIT_S)}


def poll_until_shared(consumers: Iterable[Any], total: int, what: str) -> None:
    """`poll_until` every consumer holds something, and together exactly `total` partitions,
    none twice."""
    consumers = list(consumers)

    def done() -> bool:
        held = [tuple(x) for c in consumers for x in assignment(c)]
        return all(c.assignment() for c in consumers) and len(held) == total == len(set(held))
    poll_until(consumers, done, what)


def describe_consumer_group(run: Run, when: str, group: str, *flags: str) -> None:
    """`kafka-consumer-groups --describe --group <group> <flags>`, recorded at the step
    "<when>: kafka-consumer-groups --describe <flags>"."""
    run.tool(f"{when}: kafka-consumer-groups --describe {' '.join(flags)}", "consumer", "--describe", "--group",
             group, *flags)


def set_group_config(run: Run, group: str, name: str, value: str) -> None:
    """IncrementalAlterConfigs SET on a GROUP resource (e.g. share.auto.offset.reset)."""
    set_group_configs(run, group, {name: value})


def set_group_configs(run: Run, group: str, configs: dict[str, str]) -> None:
    """One IncrementalAlterConfigs request setting `configs` on a GROUP resource."""
    from confluent_kafka.admin import AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType
    entries = [ConfigEntry(n, v, incremental_operation=AlterConfigOpType.SET) for n, v in configs.items()]
    a = admin(run)
    for f in a.incremental_alter_configs([ConfigResource(ResourceType.GROUP, group,
                                                         incremental_configs=entries)]).values():
        f.result(timeout=WAIT_S)


# -- classic groups ----------------------------------------------------------------------
def classic_group(run: Run, strategy: str) -> None:
    orders = topic(run, "orders", 3, records=30)
    g = run.group(f"classic-{strategy}")
    conf = {"partition.assignment.strategy": strategy}
    c1 = subscribed(consumer(run, g, "c1", **conf), orders)
    read = read_records(c1, 30)
    run.saw("c1 alone: assignment", assignment(c1))
    run.saw("c1 alone: records read", len(read))
    commit(c1)
    run.saw("c1 committed", committed(c1, orders, 3))
    c2 = subscribed(consumer(run, g, "c2", **conf), orders)
    poll_until_shared([c1, c2], 3, "c1 and c2 to share orders-0..2")
    run.saw("c2 joined: assignments", {"c1": assignment(c1), "c2": assignment(c2)})
    describe_consumer_group(run, "c2 joined", g, "--members")
    c2.close()
    poll_until_shared([c1], 3, "c1 to hold orders-0..2 again")
    run.saw("c2 left: assignment", assignment(c1))
    commit(c1, [_ck().TopicPartition(orders, 0, 7)])
    run.saw("c1 committed orders-0 at 7", committed(c1, orders, 3))
    c1.close()
    describe_consumer_group(run, "all left", g, "--offsets")


def _classic_eager(run: Run) -> None:
    classic_group(run, "range")


def _classic_cooperative(run: Run) -> None:
    classic_group(run, "cooperative-sticky")


CLASSIC_EAGER = Scenario("classic-eager", "two classic consumers (range, eager): join, share, one leaves; commits",
                         _classic_eager)
CLASSIC_COOPERATIVE = Scenario("classic-cooperative",
                               "the same with cooperative-sticky (incremental rebalances)", _classic_cooperative)


# -- KIP-848 consumer groups -------------------------------------------------------------
def _kip848_join_leave(run: Run) -> None:
    orders = topic(run, "orders", 4, records=40)
    g = run.group("kip848")
    # The target is computed on the heartbeat that bumps the epoch, not on whichever member's
    # heartbeat comes first after a 1 s batch: with batching, c2 sees an UNRELEASED step or not
    # depending on the two clients' heartbeat phases, and the records with it.
    set_group_config(run, g, "consumer.assignment.interval.ms", "0")
    conf = {"group.protocol": "consumer"}
    c1 = subscribed(consumer(run, g, "c1", **conf), orders)
    poll_until_shared([c1], 4, "c1 to own orders-0..3")
    run.saw("c1 alone: assignment", assignment(c1))
    c2 = subscribed(consumer(run, g, "c2", **conf), orders)
    poll_until_shared([c1, c2], 4, "c1 and c2 to share orders-0..3")
    run.saw("c2 joined: sizes", sorted([len(c1.assignment()), len(c2.assignment())]))
    describe_consumer_group(run, "c2 joined", g, "--members")
    for c in (c1, c2):
        commit(c, [_ck().TopicPartition(t, p, 5 + p) for t, p in assignment(c)])
    run.saw("both committed", committed(c1, orders, 4))
    c2.close()
    poll_until_shared([c1], 4, "c1 to own orders-0..3 again")
    run.saw("c2 left: assignment", assignment(c1))
    c1.close()
    describe_consumer_group(run, "all left", g, "--state")


KIP848_JOIN_LEAVE = Scenario("kip848-join-leave", "two KIP-848 consumers join one by one, then one leaves",
                             _kip848_join_leave)


# -- KIP-345 static membership -----------------------------------------------------------
def _static_restart(run: Run) -> None:
    orders = topic(run, "orders", 4, records=8)
    g = run.group("static")
    s1 = subscribed(consumer(run, g, "s1", **{"group.instance.id": "s1"}), orders)
    # s1 forms the group alone first: which of two JoinGroups that arrive together Kafka makes
    # the leader depends on timing (seen both ways), so the leader is made certain
    poll_until_shared([s1], 4, "s1 to own orders-0..3")
    s2 = subscribed(consumer(run, g, "s2", **{"group.instance.id": "s2"}), orders)
    poll_until_shared([s1, s2], 4, "s1 and s2 to share orders-0..3")
    before = {"s1": assignment(s1), "s2": assignment(s2)}
    run.saw("s1 and s2 joined", before)
    s1.close()   # a static member leaves no LeaveGroup: its partitions wait for it
    s1 = subscribed(consumer(run, g, "s1", **{"group.instance.id": "s1"}), orders)
    poll_until_shared([s1, s2], 4, "the restarted s1 to get its partitions back")
    run.saw("s1 restarted: assignments (no rebalance: the same)", {"s1": assignment(s1), "s2": assignment(s2)})
    describe_consumer_group(run, "s1 restarted", g, "--members", "--verbose")
    s1.close()
    s2.close()


STATIC_RESTART = Scenario("kip345-static-restart",
                          "two static classic consumers; one restarts with its instance id: no rebalance",
                          _static_restart)


def first_error(c, what: str, timeout: float = WAIT_S) -> str:
    """Poll `c` until it reports an error; returns its name (librdkafka reports a fenced static
    member as _FATAL), or its text for an error librdkafka flags fatal itself."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        m = c.poll(0.2)
        if m is not None and m.error() is not None:
            err = m.error()
            return f"fatal: {err.str()}" if err.fatal() else err.name()
    raise TimeoutError(f"timed out after {timeout:.0f} s waiting for {what}")


def _static_fenced(run: Run) -> None:
    orders = topic(run, "orders", 2, records=4)
    g = run.group("fenced")
    s1 = subscribed(consumer(run, g, "s1", **{"group.instance.id": "s1"}), orders)
    poll_until_shared([s1], 2, "s1 to own orders-0..1")
    # a second process started with the same instance id takes the member over (KIP-345):
    # the group does not rebalance, and the first one is fenced at its next heartbeat
    twin = subscribed(consumer(run, g, "twin", **{"group.instance.id": "s1"}), orders)
    poll_until_shared([twin], 2, "the twin to take over orders-0..1")
    run.saw("the twin took over", assignment(twin))
    run.saw("s1 is fenced", first_error(s1, "s1 to be fenced"))
    describe_consumer_group(run, "after the takeover", g, "--members", "--verbose")
    twin.close()
    s1.close()


STATIC_FENCED = Scenario("kip345-fenced-duplicate",
                         "a static classic consumer, then a second process with the same group.instance.id: "
                         "it takes over without a rebalance and the first is fenced (FENCED_INSTANCE_ID)",
                         _static_fenced)


def _kip848_rolling_restart(run: Run) -> None:
    orders = topic(run, "orders", 4, records=8)
    g = run.group("rolling")
    set_group_config(run, g, "consumer.assignment.interval.ms", "0")   # as in KIP848_JOIN_LEAVE

    def start(name: str):
        return subscribed(consumer(run, g, name, **{"group.protocol": "consumer", "group.instance.id": name}), orders)

    members = {"c1": start("c1")}
    poll_until_shared(members.values(), 4, "c1 to own orders-0..3")
    members["c2"] = start("c2")
    poll_until_shared(members.values(), 4, "c1 and c2 to share orders-0..3")
    run.saw("c1 and c2 joined", {n: assignment(c) for n, c in members.items()})
    for name in ("c1", "c2"):   # each restarted in turn: a static member leaves with epoch -2 ...
        members[name].close()
        describe_consumer_group(run, f"{name} stopped", g, "--members")
        members[name] = start(name)
        # ... and comes back to the same partitions, with no new group epoch
        poll_until_shared(members.values(), 4, f"{name} back")
        run.saw(f"{name} restarted", {n: assignment(c) for n, c in members.items()})
    describe_consumer_group(run, "after the rolling restart", g, "--state")
    for c in members.values():
        c.close()


KIP848_ROLLING_RESTART = Scenario("kip848-rolling-restart",
                                  "two static KIP-848 consumers restarted one after the other: each leaves with "
                                  "epoch -2 and gets its partitions back without a new group epoch",
                                  _kip848_rolling_restart)


# -- classic <-> consumer migration (KIP-848's online upgrade) ----------------------------
def _classic_to_consumer(run: Run) -> None:
    orders = topic(run, "orders", 4, records=8)
    g = run.group("upgrade")
    c1 = subscribed(consumer(run, g, "c1"), orders)              # classic protocol, range
    poll_until_shared([c1], 4, "classic c1 to own orders-0..3")
    run.saw("classic c1 alone", assignment(c1))
    c2 = subscribed(consumer(run, g, "c2", **{"group.protocol": "consumer"}), orders)
    poll_until_shared([c1, c2], 4, "c1 (classic) and c2 (consumer) to share orders-0..3")
    run.saw("c2 joined with the consumer protocol: sizes", sorted([len(c1.assignment()), len(c2.assignment())]))
    describe_consumer_group(run, "mixed group", g, "--state")
    # one member joins or leaves at a time, so which partitions move is the sticky assignor's
    # answer, not the order of random member ids
    c1.close()
    poll_until_shared([c2], 4, "c2 to own orders-0..3")
    c3 = subscribed(consumer(run, g, "c3"), orders)              # a classic member joins the consumer group
    poll_until_shared([c2, c3], 4, "c2 and c3 to share orders-0..3")
    run.saw("classic c3 joined: sizes", sorted(len(c.assignment()) for c in (c2, c3)))
    c2.close()
    poll_until_shared([c3], 4, "c3 to own orders-0..3")
    run.saw("c2 left: classic c3", assignment(c3))
    describe_consumer_group(run, "c2 left", g, "--state")
    c3.close()


CLASSIC_TO_CONSUMER = Scenario("classic-to-consumer-migration",
                               "a classic consumer's group converts when a KIP-848 consumer joins, and back "
                               "when it leaves", _classic_to_consumer)


# -- KIP-848 regular expressions --------------------------------------------------------
def _kip848_regex(run: Run) -> None:
    first = topic(run, "rx-a", 2)
    g = run.group("regex")
    # a regex: resolved by the coordinator (RE2)
    c1 = subscribed(consumer(run, g, "c1", **{"group.protocol": "consumer"}), f"^rx-.*-{run.token}$")
    poll_until([c1], lambda: len(c1.assignment()) == 2, f"c1 to own {first}-0..1")
    run.saw("regex matches one topic", assignment(c1))
    second = topic(run, "rx-b", 3)             # created while subscribed
    poll_until([c1], lambda: len(c1.assignment()) == 5, f"c1 to own {second} too")
    run.saw("a matching topic created: assignment", assignment(c1))
    c1.close()


KIP848_REGEX = Scenario("kip848-regex-subscription",
                        "a KIP-848 consumer subscribes with a regex; a matching topic is created meanwhile",
                        _kip848_regex)


# -- transactions -------------------------------------------------------------------------
def _transactional_offsets(run: Run) -> None:
    source = topic(run, "in", 1, records=10)
    sink = topic(run, "out", 1)
    g = run.group("txn")
    c = subscribed(consumer(run, g, "c1"), source)
    read_records(c, 10)
    p = _ck().Producer({"bootstrap.servers": run.bootstrap, "transactional.id": run.name("txn-producer"),
                        **_QUIET})
    p.init_transactions(WAIT_S)
    tp = _ck().TopicPartition
    p.begin_transaction()
    p.produce(sink, b"committed")
    p.send_offsets_to_transaction([tp(source, 0, 5)], c.consumer_group_metadata(), WAIT_S)
    p.commit_transaction(WAIT_S)
    run.saw("after the committed transaction", committed(c, source, 1))
    p.begin_transaction()
    p.produce(sink, b"aborted")
    p.send_offsets_to_transaction([tp(source, 0, 8)], c.consumer_group_metadata(), WAIT_S)
    p.abort_transaction(WAIT_S)
    run.saw("after the aborted transaction", committed(c, source, 1))
    c.close()


TRANSACTIONAL_OFFSETS = Scenario("transactional-offsets",
                                 "send_offsets_to_transaction in a committed and in an aborted transaction",
                                 _transactional_offsets)


# -- listing groups -----------------------------------------------------------------------
def _list_groups(run: Run) -> None:
    orders = topic(run, "orders", 2, records=4)
    simple = run.group("simple")
    c = consumer(run, simple, "committer")
    commit(c, [_ck().TopicPartition(orders, 0, 1)])
    c.close()
    modern = run.group("modern")
    k = subscribed(consumer(run, modern, "k1", **{"group.protocol": "consumer"}), orders)
    poll_until_shared([k], 2, "k1 to own both partitions")
    queue = run.group("queue")
    set_group_config(run, queue, "share.auto.offset.reset", "earliest")
    w = subscribed(share_consumer(run, queue, "w1"), orders)
    # all four records (two per partition) fetched and accepted, so both share-partitions have
    # the same history on both endpoints; records left acquired would be released at close, a
    # write whose moment is the broker's
    accepted, deadline = 0, time.monotonic() + WAIT_S
    while accepted < 4 and time.monotonic() < deadline:
        for m in w.poll(0.5):        # explicit mode: a poll wants the last one's records acknowledged
            if m.error() is None:
                w.acknowledge(m)
                accepted += 1
    w.commit_sync()
    run.saw("share records accepted", accepted)
    a = admin(run)
    listed = a.list_consumer_groups(request_timeout=WAIT_S).result(timeout=WAIT_S)
    run.saw("ListGroups (librdkafka's list_consumer_groups): ours, in the order answered",
            [(g.group_id.rsplit("-", 1)[0], str(g.state).split(".")[-1], str(g.type).split(".")[-1])
             for g in listed.valid if run.token in g.group_id])
    run.tool("kafka-groups --list", "groups", "--list", only_mine=True)
    run.tool("kafka-consumer-groups --list --state", "consumer", "--list", "--state", only_mine=True)
    run.tool("kafka-share-groups --list", "share", "--list", only_mine=True)
    w.close()
    k.close()


LIST_GROUPS = Scenario("list-groups",
                       "a simple, a KIP-848 and a share group listed by ListGroups, kafka-groups and the type tools",
                       _list_groups, profiles=("kafka",))   # the share profile flags, as SHARE_EXPLICIT


# -- offsets ------------------------------------------------------------------------------
def _kip709_batched_fetch(run: Run) -> None:
    from kafka import KafkaAdminClient
    orders = topic(run, "orders", 2)
    groups = [run.group(f"batch{i}") for i in range(3)]
    ck = _ck()
    for i, g in enumerate(groups[:2]):
        c = consumer(run, g, f"committer{i}")
        commit(c, [ck.TopicPartition(orders, 0, 10 * (i + 1)), ck.TopicPartition(orders, 1, 5)])
        c.close()
    a = KafkaAdminClient(bootstrap_servers=run.bootstrap, client_id="batcher")
    try:
        answer = a.list_group_offsets({g: None for g in groups})
    finally:
        a.close()
    run.saw("one batched OffsetFetch", {g.rsplit("-", 1)[0]: sorted((tp.partition, om.offset)
                                                                     for tp, om in answer[g].items())
                                        for g in groups})


KIP709_BATCHED_FETCH = Scenario("kip709-batched-fetch",
                                "two groups commit; kafka-python fetches three groups' offsets in one request",
                                _kip709_batched_fetch)


def _offsets_delete(run: Run) -> None:
    orders = topic(run, "orders", 2)
    g = run.group("deleted")
    ck = _ck()
    c = consumer(run, g, "committer")
    commit(c, [ck.TopicPartition(orders, 0, 3), ck.TopicPartition(orders, 1, 4)])
    c.close()
    from kafka import KafkaAdminClient
    from kafka.structs import TopicPartition
    a = KafkaAdminClient(bootstrap_servers=run.bootstrap, client_id="deleter")
    try:
        run.saw("OffsetDelete answer", {tp.partition: str(err) for tp, err in
                                        a.delete_group_offsets(g, [TopicPartition(orders, 1)]).items()})
        run.saw("after OffsetDelete", sorted(committed_fresh(run, g, orders, 2).items()))
        run.saw("DeleteGroups answer", {k.rsplit("-", 1)[0]: str(v) for k, v in a.delete_groups([g]).items()})
    finally:
        a.close()
    run.saw("after DeleteGroups", sorted(committed_fresh(run, g, orders, 2).items()))


def committed_fresh(run: Run, g: str, topic_name: str, partitions: int) -> dict:
    c = consumer(run, g, "reader")
    try:
        return committed(c, topic_name, partitions)
    finally:
        c.close()


OFFSETS_DELETE = Scenario("offsets-delete", "a simple group commits; OffsetDelete of one partition; DeleteGroups",
                          _offsets_delete)

#: per-group configs a user may get wrong, each set alone (and two pairs set together)
CONFIG_PROBES = [
    {"consumer.session.timeout.ms": "1000"}, {"consumer.session.timeout.ms": "60001"},
    {"consumer.heartbeat.interval.ms": "0"}, {"consumer.heartbeat.interval.ms": "abc"},
    {"consumer.assignment.interval.ms": "-1"},
    {"share.record.lock.duration.ms": "999"}, {"share.record.lock.duration.ms": "2000"},
    {"share.record.lock.duration.ms": "60001"}, {"share.record.lock.duration.ms": "20000"},
    {"share.delivery.count.limit": "1"}, {"share.delivery.count.limit": "11"},
    {"share.partition.max.record.locks": "99"}, {"share.partition.max.record.locks": "5000"},
    {"share.partition.max.record.locks": "200"},
    {"share.isolation.level": "read_most"}, {"share.auto.offset.reset": "sometimes"},
    {"streams.num.standby.replicas": "3"}, {"streams.num.standby.replicas": "-1"},
    {"streams.session.timeout.ms": "44999"}, {"streams.initial.rebalance.delay.ms": "-5"},
    {"streams.assignor.name": "round_robin"},
    {"group.protocol": "consumer"},
    {"consumer.session.timeout.ms": "50000", "consumer.heartbeat.interval.ms": "6000"},
    {"share.session.timeout.ms": "45000", "share.heartbeat.interval.ms": "15001"},
]


def _group_config_bounds(run: Run) -> None:
    from confluent_kafka import KafkaException
    g = run.name("configured")
    for probe in CONFIG_PROBES:
        try:
            set_group_configs(run, g, probe)
            outcome = "ok"
        except KafkaException as e:
            outcome = f"{e.args[0].name()}: {e.args[0].str()}"
        run.saw(" ".join(f"{k}={v}" for k, v in probe.items()), outcome)


GROUP_CONFIG_BOUNDS = Scenario("group-config-bounds",
                               "IncrementalAlterConfigs of per-group configs inside and outside Kafka's bounds: "
                               "what is accepted, and the error for what is not",
                               _group_config_bounds,
                               # under kip the KIP's highly_available assignor is registered too
                               profiles=("kafka",))


def _requests_too_large(run: Run) -> None:
    """Raw requests (no client sends such): a write bigger than one batch of __consumer_offsets."""
    import uuid
    from kgroup.errors import ErrorCode
    from kgroup.oracle.wire import Wire
    wide = topic(run, "wide", 400)
    small, large = run.group("commits"), run.group("subscriber")
    with Wire(run.bootstrap, client_id="raw", timeout=WAIT_S) as w:
        deadline = time.monotonic() + WAIT_S
        for g in (small, large):   # Kafka loads the groups' partitions meanwhile
            w.find_coordinator(g, WAIT_S)

        def commit_partitions(n: int) -> dict:
            while True:   # until the coordinator has loaded the group's partition
                r = w.call("OffsetCommit", 8, group_id=small, generation_id_or_member_epoch=-1, member_id="",
                           group_instance_id=None, topics=[{"name": wide, "partitions": [
                               {"partition_index": p, "committed_offset": p, "committed_leader_epoch": -1,
                                "committed_metadata": "m" * 4000} for p in range(n)]}])
                codes = Counter(ErrorCode(p.error_code).name for p in r.topics[0].partitions)
                if not (set(codes) & {"not_coordinator", "coordinator_load_in_progress"}) \
                        or time.monotonic() > deadline:
                    return dict(codes)
                time.sleep(0.2)

        # 200 commits of 4,000 bytes of metadata fit in one batch (about 0.8 MB); 400 do not, and
        # the whole write fails: UNKNOWN_SERVER_ERROR for every partition, nothing written
        run.saw("200 commits with 4,000 bytes of metadata each", commit_partitions(200))
        run.saw("400 commits with 4,000 bytes of metadata each", commit_partitions(400))
        names = [f"topic-{i:05d}-" + "x" * 200 for i in range(6000)]   # a 1.3 MB subscription
        r = w.call("ConsumerGroupHeartbeat", 0, group_id=large, member_id=str(uuid.uuid4()), member_epoch=0,
                   rebalance_timeout=5000, subscribed_topic_names=names, topic_partitions=[])
        run.saw("a member subscribing to 6,000 long topic names",
                {"error": ErrorCode(r.error_code).name, "message": r.error_message, "member_id": r.member_id,
                 "epoch": r.member_epoch})
    run.saw("the committed offsets", committed_fresh(run, small, wide, 3))
    # the controller creates at most 10,000 partitions per CreateTopics, counted over all its topics
    from confluent_kafka import KafkaException
    from confluent_kafka.admin import NewTopic
    a = admin(run)
    outcome = {}
    futures = a.create_topics([NewTopic(run.name(f"many-{i}"), 6000, 1) for i in (1, 2)])
    for name, f in sorted(futures.items()):
        try:
            f.result(timeout=WAIT_S)
            outcome[name.rsplit("-", 1)[0]] = "created"
        except KafkaException as e:
            outcome[name.rsplit("-", 1)[0]] = f"{e.args[0].name()}: {e.args[0].str()}"
    run.saw("two topics of 6,000 partitions in one CreateTopics", outcome)


REQUESTS_TOO_LARGE = Scenario("requests-too-large",
                              "raw OffsetCommit and ConsumerGroupHeartbeat requests whose records exceed one "
                              "__consumer_offsets batch (max.message.bytes): the write fails whole; a "
                              "CreateTopics of more than 10,000 partitions is refused whole",
                              _requests_too_large)


# -- KIP-932 share groups ----------------------------------------------------------------
def share_consumer(run: Run, group: str, client_id: str, **conf: Any):
    return _ck().ShareConsumer({"bootstrap.servers": run.bootstrap, "group.id": group, "client.id": client_id,
                                "share.acknowledgement.mode": "explicit", **_QUIET, **conf})


def deliveries(records: Iterable[Any]) -> list[tuple[int, int]]:
    """The records' (offset, delivery count), sorted."""
    return sorted((m.offset(), m.delivery_count()) for m in records)


def share_fetch(c, n: int, timeout: float = WAIT_S) -> list:
    """Poll a share consumer until it has `n` records; returns them."""
    got: list = []
    deadline = time.monotonic() + timeout
    while len(got) < n:
        if time.monotonic() > deadline:
            raise TimeoutError(f"got {len(got)} of {n} records in {timeout:.0f} s")
        got += [m for m in c.poll(0.5) if m.error() is None]
    return got


def _share_explicit(run: Run) -> None:
    tasks = topic(run, "tasks", 1, records=6)
    g = run.group("share")
    # a share group starts at the latest offset unless its config says otherwise (KIP-932)
    set_group_config(run, g, "share.auto.offset.reset", "earliest")
    ack = _ck().AcknowledgeType
    w = subscribed(share_consumer(run, g, "w1"), tasks)
    first = share_fetch(w, 6)
    run.saw("first delivery: (offset, delivery count)", deliveries(first))
    verdict = {2: ack.RELEASE, 4: ack.REJECT}
    for m in first:
        w.acknowledge(m, verdict.get(m.offset(), ack.ACCEPT))
    w.commit_sync()
    again = share_fetch(w, 1)
    run.saw("released offset 2 comes again", deliveries(again))
    for m in again:
        w.acknowledge(m)
    w.commit_sync()
    run.tool("kafka-share-groups --describe", "share", "--describe", "--group", g)
    run.tool("kafka-share-groups --describe --members", "share", "--describe", "--group", g, "--members")
    w.close()


def _share_delivery_limit(run: Run) -> None:
    tasks = topic(run, "jobs", 1, records=3)
    g = run.group("poison")
    set_group_config(run, g, "share.auto.offset.reset", "earliest")
    set_group_config(run, g, "share.delivery.count.limit", "2")
    ack = _ck().AcknowledgeType
    w = subscribed(share_consumer(run, g, "w1"), tasks)
    first = share_fetch(w, 3)
    run.saw("first delivery", deliveries(first))
    for m in first:                              # offset 1 is a poison message: always released
        w.acknowledge(m, ack.RELEASE if m.offset() == 1 else ack.ACCEPT)
    w.commit_sync()
    again = share_fetch(w, 1)
    run.saw("offset 1 again", deliveries(again))
    for m in again:
        w.acknowledge(m, ack.RELEASE)            # the second release reaches the limit: archived
    w.commit_sync()
    rest = [m for m in w.poll(1.0) if m.error() is None]
    run.saw("nothing more to deliver", [(m.offset(), m.delivery_count()) for m in rest])
    run.tool("kafka-share-groups --describe", "share", "--describe", "--group", g)
    w.close()
    run.tool("kafka-share-groups --reset-offsets --to-earliest", "share", "--reset-offsets", "--group", g,
             "--topic", tasks, "--to-earliest", "--execute")
    run.tool("after the reset: kafka-share-groups --describe", "share", "--describe", "--group", g)
    run.tool("kafka-share-groups --delete-offsets", "share", "--delete-offsets", "--group", g, "--topic", tasks)
    run.tool("after deleting the offsets: kafka-share-groups --describe", "share", "--describe", "--group", g)


#: the lock bound Kafka puts on a group's share.record.lock.duration.ms, lowered so that a lock
#: can expire within a test (Kafka's default minimum is 15 s)
LOCK_BOUND = {"group.share.min.record.lock.duration.ms": "1000"}


def _share_lock_timeout(run: Run) -> None:
    tasks = topic(run, "slow", 1, records=3)
    g = run.group("locks")
    set_group_config(run, g, "share.auto.offset.reset", "earliest")
    set_group_config(run, g, "share.record.lock.duration.ms", "2000")
    w1 = subscribed(share_consumer(run, g, "w1"), tasks)
    held = share_fetch(w1, 3)
    run.saw("w1 acquired", deliveries(held))
    # w1 stalls past its acquisition lock: the records become Available again (KIP-932), and the
    # next fetch of the group acquires them with the delivery count one higher. w1 stops before
    # w2 starts: whether w1 heartbeats once more while both are members is the clients' timing.
    time.sleep(3.5)
    w1.close()
    w2 = subscribed(share_consumer(run, g, "w2"), tasks)
    again = share_fetch(w2, 3)
    run.saw("w2 acquired after the locks expired", deliveries(again))
    for m in again:
        w2.acknowledge(m)
    w2.commit_sync()
    run.tool("kafka-share-groups --describe", "share", "--describe", "--group", g)
    w2.close()


SHARE_LOCK_TIMEOUT = Scenario("share-lock-timeout",
                              "a share consumer stalls past share.record.lock.duration.ms (2 s): its records "
                              "are delivered to a second consumer with delivery count 2",
                              _share_lock_timeout, profiles=("kafka",),   # as SHARE_EXPLICIT
                              broker_config=LOCK_BOUND)


SHARE_DELIVERY_LIMIT = Scenario("share-delivery-limit-and-reset",
                                "a poison message released until share.delivery.count.limit (2) archives it; "
                                "then an admin resets the share group to the earliest offset and deletes "
                                "its offsets",
                                _share_delivery_limit, profiles=("kafka",))   # as SHARE_EXPLICIT


SHARE_EXPLICIT = Scenario("share-explicit-acks",
                          "a share consumer accepts, releases (redelivered, count 2) and rejects records",
                          _share_explicit,
                          # under kip an acknowledgement's write carries the SPSO it moves to
                          # (profile flag share_ack_write_carries_new_spso)
                          profiles=("kafka",))

ALL = [CLASSIC_EAGER, CLASSIC_COOPERATIVE, STATIC_RESTART, STATIC_FENCED, KIP848_ROLLING_RESTART, KIP848_JOIN_LEAVE, CLASSIC_TO_CONSUMER, KIP709_BATCHED_FETCH, OFFSETS_DELETE,
       KIP848_REGEX, TRANSACTIONAL_OFFSETS, SHARE_EXPLICIT, SHARE_DELIVERY_LIMIT, SHARE_LOCK_TIMEOUT, LIST_GROUPS,
       GROUP_CONFIG_BOUNDS, REQUESTS_TOO_LARGE]

# -- offsets expiring (a broker of its own: retention is a broker config) ------------------
#: the shortest retention Kafka allows (a minute), looked at every second
SHORT_RETENTION = {"offsets.retention.minutes": "1", "offsets.retention.check.interval.ms": "1000"}


def _offsets_expire(run: Run) -> None:
    orders = topic(run, "orders", 2, records=4)
    g, simple = run.group("expiring"), run.group("simple")
    c = subscribed(consumer(run, g, "c1"), orders)
    poll_until_shared([c], 2, "c1 to own orders-0..1")
    commit(c, [_ck().TopicPartition(orders, 0, 1), _ck().TopicPartition(orders, 1, 2)])
    c.close()   # the group is Empty from here: its offsets expire a retention later
    # a group that only commits (no member ever joins): each offset expires a retention after its commit
    s = consumer(run, simple, "s1")
    commit(s, [_ck().TopicPartition(orders, 0, 3)])
    s.close()
    run.saw("committed", {"expiring": committed_fresh(run, g, orders, 2),
                          "simple": committed_fresh(run, simple, orders, 2)})
    deadline = time.monotonic() + 150
    while any(p >= 0 for grp in (g, simple) for p in committed_fresh(run, grp, orders, 2).values()):
        if time.monotonic() > deadline:
            raise TimeoutError("the offsets did not expire in 150 s")
        time.sleep(1)
    run.saw("a retention later", {"expiring": committed_fresh(run, g, orders, 2),
                                  "simple": committed_fresh(run, simple, orders, 2)})
    time.sleep(2)   # the group's own tombstone follows its offsets' at the next check
    run.tool("kafka-consumer-groups --list", "consumer", "--list", only_mine=True)


OFFSETS_EXPIRE = Scenario("offsets-expire",
                          "a group's offsets expire offsets.retention.minutes after it became Empty, and a "
                          "simple group's a retention after each commit; both groups are then deleted",
                          _offsets_expire, broker_config=SHORT_RETENTION)

#: scenarios that need a broker of their own (their broker_config would change the others')
OWN_BROKER = [OFFSETS_EXPIRE]


#: the shared oracle broker's configs: what the scenarios in ALL need (kgroup serve mirrors them)
SHARED_BROKER_CONFIG = {k: v for scenario in ALL for k, v in scenario.broker_config.items()}
