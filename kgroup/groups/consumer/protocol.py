"""ConsumerGroupHeartbeat (68) and ConsumerGroupDescribe (69): KIP-848 on the coordinator.

One heartbeat, as Kafka's `GroupMetadataManager.consumerGroupHeartbeat` does it:

1. create or update the member (a ConsumerGroupMemberMetadata record when it changed);
   a new subscription, a resolved regex, a new group or changed topic metadata (the
   *metadata hash*) bump the **group epoch** (ConsumerGroupMetadata record);
2. when the group epoch is ahead of the **assignment epoch**, the server-side assignor
   computes a new target assignment (records for changed members + the new epoch);
3. the member reconciles towards its target (`reconciliation.reconcile`): its **member
   epoch** moves when it has revoked what it must give up (ConsumerGroupCurrentMemberAssignment).

Regular expressions are resolved right after the heartbeat that needs it, in a write of
their own (Kafka resolves them asynchronously, then writes the result); the group epoch
moves when what they match changes.
"""
from __future__ import annotations

import functools
import uuid
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import re2

from kgroup.assignors import get_server_assignor
from kgroup.assignors.api import MemberSubscription, TopicMetadata
from kgroup.errors import ErrorCode, KafkaError
from kgroup.group_configs import group_configs_of
from kgroup.groups.classic import ClassicGroup
from kgroup.groups.kinds import CONSUMER
from kgroup.groups.metadata_hash import metadata_hash
from kgroup.groups.modern import (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH,
                                  METADATA_REFRESH_INTERVAL_MS, Assignment, MemberState, assign_partitions,
                                  client_member_id, described_assignment, fence_by_id, handles_describe,
                                  heartbeat_error, restarts_sessions_on_load, target_assignment_due,
                                  throw_if_empty_string, topic_order)
from kgroup.javaorder import JavaHashMap, java_order
from kgroup.protocol import get, ms
from kgroup.runtime import Result, handles

from . import group as G
from .group import ConsumerGroup, ConsumerGroupMember, ResolvedRegularExpression, topics_of, track_subscription
from .migration import convert_to_consumer_group, maybe_downgrade
from .reconciliation import reconcile
from .timers import cancel_timers, rebalance_key, session_key

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

CONSUMER_GROUP_HEARTBEAT = CONSUMER.heartbeat_api
CONSUMER_GROUP_DESCRIBE = CONSUMER.describe_api
#: Kafka's `REGEX_BATCH_REFRESH_MIN_INTERVAL_MS`: a group's regexes are resolved at most this often.
REGEX_BATCH_REFRESH_MIN_INTERVAL_MS = 10_000
#: `ConsumerGroupHeartbeat` v1 requires the client to generate its member id (KIP-1082).
CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION = 1


# ---------------------------------------------------------------------------------------
# Validation (GroupCoordinatorService.throwIfConsumerGroupHeartbeatRequestIsInvalid)

def validate_heartbeat(c: "Coordinator", req: Any, version: int) -> None:
    epoch = req.member_epoch
    if version >= CONSUMER_GENERATED_MEMBER_ID_REQUIRED_VERSION or epoch > 0 or epoch == LEAVE_GROUP_MEMBER_EPOCH:
        throw_if_empty_string(req.member_id, "MemberId")
    throw_if_empty_string(req.group_id, "GroupId")
    throw_if_empty_string(req.instance_id, "InstanceId")
    throw_if_empty_string(req.rack_id, "RackId")
    if epoch == 0:
        if ms(req.rebalance_timeout) == -1:
            raise KafkaError(ErrorCode.invalid_request, "RebalanceTimeoutMs must be provided in first request.")
        if req.topic_partitions is None or len(req.topic_partitions) > 0:
            raise KafkaError(ErrorCode.invalid_request, "TopicPartitions must be empty when (re-)joining.")
        # Joining with an empty list of names or an empty regex is allowed: no topics yet.
        if req.subscribed_topic_names is None and get(req, "subscribed_topic_regex") is None:
            raise KafkaError(ErrorCode.invalid_request,
                             "Either SubscribedTopicNames or SubscribedTopicRegex must be non-null when (re-)joining.")
    elif epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        if req.instance_id is None:
            raise KafkaError(ErrorCode.invalid_request, "InstanceId can't be null.")
    elif epoch < LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        raise KafkaError(ErrorCode.invalid_request, "MemberEpoch is invalid.")
    assignors = c.config["group.consumer.assignors"]
    if req.server_assignor is not None and req.server_assignor not in assignors:
        # Kafka joins the names of a HashSet, so they come in its iteration order
        raise KafkaError(ErrorCode.unsupported_assignor,
                         f"ServerAssignor {req.server_assignor} is not supported. "
                         f"Supported assignors: {', '.join(java_order(dict.fromkeys(assignors)))}.")


