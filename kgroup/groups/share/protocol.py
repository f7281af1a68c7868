"""ShareGroupHeartbeat (76) and ShareGroupDescribe (77): KIP-932 membership on the coordinator.

One heartbeat, as Kafka's `GroupMetadataManager.shareGroupHeartbeat` does it:

1. create or update the member (a ShareGroupMemberMetadata record when it changed); a new
   subscription, a new group, changed topic metadata (the *metadata hash*) or initialised
   share-partitions the target does not cover yet bump the **group epoch** (ShareGroupMetadata);
2. when the group epoch is ahead of the **assignment epoch**, the simple assignor computes a
   new target assignment (records for changed members + the new epoch);
3. the member takes its target at once (no fencing, no revocation: the KIP's "reconciliation
   is very simple"): ShareGroupCurrentMemberAssignment with the new member epoch.

Then the share-partitions the group subscribes to and that have no durable state yet are
initialised in the share coordinator through the `Persister` (record 15: initializing, then
initialized), as Kafka's `GroupCoordinatorService` does after the heartbeat's write.
"""
from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Any

from kgroup.assignors.api import MemberSubscription
from kgroup.assignors.simple import SimpleAssignor
from kgroup.errors import ErrorCode, KafkaError
from kgroup.group_configs import GROUP_CONFIGS, group_config
from kgroup.groups.kinds import SHARE
from kgroup.groups.metadata_hash import metadata_hash
from kgroup.groups.modern import (LEAVE_GROUP_MEMBER_EPOCH, METADATA_REFRESH_INTERVAL_MS, Assignment, MemberState,
                                  assign_partitions, described_assignment, frozen, handles_describe, heartbeat_error,
                                  restarts_sessions_on_load, target_assignment_due, throw_if_empty_string,
                                  topic_order)
from kgroup.javaorder import JavaHashMap
from kgroup.runtime import Result, group_timer, handles

from . import group as G
from .group import ShareGroup, ShareGroupMember, share_group
from .state import (PERSISTER_KEY, InitTopic, StatePartitionMetadata, initialize_share_state, merge_topics,
                    persister)

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

SHARE_GROUP_HEARTBEAT = SHARE.heartbeat_api
SHARE_GROUP_DESCRIBE = SHARE.describe_api
#: Kafka's `group.share.initialize.retry.interval.ms` default: share-partitions still
#: "initializing" after this long are initialised again by the next heartbeat.
INITIALIZE_RETRY_INTERVAL_MS = 30_000
#: an assignor in `Coordinator.soft_state` that replaces the simple assignor (a what-if, or a
#: test's stand-in for Kafka's MockPartitionAssignor; see `share_assignor`)
ASSIGNOR_KEY = "share.assignor"


def session_key(group_id: str, member_id: str) -> str:
    return group_timer(f"share-session-{group_id}-{member_id}", group_id)


# ---------------------------------------------------------------------------------------
# The assignor and the group configs

def share_assignor(c: "Coordinator") -> Any:
    """The assignor share groups use: `c.soft_state["share.assignor"]` when set (e.g. a
    `FixedAssignor`), otherwise the simple assignor (Kafka's only `group.share.assignors`)."""
    assignor = c.soft_state.get(ASSIGNOR_KEY)
    if assignor is None:
        return SimpleAssignor(all_partitions=c.profile.share_assign_all_partitions_to_all_members)
    return assignor


def share_config(c: "Coordinator", group_id: str, name: str) -> int:
    """A `share.*` group config as Kafka evaluates it (`GroupConfig.evaluate`): the group's override
    kept within the coordinator's current bounds (`group.share.min/max.*`), which may have moved
    since the override was set."""
    if not c.cluster.group_configs.get(group_id):
        # most groups have no config of their own: the coordinator's value, worked out once
        return c.config.derived(("share_config", name),
                                lambda config: _within_bounds(config, name, group_config(c, group_id, name)))
    return _within_bounds(c.config, name, group_config(c, group_id, name))


def _within_bounds(config: Any, name: str, value: int) -> int:
    d = GROUP_CONFIGS[name]
    return min(max(value, config[d.low]), config[d.high])


