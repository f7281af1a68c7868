"""JoinGroup, SyncGroup, Heartbeat, LeaveGroup and DescribeGroups for classic groups,
with KIP-345 static membership and the rebalance timers.

The decisions follow the classic half of Kafka's `GroupMetadataManager` (the KRaft-era
group coordinator); comments name the Kafka method a step mirrors. As in Kafka, these
handlers change the classic group in memory directly and write GroupMetadata records
only to persist it (`Result(replay=False)`): on a completed SyncGroup, when the group
becomes Empty, when JoinGroup creates it, and when a static member is replaced.

JoinGroup and SyncGroup answers wait in a `PendingResponse` until the phase completes.
"""
from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any

from kgroup.errors import ErrorCode, KafkaError
from kgroup.groups.classic.answers import JoinFuture as _JoinFuture
from kgroup.groups.classic.answers import join_data, sync_data
from kgroup.groups.classic.group import ClassicGroup, ClassicGroupState, ClassicMember
from kgroup.javaorder import service_order
from kgroup.protocol import get, ms
from kgroup.runtime import PendingResponse, Result, group_timer, handles, on_loaded

if TYPE_CHECKING:
    from kgroup.coordinator import Coordinator

S = ClassicGroupState
EMPTY = Result(replay=False)
#: Kafka's classicGroupNewMemberJoinTimeoutMs: how long a new member's JoinGroup may wait.
NEW_MEMBER_JOIN_TIMEOUT_MS = 5 * 60 * 1000
JOIN_GROUP, SYNC_GROUP, HEARTBEAT, LEAVE_GROUP, DESCRIBE_GROUPS = 11, 14, 12, 13, 15


# ---------------------------------------------------------------------------------------
# Timers (soft state, as in Kafka).

def heartbeat_key(group_id: str, member_id: str) -> str:
    return group_timer(f"classic-heartbeat-{group_id}-{member_id}", group_id)


def _join_key(group_id: str) -> str:
    return group_timer(f"classic-join-{group_id}", group_id)


def _sync_key(group_id: str) -> str:
    return group_timer(f"classic-sync-{group_id}", group_id)


def reschedule_heartbeat(c: "Coordinator", group: ClassicGroup, member: ClassicMember,
                         timeout_ms: int | None = None) -> None:
    """(Re)start a member's session: it must heartbeat again within the timeout."""
    group_id, member_id = group.group_id, member.member_id
    delay = member.session_timeout_ms if timeout_ms is None else timeout_ms
    c.timers.schedule(heartbeat_key(group_id, member_id), c.now() + delay,
                      lambda: _expire_heartbeat(c, group_id, member_id))


def _schedule_pending_heartbeat(c: "Coordinator", group_id: str, member_id: str, session_ms: int) -> None:
    c.timers.schedule(heartbeat_key(group_id, member_id), c.now() + session_ms,
                      lambda: _expire_heartbeat(c, group_id, member_id))


def _classic(c: "Coordinator", group_id: str) -> ClassicGroup | None:
    group = c.groups.get(group_id)
    return group if isinstance(group, ClassicGroup) else None


def _expire_heartbeat(c: "Coordinator", group_id: str, member_id: str) -> Result:
    """Kafka: expireClassicGroupMemberHeartbeat."""
    group = _classic(c, group_id)
    if group is None or group.is_in_state(S.DEAD):
        return EMPTY
    if group.is_pending_member(member_id):
        return _remove_pending_member(c, group, member_id)
    member = group.members.get(member_id)
    if member is not None and not member.has_satisfied_heartbeat():
        return remove_member_and_update_group(c, group, member, f"member {member_id} session timed out")
    return EMPTY


def _remove_pending_member(c: "Coordinator", group: ClassicGroup, member_id: str) -> Result:
    group.remove(member_id)
    if group.is_in_state(S.PREPARING_REBALANCE) and group.has_all_members_joined():
        return complete_join(c, group)
    return EMPTY


