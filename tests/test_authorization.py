"""Authorization as Kafka checks it: the ACL model (StandardAuthorizer's rules) and, per API,
the checks KafkaApis makes before the group coordinator is asked (its ACL table and
AuthorizerIntegrationTest are the oracle). Off by default; `Coordinator(authorizer=True)`
checks the cluster's ACLs."""
from __future__ import annotations

import uuid

import pytest

from kgroup import Cluster, Coordinator
from kgroup.authorizer import (AUTHORIZED_OPERATIONS_OMITTED, BROKER_PRINCIPAL, AclOperation as Op, Authorizer,
                               operations_of)
from kgroup.errors import ErrorCode as E
from kgroup.groups.streams import Subtopology, TopicInfo, Topology
from kgroup.protocol import request, to_data

ALICE, BOB = "User:alice", "User:bob"
GAF, TAF, CAF = E.group_authorization_failed, E.topic_authorization_failed, E.cluster_authorization_failed


def coord(profile: str = "kafka", **topics: int) -> Coordinator:
    return Coordinator(cluster=Cluster(topics or {"orders": 2, "payments": 1}, seed=1), profile=profile,
                       authorizer=True)


def acls(c: Coordinator) -> Authorizer:
    return c.cluster.authorizer


def send(c: Coordinator, api: str, version: int, principal: str = ALICE, **fields):
    return c.handle(request(api, version, **fields), principal=principal)


def commit(c, group, offsets, principal=ALICE, version=9):
    topics: dict = {}
    for (t, p), o in offsets.items():
        topics.setdefault(t, []).append({"partition_index": p, "committed_offset": o, "committed_leader_epoch": -1,
                                         "committed_metadata": ""})
    name = (lambda t: {"topic_id": c.cluster.topic_id(t)}) if version >= 10 else (lambda t: {"name": t})
    return send(c, "OffsetCommit", version, principal, group_id=group, generation_id_or_member_epoch=-1,
                member_id="", topics=[{**name(t), "partitions": ps} for t, ps in topics.items()])


def codes(resp, field="topics") -> dict:
    return {(t.name, p.partition_index): p.error_code for t in getattr(resp, field) for p in t.partitions}


# -- the ACL model (StandardAuthorizer / AclAuthorizer rules) -----------------------------------

def test_no_acl_means_denied_unless_allow_everyone_if_no_acl_found():
    a = Authorizer()
    assert not a.authorize(ALICE, "READ", "GROUP", "g")
    assert Authorizer(allow_everyone_if_no_acl_found=True).authorize(ALICE, "READ", "GROUP", "g")


def test_deny_beats_allow():
    a = Authorizer()
    a.allow(ALICE, "GROUP", "g", "READ")
    a.allow("User:*", "GROUP", "*", "ALL")
    assert a.authorize(ALICE, "READ", "GROUP", "g")
    a.deny(ALICE, "GROUP", "g", "READ")
    assert not a.authorize(ALICE, "READ", "GROUP", "g")
    assert a.authorize(BOB, "READ", "GROUP", "g")  # the DENY names alice only


def test_prefixed_and_wildcard_patterns():
    a = Authorizer()
    a.allow(ALICE, "TOPIC", "orders-", "READ", pattern="PREFIXED")
    a.allow(BOB, "TOPIC", "*", "READ")
    assert a.authorize(ALICE, "READ", "TOPIC", "orders-eu")
    assert not a.authorize(ALICE, "READ", "TOPIC", "order")
    assert a.authorize(BOB, "READ", "TOPIC", "anything")
    a.deny("User:*", "TOPIC", "orders-secret", "ALL", pattern="PREFIXED")
    assert not a.authorize(ALICE, "READ", "TOPIC", "orders-secret-1")


def test_implied_operations_allow_only():
    a = Authorizer()
    a.allow(ALICE, "GROUP", "g", "READ")
    a.allow(ALICE, "GROUP", "g", "ALTER_CONFIGS")
    assert a.authorize(ALICE, "DESCRIBE", "GROUP", "g")  # READ implies DESCRIBE
    assert a.authorize(ALICE, "DESCRIBE_CONFIGS", "GROUP", "g")  # ALTER_CONFIGS implies DESCRIBE_CONFIGS
    assert not a.authorize(ALICE, "DELETE", "GROUP", "g")
    a.deny(ALICE, "GROUP", "g", "DESCRIBE")  # a DENY implies nothing: READ stays allowed
    assert a.authorize(ALICE, "READ", "GROUP", "g") and not a.authorize(ALICE, "DESCRIBE", "GROUP", "g")
    a.allow(BOB, "GROUP", "g", "ALL")
    assert all(a.authorize(BOB, op, "GROUP", "g") for op in ("READ", "DELETE", "ALTER_CONFIGS"))


