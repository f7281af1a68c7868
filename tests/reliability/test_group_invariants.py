"""Invariants under random behaviour: one hypothesis state machine per group type, driving the
coordinator through the simulated clients (members joining, heartbeating, leaving, crashing,
restarting with the same instance id; topics appearing, growing and disappearing; the clock
jumping; the coordinator failing over to one reloaded from its logs), with the invariants checked
after every step, and `Coordinator.load` of the logs describing every group alike after every step.

Any Python exception out of `handle` or `advance` fails the run (hypothesis reports it).
"""
from __future__ import annotations

from collections import Counter

import hypothesis.strategies as st
import pytest
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from invariants_testing import COUNTS, CheckedCoordinator, assert_reload_equal, failover, profile_settings
from kgroup import Cluster, Coordinator
from kgroup.clients import (ClassicConsumer, ConsumerConfig, ConsumerGroupConsumer, ShareConsumer, Simulation,
                            StreamsApplication, StreamsConfig, TopologyBuilder)
from kgroup.groups.modern import LEAVE_GROUP_STATIC_MEMBER_EPOCH, MemberState

NAMES = ("A", "B", "C", "S1", "S2")
ARCHIVED = 4   # KIP-932's delivery state of a record that will not be delivered again   # S*: static members (group.instance.id = the name)
TICK_MS = 500


class GroupMachine(RuleBasedStateMachine):
    """What every group type's machine shares: the cluster, the simulation, the rules that
    move members, topics and the clock, failover, and the reload check."""

    PROFILE = "kip"
    CONFIG: dict = {}
    GROUP = "g"

    def __init__(self) -> None:
        super().__init__()
        self.cluster = Cluster({"orders": 4, "payments": 2}, seed=1)
        self.sim = Simulation(CheckedCoordinator(cluster=self.cluster, profile=self.PROFILE, config=self.CONFIG),
                              tick_ms=TICK_MS)
        self.clients: dict[str, object] = {}
        #: (group id, member id) -> the last member epoch seen; group id -> last group epoch
        self.member_epochs: dict[tuple[str, str], int] = {}
        self.group_epochs: dict[str, int] = {}
        self.group_objects: dict[str, int] = {}
        self.incarnation = Counter()

    @property
    def c(self) -> Coordinator:
        return self.sim.c

    def step_done(self) -> None:
        COUNTS["steps explored"] += 1

    # -- the client each type needs ------------------------------------------------------------
    def make_client(self, name: str) -> object:
        raise NotImplementedError

    def members_of(self, client: object) -> list:
        """The simulation's members a client adds (a Streams instance: its threads)."""
        return [client]

    # -- rules ---------------------------------------------------------------------------------
    @initialize()
    def a_group_running(self) -> None:
        """Start from a group with members (a dynamic one, and a static one)."""
        for name in ("A", "S1"):
            self.start(name)
        self.run(20)

    @rule(name=st.sampled_from(NAMES))
    def start(self, name: str) -> None:
        client = self.clients.get(name)
        if client is None:
            client = self.clients[name] = self.make_client(name)
            self.sim.add(client)
            if not client.running:
                client.start()   # a share consumer waits to be started
        elif not client.running:
            client.start()   # the same process restarted (a static member: the same instance id)
        self.step_done()

    @rule(name=st.sampled_from(NAMES))
    def close(self, name: str) -> None:
        client = self.clients.get(name)
        if client is not None and client.running:
            client.close()
        self.step_done()

    @rule(name=st.sampled_from(NAMES))
    def crash(self, name: str) -> None:
        client = self.clients.get(name)
        if client is not None and client.running:
            client.crash()
            COUNTS["faults injected"] += 1
        self.step_done()

    @rule(ticks=st.integers(1, 30))
    def run(self, ticks: int) -> None:
        """Heartbeats, polls and timers for a while."""
        self.sim.run(ticks * TICK_MS)
        self.step_done()

    @rule(ms=st.sampled_from([11_000, 46_000, 301_000, 86_400_000]))
    def clock_jump(self, ms: int) -> None:
        """The coordinator's clock jumps (a long GC pause, a suspended VM): timers fire with no
        client getting a word in."""
        self.c.advance(ms)
        COUNTS["faults injected"] += 1
        self.step_done()

    @rule(n=st.integers(1, 6))
    def create_topic(self, n: int) -> None:
        if "payments" not in self.cluster:
            self.cluster.create_topic("payments", n)
        self.step_done()

    @rule()
    def delete_topic(self) -> None:
        if "payments" in self.cluster:
            self.cluster.delete_topic("payments")
        self.step_done()

    @rule(more=st.integers(1, 3), topic=st.sampled_from(["orders", "payments"]))
    def add_partitions(self, more: int, topic: str) -> None:
        if topic in self.cluster:
            self.cluster.increase_partitions(topic, self.cluster.partitions(topic) + more)
        self.step_done()

    @rule()
    def coordinator_failover(self) -> None:
        failover(self.sim)
        for gid, g in self.c.groups.items():
            if str(g.type) == "classic":
                # a classic generation lives in memory until the leader's SyncGroup writes it:
                # a failover mid-rebalance goes back to the last generation written (as in Kafka)
                self.group_epochs[gid] = g.epoch
        COUNTS["failovers survived"] += 1
        self.step_done()

    # -- invariants ----------------------------------------------------------------------------
    @invariant()
    def reload_describes_alike(self) -> None:
        """After every step: a coordinator loaded from the logs describes every group alike."""
        assert_reload_equal(self.c)

    @invariant()
    def epochs_never_go_backwards(self) -> None:
        """KIP-848: the group epoch and each member's epoch only move forward (while the group
        lives; a deleted group starts again from 0)."""
        for gid in list(self.group_epochs):
            if gid not in self.c.groups:
                del self.group_epochs[gid]
                for key in [k for k in self.member_epochs if k[0] == gid]:
                    del self.member_epochs[key]
        for gid, g in self.c.groups.items():
            epoch = g.epoch
            assert epoch >= self.group_epochs.get(gid, epoch), (gid, self.group_epochs[gid], epoch)
            self.group_epochs[gid] = epoch
            for mid, m in getattr(g, "members", {}).items():
                e = getattr(m, "member_epoch", None)
                if e is None or e == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
                    continue  # KIP-848: a static member gone for now is kept at epoch -2 until it returns
                last = self.member_epochs.get((gid, mid), e)
                assert e >= last, f"member {mid} of {gid}: epoch {last} -> {e}"
                self.member_epochs[(gid, mid)] = e