def validate_regex(regex: str) -> None:
    """INVALID_REGULAR_EXPRESSION for a pattern RE2 cannot compile (Kafka uses RE2/J)."""
    try:
        re2.compile(regex)
    except re2.error as e:
        raise KafkaError(ErrorCode.invalid_regular_expression,
                         f"SubscribedTopicRegex `{regex}` is not a valid regular expression: {e}.") from None


# ---------------------------------------------------------------------------------------
# ConsumerGroupHeartbeat

_GROUP_CONFIGS = ("consumer.session.timeout.ms", "consumer.heartbeat.interval.ms")
_BOUNDS = (("group.consumer.min.session.timeout.ms", "group.consumer.max.session.timeout.ms"),
           ("group.consumer.min.heartbeat.interval.ms", "group.consumer.max.heartbeat.interval.ms"))


def session_and_heartbeat_ms(c: "Coordinator", group_id: str) -> tuple[int, int]:
    """The group's session timeout and heartbeat interval: its own configs (set with
    IncrementalAlterConfigs) over the coordinator's, kept within the coordinator's current
    bounds as Kafka's `GroupConfig` evaluates them."""
    if not c.cluster.group_configs.get(group_id):
        # most groups have no config of their own: the answer is the coordinator's, worked out once
        return c.config.derived("consumer.session_and_heartbeat_ms",
                                lambda config: _within_bounds(config, group_configs_of(c, group_id, _GROUP_CONFIGS)))
    return _within_bounds(c.config, group_configs_of(c, group_id, _GROUP_CONFIGS))


def _within_bounds(config: Any, values: Any) -> tuple[int, int]:
    return tuple(min(max(int(v), config[low]), config[high])  # type: ignore[return-value]
                 for v, (low, high) in zip(values, _BOUNDS))


@handles(CONSUMER_GROUP_HEARTBEAT)
def consumer_group_heartbeat(c: "Coordinator", req: Any, version: int) -> Result:
    try:
        validate_heartbeat(c, req, version)
        c.check_coordinator(req.group_id)
        if req.member_epoch in (LEAVE_GROUP_MEMBER_EPOCH, LEAVE_GROUP_STATIC_MEMBER_EPOCH):
            return leave(c, req.group_id, req.instance_id, req.member_id, req.member_epoch)
        return heartbeat(c, req)
    except KafkaError as e:
        return Result(heartbeat_error(e))


def _owned(topic_partitions: Any) -> dict[uuid.UUID, frozenset[int]] | None:
    if topic_partitions is None:
        return None
    out: dict[uuid.UUID, frozenset[int]] = {}
    for tp in topic_partitions:
        if tp.topic_id is not None:
            out[tp.topic_id] = out.get(tp.topic_id, frozenset()) | frozenset(tp.partitions)
    return out


def consumer_group(c: "Coordinator", group_id: str) -> ConsumerGroup:
    """The group a heartbeat names, never created (`getOrMaybeCreateConsumerGroup` without create)."""
    return get_or_maybe_create_group(c, group_id, False, [])


def get_or_maybe_create_group(c: "Coordinator", group_id: str, create: bool, records: list) -> ConsumerGroup:
    """Kafka's `getOrMaybeCreateConsumerGroup`: a new group lives only in the handler until
    its records are replayed; an empty classic group is replaced, a non-empty one upgraded."""
    group = c.groups.get(group_id)
    if isinstance(group, ConsumerGroup):
        return group  # the common case, before anything else is built
    def from_classic(group: ClassicGroup) -> ConsumerGroup:
        if group.is_empty():
            records.extend(group.tombstones())
            return ConsumerGroup(group_id)
        consumer = convert_to_consumer_group(c, group, records)
        for m in consumer.members.values():
            schedule_session_timeout(c, group_id, m.member_id, m.classic_member_metadata.session_timeout_ms)
        return consumer
    return CONSUMER.get_or_maybe_create(c, group_id, create, lambda: ConsumerGroup(group_id), from_classic)