def test_hosts_and_super_users():
    a = Authorizer()
    a.allow(ALICE, "GROUP", "g", "READ", host="10.0.0.1")
    assert a.authorize(ALICE, "READ", "GROUP", "g", "10.0.0.1")
    assert not a.authorize(ALICE, "READ", "GROUP", "g", "10.0.0.2")
    assert a.authorize(BROKER_PRINCIPAL, "CLUSTER_ACTION", "CLUSTER", "kafka-cluster")


def test_authorized_operations_bitfield():
    a = Authorizer()
    a.allow(ALICE, "GROUP", "g", "READ")
    bits = a.authorized_operations(ALICE, "GROUP", "g")
    assert bits == (1 << Op.READ) | (1 << Op.DESCRIBE)
    assert operations_of(bits) == {Op.READ, Op.DESCRIBE}
    assert operations_of(AUTHORIZED_OPERATIONS_OMITTED) == set()


# -- on/off -------------------------------------------------------------------------------------

def test_off_by_default_everything_is_allowed():
    c = Coordinator(cluster=Cluster({"orders": 1}))
    c.cluster.authorizer.deny("User:*", "GROUP", "*", "ALL")
    assert c.authorizer is None
    assert codes(commit(c, "g", {("orders", 0): 5})) == {("orders", 0): E.none}


def test_without_an_authorizer_describes_answer_every_group_operation_when_asked():
    # AuthHelper.authorizedOperations with no authorizer: every supported operation
    c = Coordinator(cluster=Cluster({"orders": 1}))
    r = c.handle(request("DescribeGroups", 5, groups=["g"], include_authorized_operations=True))
    assert operations_of(r.groups[0].authorized_operations) == {Op.READ, Op.DESCRIBE, Op.DELETE,
                                                                Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS}
    r = c.handle(request("DescribeGroups", 5, groups=["g"], include_authorized_operations=False))
    assert r.groups[0].authorized_operations == AUTHORIZED_OPERATIONS_OMITTED


def test_a_coordinator_may_bring_its_own_authorizer():
    own = Authorizer()
    own.allow(ALICE, "GROUP", "g", "READ")
    own.allow(ALICE, "TOPIC", "orders", "READ")
    c = Coordinator(cluster=Cluster({"orders": 1}), authorizer=own)
    assert codes(commit(c, "g", {("orders", 0): 5})) == {("orders", 0): E.none}
    assert codes(commit(c, "g", {("orders", 0): 5}, principal=BOB)) == {("orders", 0): GAF}


# -- classic membership: READ on the group --------------------------------------------------------

def _join(c, principal=ALICE, member_id=""):
    return send(c, "JoinGroup", 9, principal, group_id="g", session_timeout=10_000, rebalance_timeout=10_000,
                member_id=member_id, group_instance_id=None, protocol_type="consumer",
                protocols=[{"name": "range", "metadata": b""}])


def test_join_group_needs_read_on_the_group_and_writes_nothing_when_denied():
    c = coord()
    r = _join(c)
    assert r.done and r.response.error_code == GAF and r.response.generation_id == -1
    assert c.position == 0 and "g" not in c.groups
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    assert _join(c).response.error_code == E.member_id_required


@pytest.mark.parametrize("api,fields", [
    ("SyncGroup", dict(generation_id=1, member_id="m", group_instance_id=None, protocol_type="consumer",
                       protocol_name="range", assignments=[])),
    ("Heartbeat", dict(generation_id=1, member_id="m", group_instance_id=None)),
    ("LeaveGroup", dict(members=[{"member_id": "m", "group_instance_id": None}])),
])
def test_sync_heartbeat_leave_need_read_on_the_group(api, fields):
    c = coord()
    acls(c).allow(ALICE, "GROUP", "g", "DESCRIBE")  # DESCRIBE does not imply READ
    r = send(c, api, 5 if api != "Heartbeat" else 4, group_id="g", **fields)
    r = r.response if hasattr(r, "done") else r
    assert r.error_code == GAF and c.position == 0
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    r = send(c, api, 5 if api != "Heartbeat" else 4, group_id="g", **fields)
    r = r.response if hasattr(r, "done") else r
    assert r.error_code != GAF


# -- offsets --------------------------------------------------------------------------------------

def test_offset_commit_group_denied_every_partition_gets_group_authorization_failed():
    c = coord()
    acls(c).allow(ALICE, "TOPIC", "*", "READ")
    assert codes(commit(c, "g", {("orders", 0): 1, ("payments", 0): 2})) == {("orders", 0): GAF,
                                                                            ("payments", 0): GAF}
    assert c.position == 0


def test_offset_commit_needs_read_not_describe_on_the_group():
    c = coord()
    acls(c).allow(ALICE, "GROUP", "g", "DESCRIBE")
    acls(c).allow(ALICE, "TOPIC", "*", "READ")
    assert codes(commit(c, "g", {("orders", 0): 1})) == {("orders", 0): GAF} and c.position == 0