# ---------------------------------------------------------------------------------------
# Validation (GroupCoordinatorService.throwIfShareGroupHeartbeatRequestIsInvalid)

def validate_heartbeat(req: Any) -> None:
    throw_if_empty_string(req.member_id, "MemberId")
    throw_if_empty_string(req.group_id, "GroupId")
    throw_if_empty_string(req.rack_id, "RackId")
    if req.member_epoch == 0:
        if not req.subscribed_topic_names:
            raise KafkaError(ErrorCode.invalid_request, "SubscribedTopicNames must be set in first request.")
    elif req.member_epoch < LEAVE_GROUP_MEMBER_EPOCH:
        raise KafkaError(ErrorCode.invalid_request, "MemberEpoch is invalid.")


# ---------------------------------------------------------------------------------------
# ShareGroupHeartbeat

@handles(SHARE_GROUP_HEARTBEAT)
def share_group_heartbeat(c: "Coordinator", req: Any, version: int) -> Result:
    try:
        validate_heartbeat(req)
        c.check_coordinator(req.group_id)
        if req.member_epoch == LEAVE_GROUP_MEMBER_EPOCH:
            return leave(c, req.group_id, req.member_id)
        return heartbeat(c, req)
    except KafkaError as e:
        return Result(heartbeat_error(e))


def get_or_maybe_create_group(c: "Coordinator", group_id: str, create: bool) -> ShareGroup:
    """Kafka's `getOrMaybeCreateShareGroup`: a new group lives only in the handler until its
    records are replayed; any other group type is GROUP_ID_NOT_FOUND."""
    group = c.groups.get(group_id)
    if isinstance(group, ShareGroup):
        return group  # the common case, before anything else is built
    return SHARE.get_or_maybe_create(c, group_id, create, lambda: ShareGroup(group_id))


def throw_if_full(c: "Coordinator", group: ShareGroup, member_id: str) -> None:
    limit = c.config["group.share.max.size"]
    if len(group.members) >= limit and (not member_id or member_id not in group.members):
        raise KafkaError(ErrorCode.group_max_size_reached,
                         f"The share group has reached its maximum capacity of {limit} members.")


def check_member_epoch(member: ShareGroupMember, received: int) -> None:
    """Kafka's `throwIfShareGroupMemberEpochIsInvalid`: the member's epoch, or its previous one
    (the response that moved it may have been lost)."""
    if received > member.member_epoch:
        raise KafkaError(ErrorCode.fenced_member_epoch,
                         f"The share group member has a greater member epoch ({received}) than the one known by the "
                         f"group coordinator ({member.member_epoch}). The member must abandon all its partitions "
                         "and rejoin.")
    if received < member.member_epoch and received != member.previous_member_epoch:
        raise KafkaError(ErrorCode.fenced_member_epoch,
                         f"The share group member has a smaller member epoch ({received}) than the one known by the "
                         f"group coordinator ({member.member_epoch}), and it does not match the previous member epoch "
                         f"({member.previous_member_epoch}). The member must abandon all its partitions and rejoin.")


def get_or_maybe_subscribe_member(group: ShareGroup, member_id: str, epoch: int, create: bool) -> ShareGroupMember:
    """The member (a new one on a join). A known member may rejoin with epoch 0 under its own id,
    e.g. after FENCED_MEMBER_EPOCH: it gets its current state back, nothing is bumped (Kafka's
    share counterpart of KAFKA-19233)."""
    member = group.members.get(member_id)
    if member is None:
        return ShareGroupMember(member_id) if create else group.member(member_id)
    if epoch != 0:
        check_member_epoch(member, epoch)
    return member


def _with(members: Mapping[str, ShareGroupMember], updated: ShareGroupMember | None = None,
          removed: str | None = None) -> dict[str, ShareGroupMember]:
    out = dict(members)
    if removed is not None:
        out.pop(removed, None)
    if updated is not None:
        out[updated.member_id] = updated
    return out


def topic_ids(c: "Coordinator", names: Iterable[str]) -> frozenset[uuid.UUID]:
    """Ids of the named topics that exist (unknown topics are left out, as Kafka's image does)."""
    return frozenset(c.cluster.topic_id(n) for n in names if n in c.cluster)