def throw_if_full(c: "Coordinator", group: ConsumerGroup, member_id: str) -> None:
    limit = c.config["group.consumer.max.size"]
    if len(group.members) >= limit and (not member_id or member_id not in group.members):
        raise KafkaError(ErrorCode.group_max_size_reached,
                         f"The consumer group has reached its maximum capacity of {limit} members.")


def _is_subset(owned: Mapping[uuid.UUID, frozenset[int]] | None, assigned: Mapping[uuid.UUID, Any]) -> bool:
    if owned is None:
        return False
    for tid, parts in owned.items():
        have = assigned.get(tid)
        if have is None and parts:
            return False
        if any(p not in have for p in parts):
            return False
    return True


def check_member_epoch(member: ConsumerGroupMember, received: int, owned: Any) -> None:
    """FENCED_MEMBER_EPOCH unless the epoch is the member's, or its previous one with a subset
    of its partitions (the response that moved it may have been lost). Epoch 0 is a rejoin after
    being fenced and always accepted (KAFKA-19233, Kafka 4.3)."""
    if received == 0:
        return
    if received > member.member_epoch:
        raise KafkaError(ErrorCode.fenced_member_epoch,
                         f"The consumer group member has a greater member epoch ({received}) than the one known "
                         f"by the group coordinator ({member.member_epoch}). The member must abandon all its "
                         "partitions and rejoin.")
    if received < member.member_epoch and (received != member.previous_member_epoch
                                           or not _is_subset(owned, member.assigned_partitions)):
        raise KafkaError(ErrorCode.fenced_member_epoch,
                         f"The consumer group member has a smaller member epoch ({received}) than the one known "
                         f"by the group coordinator ({member.member_epoch}). The member must abandon all its "
                         "partitions and rejoin.")


def get_member(group: ConsumerGroup, member_id: str) -> ConsumerGroupMember:
    return group.member(member_id)


def dynamic_member(group: ConsumerGroup, member_id: str, epoch: int, owned: Any, create: bool,
                   classic: bool = False) -> ConsumerGroupMember:
    member = group.members.get(member_id)
    if member is None:
        if not create:
            get_member(group, member_id)
        member = ConsumerGroupMember(member_id)
    if not classic:
        check_member_epoch(member, epoch, owned)
    return member


def static_member(group: ConsumerGroup, member_id: str, epoch: int, instance_id: str, owned: Any, create: bool,
                  records: list, classic: bool = False) -> tuple[ConsumerGroupMember, ConsumerGroupMember | None]:
    """The member, and the static member it replaces (if any): KIP-848 static membership."""
    existing = group.static_member(instance_id)
    if create:
        if existing is None:
            return group.members.get(member_id) or ConsumerGroupMember(member_id), None
        if not classic and not existing.uses_classic_protocol and existing.member_epoch != LEAVE_GROUP_STATIC_MEMBER_EPOCH:
            raise KafkaError(ErrorCode.unreleased_instance_id,
                             f"Static member {member_id} with instance id {instance_id} cannot join the group "
                             f"because the instance id is owned by {existing.member_id} member.")
        new = existing.replace(member_id=member_id, member_epoch=0, previous_member_epoch=0)
        replace_member(records, group, existing, new)
        return new, existing
    group.checked_static_member(instance_id, member_id)
    if not classic:
        check_member_epoch(existing, epoch, owned)
    return existing, None


def remove_member_records(records: list, group_id: str, member_id: str) -> None:
    """Tombstones for a member, in Kafka's order (current, target, subscription)."""
    records += [G.current_assignment_tombstone(group_id, member_id), G.target_member_tombstone(group_id, member_id),
                G.member_tombstone(group_id, member_id)]


def replace_member(records: list, group: ConsumerGroup, old: ConsumerGroupMember, new: ConsumerGroupMember) -> None:
    """A rejoining static member takes over its predecessor's subscription and target."""
    remove_member_records(records, group.group_id, old.member_id)
    records += [G.member_record(group.group_id, new),
                G.target_member_record(group.group_id, new.member_id, group.target_assignment.get(old.member_id, {})),
                G.current_assignment_record(group.group_id, new)]