@pytest.mark.parametrize("version", [9, 10])
def test_offset_commit_topic_denied_per_partition_the_rest_is_committed(version):
    # KafkaApis.handleOffsetCommitRequest: unauthorized topics get TOPIC_AUTHORIZATION_FAILED
    c = coord()
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    acls(c).allow(ALICE, "TOPIC", "ord", "READ", pattern="PREFIXED")
    r = commit(c, "g", {("orders", 0): 1, ("orders", 1): 2, ("payments", 0): 3}, version=version)
    got = {(t.topic_id if version >= 10 else t.name, p.partition_index): p.error_code
           for t in r.topics for p in t.partitions}
    key = (lambda t: c.cluster.topic_id(t)) if version >= 10 else (lambda t: t)
    assert got == {(key("orders"), 0): E.none, (key("orders"), 1): E.none, (key("payments"), 0): TAF}
    assert sorted((row["topic"], row["partition"]) for row in c.offsets_table()) == [("orders", 0), ("orders", 1)]


def test_txn_offset_commit_needs_write_on_the_transactional_id_first():
    c = coord()
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    acls(c).allow(ALICE, "TOPIC", "orders", "READ")
    fields = dict(transactional_id="tx", group_id="g", producer_id=7, producer_epoch=0, generation_id=-1,
                  member_id="", group_instance_id=None,
                  topics=[{"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 4,
                                                             "committed_leader_epoch": -1,
                                                             "committed_metadata": ""}]}])
    r = send(c, "TxnOffsetCommit", 3, **fields)
    assert codes(r) == {("orders", 0): E.transactional_id_authorization_failed} and c.position == 0
    acls(c).allow(ALICE, "TRANSACTIONAL_ID", "tx", "WRITE")
    assert codes(send(c, "TxnOffsetCommit", 3, **fields)) == {("orders", 0): E.none}


def _committed(c):
    Coordinator.handle(c, request("OffsetCommit", 9, group_id="g", generation_id_or_member_epoch=-1, member_id="",
                                  topics=[{"name": t, "partitions": [{"partition_index": 0, "committed_offset": 10,
                                                                      "committed_leader_epoch": -1,
                                                                      "committed_metadata": ""}]}
                                          for t in ("orders", "payments")]),
                       principal=BROKER_PRINCIPAL)


def test_offset_fetch_kip709_per_group_errors_and_per_topic_errors():
    # KafkaApis.handleOffsetFetchRequest: DESCRIBE on each group, DESCRIBE on each topic
    c = coord()
    _committed(c)
    acls(c).allow(ALICE, "GROUP", "g", "DESCRIBE")
    acls(c).allow(ALICE, "TOPIC", "orders", "DESCRIBE")
    r = send(c, "OffsetFetch", 9, groups=[
        {"group_id": "g", "member_id": None, "member_epoch": -1,
         "topics": [{"name": "orders", "partition_indexes": [0]}, {"name": "payments", "partition_indexes": [0]}]},
        {"group_id": "other", "member_id": None, "member_epoch": -1, "topics": None}], require_stable=False)
    g, other = r.groups
    assert other.group_id == "other" and other.error_code == GAF
    assert {(t.name, p.partition_index): (p.committed_offset, p.error_code) for t in g.topics for p in t.partitions} \
        == {("orders", 0): (10, E.none), ("payments", 0): (-1, TAF)}
    # all topics: the ones the caller may not describe are left out
    r = send(c, "OffsetFetch", 9, groups=[{"group_id": "g", "member_id": None, "member_epoch": -1, "topics": None}],
             require_stable=False)
    assert [t.name for t in r.groups[0].topics] == ["orders"]


def test_offset_fetch_single_group_versions():
    c = coord()
    _committed(c)
    assert send(c, "OffsetFetch", 7, group_id="g", topics=None, require_stable=False).error_code == GAF
    r = send(c, "OffsetFetch", 1, group_id="g", topics=[{"name": "orders", "partition_indexes": [0]}])
    assert [p.error_code for t in r.topics for p in t.partitions] == [GAF]  # v0-1: on the partitions


def test_offset_fetch_error_topics_come_after_the_coordinators_answer():
    # KafkaApis.fetchOffsetsForGroup: UNKNOWN_TOPIC_ID (v10+) and TOPIC_AUTHORIZATION_FAILED
    # topics, in request order, are added after the topics the coordinator answered
    c = coord()
    _committed(c)
    acls(c).allow(ALICE, "GROUP", "g", "DESCRIBE")
    acls(c).allow(ALICE, "TOPIC", "orders", "DESCRIBE")
    unknown = uuid.UUID(int=99)
    asked = [{"topic_id": c.cluster.topic_id("payments"), "partition_indexes": [0]},
             {"topic_id": unknown, "partition_indexes": [0]},
             {"topic_id": c.cluster.topic_id("orders"), "partition_indexes": [0]}]
    g = send(c, "OffsetFetch", 10, groups=[{"group_id": "g", "member_id": None, "member_epoch": -1,
                                            "topics": asked}], require_stable=False).groups[0]
    assert [(t.topic_id, [(p.committed_offset, p.error_code) for p in t.partitions]) for t in g.topics] == [
        (c.cluster.topic_id("orders"), [(10, E.none)]), (c.cluster.topic_id("payments"), [(-1, TAF)]),
        (unknown, [(-1, E.unknown_topic_id)])]
    # without an authorizer KafkaApis still answers the unknown topic id after the coordinator's topics
    plain = Coordinator(cluster=c.cluster)
    g = plain.handle(request("OffsetFetch", 10, groups=[{"group_id": "g", "member_id": None, "member_epoch": -1,
                                                         "topics": asked}], require_stable=False)).groups[0]
    assert [t.topic_id for t in g.topics] == [c.cluster.topic_id("payments"), c.cluster.topic_id("orders"), unknown]