def initialized_assignment_pending(c: "Coordinator", group: ShareGroup) -> bool:
    """Kafka's `initializedAssignmentPending`: some subscribed topic has initialised
    share-partitions the target assignment does not cover exactly (the assignor only hands
    out initialised share-partitions under Kafka, so a new assignment is due)."""
    if not c.profile.share_assign_initialized_only or not group.members:
        return False
    initialized = group.state_metadata.initialized
    names = group.subscribed_topic_names()
    if not initialized or not names:
        return False
    assigned: dict[uuid.UUID, set[int]] = {}
    for a in group.target_assignment.values():
        for t, ps in a.items():
            assigned.setdefault(t, set()).update(ps)
    for tid, info in initialized.items():
        if info.name in names and assigned.get(tid) != set(info.partitions):
            return True
    return False


class _Describer:
    """The topics as the share assignor sees them; `assignable_partitions` limits it to the
    initialised share-partitions under Kafka (`withTopicAssignablePartitionsMap`)."""

    def __init__(self, c: "Coordinator", group: ShareGroup) -> None:
        self.c = c
        self.initialized = group.state_metadata.partitions("initialized")
        if not c.profile.share_assign_initialized_only:
            self.assignable_partitions = None  # type: ignore[assignment]

    def num_partitions(self, topic_id: uuid.UUID) -> int:
        try:
            return self.c.cluster.topic(self.c.cluster.topic_name(topic_id)).partitions
        except KeyError:
            return -1

    def racks_for_partition(self, topic_id: uuid.UUID, partition: int) -> set[str]:
        return set()

    def assignable_partitions(self, topic_id: uuid.UUID) -> frozenset[int]:
        return self.initialized.get(topic_id, frozenset())


def update_target_assignment(c: "Coordinator", group: ShareGroup, members: Mapping[str, ShareGroupMember],
                             group_epoch: int, records: list) -> dict[str, Assignment]:
    """A new target assignment from the simple assignor: records for the members whose target
    changed, then the new assignment epoch (Kafka's `ShareTargetAssignmentBuilder`)."""
    assignor = share_assignor(c)
    ordered = JavaHashMap((mid, None) for mid in members)  # Kafka's HashMap order of member specs
    specs = {mid: MemberSubscription(topic_ids(c, members[mid].subscribed_topic_names), members[mid].rack_id)
             for mid in ordered}
    return assign_partitions(c, SHARE, group.group_id, group_epoch, assignor, _Describer(c, group), specs,
                             group.target_assignment, records)