def remove_member_and_update_group(c: "Coordinator", group: ClassicGroup, member: ClassicMember,
                                   reason: str) -> Result:
    """A member left or timed out: answer its waiting JoinGroup, then rebalance."""
    group.complete_join(member, join_data("", ErrorCode.unknown_member_id))
    group.remove(member.member_id)
    if group.is_in_state(S.STABLE, S.COMPLETING_REBALANCE):
        return maybe_prepare_rebalance_or_complete_join(c, group, reason)
    if group.is_in_state(S.PREPARING_REBALANCE) and group.has_all_members_joined():
        return complete_join(c, group)
    return EMPTY


# ---------------------------------------------------------------------------------------
# The rebalance phases.

def maybe_prepare_rebalance_or_complete_join(c: "Coordinator", group: ClassicGroup, reason: str) -> Result:
    if group.can_rebalance():
        return prepare_rebalance(c, group, reason)
    return maybe_complete_join_phase(c, group)


def prepare_rebalance(c: "Coordinator", group: ClassicGroup, reason: str) -> Result:
    """Enter PreparingRebalance: members must rejoin within the rebalance timeout; a new
    group waits `group.initial.rebalance.delay.ms` (extended while members keep coming)."""
    if group.is_in_state(S.COMPLETING_REBALANCE):
        _reset_and_propagate_assignment_with_error(c, group, ErrorCode.rebalance_in_progress)
    c.timers.cancel(_sync_key(group.group_id))
    group.last_rebalance_reason = reason
    is_initial = group.is_in_state(S.EMPTY)
    if is_initial:
        delay = c.config["group.initial.rebalance.delay.ms"]
        remaining = max(group.rebalance_timeout_ms() - delay, 0)
        _schedule_initial_join(c, group.group_id, delay, remaining)
    group.transition_to(S.PREPARING_REBALANCE, c.now())
    group.rebalances += 1
    return EMPTY if is_initial else _maybe_complete_join_else_schedule(c, group)


def _schedule_initial_join(c: "Coordinator", group_id: str, delay: int, remaining: int) -> None:
    c.timers.schedule(_join_key(group_id), c.now() + delay,
                      lambda: _try_complete_initial_rebalance(c, group_id, delay, remaining))


def _try_complete_initial_rebalance(c: "Coordinator", group_id: str, delay: int, remaining: int) -> Result:
    """Kafka's tryCompleteInitialRebalanceElseSchedule: wait again while new members arrive."""
    group = _classic(c, group_id)
    if group is None:
        return EMPTY
    if group.new_member_added and remaining != 0:
        group.new_member_added = False
        new_delay = min(c.config["group.initial.rebalance.delay.ms"], remaining)
        new_remaining = max(remaining - delay, 0)
        _schedule_initial_join(c, group_id, new_delay, new_remaining)
        return EMPTY
    return complete_join(c, group)


def _maybe_complete_join_else_schedule(c: "Coordinator", group: ClassicGroup) -> Result:
    if group.is_in_state(S.PREPARING_REBALANCE) and group.has_all_members_joined():
        return complete_join(c, group)
    group_id = group.group_id
    c.timers.schedule(_join_key(group_id), c.now() + group.rebalance_timeout_ms(),
                      lambda: _complete_join_by_id(c, group_id))
    return EMPTY


def maybe_complete_join_phase(c: "Coordinator", group: ClassicGroup) -> Result:
    """Complete the join phase once every member rejoined — never early for a new group."""
    if (group.is_in_state(S.PREPARING_REBALANCE) and group.previous_state is not S.EMPTY
            and group.has_all_members_joined()):
        return complete_join(c, group)
    return EMPTY


def _complete_join_by_id(c: "Coordinator", group_id: str) -> Result:
    group = _classic(c, group_id)
    return complete_join(c, group) if group is not None else EMPTY