def _modern_checks(g) -> None:
    """KIP-848 epochs: member epoch <= assignment epoch <= group epoch."""
    assert g.assignment_epoch <= g.group_epoch, (g.assignment_epoch, g.group_epoch)
    for m in g.members.values():
        assert m.member_epoch <= g.assignment_epoch, (m.member_id, m.member_epoch, g.assignment_epoch)


# ---------------------------------------------------------------------------------------------
# Classic groups (incl. static members, KIP-345)

class ClassicMachine(GroupMachine):
    CONFIG = {"group.initial.rebalance.delay.ms": 0}

    def make_client(self, name: str) -> object:
        static = name.startswith("S")
        return ClassicConsumer(self.c, ConsumerConfig(self.GROUP, ("orders", "payments"), client_id=name,
                                                      group_instance_id=name if static else None,
                                                      session_timeout_ms=10_000, heartbeat_interval_ms=1_000),
                               name=name)

    @rule(name=st.sampled_from(NAMES))
    def bounce(self, name: str) -> None:
        """A rolling-bounce step (KIP-345's motivating case): the process stops without leaving
        and starts again at once; a static member comes back under its instance id before its
        session ends and replaces its old self."""
        client = self.clients.get(name)
        if client is not None:
            if client.running:
                client.crash()
            client.start()
        self.step_done()

    @invariant()
    def member_ids_are_never_reused(self) -> None:
        """Kafka hands a JoinGroup without a member id a fresh random UUID: a restarted process
        never gets the id of its dead predecessor, not even from a coordinator that took over."""
        owners = self.__dict__.setdefault("id_owner", {})
        for name, k in self.clients.items():
            if k.member_id:
                owner = owners.setdefault(k.member_id, (name, k.incarnation))
                assert owner == (name, k.incarnation), f"{k.member_id} given to {owner} and {(name, k.incarnation)}"

    @invariant()
    def classic_group_is_consistent(self) -> None:
        """A classic group: one member per static instance id; a leader among the members while
        it has any; in Stable every member was assigned in this generation."""
        g = self.c.groups.get(self.GROUP)
        if g is None or str(g.type) != "classic":
            return
        instances = [m.group_instance_id for m in g.members.values() if m.group_instance_id]
        assert len(instances) == len(set(instances)), instances
        for iid in instances:
            assert g.static_members[iid] in g.members
        if g.members and g.state in ("Stable", "CompletingRebalance"):
            assert g.leader_id in g.members, (g.leader_id, list(g.members))