def heartbeat(c: "Coordinator", req: Any) -> Result:
    """A regular heartbeat (join, keep-alive, take the new assignment)."""
    now = c.now()
    records: list = []
    group_id, member_id, epoch = req.group_id, req.member_id, req.member_epoch
    create = epoch == 0
    group = get_or_maybe_create_group(c, group_id, create)
    throw_if_full(c, group, member_id)
    member = get_or_maybe_subscribe_member(group, member_id, epoch, create)

    names = req.subscribed_topic_names
    ctx = c.request_context
    if req.rack_id is None and names is None and ctx.client_id == member.client_id \
            and ctx.client_host == member.client_host:
        updated = member  # a steady heartbeat: the replace below would give an equal member
    else:
        updated = member.replace(rack_id=req.rack_id if req.rack_id is not None else member.rack_id,
                                 subscribed_topic_names=frozenset(names) if names is not None
                                 else member.subscribed_topic_names,
                                 client_id=ctx.client_id, client_host=ctx.client_host)
    names_changed = False
    if updated != member:
        records.append(G.member_record(group_id, updated))
        names_changed = updated.subscribed_topic_names != member.subscribed_topic_names
    # Initialised share-partitions the target misses bump the epoch once: not again while that
    # bump's assignment waits for the interval (KIP-1263; Kafka's PR #21721 stopped a bump per heartbeat)
    bump = names_changed or (group.group_epoch == group.assignment_epoch and initialized_assignment_pending(c, group))
    members = _with(group.members, updated)

    group_epoch = group.group_epoch
    subscribed = group.subscribed_topic_names()
    if bump or group.has_metadata_expired(now, c.cluster.metadata_version):
        subscribed = group.subscribed_topic_names(members)
        new_hash = metadata_hash(subscribed, c.cluster)
        if new_hash != group.metadata_hash:
            bump = True
        if bump:
            group_epoch += 1
            records.append(G.group_epoch_record(group_id, group_epoch, new_hash))
        group.set_metadata_refresh_deadline(now + METADATA_REFRESH_INTERVAL_MS, group_epoch, c.cluster.metadata_version)
        if group.has_partition_metadata_record:
            records.append(G.partition_metadata_tombstone(group_id))  # obsolete record 9

    if group_epoch > group.assignment_epoch and target_assignment_due(c, group, "share"):
        target = update_target_assignment(c, group, members, group_epoch, records).get(member_id, {})
        target_epoch = group_epoch
    else:  # nothing new, or the next assignment waits for the assignment interval (KIP-1263)
        target_epoch = group.assignment_epoch
        target = group.target_assignment.get(member_id, {})

    # The member takes its target at once (Kafka's ShareGroupAssignmentBuilder); a member already
    # at the target epoch stays as it is (Kafka's maybeReconcile), also when the epoch was bumped.
    current = updated
    if not updated.is_reconciled_to(target_epoch):
        current = updated.replace(member_epoch=target_epoch, previous_member_epoch=updated.member_epoch,
                                  state=MemberState.STABLE, assigned_partitions=dict(target))
        if current != updated:
            records.append(G.current_assignment_record(group_id, current))

    schedule_session_timeout(c, group_id, member_id, share_config(c, group_id, "share.session.timeout.ms"))
    response = {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None,
                "member_id": current.member_id, "member_epoch": current.member_epoch,
                "heartbeat_interval": share_config(c, group_id, "share.heartbeat.interval.ms"), "assignment": None}
    if epoch == 0 or names is not None or frozen(current.assigned_partitions) != frozen(member.assigned_partitions):
        response["assignment"] = {"topic_partitions": [
            {"topic_id": t, "partitions": sorted(current.assigned_partitions[t])}
            for t in topic_order(current.assigned_partitions)]}
    to_init = subscribed_topics_change_map(c, group, subscribed)
    follow_up = []
    if to_init:
        records.append(G.state_metadata_record(group_id, _add_initializing(group.state_metadata, to_init)))
        follow_up.append(lambda: initialize_share_state(c, group_id, group_epoch, to_init))
    return Result(response, records, then=follow_up)


# ---------------------------------------------------------------------------------------
# Durable share-partition state: what a heartbeat asks the share coordinator to initialise
# (record 15 and the persister: `state.py`)

def subscribed_topics_change_map(c: "Coordinator", group: ShareGroup, names: Iterable[str]) -> dict[uuid.UUID, InitTopic]:
    """Kafka's `subscribedTopicsChangeMap`: subscribed share-partitions neither initialised nor
    initialising (recently), by topic."""
    now = c.now()
    sm = group.state_metadata
    out: dict[uuid.UUID, InitTopic] = {}
    for name in sorted(names):
        if name not in c.cluster:
            continue
        topic = c.cluster.topic(name)
        initialized = sm.initialized.get(topic.topic_id)
        initializing = sm.initializing.get(topic.topic_id)
        if initializing is not None and now - initializing.timestamp >= INITIALIZE_RETRY_INTERVAL_MS:
            initializing = None  # given up on: initialise again
        if initializing is None and initialized is not None and _covers(initialized.partitions, topic.partitions):
            continue
        have = set(initialized.partitions) if initialized is not None else set()
        if initializing is not None:
            have.update(initializing.partitions)
        missing = frozenset(p for p in range(topic.partitions) if p not in have)
        if missing:
            out[topic.topic_id] = InitTopic(name, missing, now)
    return out


#: partition set -> (partition count, covered): the steady heartbeat's answer for a topic
#: whose initialised partitions did not change (the sets are frozen and replaced on replay;
#: keeping the set in the value keeps its id from being reused)
_COVERED: dict[int, tuple[frozenset[int], int, bool]] = {}


def _covers(partitions: frozenset[int], count: int) -> bool:
    """Whether `partitions` holds every partition of a topic of `count` partitions."""
    hit = _COVERED.get(id(partitions))
    if hit is not None and hit[0] is partitions and hit[1] == count:
        return hit[2]
    covered = len(partitions) >= count and all(p in partitions for p in range(count))
    if len(_COVERED) > 4096:
        _COVERED.clear()
    _COVERED[id(partitions)] = (partitions, count, covered)
    return covered