def complete_join(c: "Coordinator", group: ClassicGroup) -> Result:
    """Kafka's completeClassicGroupJoin: drop dynamic members that did not rejoin, start
    the next generation, answer every waiting JoinGroup (the leader gets the members)."""
    group_id = group.group_id
    c.timers.cancel(_join_key(group_id))
    for m in group.not_yet_rejoined_members():
        if not m.is_static:
            group.remove(m.member_id)
            c.timers.cancel(heartbeat_key(group_id, m.member_id))
    if group.is_in_state(S.DEAD):
        return EMPTY
    if not group.maybe_elect_new_joined_leader() and group.members:
        # Nobody rejoined: wait another rebalance timeout for sessions to expire.
        c.timers.schedule(_join_key(group_id), c.now() + group.rebalance_timeout_ms(),
                          lambda: _complete_join_by_id(c, group_id))
        return EMPTY
    group.init_next_generation(c.now())
    if group.is_in_state(S.EMPTY):
        return Result(records=[group.metadata_record({})], replay=False)
    for m in group.members.values():
        members = group.current_members_for_join() if group.is_leader(m.member_id) else []
        group.complete_join(m, join_data(m.member_id, generation_id=group.generation_id,
                                         protocol_type=group.protocol_type, protocol_name=group.protocol_name,
                                         leader=group.leader_id or "", members=members))
        reschedule_heartbeat(c, group, m)
        m.is_new = False
        group.pending_sync_members.add(m.member_id)
    _schedule_pending_sync(c, group)
    return EMPTY


def _schedule_pending_sync(c: "Coordinator", group: ClassicGroup) -> None:
    group_id, generation = group.group_id, group.generation_id
    c.timers.schedule(_sync_key(group_id), c.now() + group.rebalance_timeout_ms(),
                      lambda: _expire_pending_sync(c, group_id, generation))


def _expire_pending_sync(c: "Coordinator", group_id: str, generation: int) -> Result:
    """Members that got their JoinGroup answer but never sent SyncGroup are removed."""
    group = _classic(c, group_id)
    if group is None or generation != group.generation_id:
        return EMPTY
    if group.is_in_state(S.COMPLETING_REBALANCE, S.STABLE) and group.pending_sync_members:
        for member_id in sorted(group.pending_sync_members):
            group.remove(member_id)
            c.timers.cancel(heartbeat_key(group_id, member_id))
        return prepare_rebalance(c, group, "members did not send SyncGroup in time")
    return EMPTY


def _remove_pending_sync_member(c: "Coordinator", group: ClassicGroup, member_id: str) -> None:
    group.pending_sync_members.discard(member_id)
    if group.is_in_state(S.DEAD, S.EMPTY, S.PREPARING_REBALANCE) or not group.pending_sync_members:
        c.timers.cancel(_sync_key(group.group_id))


def _propagate_assignment(c: "Coordinator", group: ClassicGroup, error: ErrorCode) -> None:
    ok = error == ErrorCode.none
    for m in group.members.values():
        answered = group.complete_sync(m, sync_data(error, m.assignment,
                                                    protocol_type=group.protocol_type if ok else None,
                                                    protocol_name=group.protocol_name if ok else None))
        if answered:
            # Sessions that expired while the sync waited were ignored: restart them.
            reschedule_heartbeat(c, group, m)


def _reset_and_propagate_assignment_with_error(c: "Coordinator", group: ClassicGroup, error: ErrorCode) -> None:
    for m in group.members.values():
        m.assignment = b""
    _propagate_assignment(c, group, error)


# ---------------------------------------------------------------------------------------
# JoinGroup and SyncGroup answers Kafka holds back

def answered_later(api_key: int, future_class: type[PendingResponse], waiting_for: str):
    """Register `fn(c, req, version, future)` as the handler of a request Kafka may hold back until
    the rebalance gets there (its purgatory): the handler's answer is a `future_class` that `fn`
    completes now or leaves to a later request or timer (`waiting_for`: what it waits for, with
    `{group_id}`); `fn` returns the records. Returns the handler."""
    def register(fn):
        @functools.wraps(fn)
        def handler(c: "Coordinator", req: Any, version: int) -> Result:
            future = future_class(api_key, version, waiting_for.format(group_id=repr(req.group_id)))
            result = fn(c, req, version, future)
            return Result(future, result.records, replay=result.replay, then=result.then)
        return handles(api_key)(handler)
    return register


# ---------------------------------------------------------------------------------------
# JoinGroup