class GroupChange:
    """The group as it will be once this heartbeat's member changes are replayed: the
    handler computes epochs, hash and assignment against it, as Kafka does before writing."""

    def __init__(self, group: ConsumerGroup, updated: ConsumerGroupMember | None = None,
                 replaced: ConsumerGroupMember | None = None, removed: tuple[str, ...] = ()) -> None:
        self.group = group
        self._updated, self._replaced, self._removed = updated, replaced, removed

    def target_of(self, member_id: str) -> Assignment:
        """The member's target assignment (without copying the group's: a steady heartbeat
        of a big group needs only this)."""
        if self._removed or self._replaced is not None:
            return self.target.get(member_id, {})
        return self.group.target_assignment.get(member_id, {})

    @functools.cached_property
    def members(self) -> dict[str, ConsumerGroupMember]:
        return self._changed()[0]

    @functools.cached_property
    def target(self) -> dict[str, Assignment]:
        return self._changed()[1]

    def _changed(self) -> tuple[dict, dict]:
        group, updated, replaced, removed = self.group, self._updated, self._replaced, self._removed
        members = dict(group.members)
        target = dict(group.target_assignment)
        for mid in removed:
            members.pop(mid, None)
            target.pop(mid, None)
        if replaced is not None:
            members.pop(replaced.member_id, None)
            if updated is not None:
                target[updated.member_id] = target.pop(replaced.member_id, {})
        if updated is not None:
            members[updated.member_id] = updated
        return members, target

    def subscribed_topic_names(self, dropped_regexes: set[str] = frozenset()) -> set[str]:
        """The topics the changed group subscribes to: the group's counts with this change's
        members counted out and in (as `_changed` replaces them), not a pass over every member."""
        group = self.group
        resolved = {r: v for r, v in group.resolved_regexes.items() if r not in dropped_regexes}
        names, regexes = Counter(group.subscribed_names), Counter(group.subscribed_regexes)
        gone: set[str] = set()
        leaving = [*self._removed, *([self._replaced.member_id] if self._replaced is not None else []),
                   *([self._updated.member_id] if self._updated is not None else [])]
        for mid in leaving:
            if mid not in gone and mid in group.members:
                gone.add(mid)
                track_subscription(names, regexes, group.members[mid], -1)
        track_subscription(names, regexes, self._updated, +1)
        return topics_of(names, regexes, resolved)


def subscribed_topic_ids(c: "Coordinator", names: frozenset[str] | set[str]) -> frozenset[uuid.UUID]:
    """Ids of the named topics that exist (unknown topics are left out, as Kafka's image does)."""
    cluster = c.cluster
    return frozenset(cluster.topic_id(n) for n in names if n in cluster)


def update_subscription_metadata(c: "Coordinator", change: GroupChange, bump: bool, records: list) -> int:
    """Kafka's `updateSubscriptionMetadata`: the metadata hash, and the group epoch bump."""
    group = change.group
    epoch = group.group_epoch
    new_hash = metadata_hash(change.subscribed_topic_names(), c.cluster)
    if new_hash != group.metadata_hash:
        bump = True
    if bump:
        epoch += 1
        records.append(G.group_epoch_record(group.group_id, epoch, new_hash))
    group.set_metadata_refresh_deadline(c.now() + METADATA_REFRESH_INTERVAL_MS, epoch, c.cluster.metadata_version)
    if group.partition_metadata is not None:
        # Written by Kafka before 4.1; the hash replaces it.
        records.append(G.partition_metadata_tombstone(group.group_id))
    return epoch


