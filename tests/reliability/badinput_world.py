"""A coordinator in a realistic state for the bad-input suites, and the valid requests that got it there.

One coordinator holds every group type at once: a classic group with a dynamic and a static member,
a KIP-848 consumer group, a KIP-1071 Streams application, a KIP-932 share group whose consumers have
open share sessions and records Acquired, and committed offsets. Every request the simulated clients
sent is captured (the seeds the mutation fuzzer starts from), plus admin-style requests for the APIs
no client sends (describe, list, delete, configs, transactions, the share coordinator's APIs).

Building it runs a simulation; `world()` builds it once and hands out deep copies, so each example
starts from the same state (soft state included: share sessions, Acquired records, pending joins).
"""
from __future__ import annotations

import copy
import functools
from dataclasses import dataclass, field
from typing import Any

from kgroup import Coordinator
from kgroup.cluster import Cluster
from kgroup.clients import (ClassicConsumer, ConsumerConfig, ConsumerGroupConsumer, ShareConsumer, Simulation,
                            StreamsApplication, StreamsConfig)
from kgroup.clients.streams_topology import stateful
from kgroup.protocol import request

CLASSIC, CONSUMER, STREAMS, SHARE = "classic-g", "consumer-g", "app", "share-g"


@dataclass
class World:
    c: Coordinator
    #: api key -> valid requests seen (distinct versions and shapes), in the order sent
    seeds: dict[int, list[Any]] = field(default_factory=dict)
    #: ids that exist in this state: what a mutation swaps in to hit real groups and members
    group_ids: tuple[str, ...] = ()
    member_ids: tuple[str, ...] = ()
    topic_names: tuple[str, ...] = ()
    topic_ids: tuple[Any, ...] = ()


def _capture(c: Coordinator, seeds: dict[int, list[Any]]) -> None:
    """Wrap `c.handle` so every request is kept as a seed (at most a few per API and version)."""
    inner = c.handle

    def handle(req, **kw):
        key, version = int(type(req).__api_key__), int(type(req).__version__)
        kept = seeds.setdefault(key, [])
        if sum(1 for r in kept if type(r).__version__ == version) < 4:
            kept.append(req)
        return inner(req, **kw)

    c.handle = handle  # type: ignore[method-assign]


def _admin_seeds(c: Coordinator) -> list[Any]:
    """Valid requests for the APIs no simulated client sends."""
    foo = c.cluster.topic_id("foo")
    return [
        request("DescribeGroups", 5, groups=[CLASSIC, CONSUMER, "nope"], include_authorized_operations=True),
        request("ListGroups", 5, states_filter=["Stable"], types_filter=["classic", "consumer"]),
        request("OffsetFetch", 7, group_id=CLASSIC, topics=[{"name": "foo", "partition_indexes": [0, 1]}],
                require_stable=True),
        request("OffsetFetch", 9, groups=[{"group_id": CONSUMER, "member_id": None, "member_epoch": -1,
                                           "topics": None}], require_stable=False),
        request("OffsetCommit", 9, group_id="admin-g", generation_id_or_member_epoch=-1, member_id="",
                topics=[{"name": "foo", "partitions": [{"partition_index": 0, "committed_offset": 5,
                                                        "committed_leader_epoch": -1,
                                                        "committed_metadata": ""}]}]),
        request("OffsetDelete", 0, group_id="admin-g", topics=[{"name": "foo", "partitions": [{"partition_index": 0}]}]),
        request("DeleteGroups", 2, groups_names=["admin-g2", "nope"]),
        request("TxnOffsetCommit", 3, transactional_id="tx", group_id="admin-g", producer_id=7, producer_epoch=0,
                generation_id=-1, member_id="", group_instance_id=None,
                topics=[{"name": "foo", "partitions": [{"partition_index": 1, "committed_offset": 3,
                                                        "committed_leader_epoch": -1, "committed_metadata": ""}]}]),
        request("WriteTxnMarkers", 1, markers=[{"producer_id": 7, "producer_epoch": 0, "transaction_result": True,
                                                "topics": [{"name": "__consumer_offsets",
                                                            "partition_indexes": [c.partition_for("admin-g")]}],
                                                "coordinator_epoch": 0}]),
        request("DescribeConfigs", 4, resources=[{"resource_type": 32, "resource_name": CONSUMER,
                                                  "configuration_keys": None}],
                include_synonyms=False, include_documentation=False),
        request("IncrementalAlterConfigs", 1, resources=[{"resource_type": 32, "resource_name": CONSUMER, "configs": [
            {"name": "consumer.session.timeout.ms", "config_operation": 0, "value": "50000"}]}], validate_only=False),
        request("ConsumerGroupDescribe", 1, group_ids=[CONSUMER, CLASSIC], include_authorized_operations=False),
        request("ShareGroupDescribe", 1, group_ids=[SHARE], include_authorized_operations=False),
        request("StreamsGroupDescribe", 0, group_ids=[STREAMS], include_authorized_operations=False),
        request("StreamsGroupDescribe", 1, group_ids=[STREAMS, "nope"], include_authorized_operations=False,
                include_topology_description=True),
        request("StreamsGroupTopologyDescriptionUpdate", 0, group_id=STREAMS, member_id="m", topology_epoch=0,
                topology_description={"subtopologies": [{"subtopology_id": "0", "nodes": [
                    {"name": "S", "node_type": 1, "source_topics": ["orders"], "sink_topic": None, "stores": [],
                     "successors": []}]}], "global_stores": []}),
        request("DescribeShareGroupOffsets", 1, groups=[{"group_id": SHARE, "topics": None}]),
        request("AlterShareGroupOffsets", 0, group_id="share-empty", topics=[
            {"topic_name": "foo", "partitions": [{"partition_index": 0, "start_offset": 0}]}]),
        request("DeleteShareGroupOffsets", 0, group_id="share-empty", topics=[{"topic_name": "foo"}]),
        request("ReadShareGroupStateSummary", 1, group_id=SHARE, topics=[
            {"topic_id": foo, "partitions": [{"partition": 0, "leader_epoch": 0}]}]),
        request("ReadShareGroupState", 0, group_id=SHARE, topics=[
            {"topic_id": foo, "partitions": [{"partition": 0, "leader_epoch": 0}]}]),
        request("InitializeShareGroupState", 0, group_id="share-empty", topics=[
            {"topic_id": foo, "partitions": [{"partition": 1, "state_epoch": 1, "start_offset": 0}]}]),
        request("WriteShareGroupState", 1, group_id=SHARE, topics=[
            {"topic_id": foo, "partitions": [{"partition": 1, "state_epoch": 0, "leader_epoch": 0,
                                              "start_offset": 0, "delivery_complete_count": 0,
                                              "state_batches": [{"first_offset": 0, "last_offset": 1,
                                                                 "delivery_state": 2, "delivery_count": 1}]}]}]),
        request("DeleteShareGroupState", 0, group_id="share-empty", topics=[
            {"topic_id": foo, "partitions": [{"partition": 0}]}]),
    ]