@answered_later(JOIN_GROUP, _JoinFuture, "the join phase of group {group_id} to complete")
def join_group(c: "Coordinator", req: Any, version: int, future: PendingResponse) -> Result:
    group_id, member_id = req.group_id, req.member_id
    session_ms = ms(req.session_timeout)
    rebalance = get(req, "rebalance_timeout")
    rebalance_ms = ms(rebalance) if rebalance is not None else session_ms  # v0: session timeout
    instance_id = get(req, "group_instance_id")
    protocols = [(p.name, bytes(p.metadata)) for p in req.protocols]

    def fail(code: ErrorCode, mid: str = member_id) -> Result:
        future.complete(join_data(mid, code))
        return EMPTY

    # GroupCoordinatorService checks the group id and the session timeout before the runtime
    # routes the request; a partition not led here fails there, answered with no member id
    if not group_id:
        return fail(ErrorCode.invalid_group_id)
    if not c.config["group.min.session.timeout.ms"] <= session_ms <= c.config["group.max.session.timeout.ms"]:
        return fail(ErrorCode.invalid_session_timeout)
    try:
        c.check_coordinator(group_id)
    except KafkaError as e:
        return fail(e.code, "")

    existing = c.groups.get(group_id)
    if existing is not None and not isinstance(existing, ClassicGroup):
        join_other = getattr(existing, "classic_join", None)  # online migration (KIP-848)
        if join_other is not None:
            return join_other(c, req, version, future)
        return fail(ErrorCode.inconsistent_group_protocol, "")

    is_unknown = member_id == ""
    is_new_group = existing is None
    if existing is None:
        if not is_unknown:
            return fail(ErrorCode.unknown_member_id)
        existing = ClassicGroup(group_id, current_state_timestamp=c.now())
        c.groups[group_id] = existing
    group = existing

    request = _JoinRequest(member_id, instance_id, session_ms, rebalance_ms, req.protocol_type, protocols,
                           get(req, "reason"), version)
    if not _accept_joining_member(c, group, member_id):
        group.remove(member_id)
        future.complete(join_data("", ErrorCode.group_max_size_reached))
        result = EMPTY
    elif is_unknown:
        result = _join_new_member(c, group, request, future)
    else:
        result = _join_existing_member(c, group, request, future)
    if is_new_group and not result.records:
        # Kafka persists a freshly created group at once (newEmptyGroupMetadataRecord).
        return Result(records=[group.empty_metadata_record(c.now())], replay=False)
    return result


class _JoinRequest:
    __slots__ = ("member_id", "instance_id", "session_ms", "rebalance_ms", "protocol_type", "protocols",
                 "reason", "version")

    def __init__(self, member_id, instance_id, session_ms, rebalance_ms, protocol_type, protocols, reason, version):
        self.member_id, self.instance_id = member_id, instance_id
        self.session_ms, self.rebalance_ms = session_ms, rebalance_ms
        self.protocol_type, self.protocols, self.reason, self.version = protocol_type, protocols, reason, version


def _accept_joining_member(c: "Coordinator", group: ClassicGroup, member_id: str) -> bool:
    """group.max.size: counted on members waiting to join while rebalancing, else on members."""
    max_size = c.config["group.max.size"]
    if group.is_in_state(S.EMPTY, S.DEAD):
        return True
    if group.is_in_state(S.PREPARING_REBALANCE):
        return ((group.has_member(member_id) and group.member(member_id).is_awaiting_join)
                or group.num_awaiting_join < max_size)
    return group.has_member(member_id) or len(group.members) < max_size


def _join_new_member(c: "Coordinator", group: ClassicGroup, r: _JoinRequest, future: PendingResponse) -> Result:
    if group.is_in_state(S.DEAD):
        future.complete(join_data("", ErrorCode.coordinator_not_available))
        return EMPTY
    if not group.supports_protocols(r.protocol_type, r.protocols):
        future.complete(join_data("", ErrorCode.inconsistent_group_protocol))
        return EMPTY
    # Static members are named after their instance id, dynamic ones after their client id.
    new_member_id = c.new_member_id(r.instance_id if r.instance_id is not None else c.request_context.client_id)
    if r.instance_id is not None:
        old_member_id = group.static_member_id(r.instance_id)
        if old_member_id is not None:
            return _update_static_member_then_rebalance_or_complete_join(c, group, r, old_member_id,
                                                                          new_member_id, future)
        return _add_member_then_rebalance_or_complete_join(c, group, r, new_member_id, future)
    if r.version >= 4:
        # KIP-394: hand out the member id first; the member joins again with it.
        group.pending_join_members.add(new_member_id)
        _schedule_pending_heartbeat(c, group.group_id, new_member_id, r.session_ms)
        future.complete(join_data(new_member_id, ErrorCode.member_id_required))
        return EMPTY
    return _add_member_then_rebalance_or_complete_join(c, group, r, new_member_id, future)