def update_target_assignment(c: "Coordinator", change: GroupChange, group_epoch: int, records: list) -> dict[str, Assignment]:
    """A new target assignment from the preferred server assignor; records for the members
    whose target changed, then the new assignment epoch (Kafka's `TargetAssignmentBuilder`)."""
    group = change.group
    name = group.preferred_server_assignor(change.members) or c.config["group.consumer.assignors"][0]
    assignor = get_server_assignor(name)
    # Kafka builds the member specs in a java.util.HashMap: the assignor sees that order.
    ordered = JavaHashMap((mid, None) for mid in change.members)
    resolved = group.resolved_regexes
    specs: dict[str, MemberSubscription] = {}
    names_in_use: set[str] = set()
    for mid in ordered:
        m = change.members[mid]
        names = m.subscribed_topics(resolved)
        names_in_use |= names
        specs[mid] = MemberSubscription(subscribed_topic_ids(c, names), m.rack_id, m.instance_id)
    topics = TopicMetadata({}, {})
    for n in names_in_use:
        if n in c.cluster:
            t = c.cluster.topic(n)
            topics.topics[t.topic_id] = (t.name, t.partitions)
            for p, racks in t.racks.items():
                topics.racks[(t.topic_id, p)] = set(racks)
    return assign_partitions(c, CONSUMER, group.group_id, group_epoch, assignor, topics, specs, change.target, records)


def maybe_reconcile(c: "Coordinator", change: GroupChange, member: ConsumerGroupMember, target_epoch: int,
                    target: Assignment, owned: Any, subscription_changed: bool, records: list) -> ConsumerGroupMember:
    """Kafka's `maybeReconcile`: the next step, its record, and the rebalance timeout."""
    if not subscription_changed and member.is_reconciled_to(target_epoch):
        return member
    group = change.group
    subscribed = subscribed_topic_ids(c, member.subscribed_topics(group.resolved_regexes))
    updated = reconcile(member, target_epoch, target, partition_epoch=group.current_partition_epoch, owned=owned,
                        subscribed_topic_ids=subscribed, enforce_subscription=subscription_changed)
    if updated != member:
        records.append(G.current_assignment_record(group.group_id, updated))
        if not updated.uses_classic_protocol:
            if updated.state == MemberState.UNREVOKED_PARTITIONS:
                schedule_rebalance_timeout(c, group.group_id, updated.member_id, updated.member_epoch,
                                           updated.rebalance_timeout_ms)
            else:
                c.timers.cancel(rebalance_key(group.group_id, updated.member_id))
    return updated


def heartbeat(c: "Coordinator", req: Any) -> Result:
    """A regular heartbeat (join, keep-alive, reconcile)."""
    now = c.now()
    records: list = []
    group_id, member_id, epoch = req.group_id, req.member_id, req.member_epoch
    instance_id = req.instance_id
    create = epoch == 0
    group = get_or_maybe_create_group(c, group_id, create, records)
    throw_if_full(c, group, member_id)
    if not member_id:
        member_id = client_member_id(c)
    owned = _owned(req.topic_partitions)
    replaced = None
    if instance_id is None:
        member = dynamic_member(group, member_id, epoch, owned, create)
    else:
        member, replaced = static_member(group, member_id, epoch, instance_id, owned, create, records)
        if replaced is not None:
            cancel_timers(c, group_id, replaced.member_id)  # the predecessor's timers go with it (Kafka)

    names = req.subscribed_topic_names
    regex = get(req, "subscribed_topic_regex")
    rebalance_ms = ms(req.rebalance_timeout)
    context = c.request_context
    if (instance_id is None or instance_id == member.instance_id) and req.rack_id is None \
            and rebalance_ms == -1 and req.server_assignor is None and names is None and regex is None \
            and context.client_id == member.client_id and context.client_host == member.client_host \
            and member.classic_member_metadata is None:
        updated = member  # a steady heartbeat: the replace below would give an equal member
    else:
        updated = member.replace(
            instance_id=instance_id if instance_id is not None else member.instance_id,
            rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
            rebalance_timeout_ms=rebalance_ms if rebalance_ms != -1 else member.rebalance_timeout_ms,
            server_assignor_name=req.server_assignor if req.server_assignor is not None else member.server_assignor_name,
            subscribed_topic_names=frozenset(names) if names is not None else member.subscribed_topic_names,
            subscribed_topic_regex=regex if regex is not None else member.subscribed_topic_regex,
            client_id=context.client_id, client_host=context.client_host,
            classic_member_metadata=None)

    names_changed = False
    if updated != member:
        records.append(G.member_record(group_id, updated))
        names_changed = updated.subscribed_topic_names != member.subscribed_topic_names
    regex_result, follow_up = maybe_update_regexes(c, group, member, updated, records)
    subscription_changed = names_changed or regex_result != "unchanged"
    change = GroupChange(group, updated, replaced)

    group_epoch = group.group_epoch
    bump = names_changed or regex_result == "resolved" or _preferred_assignor_changed(c, change, member, updated)
    if bump or group.has_metadata_expired(now, c.cluster.metadata_version):
        group_epoch = update_subscription_metadata(c, change, bump, records)

    if group_epoch > group.assignment_epoch and target_assignment_due(c, group, "consumer"):
        target = update_target_assignment(c, change, group_epoch, records).get(updated.member_id, {})
        target_epoch = group_epoch
    else:  # nothing new, or the next assignment waits for the assignment interval (KIP-1263)
        target_epoch = group.assignment_epoch
        target = change.target_of(updated.member_id)

    reconciled = maybe_reconcile(c, change, updated, target_epoch, target, owned, subscription_changed, records)
    session_ms, interval_ms = session_and_heartbeat_ms(c, group_id)
    schedule_session_timeout(c, group_id, member_id, session_ms)

    response = {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
                "member_id": reconciled.member_id, "member_epoch": reconciled.member_epoch,
                "heartbeat_interval": interval_ms, "assignment": None}
    full = rebalance_ms != -1 and (names is not None or regex is not None) and req.topic_partitions is not None
    if epoch == 0 or full or reconciled.assigned_partitions != member.assigned_partitions:
        response["assignment"] = {"topic_partitions": [
            {"topic_id": t, "partitions": sorted(reconciled.assigned_partitions[t])}
            for t in topic_order(reconciled.assigned_partitions)]}
    return Result(response, records, then=[follow_up] if follow_up else [])


