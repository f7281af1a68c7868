"""Online migration between classic and consumer groups (KIP-848, "upgrade/downgrade").

- **Upgrade**: the first ConsumerGroupHeartbeat to a non-empty classic group using the
  consumer embedded protocol converts it. Every classic member becomes a consumer-group
  member that keeps its last assignment (as current and target), at the classic generation.
- Classic members then keep speaking JoinGroup/SyncGroup/Heartbeat/LeaveGroup
  (`classic_members`).
- **Downgrade**: when the last consumer-protocol member leaves and only classic members
  remain, the group converts back to a classic group holding the consumer group's target
  assignment, and a rebalance starts.

`group.consumer.migration.policy` (disabled | upgrade | downgrade | bidirectional) gates both.
Streams groups migrate the same way (`streams/migration.py`, KIP-1071); what both need is in
`kgroup.groups.classic_bridge`. This module sits below the heartbeat (`protocol`), which calls
both conversions; the caller schedules the converted members' session timeouts.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups import classic_bridge as bridge
from kgroup.groups.classic import ClassicGroup
from kgroup.groups.modern import MemberState, frozen
from kgroup.log.partitioner import java_string_hashcode
from kgroup.protocol.consumer_protocol import (Assignment as WireAssignment, ConsumerProtocolError,
                                               decode_subscription, decode_assignment, encode_assignment)
from kgroup.runtime import Result

from . import group as G
from .group import CONSUMER_PROTOCOL_TYPE, ClassicMemberMetadata, ConsumerGroup, ConsumerGroupMember
from .timers import cancel_timers

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator


def _policy(c: "Coordinator") -> str:
    return c.config["group.consumer.migration.policy"]


def by_topic_id(c: "Coordinator", pairs) -> dict[uuid.UUID, set[int]]:
    out: dict[uuid.UUID, set[int]] = {}
    for topic, p in pairs:
        if topic in c.cluster:
            out.setdefault(c.cluster.topic_id(topic), set()).add(p)
    return out


def wire_assignment(c: "Coordinator", assignment) -> WireAssignment:
    pairs = []
    for tid, parts in assignment.items():
        try:
            name = c.cluster.topic_name(tid)
        except KeyError:
            continue
        pairs += [(name, p) for p in parts]
    return WireAssignment(pairs)


# ---------------------------------------------------------------------------------------
# Upgrade

def timeline_order(keys: Iterable[str]) -> list[str]:
    """String keys (in insertion order) in the order Kafka's `TimelineHashMap` iterates them:
    its `BaseHashTable` starts at 2 slots, doubles past a 0.75 load, picks a slot by Fibonacci
    hashing of `hashCode()` (the top bits), chains a slot's keys in insertion order, and its
    iterator walks the slots in order, popping each slot's keys from the end (last in, first out).
    A converted group's members are put there in the classic group's HashMap order and its
    records are written in this order."""
    def slot(key: str, size: int) -> int:
        h = java_string_hashcode(key) & 0xFFFFFFFF
        h = h - (1 << 32) if h >= 1 << 31 else h
        return ((h * -7046029254386353131) & 0xFFFFFFFFFFFFFFFF) >> (65 - size.bit_length())
    table: list[list[str]] = [[], []]
    for n, key in enumerate(keys):
        if (n + 1) * 0.75 > len(table):
            old, table = table, [[] for _ in range(len(table) * 2)]
            for chain in old:
                for k in chain:
                    table[slot(k, len(table))].append(k)
        table[slot(key, len(table))].append(key)
    return [k for chain in table for k in reversed(chain)]


def convert_to_consumer_group(c: "Coordinator", classic: ClassicGroup, records: list) -> ConsumerGroup:
    """Kafka's `validateOnlineUpgrade` + `convertToConsumerGroup`."""
    gid = classic.group_id
    if _policy(c) not in ("upgrade", "bidirectional"):
        raise KafkaError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {gid} to consumer group "
                         "because online upgrade is disabled.")
    if not classic.uses_consumer_protocol():
        raise KafkaError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {gid} to consumer group "
                         "because the group does not use the consumer embedded protocol.")
    if len(classic.members) > c.config["group.consumer.max.size"]:
        raise KafkaError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {gid} to consumer group "
                         "because the group size exceeds the consumer group maximum size.")
    group = ConsumerGroup(gid)
    generation = classic.generation_id
    group.group_epoch = group.assignment_epoch = generation
    try:
        for m in (classic.members[mid] for mid in timeline_order(classic.members)):
            sub, _ = decode_subscription(m.metadata(classic.protocol_name))
            wire = decode_assignment(m.assignment)[0] if m.assignment else None
            if wire is not None and wire.user_data:
                # Kafka: a custom assignor's user data cannot be carried over (UnsupportedVersionException)
                raise KafkaError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {gid} to consumer "
                                 "group because an unsupported custom assignor is in use. Please refer to the "
                                 "documentation or switch to a default assignor before re-attempting the upgrade.")
            assigned = by_topic_id(c, wire.partitions) if wire is not None else {}
            # an empty rack is no rack, and the member subscribes by name: Kafka 4.4.0 writes
            # rackId null and subscribedTopicRegex "" for a converted librdkafka member
            member = ConsumerGroupMember(
                m.member_id, instance_id=m.group_instance_id, rack_id=sub.rack_id or None, subscribed_topic_regex="",
                rebalance_timeout_ms=m.rebalance_timeout_ms, client_id=m.client_id, client_host=m.client_host,
                subscribed_topic_names=frozenset(sub.topics), member_epoch=generation,
                previous_member_epoch=generation, state=MemberState.STABLE,
                assigned_partitions={t: {p: generation for p in ps} for t, ps in assigned.items()},
                classic_member_metadata=ClassicMemberMetadata(m.session_timeout_ms, tuple(m.protocols)))
            group.target_assignment[m.member_id] = frozen(assigned)
            group.update_member(member)
    except (ConsumerProtocolError, KeyError, ValueError) as e:
        raise KafkaError(ErrorCode.group_id_not_found, f"Cannot upgrade classic group {gid} to consumer group "
                         "because the embedded consumer protocol is malformed.") from e
    from kgroup.groups.metadata_hash import metadata_hash
    group.metadata_hash = metadata_hash(group.subscribed_topic_names(), c.cluster)
    # Members waiting in a join or sync phase are told to rejoin the new group.
    bridge.release_waiting_members(classic)
    records += classic.tombstones()
    records += [G.member_record(gid, m) for m in group.members.values()]
    records.append(G.group_epoch_record(gid, group.group_epoch, group.metadata_hash))
    records += [G.target_member_record(gid, mid, group.target_assignment[mid]) for mid in group.members]
    records.append(G.target_epoch_record(gid, group.group_epoch))
    records += [G.current_assignment_record(gid, m) for m in group.members.values()]
    return group


