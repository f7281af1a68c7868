"""A fuzz over the failure lab: random fault rules and random lab events (the coordinator moved,
brokers killed and restarted) on a three-broker `kgroup serve`, while scripted clients commit and
fetch offsets and heartbeat a KIP-848 group over the wire, each finding its coordinator first as
a client does. After each run, with the faults lifted:

- the server never died: every live broker answers;
- nothing committed is lost: each (group, partition) holds the last commit a client saw
  succeed, or a later one whose answer the client never got (a connection dropped after the
  coordinator ran it, or cut by a killed broker);
- records are the truth: the coordinator's state equals a reload of its log (the reliability
  suite's invariant), and every answer carried only Kafka's error codes.

Counts "steps explored", "faults injected" and "failovers survived" in the `reliability` fixture."""
from __future__ import annotations

import random
import time
import uuid

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import profile_settings
from invariants_testing import _check_response, assert_reload_equal
from kgroup import Cluster, Coordinator
from kgroup.errors import ErrorCode
from kgroup.lab import Fault
from kgroup.oracle.wire import Wire
from kgroup.serve import Server

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)
GROUPS = ("fz-a", "fz-b", "fz-c")
MEMBERS_GROUP = "fz-members"
APIS = ("OffsetCommit", "OffsetFetch", "ConsumerGroupHeartbeat", "FindCoordinator", "Metadata")
#: what a rule answers: the errors a coordinator or broker gives under failures
ERRORS = (ErrorCode.not_coordinator, ErrorCode.coordinator_load_in_progress, ErrorCode.coordinator_not_available,
          ErrorCode.request_timed_out, ErrorCode.rebalance_in_progress, ErrorCode.unknown_server_error)
STEPS = 40
FUZZ = settings(profile_settings(), suppress_health_check=[*profile_settings().suppress_health_check,
                                       HealthCheck.function_scoped_fixture])


def random_rule(rng: random.Random) -> Fault:
    api = rng.choice(APIS)
    how = rng.choice(["error", "delay", "drop-before", "drop-after"])
    count = {"nth": rng.randint(1, 3)} if rng.random() < 0.5 else {"times": rng.randint(1, 2)}
    if how == "error":
        return Fault(api, error=rng.choice(ERRORS), **count)
    if how == "delay":
        return Fault(api, delay_ms=rng.randint(1, 40), **count)
    return Fault(api, drop=how.split("-")[1], **count)


class Client:
    """What a scripted client knows: the commits it saw succeed, and those it never heard of."""

    def __init__(self, server: Server) -> None:
        self.server = server
        #: (group, partition) -> the last offset whose commit was answered NONE
        self.acked: dict[tuple[str, int], int] = {}
        #: (group, partition) -> offsets committed since, whose answer was lost
        self.in_doubt: dict[tuple[str, int], set[int]] = {}
        self.next_offset = 0
        self.member = str(uuid.UUID(int=7))
        self.epoch = 0

    def wire(self, broker: int) -> Wire:
        return Wire(f"127.0.0.1:{self.server.ports[broker]}", timeout=5)

    def call(self, broker: int, api: str, version: int, **data):
        """The answer, or None when the connection failed (dropped, or the broker is down)."""
        try:
            w = self.wire(broker)
            try:
                answer = w.call(api, version, **data)
            finally:
                w.close()
        except OSError:
            return None
        _check_response(answer)
        return answer

    def coordinator(self, group: str, live: list[int], rng: random.Random) -> int:
        answer = self.call(rng.choice(live), "FindCoordinator", 4, key_type=0, coordinator_keys=[group])
        if answer is None or answer.coordinators[0].error_code != ErrorCode.none:
            return rng.choice(live)   # ask someone anyway
        return answer.coordinators[0].node_id

    def commit(self, broker: int, group: str, partition: int) -> None:
        self.next_offset += 1
        offset = self.next_offset
        answer = self.call(broker, "OffsetCommit", 9, group_id=group, generation_id_or_member_epoch=-1,
                           member_id="", group_instance_id=None, topics=[{"name": "t", "partitions": [
                               {"partition_index": partition, "committed_offset": offset,
                                "committed_leader_epoch": -1, "committed_metadata": ""}]}])
        key = (group, partition)
        if answer is None:
            self.in_doubt.setdefault(key, set()).add(offset)
        elif answer.topics[0].partitions[0].error_code == ErrorCode.none:
            self.acked[key] = offset
            self.in_doubt.pop(key, None)

    def heartbeat(self, broker: int) -> None:
        answer = self.call(broker, "ConsumerGroupHeartbeat", 1, group_id=MEMBERS_GROUP, member_id=self.member,
                           member_epoch=self.epoch, rebalance_timeout=30_000 if self.epoch == 0 else -1,
                           subscribed_topic_names=["t"] if self.epoch == 0 else None,
                           topic_partitions=[] if self.epoch == 0 else None)
        if answer is not None and answer.error_code == ErrorCode.none:
            self.epoch = answer.member_epoch
        elif answer is not None and answer.error_code in (ErrorCode.fenced_member_epoch, ErrorCode.unknown_member_id):
            self.epoch = 0