def _add_initializing(sm: StatePartitionMetadata, topics: Mapping[uuid.UUID, InitTopic]) -> StatePartitionMetadata:
    """Kafka's `addInitializingTopicsRecords`: an initialising topic is no longer being deleted."""
    return StatePartitionMetadata(merge_topics(sm.initializing, topics), dict(sm.initialized),
                                  {t: n for t, n in sm.deleting.items() if t not in topics})


# ---------------------------------------------------------------------------------------
# Leaving and fencing

def leave(c: "Coordinator", group_id: str, member_id: str) -> Result:
    """Kafka's `shareGroupLeave`: the member goes and the group epoch moves."""
    group = share_group(c, group_id)
    member = group.member(member_id)
    response = {"throttle_time": 0, "error_code": ErrorCode.none, "error_message": None, "member_id": member_id,
                "member_epoch": LEAVE_GROUP_MEMBER_EPOCH, "heartbeat_interval": 0, "assignment": None}
    return fence_member(c, group, member, response)


def fence_member(c: "Coordinator", group: ShareGroup, member: ShareGroupMember, response: Any) -> Result:
    """Kafka's `shareGroupFenceMember`: tombstones (current, target, subscription) and an epoch bump;
    when the last member goes, the assignment epoch catches up with it (an empty group has nothing
    to assign; KAFKA-20442's share counterpart), with no assignment timestamp."""
    g = group.group_id
    records = [G.current_assignment_tombstone(g, member.member_id), G.target_member_tombstone(g, member.member_id),
               G.member_tombstone(g, member.member_id)]
    remaining = _with(group.members, removed=member.member_id)
    new_hash = metadata_hash(group.subscribed_topic_names(remaining), c.cluster)
    records.append(G.group_epoch_record(g, group.group_epoch + 1, new_hash))
    if not remaining:
        records.append(G.target_epoch_record(g, group.group_epoch + 1))
    c.timers.cancel(session_key(g, member.member_id))
    return Result(response, records)


def fence_member_by_id(c: "Coordinator", group_id: str, member_id: str) -> Result | None:
    """A session timeout: nothing when the group or member is already gone."""
    group = c.groups.get(group_id)
    if not isinstance(group, ShareGroup) or member_id not in group.members:
        return None
    return fence_member(c, group, group.members[member_id], None)


def schedule_session_timeout(c: "Coordinator", group_id: str, member_id: str, timeout_ms: int) -> None:
    c.timers.schedule(session_key(group_id, member_id), c.now() + timeout_ms,
                      lambda: fence_member_by_id(c, group_id, member_id))


# ---------------------------------------------------------------------------------------
# ShareGroupDescribe

def describe_group(c: "Coordinator", group_id: str) -> dict:
    def answer(group: ShareGroup) -> dict:
        members = [{"member_id": m.member_id, "rack_id": m.rack_id, "member_epoch": m.member_epoch,
                    "client_id": m.client_id, "client_host": m.client_host,
                    "subscribed_topic_names": sorted(m.subscribed_topic_names),
                    "assignment": described_assignment(c, m.assigned_partitions)}
                   for m in group.members.values()]
        return {"assignor_name": share_assignor(c).name, "members": members}
    return SHARE.describe(c, group_id, answer, assignor_name="")


share_group_describe = handles_describe(SHARE_GROUP_DESCRIBE, lambda c, group_id, req: describe_group(c, group_id))


# After a reload (Kafka's onLoaded, share part): every member gets a fresh session.
restarts_sessions_on_load(SHARE, lambda c, group, m: schedule_session_timeout(
    c, group.group_id, m.member_id, share_config(c, group.group_id, "share.session.timeout.ms")))


__all__ = ["share_group_heartbeat", "share_group_describe", "describe_group", "heartbeat", "leave", "share_group",
           "session_key", "validate_heartbeat", "persister", "initialize_share_state", "PERSISTER_KEY",
           "ASSIGNOR_KEY", "share_assignor", "share_config"]
