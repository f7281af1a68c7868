"""Authorization under random ACLs and random callers (reliability issue, part 5).

1. The ACL decision against an oracle written the way Kafka's docs state the rules
   (StandardAuthorizer: DENY wins, implied operations for ALLOW only, literal/wildcard/prefixed
   patterns, "User:*", allow.everyone.if.no.acl.found, super users), plus metamorphic laws:
   ACL order does not matter, an extra DENY never grants, an extra ALLOW never revokes, the
   authorized-operations bitfield agrees with `authorize`.
2. A state machine: principals commit, fetch, delete offsets and groups, and ACLs change under
   them; a model keeps what an authorized request may have written. Denied parts write nothing
   (KafkaApis checks before the coordinator), allowed parts land, and a failover (reload from
   the log) keeps exactly the model's offsets.
"""
from __future__ import annotations

from hypothesis import given, strategies as st
from hypothesis.stateful import RuleBasedStateMachine, invariant, rule

from conftest import TOTALS, profile_settings
from kgroup import Cluster, Coordinator
from kgroup.authorizer import (BROKER_PRINCIPAL, SUPPORTED_OPERATIONS, AclOperation as Op, Authorizer, Permission,
                               ResourceType as R)
from kgroup.errors import ErrorCode as E
from kgroup.protocol import request

PRINCIPALS = ["User:alice", "User:bob", "User:carol"]
GROUPS = ["app-1", "app-2", "batch"]
TOPICS = ["orders", "orders-eu", "payments"]
OPS = [Op.ALL, Op.READ, Op.WRITE, Op.CREATE, Op.DELETE, Op.ALTER, Op.DESCRIBE, Op.DESCRIBE_CONFIGS, Op.ALTER_CONFIGS,
       Op.CLUSTER_ACTION]

acl_st = st.fixed_dictionaries({
    "principal": st.sampled_from(PRINCIPALS + ["User:*"]),
    "resource_type": st.sampled_from([R.GROUP, R.TOPIC]),
    "name": st.sampled_from(GROUPS + TOPICS + ["*", "app-", "orders", "ord", "b"]),
    "operation": st.sampled_from(OPS),
    "permission": st.sampled_from([Permission.ALLOW, Permission.DENY]),
    "pattern": st.sampled_from(["LITERAL", "PREFIXED"]),
    "host": st.sampled_from(["*", "10.0.0.1"]),
})


def oracle(acls: list[dict], principal: str, op: Op, rt: R, name: str, host: str, everyone: bool) -> bool:
    """The rules as Kafka's authorization docs state them, written independently of kgroup's."""
    def on_resource(a):
        if a["resource_type"] != rt:
            return False
        if a["pattern"] == "PREFIXED":
            return name[:len(a["name"])] == a["name"]
        return a["name"] in ("*", name)
    resource_acls = [a for a in acls if on_resource(a)]
    if not resource_acls:
        return everyone
    mine = [a for a in resource_acls
            if a["principal"] in ("User:*", principal) and a["host"] in ("*", host)]
    for a in mine:
        if a["permission"] == Permission.DENY and (a["operation"] == Op.ALL or a["operation"] == op):
            return False
    for a in mine:
        if a["permission"] != Permission.ALLOW:
            continue
        if a["operation"] in (Op.ALL, op):
            return True
        if op == Op.DESCRIBE and a["operation"] in (Op.READ, Op.WRITE, Op.DELETE, Op.ALTER):
            return True
        if op == Op.DESCRIBE_CONFIGS and a["operation"] == Op.ALTER_CONFIGS:
            return True
    return False


def build(acls: list[dict], everyone: bool = False) -> Authorizer:
    a = Authorizer(allow_everyone_if_no_acl_found=everyone)
    for acl in acls:
        a.add(**acl)
    return a