def _preferred_assignor_changed(c: "Coordinator", change: GroupChange, member: ConsumerGroupMember,
                                updated: ConsumerGroupMember) -> bool:
    """Kafka's `hasPreferredServerAssignorChanged` (KAFKA-20434): the group's effective assignor
    (the default when no member names one) moves once most members ask for another, e.g.
    when static members rejoin with a new one; that bumps the group epoch."""
    if updated.server_assignor_name == member.server_assignor_name:
        return False
    default, group = c.config["group.consumer.assignors"][0], change.group
    return (group.preferred_server_assignor(group.members) or default) \
        != (group.preferred_server_assignor(change.members) or default)


# ---------------------------------------------------------------------------------------
# Regular expressions (KIP-848 "regex subscriptions", resolved with RE2 as Kafka's RE2/J)

def maybe_update_regexes(c: "Coordinator", group: ConsumerGroup, member: ConsumerGroupMember,
                         updated: ConsumerGroupMember, records: list) -> tuple[str, Any]:
    """Kafka's `maybeUpdateRegularExpressions`: "unchanged", "updated" or "resolved" (the
    new regex is already resolved), and the resolution to run after this write, if any."""
    now = c.now()
    old_regex, new_regex = member.subscribed_topic_regex, updated.subscribed_topic_regex
    result = "unchanged"
    refresh = False
    if old_regex != new_regex:
        result = "updated"
        if old_regex and group.num_subscribed_members(old_regex) == 1:
            records.append(G.regex_tombstone(group.group_id, old_regex))
        if new_regex:
            if group.num_subscribed_members(new_regex) == 0:
                validate_regex(new_regex)
                refresh = True
            elif new_regex in group.resolved_regexes:
                result = "resolved"
        elif old_regex:
            # A cleared regex (""): nothing to resolve, the member's topics changed now and the
            # group epoch is bumped at once (Kafka's testConsumerGroupMemberClearsRegex).
            result = "resolved"
    if not refresh and not group.subscribed_regexes:
        return result, None
    last_refresh = group.last_regex_refresh_ms
    if last_refresh is not None and now <= last_refresh + REGEX_BATCH_REFRESH_MIN_INTERVAL_MS:
        return result, None
    regexes = dict(group.subscribed_regexes)
    if old_regex:
        regexes[old_regex] = regexes.get(old_regex, 0) - 1
        if regexes[old_regex] <= 0:
            del regexes[old_regex]
    if new_regex:
        regexes[new_regex] = regexes.get(new_regex, 0) + 1
    refresh |= len(regexes) != len(group.resolved_regexes)
    refresh |= group.last_regex_version < c.cluster.last_version_with_new_topics
    refresh |= last_refresh is None or now > last_refresh + c.config["group.consumer.regex.refresh.interval.ms"]
    if not (refresh and regexes):
        return result, None
    group_id, wanted = group.group_id, sorted(regexes)
    return result, lambda: resolve_regexes(c, group_id, wanted)