@functools.cache
def _built() -> World:
    c = Coordinator(cluster=Cluster({"foo": 3, "orders": 2}, seed=1), seed=7)
    seeds: dict[int, list[Any]] = {}
    _capture(c, seeds)
    sim = Simulation(c)
    sim.add(ClassicConsumer(c, ConsumerConfig(CLASSIC, ("foo",), client_id="dyn")))
    sim.add(ClassicConsumer(c, ConsumerConfig(CLASSIC, ("foo",), client_id="stat", group_instance_id="i-1")))
    sim.add(ConsumerGroupConsumer(c, CONSUMER, ["foo"], name="k1"))
    sim.add(ConsumerGroupConsumer(c, CONSUMER, ["foo", "orders"], name="k2", instance_id="i-2"))
    sim.add(StreamsApplication(c, StreamsConfig(STREAMS, stateful(STREAMS, "orders"), num_stream_threads=2),
                               name="A"))
    shares = [ShareConsumer(c, SHARE, ["foo"], name=n, acknowledgement_mode="explicit") for n in ("S1", "S2")]
    for s in shares:
        sim.add(s)
        s.start()
    leavers = [ClassicConsumer(c, ConsumerConfig(CLASSIC, ("foo",), client_id="leaver")),
               ConsumerGroupConsumer(c, CONSUMER, ["foo"], name="k3")]
    for k in leavers:
        sim.add(k)
    sim.run(10_000)
    for k in leavers:  # LeaveGroup and a leaving heartbeat (member epoch -1) among the seeds
        k.close()
    sim.run(20_000)
    for p in range(3):
        c.cluster.produce("foo", p, [b"r%d" % i for i in range(5)])
    for s in shares:
        got = s.poll()  # records Acquired by open share sessions
        if got:  # one acknowledged explicitly (a ShareAcknowledge seed), the rest left Acquired
            s.acknowledge(got[0])
            s.commit_sync()
    sim.run(2_000)
    for req in _admin_seeds(c):
        c.handle(req)
    members = []
    for g in c.groups.values():
        members += list(getattr(g, "members", {}) or {})
    return World(c=c, seeds=seeds, group_ids=tuple(c.groups), member_ids=tuple(members),
                 topic_names=("foo", "orders"),
                 topic_ids=(c.cluster.topic_id("foo"), c.cluster.topic_id("orders")))


def world() -> World:
    """A fresh deep copy of the built world (its `c.handle` is the plain method again).

    Handle requests on it, but do not `advance` its clock: timers are closures over the
    original coordinator's objects, which a deep copy shares (functions are not copied)."""
    w = _built()
    c = copy.deepcopy(w.c)
    c.__dict__.pop("handle", None)
    return World(c=c, seeds=w.seeds, group_ids=w.group_ids, member_ids=w.member_ids, topic_names=w.topic_names,
                 topic_ids=w.topic_ids)


def profile_settings():
    """The reliability suites' hypothesis settings (tests/reliability/conftest.py). Loaded by
    path: `from conftest import` finds whichever conftest was imported first."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("reliability_conftest", Path(__file__).with_name("conftest.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)  # registers the same-named profiles again: harmless
    return module.profile_settings()