def test_offset_fetch_asks_the_coordinator_even_when_every_topic_is_denied():
    # KafkaApis.fetchOffsetsForGroup calls the coordinator with the authorized topics, even none:
    # its group error (here NOT_COORDINATOR) is the answer from v2 and the TAF topics are dropped;
    # v0-1 carry the group error on the partitions the coordinator saw, then the TAF topics
    c = Coordinator(cluster=Cluster({"orders": 2, "payments": 1}, seed=1), profile="kafka", authorizer=True,
                    hosted_partitions=[])
    acls(c).allow(ALICE, "GROUP", "g", "DESCRIBE")
    acls(c).allow(ALICE, "TOPIC", "orders", "DESCRIBE")
    r = send(c, "OffsetFetch", 7, group_id="g", topics=[{"name": "payments", "partition_indexes": [0]}],
             require_stable=False)
    assert r.error_code == E.not_coordinator and list(r.topics) == []
    r = send(c, "OffsetFetch", 1, group_id="g", topics=[{"name": "payments", "partition_indexes": [0]},
                                                        {"name": "orders", "partition_indexes": [0]}])
    assert [(t.name, p.error_code) for t in r.topics for p in t.partitions] == [
        ("orders", E.not_coordinator), ("payments", TAF)]


def test_offset_delete_needs_delete_on_the_group_and_read_on_topics():
    c = coord()
    _committed(c)
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    topics = [{"name": "orders", "partitions": [{"partition_index": 0}]},
              {"name": "payments", "partitions": [{"partition_index": 0}]}]
    before = c.position
    assert send(c, "OffsetDelete", 0, group_id="g", topics=topics).error_code == GAF and c.position == before
    acls(c).allow(ALICE, "GROUP", "g", "DELETE")
    acls(c).allow(ALICE, "TOPIC", "orders", "READ")
    r = send(c, "OffsetDelete", 0, group_id="g", topics=topics)
    assert r.error_code == E.none and codes(r) == {("orders", 0): E.none, ("payments", 0): TAF}
    assert [(row["topic"]) for row in c.offsets_table()] == ["payments"]


# -- describing, listing, deleting groups ------------------------------------------------------------

def test_describe_groups_per_group_error_and_authorized_operations():
    c = coord()
    _committed(c)
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    r = send(c, "DescribeGroups", 5, groups=["g", "h"], include_authorized_operations=True)
    g, h = r.groups
    assert (g.group_id, g.error_code) == ("g", E.none) and (h.group_id, h.error_code) == ("h", GAF)
    assert operations_of(g.authorized_operations) == {Op.READ, Op.DESCRIBE}
    r = send(c, "DescribeGroups", 5, groups=["g"], include_authorized_operations=False)
    assert r.groups[0].authorized_operations == AUTHORIZED_OPERATIONS_OMITTED


def test_list_groups_filtered_without_cluster_describe():
    c = coord()
    for gid in ("a1", "a2", "b1"):
        c.handle(request("OffsetCommit", 9, group_id=gid, generation_id_or_member_epoch=-1, member_id="",
                         topics=[{"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                                    "committed_leader_epoch": -1,
                                                                    "committed_metadata": ""}]}]),
                 principal=BROKER_PRINCIPAL)
    acls(c).allow(ALICE, "GROUP", "a", "DESCRIBE", pattern="PREFIXED")
    assert [g.group_id for g in send(c, "ListGroups", 5, states_filter=[], types_filter=[]).groups] == ["a1", "a2"]
    acls(c).allow(ALICE, "CLUSTER", "", "DESCRIBE")
    assert len(send(c, "ListGroups", 5, states_filter=[], types_filter=[]).groups) == 3


def test_delete_groups_per_group():
    c = coord()
    _committed(c)
    r = send(c, "DeleteGroups", 2, groups_names=["g"])
    assert [(x.group_id, x.error_code) for x in r.results] == [("g", GAF)] and len(c.offsets_table()) == 2
    acls(c).allow(ALICE, "GROUP", "g", "DELETE")
    assert send(c, "DeleteGroups", 2, groups_names=["g", "zz"]).results[1].error_code == GAF
    assert c.offsets_table() == []


# -- KIP-848 consumer groups ------------------------------------------------------------------------