def _add_member_then_rebalance_or_complete_join(c: "Coordinator", group: ClassicGroup, r: _JoinRequest,
                                                member_id: str, future: PendingResponse) -> Result:
    ctx = c.request_context
    member = ClassicMember(member_id, r.instance_id, ctx.client_id, ctx.client_host, r.rebalance_ms,
                           r.session_ms, r.protocol_type, r.protocols, is_new=True)
    if group.is_in_state(S.PREPARING_REBALANCE) and group.previous_state is S.EMPTY:
        group.new_member_added = True  # extends the initial rebalance delay
    group.add(member, future)
    # New members cannot heartbeat yet; their JoinGroup times out instead.
    reschedule_heartbeat(c, group, member, NEW_MEMBER_JOIN_TIMEOUT_MS)
    return maybe_prepare_rebalance_or_complete_join(c, group, f"adding new member {member_id}")


def _update_static_member_then_rebalance_or_complete_join(c: "Coordinator", group: ClassicGroup, r: _JoinRequest,
                                                          old_member_id: str, new_member_id: str,
                                                          future: PendingResponse) -> Result:
    """KIP-345: a known instance id rejoins with an unknown member id. While Stable and
    without a protocol change there is no rebalance: it takes over the old member's
    assignment, and the old member id is fenced."""
    current_leader = group.leader_id
    new = group.replace_static_member(r.instance_id, old_member_id, new_member_id)
    c.timers.cancel(heartbeat_key(group.group_id, old_member_id))
    reschedule_heartbeat(c, group, new)
    group.update_member(new, r.protocols, r.rebalance_ms, r.session_ms, future)
    group.static_replacements += 1

    if group.is_in_state(S.STABLE):
        if (group.protocol_name or "") == group.select_protocol():
            records = [group.metadata_record(group.group_assignment())]
            is_leader = group.is_leader(new_member_id)
            if r.version >= 9:
                # KIP-814: the leader learns it leads but must not compute a new assignment.
                group.complete_join(new, join_data(
                    new_member_id, generation_id=group.generation_id, protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name, leader=group.leader_id or "",
                    skip_assignment=is_leader, members=group.current_members_for_join() if is_leader else []))
            else:
                group.complete_join(new, join_data(
                    new_member_id, generation_id=group.generation_id, protocol_type=group.protocol_type,
                    protocol_name=group.protocol_name, leader=current_leader or ""))
            return Result(records=records, replay=False)
        return maybe_prepare_rebalance_or_complete_join(
            c, group, f"static member {r.instance_id} rejoined with a different protocol")
    if group.is_in_state(S.COMPLETING_REBALANCE):
        # The leader may be computing an assignment for the old member id: start over.
        return prepare_rebalance(c, group, f"static member {r.instance_id} rejoined during CompletingRebalance")
    if group.is_in_state(S.PREPARING_REBALANCE):
        return maybe_complete_join_phase(c, group)
    raise RuntimeError(f"group {group.group_id} cannot be {group.state} while static member {r.instance_id} rejoins")