@profile_settings()
@given(acls=st.lists(acl_st, max_size=8), principal=st.sampled_from(PRINCIPALS), op=st.sampled_from(OPS[1:]),
       rt=st.sampled_from([R.GROUP, R.TOPIC]), name=st.sampled_from(GROUPS + TOPICS),
       host=st.sampled_from(["10.0.0.1", "10.0.0.2"]), everyone=st.booleans(), extra=acl_st, data=st.data())
def test_acl_decisions_follow_kafkas_rules(acls, principal, op, rt, name, host, everyone, extra, data):
    a = build(acls, everyone)
    decided = a.authorize(principal, op, rt, name, host)
    assert decided == oracle(acls, principal, op, rt, name, host, everyone)
    # ACL order does not matter
    shuffled = data.draw(st.permutations(acls))
    assert build(shuffled, everyone).authorize(principal, op, rt, name, host) == decided
    # one more DENY never grants; one more ALLOW never revokes (unless it is the first ACL on
    # the resource and allow.everyone.if.no.acl.found had been granting)
    more = build(acls + [extra], everyone).authorize(principal, op, rt, name, host)
    if extra["permission"] == Permission.DENY:
        assert not (more and not decided)
    elif not everyone:
        assert not (decided and not more)
    # the bitfield says the same as authorize, operation by operation
    bits = a.authorized_operations(principal, rt, name, host)
    for o in SUPPORTED_OPERATIONS[rt]:
        assert bool(bits & (1 << o)) == a.authorize(principal, o, rt, name, host)
    TOTALS["steps explored"] += 1