@FUZZ
@given(seed=SEEDS)
def test_random_faults_lose_nothing_committed_and_never_kill_the_server(seed, reliability):
    rng = random.Random(seed)
    coordinator = Coordinator(Cluster({"t": 3}, seed=1), config={"offsets.topic.num.partitions": 6})
    server = Server(coordinator, brokers=3, load_ms=rng.choice([0, 0, 30])).start()
    client = Client(server)
    try:
        for _ in range(STEPS):
            reliability["steps explored"] += 1
            live = server.call(lambda: sorted(server.leadership.live))
            roll = rng.random()
            if roll < 0.12:
                server.add_fault(random_rule(rng))
                reliability["faults injected"] += 1
            elif roll < 0.18:
                server.move_coordinator(rng.choice(GROUPS + (MEMBERS_GROUP,)), rng.choice(live))
                reliability["failovers survived"] += 1
            elif roll < 0.22 and len(live) > 1:
                server.kill_broker(rng.choice(live))
                reliability["failovers survived"] += 1
            elif roll < 0.26 and len(live) < 3:
                server.restart_broker(rng.choice(sorted({0, 1, 2} - set(live))))
            elif roll < 0.45:
                client.heartbeat(client.coordinator(MEMBERS_GROUP, live, rng))
            else:
                group = rng.choice(GROUPS)
                client.commit(client.coordinator(group, live, rng), group, rng.randrange(3))
        # the faults lifted, everything back: what holds now
        for rule in list(server.faults):
            server.remove_fault(rule)
        for broker in sorted({0, 1, 2} - set(server.call(lambda: server.leadership.live))):
            server.restart_broker(broker)
        for broker in range(3):
            assert client.call(broker, "ApiVersions", 3).error_code == ErrorCode.none
        deadline = time.monotonic() + 5   # partitions taken over finish loading (load_ms)
        while server.call(lambda: bool(coordinator.loading_partitions)) and time.monotonic() < deadline:
            time.sleep(0.01)
        for (group, partition), acked in client.acked.items():
            broker = client.coordinator(group, [0, 1, 2], rng)
            fetched = client.call(broker, "OffsetFetch", 8, groups=[{"group_id": group, "topics": None}],
                                  require_stable=False)
            offsets = {p.partition_index: p.committed_offset for t in fetched.groups[0].topics for p in t.partitions}
            allowed = {acked} | {o for o in client.in_doubt.get((group, partition), ()) if o > acked}
            if offsets.get(partition) not in allowed:
                reliability["records lost"] += 1
            assert offsets.get(partition) in allowed, (group, partition, offsets, allowed)
        server.call(assert_reload_equal, coordinator)
    finally:
        server.stop()