def _join_existing_member(c: "Coordinator", group: ClassicGroup, r: _JoinRequest, future: PendingResponse) -> Result:
    member_id = r.member_id
    if group.is_in_state(S.DEAD):
        future.complete(join_data(member_id, ErrorCode.coordinator_not_available))
        return EMPTY
    if not group.supports_protocols(r.protocol_type, r.protocols):
        future.complete(join_data(member_id, ErrorCode.inconsistent_group_protocol))
        return EMPTY
    if group.is_pending_member(member_id):
        # The second JoinGroup of a dynamic member that got MEMBER_ID_REQUIRED.
        return _add_member_then_rebalance_or_complete_join(c, group, r, member_id, future)
    try:
        group.validate_member(member_id, r.instance_id)
    except KafkaError as e:
        future.complete(join_data(member_id, e.code, protocol_type=r.protocol_type))
        return EMPTY
    member = group.member(member_id)

    def current_generation(members: list) -> dict:
        return join_data(member_id, generation_id=group.generation_id, protocol_type=group.protocol_type,
                         protocol_name=group.protocol_name, leader=group.leader_id or "", members=members)

    def update_and_rebalance(reason: str) -> Result:
        group.update_member(member, r.protocols, r.rebalance_ms, r.session_ms, future)
        return maybe_prepare_rebalance_or_complete_join(c, group, reason)

    if group.is_in_state(S.PREPARING_REBALANCE):
        return update_and_rebalance(f"member {member_id} joined during PreparingRebalance")
    if group.is_in_state(S.COMPLETING_REBALANCE):
        if member.matches(r.protocols):
            # Probably lost its JoinGroup answer: give the current generation again.
            future.complete(current_generation(group.current_members_for_join()
                                               if group.is_leader(member_id) else []))
            return EMPTY
        return update_and_rebalance(f"member {member_id} changed its metadata during CompletingRebalance")
    if group.is_in_state(S.STABLE):
        if group.is_leader(member_id):
            # The leader may rejoin to force a rebalance (e.g. topic metadata changed).
            return update_and_rebalance(f"leader {member_id} rejoined")
        if not member.matches(r.protocols):
            return update_and_rebalance(f"member {member_id} changed its metadata")
        future.complete(current_generation([]))
        return EMPTY
    # Empty: the member should forget its generation and join afresh.
    future.complete(join_data(member_id, ErrorCode.unknown_member_id))
    return EMPTY


# ---------------------------------------------------------------------------------------
# SyncGroup

@answered_later(SYNC_GROUP, PendingResponse, "the leader's assignment for group {group_id}")
def sync_group(c: "Coordinator", req: Any, version: int, future: PendingResponse) -> Result:
    group_id, member_id = req.group_id, req.member_id
    instance_id = get(req, "group_instance_id")

    def fail(code: ErrorCode) -> Result:
        future.complete(sync_data(code))
        return EMPTY

    if not group_id:
        return fail(ErrorCode.invalid_group_id)
    try:
        c.check_coordinator(group_id)
    except KafkaError as e:
        return fail(e.code)
    existing = c.groups.get(group_id)
    if existing is not None and not isinstance(existing, ClassicGroup):
        sync_other = getattr(existing, "classic_sync", None)
        return sync_other(c, req, version, future) if sync_other else fail(ErrorCode.unknown_member_id)
    if existing is None:
        return fail(ErrorCode.unknown_member_id)
    group = existing
    if group.is_in_state(S.DEAD):
        return fail(ErrorCode.coordinator_not_available)
    try:
        group.validate_member(member_id, instance_id)
    except KafkaError as e:
        return fail(e.code)
    if req.generation_id != group.generation_id:
        return fail(ErrorCode.illegal_generation)
    for asked, actual in ((get(req, "protocol_type"), group.protocol_type),
                          (get(req, "protocol_name"), group.protocol_name)):
        if asked is not None and actual is not None and asked != actual:
            return fail(ErrorCode.inconsistent_group_protocol)

    if group.is_in_state(S.EMPTY):
        return fail(ErrorCode.unknown_member_id)
    if group.is_in_state(S.PREPARING_REBALANCE):
        return fail(ErrorCode.rebalance_in_progress)
    if group.is_in_state(S.COMPLETING_REBALANCE):
        group.member(member_id).awaiting_sync = future
        _remove_pending_sync_member(c, group, member_id)
        if not group.is_leader(member_id):
            return EMPTY
        # The leader's assignment: missing members get an empty one; persist, then answer all.
        assignment = {a.member_id: bytes(a.assignment) for a in req.assignments}
        for m in group.members.values():
            assignment.setdefault(m.member_id, b"")
        record = group.metadata_record(assignment)
        for m in group.members.values():
            m.assignment = assignment[m.member_id]
        _propagate_assignment(c, group, ErrorCode.none)
        group.transition_to(S.STABLE, c.now())
        return Result(records=[record], replay=False)
    # Stable: hand out the member's current assignment.
    _remove_pending_sync_member(c, group, member_id)
    member = group.member(member_id)
    future.complete(sync_data(ErrorCode.none, member.assignment, protocol_type=group.protocol_type,
                              protocol_name=group.protocol_name))
    return EMPTY