def resolve_regexes(c: "Coordinator", group_id: str, regexes: list[str]) -> Result:
    """Resolve the regexes against the cluster's topics (full matches) and write the result
    (Kafka's `refreshRegularExpressions` + `handleRegularExpressionsResult`)."""
    group = c.groups.get(group_id)
    if not isinstance(group, ConsumerGroup):
        return Result()
    now, version = c.now(), c.cluster.metadata_version
    compiled = {}
    for r in regexes:
        try:
            compiled[r] = re2.compile(r)
        except re2.error:
            continue  # validated when received; ignored as Kafka does
    found: dict[str, set[str]] = {r: set() for r in regexes}
    for name in c.cluster.topic_names():
        # a regex matches only topics the heartbeat's principal may DESCRIBE (Kafka 4.1's
        # refreshRegularExpressions, KAFKA-18813); always true without an authorizer
        if not c.authorize("DESCRIBE", "TOPIC", name):
            continue
        for r, pattern in compiled.items():
            if pattern.fullmatch(name):
                found[r].add(name)
    records: list = []
    bump = False
    resolved = dict(group.resolved_regexes)
    for r in regexes:
        if group.num_subscribed_members(r) == 0:
            continue
        new = ResolvedRegularExpression(frozenset(found[r]), version, now)
        if resolved.get(r, G.EMPTY_RESOLVED).topics != new.topics:
            bump = True
        resolved[r] = new
        records.append(G.regex_record(group_id, r, new))
    new_hash = metadata_hash(group.subscribed_topic_names(group.members, resolved), c.cluster)
    if new_hash != group.metadata_hash:
        bump = True
    if bump:
        epoch = group.group_epoch + 1
        records.append(G.group_epoch_record(group_id, epoch, new_hash))
        group.set_metadata_refresh_deadline(now + METADATA_REFRESH_INTERVAL_MS, epoch, c.cluster.metadata_version)
    return Result(records=records)


# ---------------------------------------------------------------------------------------
# Leaving and fencing

def leave(c: "Coordinator", group_id: str, instance_id: str | None, member_id: str, epoch: int) -> Result:
    group = consumer_group(c, group_id)
    response = {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "member_id": member_id,
                "member_epoch": epoch, "heartbeat_interval": 0, "assignment": None}
    if instance_id is None:
        return fence_members(c, group, [get_member(group, member_id)], response)
    member = group.checked_static_member(instance_id, member_id)
    if epoch == LEAVE_GROUP_STATIC_MEMBER_EPOCH:
        # A static member leaving for a moment keeps its partitions (epoch -2) until its session ends.
        # Kafka also resets the partitions' assignment epochs to 0 (resetAssignedPartitionsEpochsToZero):
        # the member that takes the instance over owns them from no particular epoch.
        leaving = member.replace(member_epoch=LEAVE_GROUP_STATIC_MEMBER_EPOCH, partitions_pending_revocation={},
                                 assigned_partitions={t: dict.fromkeys(ps, 0)
                                                      for t, ps in member.assigned_partitions.items()})
        response["member_id"], response["member_epoch"] = member.member_id, LEAVE_GROUP_STATIC_MEMBER_EPOCH
        return Result(response, [G.current_assignment_record(group_id, leaving)])
    return fence_members(c, group, [member], response)