class AuthorizedOffsets(RuleBasedStateMachine):
    """Callers with changing ACLs commit, fetch and delete; the model holds what may be written."""

    def __init__(self) -> None:
        super().__init__()
        self.cluster = Cluster({t: 2 for t in TOPICS}, seed=7)
        self.c = Coordinator(cluster=self.cluster, profile="kafka", authorizer=True)
        self.acls = self.cluster.authorizer
        #: (group, topic, partition) -> offset, as only authorized commits may have left them
        self.model: dict[tuple[str, str, int], int] = {}
        self.next_offset = 1

    def allowed(self, principal: str, op: Op, rt: R, name: str) -> bool:
        return self.acls.authorize(principal, op, rt, name, "127.0.0.1")

    @rule(acl=acl_st)
    def add_acl(self, acl) -> None:
        self.acls.add(**acl)
        self.count()

    @rule(data=st.data())
    def remove_acl(self, data) -> None:
        if self.acls.acls:
            self.acls.remove(data.draw(st.sampled_from(self.acls.acls)))
        self.count()

    @rule(principal=st.sampled_from(PRINCIPALS), group=st.sampled_from(GROUPS),
          parts=st.lists(st.tuples(st.sampled_from(TOPICS), st.integers(0, 1)), min_size=1, max_size=4, unique=True),
          version=st.sampled_from([8, 9, 10]))
    def commit(self, principal, group, parts, version) -> None:
        topics: dict[str, list] = {}
        offsets = {}
        for t, p in parts:
            offsets[(t, p)] = self.next_offset
            topics.setdefault(t, []).append({"partition_index": p, "committed_offset": self.next_offset,
                                             "committed_leader_epoch": -1, "committed_metadata": ""})
            self.next_offset += 1
        name = (lambda t: {"topic_id": self.cluster.topic_id(t)}) if version >= 10 else (lambda t: {"name": t})
        before = self.c.position
        r = self.c.handle(request("OffsetCommit", version, group_id=group, generation_id_or_member_epoch=-1,
                                  member_id="", topics=[{**name(t), "partitions": ps} for t, ps in topics.items()]),
                          principal=principal)
        group_ok = self.allowed(principal, Op.READ, R.GROUP, group)
        by_name = (lambda t: self.cluster.topic_name(t.topic_id)) if version >= 10 else (lambda t: t.name)
        got = {(by_name(t), p.partition_index): p.error_code for t in r.topics for p in t.partitions}
        for (t, p), off in offsets.items():
            if not group_ok:
                assert got[(t, p)] == E.group_authorization_failed
            elif not self.allowed(principal, Op.READ, R.TOPIC, t):
                assert got[(t, p)] == E.topic_authorization_failed
            else:
                assert got[(t, p)] == E.none
                self.model[(group, t, p)] = off
        if not group_ok:
            assert self.c.position == before  # nothing written on a denied request
        self.count()

    @rule(principal=st.sampled_from(PRINCIPALS), groups=st.lists(st.sampled_from(GROUPS), min_size=1, max_size=3,
                                                                 unique=True),
          all_topics=st.booleans())
    def fetch(self, principal, groups, all_topics) -> None:
        asked = None if all_topics else [{"name": t, "partition_indexes": [0, 1]} for t in TOPICS]
        r = self.c.handle(request("OffsetFetch", 9, groups=[{"group_id": g, "member_id": None, "member_epoch": -1,
                                                             "topics": asked} for g in groups],
                                  require_stable=False), principal=principal)
        assert [g.group_id for g in r.groups] == groups  # KIP-709: one answer per group, in order
        for g in r.groups:
            if not self.allowed(principal, Op.DESCRIBE, R.GROUP, g.group_id):
                assert g.error_code == E.group_authorization_failed and list(g.topics) == []
                continue
            assert g.error_code == E.none
            seen = {(t.name, p.partition_index): (p.committed_offset, p.error_code)
                    for t in g.topics for p in t.partitions}
            for t in TOPICS:
                visible = self.allowed(principal, Op.DESCRIBE, R.TOPIC, t)
                for p in (0, 1):
                    expected = self.model.get((g.group_id, t, p), -1)
                    if all_topics:
                        if visible and expected != -1:
                            assert seen[(t, p)] == (expected, E.none)
                        else:
                            assert (t, p) not in seen  # hidden or nothing committed
                    elif visible:
                        assert seen[(t, p)] == (expected, E.none)
                    else:
                        assert seen[(t, p)] == (-1, E.topic_authorization_failed)
        self.count()

    @rule(principal=st.sampled_from(PRINCIPALS), group=st.sampled_from(GROUPS))
    def delete_group(self, principal, group) -> None:
        r = self.c.handle(request("DeleteGroups", 2, groups_names=[group]), principal=principal)
        code = r.results[0].error_code
        if not self.allowed(principal, Op.DELETE, R.GROUP, group):
            assert code == E.group_authorization_failed
        elif any(k[0] == group for k in self.model):
            assert code == E.none
            self.model = {k: v for k, v in self.model.items() if k[0] != group}
        self.count()

    @rule(principal=st.sampled_from(PRINCIPALS), group=st.sampled_from(GROUPS), topic=st.sampled_from(TOPICS))
    def delete_offsets(self, principal, group, topic) -> None:
        r = self.c.handle(request("OffsetDelete", 0, group_id=group,
                                  topics=[{"name": topic, "partitions": [{"partition_index": 0}]}]),
                          principal=principal)
        if not self.allowed(principal, Op.DELETE, R.GROUP, group):
            assert r.error_code == E.group_authorization_failed
        elif r.error_code == E.none:
            code = r.topics[0].partitions[0].error_code
            if self.allowed(principal, Op.READ, R.TOPIC, topic):
                assert code == E.none
                self.model.pop((group, topic, 0), None)
            else:
                assert code == E.topic_authorization_failed
        self.count()

    @rule()
    def failover(self) -> None:
        self.c = Coordinator.load(self.c.log, cluster=self.cluster, profile="kafka", authorizer=True)
        TOTALS["failovers survived"] += 1

    @invariant()
    def offsets_are_exactly_the_authorized_ones(self) -> None:
        got = {(r["group"], r["topic"], r["partition"]): r["offset"] for r in self.c.offsets_table()}
        if got != self.model:
            TOTALS["records lost"] += len(set(self.model.items()) - set(got.items()))
        assert got == self.model

    def count(self) -> None:
        TOTALS["steps explored"] += 1


