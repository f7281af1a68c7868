"""The authorization checks Kafka's `KafkaApis` makes before it asks the group coordinator,
one guard per API (registered with `kgroup.runtime.guards`, applied by `Coordinator.handle`
only when the coordinator has an authorizer).

A guard either answers at once (the whole request denied: GROUP_AUTHORIZATION_FAILED,
CLUSTER_AUTHORIZATION_FAILED, ... and no records), or runs the handler on the authorized part
of the request (`proceed`) and puts the denied parts back into the answer with their error
(TOPIC_AUTHORIZATION_FAILED per partition, GROUP_AUTHORIZATION_FAILED per group), in the
request's order. Nothing denied ever reaches a handler, so nothing denied is written.
Without an authorizer only the describes' guards run, to answer the authorized operations
when asked (all of them, as Kafka's AuthHelper does without an authorizer).

What each API needs (Kafka's ACL table and KafkaApis):

| API | checks |
|---|---|
| JoinGroup, SyncGroup, Heartbeat, LeaveGroup | READ group |
| OffsetCommit | READ group; READ topic (per topic) |
| TxnOffsetCommit | WRITE transactional id; READ group; READ topic |
| OffsetFetch | DESCRIBE group (per group, KIP-709; v0-1: on the partitions); DESCRIBE topic (asked: TOPIC_AUTHORIZATION_FAILED per partition, after the coordinator's topics; all: filtered) |
| OffsetDelete | DELETE group; READ topic |
| DescribeGroups, Consumer/Streams/ShareGroupDescribe | DESCRIBE group (per group; StreamsGroupDescribe under profile "kip": READ, as KIP-1071 says); authorized operations; DESCRIBE on the topics the group shows (KIP-848 describes) |
| ListGroups | DESCRIBE cluster, or else only the groups with DESCRIBE |
| DeleteGroups | DELETE group (per group) |
| ConsumerGroupHeartbeat, ShareGroupHeartbeat | READ group; DESCRIBE on every subscribed topic name (a regex is not checked here: the coordinator keeps only the matches the member whose heartbeat refreshes it may DESCRIBE, kgroup.groups.consumer.protocol.resolve_regexes) |
| StreamsGroupHeartbeat | READ group; DESCRIBE on the topology's topics (profile "kip": DESCRIBE_CONFIGS, as KIP-1071 says); CREATE (cluster or topic) to create internal topics (kgroup.groups.streams.internal_topics) |
| ShareFetch, ShareAcknowledge | READ group; READ topic (per topic) |
| Describe/Alter/DeleteShareGroupOffsets | DESCRIBE/READ/DELETE group; DESCRIBE/READ/READ topic |
| share-state APIs 83-87, WriteTxnMarkers | CLUSTER_ACTION on the cluster |
| DescribeConfigs, IncrementalAlterConfigs (GROUP) | DESCRIBE_CONFIGS / ALTER_CONFIGS group (per resource) |
"""
from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kgroup.authorizer import (AUTHORIZED_OPERATIONS_OMITTED, CLUSTER_NAME, SUPPORTED_OPERATIONS, AclOperation as Op,
                               ResourceType as R)
from kgroup.errors import ErrorCode
from kgroup.protocol import get, to_data
from kgroup.runtime import PendingResponse, Result, guards

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

GAF = ErrorCode.group_authorization_failed
TAF = ErrorCode.topic_authorization_failed
CAF = ErrorCode.cluster_authorization_failed
INVALID_OFFSET = -1
GROUP_RESOURCE = 32  # ConfigResource.Type.GROUP
Proceed = Callable[[Any], Result]


# -- helpers ------------------------------------------------------------------------------

def _group(c: "Coordinator", op: Op, group_id: str | None) -> bool:
    return c.authorize(op, R.GROUP, group_id or "")


def _topic(c: "Coordinator", op: Op, name: str) -> bool:
    return c.authorize(op, R.TOPIC, name)


def _cluster(c: "Coordinator", op: Op) -> bool:
    return c.authorize(op, R.CLUSTER, CLUSTER_NAME)