def _cg_join(c, topics, principal=ALICE):
    return send(c, "ConsumerGroupHeartbeat", 1, principal, group_id="g", member_id=str(uuid.UUID(int=1)),
                member_epoch=0, instance_id=None, rack_id=None, rebalance_timeout=30_000,
                subscribed_topic_names=topics, subscribed_topic_regex=None, server_assignor=None, topic_partitions=[])


def test_consumer_group_heartbeat_needs_read_on_group_and_describe_on_subscribed_topics():
    # KafkaApis.handleConsumerGroupHeartbeat
    c = coord()
    assert _cg_join(c, ["orders"]).error_code == GAF and c.position == 0
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    r = _cg_join(c, ["orders", "payments"])
    assert r.error_code == TAF and c.position == 0
    acls(c).allow(ALICE, "TOPIC", "*", "DESCRIBE")
    assert _cg_join(c, ["orders", "payments"]).error_code == E.none and c.position > 0


def test_consumer_group_regex_matches_only_describable_topics():
    # Kafka 4.1 GroupMetadataManager.refreshRegularExpressions filters by topic DESCRIBE (KAFKA-18813)
    c = coord()
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    acls(c).allow(ALICE, "TOPIC", "orders", "DESCRIBE")
    r = send(c, "ConsumerGroupHeartbeat", 1, group_id="g", member_id=str(uuid.UUID(int=1)), member_epoch=0,
             instance_id=None, rack_id=None, rebalance_timeout=30_000, subscribed_topic_names=None,
             subscribed_topic_regex=".*", server_assignor=None, topic_partitions=[])
    assert r.error_code == E.none
    assert {r: v.topics for r, v in c.groups["g"].resolved_regexes.items()} == {".*": frozenset({"orders"})}


def _cg_regex(c, regex, principal, member=1, group="g"):
    return send(c, "ConsumerGroupHeartbeat", 1, principal, group_id=group, member_id=str(uuid.UUID(int=member)),
                member_epoch=0, instance_id=None, rack_id=None, rebalance_timeout=30_000,
                subscribed_topic_names=None, subscribed_topic_regex=regex, server_assignor=None, topic_partitions=[])


def test_regex_is_resolved_with_the_rights_of_the_member_whose_heartbeat_refreshes_it():
    # KAFKA-18813 (apache/kafka#18989): KafkaApis does not check a regex; the coordinator filters
    # what it matches by DESCRIBE "based on the acl of the consumer that triggered the refresh",
    # for every regex of the group (TopicRegexResolver.filterTopicDescribeAuthorizedTopics).
    # A member with fewer rights may then get topics it may not describe (noted in #19488).
    c = coord()
    for who, topic in ((ALICE, "orders"), (BOB, "payments")):
        acls(c).allow(who, "GROUP", "g", "READ")
        acls(c).allow(who, "TOPIC", topic, "DESCRIBE")
    assert _cg_regex(c, "orders|payments", ALICE).error_code == E.none
    resolved = lambda: {r: v.topics for r, v in c.groups["g"].resolved_regexes.items()}  # noqa: E731
    assert resolved() == {"orders|payments": frozenset({"orders"})}
    c.advance(11_000)  # past REGEX_BATCH_REFRESH_MIN_INTERVAL_MS: bob's new regex refreshes them all
    assert _cg_regex(c, "pay.*", BOB, member=2).error_code == E.none
    assert resolved() == {"orders|payments": frozenset({"payments"}), "pay.*": frozenset({"payments"})}


def test_regex_matching_no_describable_topic_resolves_to_nothing_without_error():
    # GroupMetadataManagerTest (KAFKA-18813): denied topics are dropped from the resolution; the
    # heartbeat itself succeeds and the member is assigned nothing
    c = coord()
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    r = _cg_regex(c, ".*", ALICE)
    assert r.error_code == E.none and list(r.assignment.topic_partitions) == []
    assert {k: v.topics for k, v in c.groups["g"].resolved_regexes.items()} == {".*": frozenset()}
    member = c.groups["g"].members[str(uuid.UUID(int=1))]
    assert not member.assigned_partitions


def test_consumer_group_describe_authorized_operations_and_hidden_topics():
    c = coord()
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    acls(c).allow(ALICE, "TOPIC", "*", "DESCRIBE")
    _cg_join(c, ["orders", "payments"])
    r = send(c, "ConsumerGroupDescribe", 1, group_ids=["g", "x"], include_authorized_operations=True)
    g, x = r.groups
    assert g.error_code == E.none and operations_of(g.authorized_operations) == {Op.READ, Op.DESCRIBE}
    assert x.error_code == GAF
    # a topic the caller may not describe hides the whole group (KafkaApis.handleConsumerGroupDescribe)
    acls(c).allow(BOB, "GROUP", "g", "DESCRIBE")
    acls(c).allow(BOB, "TOPIC", "orders", "DESCRIBE")
    g = send(c, "ConsumerGroupDescribe", 1, BOB, group_ids=["g"], include_authorized_operations=True).groups[0]
    assert g.error_code == TAF and list(g.members) == []