# ---------------------------------------------------------------------------------------
# Downgrade

def _may_downgrade(c: "Coordinator", remaining: list[ConsumerGroupMember]) -> bool:
    """Kafka's `validateOnlineDowngrade...`: only classic-protocol members would remain, the policy
    allows it and they fit in a classic group."""
    return (bool(remaining) and all(m.uses_classic_protocol for m in remaining)
            and _policy(c) in ("downgrade", "bidirectional") and len(remaining) <= c.config["group.max.size"])


def maybe_downgrade(c: "Coordinator", group: ConsumerGroup, leaving: list[ConsumerGroupMember], response: Any) -> Result | None:
    """Kafka's `validateOnlineDowngradeWithFencedMembers` + `convertToClassicGroup`."""
    leaving_ids = {m.member_id for m in leaving}
    remaining = [m for m in group.members.values() if m.member_id not in leaving_ids]
    if not _may_downgrade(c, remaining):
        return None
    records = group.tombstones()
    records += _convert_to_classic(c, group, remaining, group.target_assignment, rebalance=True,
                                   reason="for member leaving")
    return Result(response, records, replay=False)


def maybe_downgrade_with_replaced_member(c: "Coordinator", group: ConsumerGroup, replaced: ConsumerGroupMember,
                                         joining: ConsumerGroupMember, rebalance: bool, records: list) -> bool:
    """Kafka's `validateOnlineDowngradeWithReplacedMember` + `convertToClassicGroup` with a joining
    member: a classic JoinGroup that took over the last consumer-protocol (static) member turns the
    group back into a classic one, the joining member in the replaced one's place (with its target).
    `rebalance`: the join moved the group past its assignment, so the classic group rebalances.
    Appends the records and returns True when the group was converted."""
    remaining = [joining if m.member_id == replaced.member_id else m for m in group.members.values()]
    if not _may_downgrade(c, remaining):
        return False
    swap = {replaced.member_id: joining.member_id}
    for r in group.tombstones():
        mid = getattr(r.key, "member_id", None)
        records.append(type(r).tombstone(type(r.key)(group_id=group.group_id, member_id=swap[mid]))
                       if mid in swap else r)
    targets = {swap.get(mid, mid): t for mid, t in group.target_assignment.items()}
    records += _convert_to_classic(c, group, remaining, targets, rebalance=rebalance,
                                   reason="for static member replacement")
    return True


def _convert_to_classic(c: "Coordinator", group: ConsumerGroup, members: list[ConsumerGroupMember],
                        targets: dict, *, rebalance: bool, reason: str) -> list:
    """The classic group `members` become, Stable at the consumer group's epoch with their targets
    as assignments (Kafka's `ClassicGroup.fromConsumerGroup`): its record, and the rebalance's."""
    from kgroup.groups.classic import protocol as CP
    gid = group.group_id

    def assignment_of(m: ConsumerGroupMember, metadata: bytes) -> bytes:
        _, sub_version = decode_subscription(metadata)
        return encode_assignment(wire_assignment(c, targets.get(m.member_id, {})), sub_version)
    classic = bridge.classic_group_for_downgrade(
        c, gid, group.group_epoch, CONSUMER_PROTOCOL_TYPE,
        [(m, m.classic_member_metadata) for m in members], assignment_of)
    records = [classic.metadata_record(classic.group_assignment())]
    for m in group.members.values():
        cancel_timers(c, gid, m.member_id)
    # The classic group replaces the consumer group at once (Kafka updates the state directly
    # and does not replay these records).
    c.groups[gid] = classic
    for cm in classic.members.values():
        CP.reschedule_heartbeat(c, classic, cm)
    if rebalance:
        records += CP.prepare_rebalance(c, classic, f"Downgrade group {gid} from consumer to classic {reason}.").records
    return records


__all__ = ["convert_to_consumer_group", "maybe_downgrade", "maybe_downgrade_with_replaced_member", "by_topic_id",
           "wire_assignment"]