# ---------------------------------------------------------------------------------------------
# KIP-848 consumer groups

class ConsumerMachine(GroupMachine):

    def make_client(self, name: str) -> object:
        return ConsumerGroupConsumer(self.c, self.GROUP, ["orders", "payments"], name=name,
                                     instance_id=name if name.startswith("S") else None)

    @invariant()
    def consumer_assignment_is_safe(self) -> None:
        g = self.c.groups.get(self.GROUP)
        if g is None or str(g.type) != "consumer":
            return
        _modern_checks(g)
        owner: dict = {}
        for mid, m in g.members.items():
            # KIP-848: a partition goes to its new owner only once the old one revoked it
            for tid, ps in list(m.assigned.items()) + list(m.pending_revocation.items()):
                for p in ps:
                    assert (tid, p) not in owner, f"partition {tid}-{p} owned by {owner[(tid, p)]} and {mid}"
                    owner[(tid, p)] = mid
            if m.is_reconciled_to(g.assignment_epoch) and mid in g.target_assignment:
                # reconciled: a member owns exactly what its target gives it
                target = {t: ps for t, ps in g.target_assignment[mid].items() if ps}
                assert {t: ps for t, ps in m.assigned.items() if ps} == target, mid
                assert not any(m.pending_revocation.values()), mid
        targets: dict = {}
        for mid, a in g.target_assignment.items():
            for tid, ps in a.items():
                for p in ps:
                    assert (tid, p) not in targets, f"target gives {tid}-{p} to {targets[(tid, p)]} and {mid}"
                    targets[(tid, p)] = mid


# ---------------------------------------------------------------------------------------------
# KIP-1071 Streams groups

def _topology(epoch: int):
    b = TopologyBuilder("app")
    b.subtopology(sources=["orders"], stores=["counts"])
    b.subtopology(sources=["payments"])
    return b.build(epoch=epoch)


class StreamsMachine(GroupMachine):
    GROUP = "app"
    CONFIG = {"group.streams.initial.rebalance.delay.ms": 0, "group.streams.num.standby.replicas": 1}

    def make_client(self, name: str) -> object:
        static = name.startswith("S")
        return StreamsApplication(self.c, StreamsConfig("app", _topology(0), num_stream_threads=2 if name in ("A", "S1") else 1,
                                                        group_instance_id=name if static else None,
                                                        changelog_end_offset=1_000),
                                  name=name)

    @rule(name=st.sampled_from(NAMES))
    def restart_with_new_topology(self, name: str) -> None:
        """A rolling bounce step: the instance comes back with the next topology epoch."""
        client = self.clients.get(name)
        if client is not None:
            epoch = client.config.topology.epoch
            client.restart(_topology(epoch + 1))
        self.step_done()

    @invariant()
    def streams_assignment_is_safe(self) -> None:
        g = self.c.groups.get(self.GROUP)
        if g is None or str(g.type) != "streams":
            return
        _modern_checks(g)
        active: dict = {}
        by_process: dict = {}
        for mid, m in g.members.items():
            owned = m.owned()
            for task in owned.active_ids():
                # KIP-1071: an active task runs on one member at a time
                assert task not in active, f"active task {task} on {active[task]} and {mid}"
                active[task] = mid
            for task in (*owned.active_ids(), *owned.standby_ids(), *owned.warmup_ids()):
                # KIP-1071: no two copies of one task (active, standby, warm-up) on one process,
                # not even two roles of one member
                by_process.setdefault(m.process_id, Counter())[task] += 1
            if m.state == MemberState.STABLE and m.member_epoch == g.assignment_epoch and mid in g.target_assignment:
                assert m.assigned == g.target_assignment[mid], mid
        for pid, tasks in by_process.items():
            twice = [t for t, n in tasks.items() if n > 1]
            assert not twice, f"process {pid} holds {twice} twice"


# ---------------------------------------------------------------------------------------------
# KIP-932 share groups (membership, share-partitions, ShareFetch/ShareAcknowledge, the share
# coordinator's __share_group_state)