# -- KIP-1071 Streams groups -------------------------------------------------------------------------

STATEFUL = Topology(0, (Subtopology("0", source_topics=("orders",),
                                    state_changelog_topics=(TopicInfo("app-store-changelog"),)),))


def _shb(c, principal=ALICE, topology=STATEFUL):
    return send(c, "StreamsGroupHeartbeat", 0, principal, group_id="app", member_id="m1", member_epoch=0,
                endpoint_information_epoch=0, instance_id=None, rack_id=None, rebalance_timeout=30_000,
                topology=topology.to_request_data(), active_tasks=[], standby_tasks=[], warmup_tasks=[],
                process_id="p1", user_endpoint=None, client_tags=[], task_offsets=None, task_end_offsets=None,
                shutdown_application=False)


@pytest.mark.parametrize("profile,op", [("kafka", "DESCRIBE"), ("kip", "DESCRIBE_CONFIGS")])
def test_streams_heartbeat_topic_acl_by_profile(profile, op):
    # kip: KIP-1071 "Required ACL" names DESCRIBE_CONFIGS; kafka: KafkaApis checks DESCRIBE
    c = coord(profile)
    acls(c).allow(ALICE, "GROUP", "app", "READ")
    acls(c).allow(ALICE, "TOPIC", "*", "READ" if op == "DESCRIBE_CONFIGS" else "CREATE")
    r = _shb(c)
    assert r.error_code == TAF and op in r.error_message and c.position == 0
    acls(c).allow(ALICE, "TOPIC", "*", op)
    assert _shb(c).error_code == E.none


def test_streams_internal_topics_need_create_else_reported_missing_and_not_created():
    c = coord()
    acls(c).allow(ALICE, "GROUP", "app", "READ")
    acls(c).allow(ALICE, "TOPIC", "*", "DESCRIBE")
    r = _shb(c)
    detail = {s.status_code: s.status_detail for s in r.status}
    assert "Unauthorized to CREATE on topics app-store-changelog." in detail[3]  # MISSING_INTERNAL_TOPICS
    c.advance(5_000)  # no creation was attempted (it would be done by now)
    assert "app-store-changelog" not in c.cluster
    acls(c).allow(ALICE, "TOPIC", "app-", "CREATE", pattern="PREFIXED")
    send(c, "StreamsGroupHeartbeat", 0, group_id="app", member_id="m1", member_epoch=r.member_epoch,
         endpoint_information_epoch=0, instance_id=None, rack_id=None, rebalance_timeout=-1, topology=None,
         active_tasks=None, standby_tasks=None, warmup_tasks=None, process_id=None, user_endpoint=None,
         client_tags=None, task_offsets=None, task_end_offsets=None, shutdown_application=False)
    c.advance(1_000)
    assert "app-store-changelog" in c.cluster


def test_streams_internal_topics_none_created_while_one_lacks_create():
    # KafkaApis.handleStreamsGroupHeartbeat: CREATE on the cluster, else on each topic to create;
    # if any is denied none is created and "; Unauthorized to CREATE on topics ..." is appended to
    # the MISSING_INTERNAL_TOPICS detail (KIP-1071: "no such attempt will be made")
    two = Topology(0, (Subtopology("0", source_topics=("orders",), state_changelog_topics=(
        TopicInfo("app-a-changelog"), TopicInfo("app-b-changelog"))),))
    c = coord()
    acls(c).allow(ALICE, "GROUP", "app", "READ")
    acls(c).allow(ALICE, "TOPIC", "*", "DESCRIBE")
    acls(c).allow(ALICE, "TOPIC", "app-a", "CREATE", pattern="PREFIXED")
    r = _shb(c, topology=two)
    assert {s.status_code: s.status_detail for s in r.status}[3] == (  # Kafka's words (profile kafka)
        "Internal topics are missing: app-a-changelog, app-b-changelog; "
        "Unauthorized to CREATE on topics app-b-changelog.")
    c.advance(5_000)
    assert "app-a-changelog" not in c.cluster and "app-b-changelog" not in c.cluster
    acls(c).allow(ALICE, "CLUSTER", "kafka-cluster", "CREATE")
    r = _shb(c, topology=two)
    assert "Unauthorized" not in {s.status_code: s.status_detail for s in r.status}[3]
    c.advance(1_000)
    assert "app-a-changelog" in c.cluster and "app-b-changelog" in c.cluster


@pytest.mark.parametrize("profile,op", [("kafka", "DESCRIBE"), ("kip", "READ")])
def test_streams_group_describe_group_acl_by_profile(profile, op):
    # kip: KIP-1071 StreamsGroupDescribe "Required ACL: Read Group"; kafka: DESCRIBE (KafkaApis)
    c = coord(profile)
    acls(c).allow(ALICE, "GROUP", "app", "DESCRIBE" if op == "READ" else "ALTER_CONFIGS")
    d = lambda: send(c, "StreamsGroupDescribe", 0, group_ids=["app"],  # noqa: E731
                     include_authorized_operations=False).groups[0].error_code
    assert d() == GAF
    acls(c).allow(ALICE, "GROUP", "app", op)
    assert d() != GAF