TestAuthorizedOffsets = AuthorizedOffsets.TestCase
TestAuthorizedOffsets.settings = profile_settings()


def test_broker_principal_is_a_super_user_for_the_share_state_apis():
    """The simulated share-partition leader's persister calls the share coordinator as the broker."""
    c = Coordinator(cluster=Cluster({"orders": 1}, seed=1), authorizer=True)
    tid = c.cluster.topic_id("orders")
    req = request("InitializeShareGroupState", 0, group_id="g",
                  topics=[{"topic_id": tid, "partitions": [{"partition": 0, "state_epoch": 0, "start_offset": 0}]}])
    assert c.handle(req, principal=BROKER_PRINCIPAL).results[0].partitions[0].error_code == E.none


@profile_settings()
@given(acls=st.lists(acl_st, max_size=6), principal=st.sampled_from(PRINCIPALS),
       group=st.one_of(st.sampled_from(GROUPS + [""]), st.text(max_size=12)),
       topics=st.lists(st.one_of(st.sampled_from(TOPICS), st.text(max_size=8)), min_size=1, max_size=3, unique=True),
       api=st.sampled_from(["OffsetCommit", "OffsetFetch", "OffsetDelete", "DescribeGroups", "DeleteGroups",
                            "JoinGroup", "ConsumerGroupHeartbeat"]))
def test_odd_names_under_acls_get_error_codes_and_denied_writes_nothing(acls, principal, group, topics, api):
    """Odd group and topic names (empty, unknown, unicode) from callers under random ACLs: an
    answer with error codes every time, and a request denied on its group writes nothing."""
    c = Coordinator(cluster=Cluster({t: 2 for t in TOPICS}, seed=7), profile="kafka", authorizer=True)
    for acl in acls:
        c.cluster.authorizer.add(**acl)
    parts = [{"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1, "committed_metadata": ""}]
    reqs = {
        "OffsetCommit": lambda: request("OffsetCommit", 9, group_id=group, generation_id_or_member_epoch=-1,
                                        member_id="", topics=[{"name": t, "partitions": parts} for t in topics]),
        "OffsetFetch": lambda: request("OffsetFetch", 9, require_stable=False, groups=[
            {"group_id": group, "member_id": None, "member_epoch": -1,
             "topics": [{"name": t, "partition_indexes": [0]} for t in topics]}]),
        "OffsetDelete": lambda: request("OffsetDelete", 0, group_id=group,
                                        topics=[{"name": t, "partitions": [{"partition_index": 0}]} for t in topics]),
        "DescribeGroups": lambda: request("DescribeGroups", 5, groups=[group], include_authorized_operations=True),
        "DeleteGroups": lambda: request("DeleteGroups", 2, groups_names=[group]),
        "JoinGroup": lambda: request("JoinGroup", 9, group_id=group, session_timeout=10_000, rebalance_timeout=10_000,
                                     member_id="", group_instance_id=None, protocol_type="consumer",
                                     protocols=[{"name": "range", "metadata": b""}]),
        "ConsumerGroupHeartbeat": lambda: request(
            "ConsumerGroupHeartbeat", 1, group_id=group, member_id="m" * 22, member_epoch=0, instance_id=None,
            rack_id=None, rebalance_timeout=30_000, subscribed_topic_names=topics, subscribed_topic_regex=None,
            server_assignor=None, topic_partitions=[]),
    }
    op = {"DescribeGroups": Op.DESCRIBE, "OffsetFetch": Op.DESCRIBE, "OffsetDelete": Op.DELETE,
          "DeleteGroups": Op.DELETE}.get(api, Op.READ)
    r = c.handle(reqs[api](), principal=principal)
    r = r.response if hasattr(r, "done") else r
    assert r is not None
    if not c.cluster.authorizer.authorize(principal, op, R.GROUP, group, "127.0.0.1"):
        assert c.position == 0
        flat = repr(r)
        assert "group_authorization_failed" in flat
    TOTALS["bad inputs tried"] += 1