def fence_members(c: "Coordinator", group: ConsumerGroup, members: list[ConsumerGroupMember], response: Any) -> Result:
    """Remove members and bump the group epoch (or convert back to a classic group when only
    classic-protocol members would remain: KIP-848 online downgrade)."""
    if not members:
        return Result(response)
    downgrade = maybe_downgrade(c, group, members, response)
    if downgrade is not None:
        return downgrade
    records: list = []
    for m in members:
        remove_member_records(records, group.group_id, m.member_id)
    counts: dict[str, int] = {}
    for m in members:
        if m.subscribed_topic_regex:
            counts[m.subscribed_topic_regex] = counts.get(m.subscribed_topic_regex, 0) + 1
    dropped = {r for r, n in counts.items() if group.num_subscribed_members(r) == n}
    records += [G.regex_tombstone(group.group_id, r) for r in sorted(dropped)]
    change = GroupChange(group, removed=tuple(m.member_id for m in members))
    new_hash = metadata_hash(change.subscribed_topic_names(dropped), c.cluster)
    records.append(G.group_epoch_record(group.group_id, group.group_epoch + 1, new_hash))
    if not change.members:
        # An empty group keeps its assignment epoch level with its group epoch (KAFKA-20442).
        records.append(G.target_epoch_record(group.group_id, group.group_epoch + 1))
    for m in members:
        cancel_timers(c, group.group_id, m.member_id)
    return Result(response, records)


def fence_member_by_id(c: "Coordinator", group_id: str, member_id: str, reason: str) -> Result | None:
    """A timer's fencing: nothing when the group or member is already gone."""
    return fence_by_id(c, ConsumerGroup, group_id, member_id, reason, fence_members)


def schedule_session_timeout(c: "Coordinator", group_id: str, member_id: str, timeout_ms: int) -> None:
    c.timers.schedule(session_key(group_id, member_id), c.now() + timeout_ms,
                      lambda: fence_member_by_id(c, group_id, member_id, "the member session expired"))


def schedule_rebalance_timeout(c: "Coordinator", group_id: str, member_id: str, member_epoch: int,
                               timeout_ms: int) -> None:
    """Fence a member that has not revoked within its rebalance timeout (still in `member_epoch`)."""
    def expire() -> Result | None:
        group = c.groups.get(group_id)
        if not isinstance(group, ConsumerGroup) or member_id not in group.members:
            return None
        if group.members[member_id].member_epoch != member_epoch:
            return None
        return fence_member_by_id(c, group_id, member_id,
                                  f"it failed to transition from epoch {member_epoch} within {timeout_ms}ms")
    c.timers.schedule(rebalance_key(group_id, member_id), c.now() + timeout_ms, expire)


# ---------------------------------------------------------------------------------------
# ConsumerGroupDescribe

def describe_group(c: "Coordinator", group_id: str) -> dict:
    def answer(group: ConsumerGroup) -> dict:
        members = [{"member_id": m.member_id, "instance_id": m.instance_id, "rack_id": m.rack_id,
                    "member_epoch": m.member_epoch, "client_id": m.client_id, "client_host": m.client_host,
                    "subscribed_topic_names": sorted(m.subscribed_topic_names),
                    "subscribed_topic_regex": m.subscribed_topic_regex,
                    "assignment": described_assignment(c, m.assigned_partitions),
                    "target_assignment": described_assignment(c, group.target_assignment.get(m.member_id, {})),
                    "member_type": 0 if m.uses_classic_protocol else 1}
                   for m in group.members.values()]
        return {"assignor_name": group.preferred_server_assignor(group.members) or c.config["group.consumer.assignors"][0],
                "members": members}
    return CONSUMER.describe(c, group_id, answer, assignor_name="")


consumer_group_describe = handles_describe(CONSUMER_GROUP_DESCRIBE, lambda c, group_id, req: describe_group(c, group_id))


def _restart_session(c: "Coordinator", group: ConsumerGroup, m: ConsumerGroupMember) -> None:
    """After a reload (Kafka's onLoaded, consumer part): a fresh session, and a member still revoking
    gets its rebalance timeout again."""
    timeout = (m.classic_member_metadata.session_timeout_ms if m.uses_classic_protocol
               else session_and_heartbeat_ms(c, group.group_id)[0])
    schedule_session_timeout(c, group.group_id, m.member_id, timeout)
    if m.state == MemberState.UNREVOKED_PARTITIONS and not m.uses_classic_protocol:
        schedule_rebalance_timeout(c, group.group_id, m.member_id, m.member_epoch, m.rebalance_timeout_ms)


restarts_sessions_on_load(CONSUMER, _restart_session)


__all__ = ["consumer_group_heartbeat", "consumer_group_describe", "describe_group", "heartbeat", "leave",
           "fence_members", "session_key", "rebalance_key", "validate_heartbeat", "GroupChange"]