# ---------------------------------------------------------------------------------------
# Heartbeat

@handles(HEARTBEAT)
def heartbeat(c: "Coordinator", req: Any, version: int) -> Result:
    try:
        code = _heartbeat(c, req)
    except KafkaError as e:
        code = e.code
    return Result({"throttle_time": 0, "error_code": code}, replay=False)


def _member_group(c: "Coordinator", group_id: str, migration_hook: str) -> tuple[ClassicGroup | None, Any]:
    """The classic group a member request names, or — for a group of another type — that
    group's classic-protocol hook (online migration) when it has one."""
    if not group_id:
        raise KafkaError(ErrorCode.invalid_group_id)
    c.check_coordinator(group_id)
    group = c.groups.get(group_id)
    if group is not None and not isinstance(group, ClassicGroup):
        other = getattr(group, migration_hook, None)
        if other is None:
            raise KafkaError(ErrorCode.unknown_member_id, f"group {group_id} is not a classic group")
        return None, other
    if group is None:
        raise KafkaError(ErrorCode.unknown_member_id, f"group {group_id} not found")
    if group.is_in_state(S.DEAD):
        raise KafkaError(ErrorCode.coordinator_not_available)
    return group, None


def _heartbeat(c: "Coordinator", req: Any) -> ErrorCode:
    group, other = _member_group(c, req.group_id, "classic_heartbeat")
    if other is not None:
        return other(c, req)
    group.validate_member(req.member_id, get(req, "group_instance_id"))
    if req.generation_id != group.generation_id:
        raise KafkaError(ErrorCode.illegal_generation)
    if group.is_in_state(S.EMPTY):
        return ErrorCode.unknown_member_id
    reschedule_heartbeat(c, group, group.member(req.member_id))
    if group.is_in_state(S.PREPARING_REBALANCE):
        return ErrorCode.rebalance_in_progress
    return ErrorCode.none


# ---------------------------------------------------------------------------------------
# LeaveGroup

@handles(LEAVE_GROUP)
def leave_group(c: "Coordinator", req: Any, version: int) -> Result:
    if version < 3:
        identities = [(req.member_id, None)]
    else:
        identities = [(m.member_id, get(m, "group_instance_id")) for m in req.members]
    top, members, result = _leave(c, req.group_id, identities)
    if version < 3 and top == ErrorCode.none and members:
        top = members[0]["error_code"]  # v0-2 carry the one member's error at the top
    # A consumer group answering for classic members (migration) has its records replayed.
    return Result({"throttle_time": 0, "error_code": top, "members": members}, result.records,
                  replay=result.replay, then=result.then)


def _leave(c: "Coordinator", group_id: str, identities: list[tuple[str, str | None]]):
    try:
        group, other = _member_group(c, group_id, "classic_leave")
    except KafkaError as e:
        if e.code == ErrorCode.unknown_member_id:
            # no such group: GroupCoordinatorService answers every member UNKNOWN_MEMBER_ID
            return ErrorCode.none, [{"member_id": m, "group_instance_id": i, "error_code": e.code}
                                    for m, i in identities], EMPTY
        return e.code, [], EMPTY
    if other is not None:
        return other(c, identities)

    answers, left = [], []
    for member_id, instance_id in identities:
        code = ErrorCode.none
        if member_id == "":
            # Admin removal by instance id alone (KIP-345's MemberIdentity without member id).
            static_id = group.static_member_id(instance_id)
            if static_id is not None:
                _remove_current_member(c, group, static_id)
            else:
                code = ErrorCode.unknown_member_id
        elif group.is_pending_member(member_id):
            group.remove(member_id)
            c.timers.cancel(heartbeat_key(group_id, member_id))
        else:
            try:
                group.validate_member(member_id, instance_id)
                _remove_current_member(c, group, member_id)
            except KafkaError as e:
                code = e.code
        answers.append({"member_id": member_id, "group_instance_id": instance_id, "error_code": code})
        if code == ErrorCode.none:
            left.append(member_id)

    result = EMPTY
    if left:
        if group.is_in_state(S.STABLE, S.COMPLETING_REBALANCE):
            result = maybe_prepare_rebalance_or_complete_join(c, group, f"LeaveGroup from {', '.join(left)}")
        elif group.is_in_state(S.PREPARING_REBALANCE):
            result = maybe_complete_join_phase(c, group)
    return ErrorCode.none, answers, result