def test_streams_group_describe_authorized_operations():
    c = coord()
    acls(c).allow(ALICE, "GROUP", "app", "ALL")
    acls(c).allow(ALICE, "TOPIC", "*", "ALL")
    _shb(c)
    g = send(c, "StreamsGroupDescribe", 0, group_ids=["app"], include_authorized_operations=True).groups[0]
    assert operations_of(g.authorized_operations) == {Op.READ, Op.DESCRIBE, Op.DELETE, Op.DESCRIBE_CONFIGS,
                                                      Op.ALTER_CONFIGS}
    acls(c).allow(BOB, "GROUP", "app", "DESCRIBE")
    assert send(c, "StreamsGroupDescribe", 0, BOB, group_ids=["app"],
                include_authorized_operations=False).groups[0].error_code == TAF


# -- KIP-932 share groups ---------------------------------------------------------------------------

def _share_coord():
    from kgroup.groups.share.partition import leaders
    from kgroup.groups.share.persister import CoordinatorPersister
    c = coord("kip")
    leaders(c, CoordinatorPersister(c))
    c.cluster.group_configs["g"] = {"share.auto.offset.reset": "earliest"}
    for t in ("orders", "payments"):
        c.cluster.produce(t, 0, [b"a", b"b"])
    return c


def _share_fetch(c, principal=ALICE, api="ShareFetch", epoch=0):
    topics = [{"topic_id": c.cluster.topic_id(t), "partitions": [{"partition_index": 0, "acknowledgement_batches": []}]}
              for t in ("orders", "payments")]
    extra = dict(max_wait=0, min_bytes=1, max_records=100, batch_size=100, forgotten_topics_data=[]) \
        if api == "ShareFetch" else {}
    return send(c, api, 1, principal, group_id="g", member_id="m1", share_session_epoch=epoch, topics=topics, **extra)


def test_share_group_heartbeat_and_describe():
    c = _share_coord()
    hb = dict(group_id="g", member_id=str(uuid.UUID(int=5)), member_epoch=0, rack_id=None,
              subscribed_topic_names=["orders"])
    assert send(c, "ShareGroupHeartbeat", 1, **hb).error_code == GAF
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    assert send(c, "ShareGroupHeartbeat", 1, **hb).error_code == TAF
    acls(c).allow(ALICE, "TOPIC", "orders", "DESCRIBE")
    assert send(c, "ShareGroupHeartbeat", 1, **hb).error_code == E.none
    g = send(c, "ShareGroupDescribe", 1, group_ids=["g"], include_authorized_operations=True).groups[0]
    assert g.error_code == E.none and operations_of(g.authorized_operations) == {Op.READ, Op.DESCRIBE}


def test_share_fetch_group_read_then_topic_read_per_partition():
    c = _share_coord()
    r = _share_fetch(c)
    assert r.error_code == GAF and list(r.responses) == []
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    acls(c).allow(ALICE, "TOPIC", "orders", "READ")
    r = _share_fetch(c)
    rows = {(c.cluster.topic_name(t.topic_id), p.partition_index): p for t in r.responses for p in t.partitions}
    assert rows[("payments", 0)].error_code == TAF and not rows[("payments", 0)].acquired_records
    assert rows[("orders", 0)].error_code == E.none
    assert [(a.first_offset, a.last_offset) for a in rows[("orders", 0)].acquired_records] == [(0, 1)]
    r = _share_fetch(c, api="ShareAcknowledge", epoch=1)
    assert {(c.cluster.topic_name(t.topic_id)): p.error_code for t in r.responses for p in t.partitions}[
        "payments"] == TAF


def test_share_group_offsets_apis():
    c = _share_coord()
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    acls(c).allow(ALICE, "TOPIC", "orders", "DESCRIBE")
    r = send(c, "DescribeShareGroupOffsets", 1, groups=[
        {"group_id": "g", "topics": [{"topic_name": "orders", "partitions": [0]},
                                     {"topic_name": "payments", "partitions": [0]}]},
        {"group_id": "h", "topics": None}])
    g, h = r.groups
    assert h.error_code == GAF
    assert {t.topic_name: t.partitions[0].error_code for t in g.topics}["payments"] == TAF
    r = send(c, "AlterShareGroupOffsets", 0, group_id="g", topics=[
        {"topic_name": "payments", "partitions": [{"partition_index": 0, "start_offset": 0}]}])
    assert [p.error_code for t in r.responses for p in t.partitions] == [TAF]
    assert send(c, "DeleteShareGroupOffsets", 0, group_id="g", topics=[{"topic_name": "orders"}]).error_code == GAF