class ShareMachine(GroupMachine):
    CONFIG = {"group.share.record.lock.duration.ms": 15_000, "group.share.delivery.count.limit": 3}

    def __init__(self) -> None:
        super().__init__()
        self.spso: dict = {}
        self.archived: dict = {}
        self.produced = Counter()

    def make_client(self, name: str) -> object:
        # some records are always released (they come back until the delivery count limit
        # archives them), some rejected, the rest accepted
        def handler(record):
            from kgroup.clients import AcknowledgeType
            if record.offset % 3 == 0:
                return AcknowledgeType.RELEASE
            return AcknowledgeType.REJECT if record.offset % 7 == 0 else AcknowledgeType.ACCEPT
        return ShareConsumer(self.c, self.GROUP, ["orders", "payments"], name=name,
                             acknowledgement_mode="explicit" if name == "B" else "implicit",
                             handler=handler if name != "C" else None, max_poll_records=7)

    @initialize()
    def records_to_share(self) -> None:
        for p in range(4):
            self.cluster.produce("orders", p, [f"v{i}" for i in range(25)])

    @rule(topic=st.sampled_from(["orders", "payments"]), partition=st.integers(0, 3), n=st.integers(1, 20))
    def produce(self, topic: str, partition: int, n: int) -> None:
        if topic in self.cluster and partition < self.cluster.partitions(topic):
            self.cluster.produce(topic, partition, [f"v{i}" for i in range(n)])
        self.step_done()

    @invariant()
    def share_partitions_are_sane(self) -> None:
        from kgroup.dumps.replay import describe_share_partitions
        from kgroup.groups.share.partition import leaders
        limit = self.c.config["group.share.delivery.count.limit"]
        for key, sp in leaders(self.c).partitions.items():
            if not sp.loaded:
                continue
            last = self.spso.get(key)
            # KIP-932: the SPSO only moves forward (an admin reset aside)
            assert last is None or sp.spso >= last, (key, last, sp.spso)
            self.spso[key] = sp.spso
            for r in sp.records():
                # KIP-932: a record is delivered at most group.share.delivery.count.limit times
                assert r.delivery_count <= limit, (key, r)
                if (key, r.offset) in self.archived:
                    assert r.state == "Archived", (key, r)   # Archived is final
                if r.state == "Archived":
                    self.archived[(key, r.offset)] = True
        for row in describe_share_partitions(self.c):   # the durable state alike
            for b in row["state_batches"]:
                assert b["delivery_count"] <= limit, (row["topic"], row["partition"], b)

    @invariant()
    def durable_share_state_never_goes_back(self) -> None:
        """KIP-932 on the share coordinator's side, read from every `__share_group_state` record
        written since the last step, in log order (a regression healed within the same step
        still shows): a share-partition's start offset never moves back within a state epoch,
        and a record once written as Archived is never written in another state."""
        log = self.c.share_state_log            # the same log object across failovers
        entries = log.entries()
        seen = self.__dict__.setdefault("durable_seen", 0)
        durable = self.__dict__.setdefault("durable", {})   # key -> [state epoch, start, archived offsets]
        for entry in entries[seen:]:
            record = entry.record
            if record is None or not hasattr(record, "key"):
                continue
            k = record.key
            key = (k.group_id, k.topic_id, k.partition)
            v = record.value
            if v is None:                        # deleted (DeleteShareGroupState): starts over
                durable.pop(key, None)
                continue
            known = durable.get(key)
            state_epoch = getattr(v, "state_epoch", -1)
            if known is None or (state_epoch != -1 and state_epoch != known[0]):
                known = durable[key] = [state_epoch, -1, set()]   # a new state epoch may start anywhere
            if v.start_offset != -1:
                assert v.start_offset >= known[1], f"{key}: start offset {known[1]} -> {v.start_offset}"
                known[1] = v.start_offset
            for b in v.state_batches:
                for offset in range(b.first_offset, b.last_offset + 1):
                    if offset in known[2] and offset >= known[1]:
                        assert b.delivery_state == ARCHIVED, f"{key}: offset {offset} Archived, then {b.delivery_state}"
                    if b.delivery_state == ARCHIVED:
                        known[2].add(offset)
        self.durable_seen = len(entries)


KINDS = {"classic": ClassicMachine, "consumer": ConsumerMachine, "streams": StreamsMachine, "share": ShareMachine}


def _machine(kind: str, profile: str):
    base = KINDS[kind]
    return type(f"{base.__name__}_{profile}", (base,), {"PROFILE": profile})


@pytest.mark.parametrize("profile", ["kip", "kafka"])
@pytest.mark.parametrize("kind", list(KINDS))
def test_invariants_hold_under_random_behaviour(kind: str, profile: str, reliability) -> None:
    COUNTS.use(reliability)
    machine = _machine(kind, profile)
    machine.TestCase.settings = profile_settings()
    machine.TestCase().runTest()