def _name_by_id(c: "Coordinator", topic_id: Any) -> str | None:
    try:
        return c.cluster.topic_name(topic_id)
    except KeyError:
        return None


def _data(response: Any) -> dict:
    if callable(response) and not isinstance(response, PendingResponse):
        response = response()
    return response if isinstance(response, dict) else to_data(response)


def _then(result: Result, fix: Callable[[dict], dict]) -> Result:
    """The handler's result with its answer passed through `fix` once it is known."""
    response = result.response
    return dataclasses.replace(result, response=lambda: fix(_data(response)))


def _replace(req: Any, **fields: Any) -> Any:
    return dataclasses.replace(req, **{k: tuple(v) if isinstance(v, list) else v for k, v in fields.items()})


def _split(items: Any, allowed: Callable[[Any], bool]) -> tuple[list, list[bool]]:
    items = list(items or ())
    flags = [allowed(i) for i in items]
    return [i for i, ok in zip(items, flags) if ok], flags


def _interleave(flags: list[bool], answered: list, denied: Callable[[int], Any]) -> list:
    """Answers in request order: the handler's for the allowed items (in order), `denied(i)`
    for the others."""
    it = iter(answered)
    out = [next(it, None) if ok else denied(i) for i, ok in enumerate(flags)]
    return [x for x in out if x is not None] + list(it)  # whatever the handler added, kept


def _per_item(c: "Coordinator", req: Any, proceed: Proceed, *, field: str, answer_field: str, allowed,
              denied: Callable[[Any], dict], empty: dict | None = None) -> Result:
    """Requests made of independent items (groups, resources, topics): the handler sees the
    allowed items only, the denied ones are answered with `denied(item)`."""
    items = list(get(req, field) or ())
    kept, flags = _split(items, allowed)
    if all(flags):
        return proceed(req)
    if not kept:
        return Result({**(empty or {}), answer_field: [denied(i) for i in items]})

    def fix(data: dict) -> dict:
        data[answer_field] = _interleave(flags, list(data.get(answer_field) or ()), lambda i: denied(items[i]))
        return data
    return _then(proceed(_replace(req, **{field: kept})), fix)


# -- classic group membership: READ on the group --------------------------------------------