def test_share_state_apis_need_cluster_action_and_the_broker_has_it():
    c = _share_coord()
    tid = c.cluster.topic_id("orders")
    req = dict(group_id="g", topics=[{"topic_id": tid, "partitions": [{"partition": 0, "state_epoch": 0,
                                                                       "start_offset": 0}]}])
    r = send(c, "InitializeShareGroupState", 0, **req)
    assert r.results[0].partitions[0].error_code == CAF and len(c.share_state_log) == 0
    r = send(c, "InitializeShareGroupState", 0, BROKER_PRINCIPAL, **req)
    assert r.results[0].partitions[0].error_code == E.none and len(c.share_state_log) == 1


# -- broker APIs and group configs --------------------------------------------------------------------

def test_write_txn_markers_needs_cluster_action():
    c = coord()
    r = send(c, "WriteTxnMarkers", 1, markers=[{"producer_id": 1, "producer_epoch": 0, "transaction_result": True,
                                                "topics": [{"name": "__consumer_offsets", "partition_indexes": [0]}],
                                                "coordinator_epoch": 0}])
    assert r.markers[0].topics[0].partitions[0].error_code == CAF and c.position == 0
    acls(c).allow(ALICE, "CLUSTER", "", "CLUSTER_ACTION")
    r = send(c, "WriteTxnMarkers", 1, markers=[{"producer_id": 1, "producer_epoch": 0, "transaction_result": True,
                                                "topics": [{"name": "__consumer_offsets", "partition_indexes": [0]}],
                                                "coordinator_epoch": 0}])
    assert r.markers[0].topics[0].partitions[0].error_code == E.none


def test_group_configs_need_describe_configs_and_alter_configs():
    c = coord()
    alter = dict(resources=[{"resource_type": 32, "resource_name": "g", "configs": [
        {"name": "consumer.session.timeout.ms", "config_operation": 0, "value": "50000"}]}], validate_only=False)
    acls(c).allow(ALICE, "GROUP", "g", "DESCRIBE_CONFIGS")
    assert send(c, "IncrementalAlterConfigs", 1, **alter).responses[0].error_code == GAF
    assert c.cluster.group_configs == {}
    r = send(c, "DescribeConfigs", 4, resources=[{"resource_type": 32, "resource_name": "g", "configuration_keys": None},
                                                 {"resource_type": 32, "resource_name": "h",
                                                  "configuration_keys": None}],
             include_synonyms=False, include_documentation=False)
    assert [x.error_code for x in r.results] == [E.none, GAF] and r.results[0].configs
    acls(c).allow(ALICE, "GROUP", "g", "ALTER_CONFIGS")
    assert send(c, "IncrementalAlterConfigs", 1, **alter).responses[0].error_code == E.none
    assert c.cluster.group_configs["g"]["consumer.session.timeout.ms"] == 50000


def test_allow_all_gives_the_same_answers_as_no_authorizer():
    c1, c2 = coord(), Coordinator(cluster=Cluster({"orders": 2, "payments": 1}, seed=1), profile="kafka")
    acls(c1).allow("User:*", "GROUP", "*", "ALL")
    acls(c1).allow("User:*", "TOPIC", "*", "ALL")
    for c in (c1, c2):
        _committed_any = commit(c, "g", {("orders", 0): 3})
        assert codes(_committed_any) == {("orders", 0): E.none}
    f = lambda c: to_data(send(c, "OffsetFetch", 9, groups=[{"group_id": "g", "member_id": None,  # noqa: E731
                                                             "member_epoch": -1, "topics": None}],
                               require_stable=False))
    assert f(c1) == f(c2)


def test_acting_as_gives_admin_and_clients_a_principal():
    from kgroup.admin import Admin
    c = coord()
    _committed(c)
    acls(c).allow(ALICE, "GROUP", "g", "DESCRIBE")
    admin = Admin(c)
    assert admin.list_groups() == []  # anonymous may describe nothing
    with c.acting_as(ALICE):
        assert [g["group_id"] for g in admin.list_groups()] == ["g"]
    assert c.default_principal == "User:ANONYMOUS"


def test_a_simulated_consumer_without_read_on_its_group_fails_fatally():
    # Kafka's consumer: GroupAuthorizationException is fatal (AbstractHeartbeatRequestManager)
    from kgroup.clients import ConsumerGroupConsumer, Simulation
    c = coord()
    acls(c).allow(ALICE, "TOPIC", "*", "DESCRIBE")
    sim = Simulation(c)
    consumer = sim.add(ConsumerGroupConsumer(c, "g", ["orders"], name="A"))
    with c.acting_as(ALICE):
        sim.run(5_000)
    assert [e.detail for e in consumer.events if e.kind == "fatal"] == ["GROUP_AUTHORIZATION_FAILED"]
    assert "g" not in c.groups and c.position == 0
    acls(c).allow(ALICE, "GROUP", "g", "READ")
    other = sim.add(ConsumerGroupConsumer(c, "g", ["orders"], name="B"))
    with c.acting_as(ALICE):
        sim.run_until_stable("g")
    assert sorted(p for _, p in other.owned) == [0, 1]