def _remove_current_member(c: "Coordinator", group: ClassicGroup, member_id: str) -> None:
    member = group.member(member_id)
    c.timers.cancel(heartbeat_key(group.group_id, member_id))
    group.complete_join(member, join_data("", ErrorCode.unknown_member_id))
    group.remove(member_id)


# ---------------------------------------------------------------------------------------
# DescribeGroups

@handles(DESCRIBE_GROUPS)
def describe_groups(c: "Coordinator", req: Any, version: int) -> Result:
    # Kafka's order: partition by partition (GroupCoordinatorService; "" is an id like any other)
    ids = service_order(req.groups, c.partition_for)
    return Result({"throttle_time": 0, "groups": [describe_group(c, g, version) for g in ids]},
                  replay=False)


def describe_group(c: "Coordinator", group_id: str, version: int = 6) -> dict:
    """One DescribedGroup, as DescribeGroups answers it."""
    base = {"group_id": group_id, "error_code": ErrorCode.none, "error_message": None, "group_state": "",
            "protocol_type": "", "protocol_data": "", "members": [], "authorized_operations": -2147483648}
    # Kafka describes the empty group id like any other (only a null one, which the wire
    # cannot carry, is INVALID_GROUP_ID): GroupCoordinatorService.describeGroups
    try:
        c.check_coordinator(group_id)
    except KafkaError as e:
        return {**base, "error_code": e.code}
    group = c.groups.get(group_id)
    if group is not None and not isinstance(group, ClassicGroup):
        other = getattr(group, "describe_as_classic", None)
        if other is not None:
            return {**base, **other(c, version)}
        group = None
    if group is None:
        if version >= 6:
            return {**base, "group_state": "Dead", "error_code": ErrorCode.group_id_not_found,
                    "error_message": f"Group {group_id} not found."}
        return {**base, "group_state": "Dead"}
    stable = group.is_in_state(S.STABLE)
    members = [{"member_id": m.member_id, "group_instance_id": m.group_instance_id, "client_id": m.client_id,
                "client_host": m.client_host,
                "member_metadata": m.metadata(group.protocol_name) if stable else b"",
                "member_assignment": m.assignment if stable else b""}
               for m in group.members.values()]
    return {**base, "group_state": group.state, "protocol_type": group.protocol_type or "",
            "protocol_data": group.protocol_name if stable else "", "members": members}


# ---------------------------------------------------------------------------------------
# After a reload (Kafka: GroupMetadataManager.onLoaded, classic part)

@on_loaded
def _after_load(c: "Coordinator") -> None:
    """Loaded members get a fresh session; a group over group.max.size rebalances."""
    for group in list(c.groups.values()):
        if not isinstance(group, ClassicGroup) or c.partition_for(group.group_id) not in c.hosted_partitions:
            continue
        for m in group.members.values():
            reschedule_heartbeat(c, group, m)
        if len(group.members) > c.config["group.max.size"]:
            c._apply(prepare_rebalance(c, group, "freshly loaded group is over group.max.size"))


def after_offset_commit(group: ClassicGroup, c: "Coordinator", ctx: Any) -> None:
    """`ClassicGroup.after_offset_commit`: a classic member's OffsetCommit keeps its session alive
    (Stable/PreparingRebalance), as Kafka's offset manager reschedules its heartbeat."""
    member_id = ctx.member_id
    if group.is_in_state(S.STABLE, S.PREPARING_REBALANCE) and group.has_member(member_id):
        reschedule_heartbeat(c, group, group.member(member_id))