@guards(11)
def _join_group(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    if _group(c, Op.READ, req.group_id):
        return proceed(req)
    from kgroup.groups.classic.answers import JoinFuture, join_data
    future = JoinFuture(11, version)
    future.complete(join_data(req.member_id, GAF))
    return Result(future)


@guards(14)
def _sync_group(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    if _group(c, Op.READ, req.group_id):
        return proceed(req)
    from kgroup.groups.classic.answers import sync_data
    future = PendingResponse(14, version)
    future.complete(sync_data(GAF, protocol_type=None, protocol_name=None))
    return Result(future)


@guards(12)
def _heartbeat(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    return proceed(req) if _group(c, Op.READ, req.group_id) else Result({"error_code": GAF})


@guards(13)
def _leave_group(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    return proceed(req) if _group(c, Op.READ, req.group_id) else Result({"error_code": GAF, "members": []})


# -- offsets ------------------------------------------------------------------------------

def _partition_errors(topics: Any, code: ErrorCode, *, by_id: bool = False) -> list[dict]:
    return [{"name": get(t, "name", ""), "topic_id": get(t, "topic_id"),
             "partitions": [{"partition_index": p.partition_index, "error_code": code} for p in t.partitions]}
            for t in topics]


def _commit_topics(c: "Coordinator", req: Any, version: int, proceed: Proceed, op: Op) -> Result:
    """Per-topic checks of the commit-like APIs (KafkaApis: unauthorized topics get
    TOPIC_AUTHORIZATION_FAILED on each partition, the rest go to the coordinator)."""
    def name(t: Any) -> str | None:
        return _name_by_id(c, t.topic_id) if version >= 10 and hasattr(t, "topic_id") else t.name

    # a topic id nobody knows is the handler's to answer (UNKNOWN_TOPIC_ID comes first in Kafka)
    return _per_item(c, req, proceed, field="topics", answer_field="topics",
                     allowed=lambda t: name(t) is None or _topic(c, op, name(t)),
                     denied=lambda t: _partition_errors([t], TAF)[0], empty={"error_code": ErrorCode.none})


@guards(8)
def _offset_commit(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    if not _group(c, Op.READ, req.group_id):
        return Result({"topics": _partition_errors(req.topics, GAF)})
    return _commit_topics(c, req, version, proceed, Op.READ)


@guards(28)
def _txn_offset_commit(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    if not c.authorize(Op.WRITE, R.TRANSACTIONAL_ID, req.transactional_id):
        return Result({"topics": _partition_errors(req.topics, ErrorCode.transactional_id_authorization_failed)})
    if not _group(c, Op.READ, req.group_id):
        return Result({"topics": _partition_errors(req.topics, GAF)})
    return _commit_topics(c, req, version, proceed, Op.READ)


@guards(47)
def _offset_delete(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    if not _group(c, Op.DELETE, req.group_id):
        return Result({"error_code": GAF, "topics": []})
    return _commit_topics(c, req, version, proceed, Op.READ)


def _fetch_partition_error(p: int, code: ErrorCode) -> dict:
    return {"partition_index": p, "committed_offset": INVALID_OFFSET, "committed_leader_epoch": -1,
            "metadata": "", "error_code": code}


@guards(9)
def _offset_fetch(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    """KafkaApis.handleOffsetFetchRequest (one path for every version since Kafka 4.1): DESCRIBE
    on each group, else GROUP_AUTHORIZATION_FAILED for the group (v2+: the group's error; v0-1,
    which have no group error: on every partition asked for). Topics asked for
    (fetchOffsetsForGroup): an unknown topic id (v10+) gets UNKNOWN_TOPIC_ID and a topic the
    caller may not DESCRIBE TOPIC_AUTHORIZATION_FAILED, on each of its partitions; the
    coordinator is asked for the rest (even none) and these error topics come after its answer,
    which is returned alone when it carries a group error. "All topics"
    (fetchAllOffsetsForGroup): topics the caller may not DESCRIBE are left out."""
    def error_topic(t: Any, code: ErrorCode) -> dict:
        return {"name": name(t) or "", "topic_id": get(t, "topic_id"),
                "partitions": [_fetch_partition_error(p, code) for p in t.partition_indexes]}

    def name(t: Any) -> str | None:
        return _name_by_id(c, t.topic_id) if version >= 10 else t.name

    def split_topics(topics: Any) -> tuple[list | None, list[dict]]:
        if topics is None:
            return None, []
        kept, errors = [], []
        for t in topics:
            if name(t) is None:
                errors.append(error_topic(t, ErrorCode.unknown_topic_id))
            elif not _topic(c, Op.DESCRIBE, name(t)):
                errors.append(error_topic(t, TAF))
            else:
                kept.append(t)
        return kept, errors

    def merge(group: dict, kept: list | None, errors: list[dict]) -> dict:
        if group.get("error_code", ErrorCode.none) != ErrorCode.none:
            return group
        if kept is None:  # all topics: only those the caller may describe
            group["topics"] = [t for t in group.get("topics") or () if _topic(c, Op.DESCRIBE, t["name"])]
        else:
            group["topics"] = list(group.get("topics") or ()) + errors
        return group

    if version >= 8:
        groups = list(req.groups)
        allowed = [_group(c, Op.DESCRIBE, g.group_id) for g in groups]
        splits = [split_topics(g.topics) for g in groups]
        kept = [_replace(g, topics=s[0]) for g, s, ok in zip(groups, splits, allowed) if ok]

        def fix(data: dict) -> dict:
            answered = iter(data.get("groups") or ())
            data["groups"] = [merge(next(answered), *s) if ok else
                              {"group_id": g.group_id, "topics": [], "error_code": GAF}
                              for g, s, ok in zip(groups, splits, allowed)]
            return data
        if not kept:
            return Result(fix({"groups": []}))
        return _then(proceed(_replace(req, groups=kept)), fix)

    if not _group(c, Op.DESCRIBE, req.group_id):
        if version < 2:  # v0-1 have no group-level error: it goes on every partition asked for
            return Result({"topics": [{"name": t.name, "partitions": [_fetch_partition_error(p, GAF)
                                                                       for p in t.partition_indexes]}
                                      for t in (req.topics or ())]})
        return Result({"topics": [], "error_code": GAF})
    kept, errors = split_topics(req.topics)
    return _then(proceed(_replace(req, topics=kept) if kept is not None else req),
                 lambda data: merge(data, kept, errors))


# -- describing and listing groups ------------------------------------------------------------

def _authorized_operations(c: "Coordinator", group_id: str) -> int:
    if c.authorizer is None:  # AuthHelper.authorizedOperations without an authorizer: all of them
        return sum(1 << op for op in SUPPORTED_OPERATIONS[R.GROUP])
    ctx = c.request_context
    return c.authorizer.authorized_operations(ctx.principal, R.GROUP, group_id, ctx.client_host.lstrip("/"))


def _describe(c: "Coordinator", req: Any, proceed: Proceed, *, field: str, denied: Callable[[str], dict],
              topics_of: Callable[[dict], set[str]] | None, op: Op = Op.DESCRIBE) -> Result:
    """DESCRIBE on each group; the authorized operations when asked for; and (the KIP-848
    describes) TOPIC_AUTHORIZATION_FAILED for a group showing a topic the caller may not
    describe (KafkaApis: "clients are not allowed to see topics that are not authorized")."""
    include = bool(get(req, "include_authorized_operations", False))
    if c.authorizer is None and not include:
        return proceed(req)  # nothing to check or add
    ids = list(get(req, field) or ())
    kept, flags = _split(ids, lambda g: _group(c, op, g))

    def fix(data: dict) -> dict:
        groups = _interleave(flags, list(data.get("groups") or ()), lambda i: denied(ids[i]))
        for i, g in enumerate(groups):
            if not flags[i] or g.get("error_code", ErrorCode.none) != ErrorCode.none and topics_of is not None:
                continue
            if topics_of is not None and not all(_topic(c, Op.DESCRIBE, t) for t in topics_of(g)):
                groups[i] = {**denied(g["group_id"]), "error_code": TAF, "error_message":
                             "The described group uses topics that the client is not authorized to describe."}
                continue
            if include:
                g["authorized_operations"] = _authorized_operations(c, g["group_id"])
        data["groups"] = groups
        return data
    if not kept:
        return Result(fix({"groups": []}))
    return _then(proceed(_replace(req, **{field: kept}) if not all(flags) else req), fix)


def _member_topics(g: dict) -> set[str]:
    names: set[str] = set()
    for m in g.get("members") or ():
        names.update(m.get("subscribed_topic_names") or ())
        for key in ("assignment", "target_assignment"):
            for tp in (m.get(key) or {}).get("topic_partitions") or ():
                names.add(tp["topic_name"])
    return names


def _streams_topics(g: dict) -> set[str]:
    names: set[str] = set()
    for s in (g.get("topology") or {}).get("subtopologies") or ():
        names.update(s.get("source_topics") or ())
        names.update(s.get("repartition_sink_topics") or ())
        for key in ("state_changelog_topics", "repartition_source_topics"):
            names.update(t["name"] for t in s.get(key) or ())
    return names


def _denied_group(group_id: str) -> dict:
    return {"group_id": group_id, "error_code": GAF, "error_message": None, "members": [],
            "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED}


@guards(15, always=True)
def _describe_groups(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    return _describe(c, req, proceed, field="groups", topics_of=None, denied=lambda g: {
        "group_id": g, "error_code": GAF, "group_state": "", "protocol_type": "", "protocol_data": "",
        "members": [], "authorized_operations": AUTHORIZED_OPERATIONS_OMITTED})


@guards(69, 77, always=True)
def _describe_consumer_or_share(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    return _describe(c, req, proceed, field="group_ids", denied=_denied_group, topics_of=_member_topics)


@guards(89, always=True)
def _describe_streams(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    op = Op.READ if c.profile.streams_describe_needs_read else Op.DESCRIBE  # kip: KIP-1071 "Read Group"
    return _describe(c, req, proceed, field="group_ids", denied=_denied_group, topics_of=_streams_topics, op=op)


@guards(93)
def _streams_topology_description_update(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    """KafkaApis: READ on the group, before the coordinator sees the push."""
    return proceed(req) if _group(c, Op.READ, req.group_id) else Result({"error_code": GAF})


@guards(16)
def _list_groups(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    """DESCRIBE on the cluster lists every group; otherwise only the groups the caller may describe."""
    if _cluster(c, Op.DESCRIBE):
        return proceed(req)

    def fix(data: dict) -> dict:
        data["groups"] = [g for g in data.get("groups") or () if _group(c, Op.DESCRIBE, g["group_id"])]
        return data
    return _then(proceed(req), fix)


@guards(42)
def _delete_groups(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    return _per_item(c, req, proceed, field="groups_names", answer_field="results",
                     allowed=lambda g: _group(c, Op.DELETE, g), denied=lambda g: {"group_id": g, "error_code": GAF})


# -- KIP-848 / KIP-932 / KIP-1071 heartbeats -------------------------------------------------

def _heartbeat_topics(c: "Coordinator", req: Any, proceed: Proceed, topics: set[str], op: Op = Op.DESCRIBE) -> Result:
    if not _group(c, Op.READ, req.group_id):
        return Result({"error_code": GAF, "error_message": None})
    denied = sorted(t for t in topics if not _topic(c, op, t))
    if denied:
        return Result({"error_code": TAF, "error_message": f"Unauthorized to {op.name} on topics {', '.join(denied)}."})
    return proceed(req)


@guards(68, 76)
def _consumer_or_share_heartbeat(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    return _heartbeat_topics(c, req, proceed, set(get(req, "subscribed_topic_names") or ()))


@guards(88)
def _streams_heartbeat(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    topology = get(req, "topology")
    topics = _streams_topics({"topology": to_data(topology)} if topology is not None else {})
    op = Op.DESCRIBE_CONFIGS if c.profile.streams_topic_acl_describe_configs else Op.DESCRIBE
    return _heartbeat_topics(c, req, proceed, topics, op)


# -- share-partitions: ShareFetch, ShareAcknowledge, share-group offsets ------------------------

@guards(78, 79)
def _share_fetch_or_ack(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    fetch = type(req).__api_key__ == 78
    if not _group(c, Op.READ, req.group_id):
        data = {"error_code": GAF, "error_message": None, "responses": [], "node_endpoints": []}
        return Result({**data, "acquisition_lock_timeout": 0} if fetch else data)

    def allowed(t: Any) -> bool:
        name = _name_by_id(c, t.topic_id)
        return name is None or _topic(c, Op.READ, name)

    def denied(t: Any) -> dict:
        rows = []
        for p in t.partitions:
            acked = bool(p.acknowledgement_batches)
            row = {"partition_index": p.partition_index, "error_code": TAF, "current_leader":
                   {"leader_id": -1, "leader_epoch": -1}}
            if fetch:
                row.update(acknowledge_error_code=TAF if acked else ErrorCode.none, records=None,
                           acquired_records=[])
            rows.append(row)
        return {"topic_id": t.topic_id, "partitions": rows}

    topics = list(req.topics)
    kept, flags = _split(topics, allowed)
    if all(flags):
        return proceed(req)

    def fix(data: dict) -> dict:
        data["responses"] = list(data.get("responses") or ()) + [denied(t) for t, ok in zip(topics, flags) if not ok]
        return data
    return _then(proceed(_replace(req, topics=kept)), fix)


@guards(90)
def _describe_share_offsets(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    groups = list(req.groups)
    allowed = [_group(c, Op.DESCRIBE, g.group_id) for g in groups]

    def topic_ok(t: Any) -> bool:
        return _topic(c, Op.DESCRIBE, t.topic_name)

    kept = [_replace(g, topics=[t for t in g.topics if topic_ok(t)] if g.topics is not None else None)
            for g, ok in zip(groups, allowed) if ok]

    def fix(data: dict) -> dict:
        answered = iter(data.get("groups") or ())
        out = []
        for g, ok in zip(groups, allowed):
            if not ok:
                out.append({"group_id": g.group_id, "topics": [], "error_code": GAF, "error_message": None})
                continue
            a = next(answered)
            if a.get("error_code", ErrorCode.none) == ErrorCode.none:
                if g.topics is None:
                    a["topics"] = [t for t in a.get("topics") or () if _topic(c, Op.DESCRIBE, t["topic_name"])]
                else:  # the denied topics after the others, as KafkaApis adds them
                    a["topics"] = list(a.get("topics") or ()) + [{
                        "topic_name": t.topic_name, "topic_id": c.cluster.topic_id(t.topic_name)
                        if t.topic_name in c.cluster else None,
                        "partitions": [{"partition_index": p, "start_offset": INVALID_OFFSET, "leader_epoch": -1,
                                        "lag": -1, "error_code": TAF} for p in t.partitions]}
                        for t in g.topics if not topic_ok(t)]
            out.append(a)
        data["groups"] = out
        return data
    if not kept:
        return Result(fix({"groups": []}))
    return _then(proceed(_replace(req, groups=kept)), fix)


@guards(91, 92)
def _alter_or_delete_share_offsets(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    alter = type(req).__api_key__ == 91
    if not _group(c, Op.READ if alter else Op.DELETE, req.group_id):
        return Result({"error_code": GAF, "error_message": None, "responses": []})

    def denied(t: Any) -> dict:
        topic_id = c.cluster.topic_id(t.topic_name) if t.topic_name in c.cluster else None
        if alter:
            return {"topic_name": t.topic_name, "topic_id": topic_id, "partitions": [
                {"partition_index": p.partition_index, "error_code": TAF} for p in t.partitions]}
        return {"topic_name": t.topic_name, "topic_id": topic_id, "error_code": TAF}
    return _per_item(c, req, proceed, field="topics", answer_field="responses",
                     allowed=lambda t: _topic(c, Op.READ, t.topic_name), denied=denied,
                     empty={"error_code": ErrorCode.none})


# -- broker-to-coordinator APIs: CLUSTER_ACTION ------------------------------------------------

@guards(83, 84, 85, 86, 87)
def _share_state(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    if _cluster(c, Op.CLUSTER_ACTION):
        return proceed(req)
    return Result({"results": [{"topic_id": t.topic_id, "partitions": [
        {"partition": p.partition, "error_code": CAF, "error_message": "Cluster authorization failed."}
        for p in t.partitions]} for t in req.topics]})


@guards(27)
def _write_txn_markers(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    if _cluster(c, Op.CLUSTER_ACTION):
        return proceed(req)
    return Result({"markers": [{"producer_id": m.producer_id, "topics": [
        {"name": t.name, "partitions": [{"partition_index": p, "error_code": CAF} for p in t.partition_indexes]}
        for t in m.topics]} for m in req.markers]})


# -- group configs -------------------------------------------------------------------------------

def _configs(c: "Coordinator", req: Any, proceed: Proceed, op: Op, answer_field: str) -> Result:
    def denied(res: Any) -> dict:
        return {"error_code": GAF, "error_message": None, "resource_type": res.resource_type,
                "resource_name": res.resource_name, "configs": []}
    return _per_item(c, req, proceed, field="resources", answer_field=answer_field, denied=denied,
                     allowed=lambda r: r.resource_type != GROUP_RESOURCE or _group(c, op, r.resource_name))


@guards(32)
def _describe_configs(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    return _configs(c, req, proceed, Op.DESCRIBE_CONFIGS, "results")


@guards(44)
def _alter_configs(c: "Coordinator", req: Any, version: int, proceed: Proceed) -> Result:
    return _configs(c, req, proceed, Op.ALTER_CONFIGS, "responses")
