"""Kafka's server-side ``uniform`` assignor: balanced, then sticky.

``UniformAssignor`` picks a builder from the group's subscription type, as Kafka's
``UniformAssignor.assign`` does:

* HOMOGENEOUS -> :func:`assign_homogeneous` (Kafka's ``UniformHomogeneousAssignmentBuilder``
  as changed by KAFKA-18688, "Fix uniform homogeneous assignor stability", 2025);
* HETEROGENEOUS -> :func:`assign_heterogeneous` (Kafka's ``UniformHeterogeneousAssignmentBuilder``
  as rewritten by KAFKA-17710, "Rework uniform heterogeneous assignor to improve perf", 2024).

Both produce the same assignments as Kafka's builders for the same iteration orders
(see the package docstring); the data structures are this module's own, chosen for
CPython: partitions stay ints in per-topic ranges, lists and owner arrays; unchanged
member assignments are returned as the very dicts passed in; topic ids (whose
``__hash__`` is Python code) are kept off the per-partition paths.
"""
from __future__ import annotations

from bisect import bisect_right
from itertools import chain
from typing import Any

from kgroup.javaorder import hashset_capacity, java_hash_order, java_uuid_hash

from .api import (GroupAssignment, GroupSpec, PartitionAssignorException, ServerAssignor,
                  SubscribedTopicDescriber, SubscriptionType, TopicId, gc_paused)

__all__ = ["UniformAssignor", "assign_homogeneous", "assign_heterogeneous", "java_hashset_order"]

#: Kafka's UniformHeterogeneousAssignmentBuilder.MAX_ITERATION_COUNT.
MAX_BALANCE_ROUNDS = 16


def java_hashset_order(topic_ids: Any) -> list[TopicId]:
    """The order in which ``new java.util.HashSet<>(topicIds)`` iterates Kafka ``Uuid``s.

    Kafka's homogeneous builder lists the unassigned partitions topic by topic in the
    iteration order of such a set, so reproducing Kafka's exact assignments needs it:
    buckets in ascending order, a bucket being ``spread(Uuid.hashCode()) & (tableSize - 1)``
    with ``tableSize = tableSizeFor(max(n / 0.75 + 1, 16))``. Java breaks ties inside a
    bucket by insertion order (the order of the subscription set, itself a hash order in
    the broker); here they are broken by topic id.
    """
    ordered = sorted(topic_ids, key=lambda tid: tid.int)  # ties inside a bucket: by topic id
    return java_hash_order(ordered, java_uuid_hash, hashset_capacity(len(ordered)))


def _missing_topic(topic_id: TopicId) -> PartitionAssignorException:
    return PartitionAssignorException(
        f"Members are subscribed to topic {topic_id} which doesn't exist in the topic metadata.")


def _sanitized(spec: GroupSpec, counts: dict[TopicId, int]) -> GroupSpec:
    """The spec with partitions beyond each topic's partition count dropped (rare path)."""
    cleaned = {}
    for member_id, assignment in spec.current_assignment.items():
        new = {}
        for tid, parts in assignment.items():
            n = counts.get(tid)
            if n is None:
                new[tid] = parts
            else:
                kept = frozenset(p for p in parts if 0 <= p < n)
                if kept:
                    new[tid] = kept
        cleaned[member_id] = new
    return GroupSpec(spec.members, spec.subscription_type, cleaned)


# --------------------------------------------------------------------------------------
# Homogeneous
# --------------------------------------------------------------------------------------

def assign_homogeneous(spec: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment:
    """Kafka's homogeneous uniform builder: every member gets floor or ceil of the total.

    1. Quotas: ``total // members`` each, one more for ``total % members`` of them.
    2. Each member (in ``spec.members`` order) keeps its current partitions up to its
       quota, topic by topic in its assignment's order and partitions ascending; the
       rest are revoked. A member offered an extra partition that it cannot fill gives
       the extra back (KAFKA-18688), so the members that already hold ``min + 1`` keep
       them whatever the member order.
    3. The extra partitions still unclaimed go to the *last* members that are below
       their quota; the unassigned partitions -- never-assigned ones topic by topic in
       Kafka's ``HashSet`` order, then the revoked ones -- are handed out in that list
       order to the members below quota, in member order.
    """
    members = spec.members
    member_ids = list(members)
    if not member_ids:
        return {}
    subscribed = members[member_ids[0]].subscribed_topic_ids
    if not subscribed:
        return {member_id: {} for member_id in member_ids}

    # Per topic: [partition count, claimed sets]. One dict lookup per (member, topic).
    info: dict[TopicId, list[Any]] = {}
    total = 0
    for tid in subscribed:
        n = topics.num_partitions(tid)
        if n < 0:
            raise _missing_topic(tid)
        info[tid] = [n, []]
        total += n

    num_members = len(member_ids)
    min_quota, extra = divmod(total, num_members)
    current = spec.current_assignment
    if not current or current.keys().isdisjoint(members):
        # First assignment: nobody keeps anything, nobody claims an extra, so every
        # member has the minimum quota and the last `extra` members one more.
        return _first_homogeneous(member_ids, java_hashset_order(info), info, min_quota, extra)
    current_get = current.get
    info_get = info.get

    out: list[Any] = [None] * num_members    # per member: its final dict
    fill: list[Any] = []                     # (index, kept dict or None, quota) below quota
    revoked: list[tuple[TopicId, list[int]]] = []
    remaining_extra = extra

    for index, member_id in enumerate(member_ids):
        quota = min_quota
        has_extra = remaining_extra > 0
        if has_extra:
            quota += 1
        cur = current_get(member_id)
        kept = None
        if cur:
            # Fast path: every topic subscribed, frozensets, all within quota -> reuse.
            size = 0
            claims: list[list] | None = []
            for tid, parts in cur.items():
                entry = info_get(tid)
                if entry is None or type(parts) is not frozenset or not parts:
                    for claimed in claims:
                        claimed.pop()
                    claims = None
                    break
                size += len(parts)
                claimed = entry[1]
                claimed.append(parts)
                claims.append(claimed)
            if claims is None:
                kept, quota = _keep_within_quota(cur, info, quota, revoked)
            elif size <= quota:
                kept = cur
                quota -= size
            else:
                for claimed in claims:
                    claimed.pop()
                kept, quota = _keep_within_quota(cur, info, quota, revoked)
        if has_extra:
            if quota > 0:
                quota -= 1           # cannot fill the extra: give it back
                has_extra = False
            else:
                remaining_extra -= 1  # kept min + 1 partitions
        if quota > 0 or (remaining_extra > 0 and not has_extra):
            fill.append((index, kept, quota))
        out[index] = kept if kept is not None else {}

    # Never-assigned partitions, topic by topic in Kafka's HashSet order.
    chunks: list[tuple[TopicId, Any]] = []
    claimed_any = any(entry[1] for entry in info.values())
    ordered = java_hashset_order(info)
    if not claimed_any:
        for tid in ordered:
            n = info[tid][0]
            if n:
                chunks.append((tid, range(n)))
    else:
        for tid in ordered:
            n, claimed = info[tid]
            if not claimed:
                if n:
                    chunks.append((tid, range(n)))
                continue
            if max(map(max, claimed)) >= n or min(map(min, claimed)) < 0:
                # Partitions beyond the partition count (the topic shrank): drop them
                # from the current assignment and start over.
                return assign_homogeneous(_sanitized(spec, {t: e[0] for t, e in info.items()}), topics)
            if sum(map(len, claimed)) == n:
                continue          # fully held (current assignments are disjoint)
            held = set().union(*claimed)
            missing = [p for p in range(n) if p not in held]
            if missing:
                chunks.append((tid, missing))
    chunks.extend(revoked)

    # The last `remaining_extra` members below quota take the extra partitions.
    extra_from = len(fill) - remaining_extra
    chunk_index = 0
    position = 0
    num_chunks = len(chunks)
    if num_chunks:
        tid, seq = chunks[0]
        seq_len = len(seq)
    for k, (index, kept, quota) in enumerate(fill):
        if k >= extra_from:
            quota += 1
        if quota <= 0 or chunk_index >= num_chunks:
            continue
        end = position + quota
        if end < seq_len and not kept:
            # The usual case: a member with nothing kept, served from one chunk.
            out[index] = {tid: frozenset(seq[position:end])}
            position = end
            continue
        new = dict(kept) if kept else {}
        while quota:
            end = position + quota
            if end >= seq_len:
                piece = seq[position:] if position else seq
                quota = end - seq_len
                chunk_index += 1
                position = 0
            else:
                piece = seq[position:end]
                position = end
                quota = 0
            old = new.get(tid)
            new[tid] = frozenset(piece) if old is None else old.union(piece)
            if chunk_index >= num_chunks:
                break
            if not position:
                tid, seq = chunks[chunk_index]
                seq_len = len(seq)
        out[index] = new
    if chunk_index < num_chunks:
        raise PartitionAssignorException("Partitions were left unassigned")
    return dict(zip(member_ids, out))


def _first_homogeneous(member_ids: list[str], ordered: list[TopicId], info: dict,
                       min_quota: int, extra: int) -> GroupAssignment:
    """Step 3 alone, for a group where no member holds anything yet."""
    out: list[Any] = []
    append = out.append
    first_extra = len(member_ids) - extra
    chunks = [(tid, info[tid][0]) for tid in ordered if info[tid][0]]
    chunk_index = 0
    position = 0
    tid, seq_len = chunks[0] if chunks else (None, 0)
    for index in range(len(member_ids)):
        quota = min_quota + 1 if index >= first_extra else min_quota
        if not quota:
            append({})
            continue
        end = position + quota
        if end < seq_len:
            append({tid: frozenset(range(position, end))})
            position = end
            continue
        new = {}
        while quota:
            end = position + quota
            if end >= seq_len:
                new[tid] = frozenset(range(position, seq_len))
                quota = end - seq_len
                chunk_index += 1
                position = 0
                if chunk_index == len(chunks):
                    break
                tid, seq_len = chunks[chunk_index]
            else:
                new[tid] = frozenset(range(position, end))
                position = end
                quota = 0
        append(new)
    return dict(zip(member_ids, out))


def _keep_within_quota(cur: dict, info: dict, quota: int, revoked: list) -> tuple[dict, int]:
    """The slow path of step 2 for one member: returns (kept dict, quota left).

    Topics no longer subscribed are dropped (their partitions are not re-assigned, as in
    Kafka); partitions over the quota are revoked, highest first.
    """
    kept = {}
    for tid, parts in cur.items():
        entry = info.get(tid)
        if entry is None:
            continue
        if type(parts) is not frozenset:
            parts = frozenset(parts)
        if not parts:
            continue
        entry[1].append(parts)
        size = len(parts)
        if size <= quota:
            kept[tid] = parts
            quota -= size
        else:
            ordered = sorted(parts)
            if quota:
                kept[tid] = frozenset(ordered[:quota])
            revoked.append((tid, ordered[quota:]))
            quota = 0
    return kept, quota


# --------------------------------------------------------------------------------------
# Heterogeneous
# --------------------------------------------------------------------------------------

def assign_heterogeneous(spec: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment:
    """Kafka's heterogeneous uniform builder: sticky, then balanced topic by topic.

    Members are numbered in ``spec.members`` order. Topics are ordered by partitions per
    subscriber (descending), then subscriber count (ascending), then topic id.

    1. Every member keeps the current partitions of the topics it still subscribes to.
    2. Each topic's unassigned partitions (ascending) go to its least loaded subscribers:
       the subscribers sorted by (assigned count, index) are filled level by level.
    3. Balancing: for each topic with two or more subscribers, partitions move from its
       most loaded subscribers (highest partitions first) to its least loaded ones
       until their counts differ by at most one; the topics are swept until a full sweep
       moves nothing, at most 16 times.

    Internally topics are numbered (``uuid.UUID.__hash__`` is a Python-level method, so
    dicts keyed by topic ids are kept off the per-partition paths) and members sharing a
    subscription share one subscriber list.
    """
    members = spec.members
    member_ids = list(members)
    num_members = len(member_ids)
    if not num_members:
        return {}

    # Members grouped by subscription (equal frozensets hash and compare from their
    # stored element hashes, so this costs one pass over the members).
    groups: dict[frozenset, list[int]] = {}
    group_of: list[frozenset] = []
    for index, member_id in enumerate(member_ids):
        subs = members[member_id].subscribed_topic_ids
        group = groups.get(subs)
        if group is None:
            groups[subs] = group = [index]
        else:
            group.append(index)
        group_of.append(subs)

    tids: list[TopicId] = []            # topic index -> topic id
    index_of: dict[TopicId, int] = {}   # topic id -> topic index
    per_topic: list[list[list[int]]] = []
    group_topics: dict[frozenset, frozenset[int]] = {}
    for subs, group in groups.items():
        numbers = []
        for tid in subs:
            ti = index_of.get(tid)
            if ti is None:
                ti = index_of[tid] = len(tids)
                tids.append(tid)
                per_topic.append([group])
            else:
                per_topic[ti].append(group)
            numbers.append(ti)
        group_topics[subs] = frozenset(numbers)
    if not tids:
        return {member_id: {} for member_id in member_ids}
    owners: list[list[int]] = []
    subscribers: list[list[int]] = []
    merged: dict[tuple[int, ...], list[int]] = {}
    for ti, tid in enumerate(tids):
        n = topics.num_partitions(tid)
        if n < 0:
            raise _missing_topic(tid)
        owners.append([-1] * n)
        lists = per_topic[ti]
        if len(lists) == 1:
            subscribers.append(lists[0])
        else:
            key = tuple(map(id, lists))
            union = merged.get(key)
            if union is None:
                union = merged[key] = sorted(chain.from_iterable(lists))
            subscribers.append(union)

    sizes = [0] * num_members
    base: list[Any] = [None] * num_members   # unchanged current assignment (reused as is)
    mut: list[Any] = [None] * num_members    # changed: {topic index: set of partitions}

    # Step 1: keep the partitions of still-subscribed topics. Topic ids of a current
    # assignment are usually the very objects of the subscriptions: look them up by
    # identity (an int hash) before hashing the UUID (a Python-level __hash__).
    current = spec.current_assignment
    if current:
        by_identity = {id(tid): ti for ti, tid in enumerate(tids)}.get
        by_value = index_of.get
        for index, member_id in enumerate(member_ids):
            cur = current.get(member_id)
            if not cur:
                continue
            mine = group_topics[group_of[index]]
            clean = True
            count = 0
            try:
                for tid, parts in cur.items():
                    ti = by_identity(id(tid))
                    if ti is None:
                        ti = by_value(tid)
                    if ti is None or ti not in mine or not parts or type(parts) is not frozenset:
                        clean = False
                        break
                    own = owners[ti]
                    for p in parts:
                        if p >= 0 and own[p] < 0:
                            own[p] = index
                        else:
                            clean = False        # held by an earlier member, or < 0
                    count += len(parts)
            except IndexError:                   # beyond the partition count
                clean = False
            if clean:
                sizes[index] = count
                base[index] = cur
            else:
                mut[index], sizes[index] = _claim_carefully(index, cur, mine, owners, index_of)

    def topic_key(ti: int) -> tuple[float, int, TopicId]:
        count = len(subscribers[ti])
        return (-(len(owners[ti]) / count), count, tids[ti])

    sorted_topics = sorted(range(len(tids)), key=topic_key)
    get_size = sizes.__getitem__

    # Step 2: hand out the unassigned partitions, level by level.
    for ti in sorted_topics:
        own = owners[ti]
        unassigned_count = own.count(-1)
        if not unassigned_count:
            continue
        if unassigned_count == len(own):
            unassigned: Any = range(unassigned_count)
        else:
            unassigned = [p for p, o in enumerate(own) if o < 0]
        subs = subscribers[ti]
        ranked = sorted(subs, key=get_size) if len(subs) > 1 else subs
        level = sizes[ranked[0]]
        end = 0
        done = 0
        while done < unassigned_count:
            # Members beyond `end` are untouched, still sorted: find the level's run.
            end = bisect_right(ranked, level, end, key=get_size)
            take = end if end < unassigned_count - done else unassigned_count - done
            for m, p in zip(ranked[:take] if take < end else ranked[:end],
                            unassigned[done:done + take]):
                own[p] = m
                sizes[m] += 1
                d = mut[m]
                if d is None:
                    d = mut[m] = _unfrozen(base[m], index_of)
                    base[m] = None
                s = d.get(ti)
                if s is None:
                    d[ti] = {p}
                else:
                    s.add(p)
            done += take
            level += 1

    # Step 3: balance.
    balance_topics = [ti for ti in sorted_topics if len(subscribers[ti]) >= 2]
    if balance_topics:
        _balance(balance_topics, subscribers, owners, sizes, base, mut, index_of)

    result: GroupAssignment = {}
    for index, member_id in enumerate(member_ids):
        d = mut[index]
        if d is None:
            b = base[index]
            result[member_id] = b if b is not None else {}
        else:
            result[member_id] = {tids[ti]: frozenset(s) for ti, s in d.items() if s}
    return result


def _claim_carefully(index: int, cur: dict, mine: frozenset[int], owners: list[list[int]],
                     index_of: dict[TopicId, int]) -> tuple[dict[int, set[int]], int]:
    """Step 1 for a member whose current assignment is not clean, from scratch.

    Undoes what the fast path claimed for it, then keeps only subscribed topics and
    partitions within the partition count that no earlier member holds.
    """
    kept: dict[int, set[int]] = {}
    count = 0
    for tid, parts in cur.items():
        ti = index_of.get(tid)
        if ti is None:
            continue
        own = owners[ti]
        for p, o in enumerate(own):
            if o == index:
                own[p] = -1
    for tid, parts in cur.items():
        ti = index_of.get(tid)
        if ti is None or ti not in mine:
            continue
        own = owners[ti]
        n = len(own)
        s = set()
        for p in parts:
            if 0 <= p < n and own[p] < 0:
                own[p] = index
                s.add(p)
        if s:
            kept[ti] = s
            count += len(s)
    return kept, count


def _unfrozen(assignment: dict | None, index_of: dict[TopicId, int]) -> dict[int, set[int]]:
    """A member's kept assignment as {topic index: set}, to be changed."""
    if not assignment:
        return {}
    return {index_of[tid]: set(parts) for tid, parts in assignment.items()}


def _balance(sorted_topics: list[int], subscribers: list, owners: list, sizes: list[int],
             base: list, mut: list, index_of: dict) -> None:
    """Kafka's balanceTopics: sweep the topics until one full sweep moves nothing.

    A topic whose subscribers' counts differ by at most one needs nothing; topics of the
    same subscription share a subscriber list, so (min, max) is computed once per list
    and per number of moves so far.
    """
    last_rebalanced = -1
    spread: dict[int, tuple[int, int, int]] = {}
    moves = 0
    get_size = sizes.__getitem__
    for _ in range(MAX_BALANCE_ROUNDS):
        for topic_index, ti in enumerate(sorted_topics):
            if topic_index == last_rebalanced:
                return
            subs = subscribers[ti]
            cached = spread.get(id(subs))
            if cached is not None and cached[0] == moves:
                low, high = cached[1], cached[2]
            else:
                low = min(map(get_size, subs))
                high = max(map(get_size, subs))
                spread[id(subs)] = (moves, low, high)
            moved = 0
            if high - low > 1:
                moved = _balance_topic(ti, subs, owners[ti], sizes, base, mut, index_of, low, high)
                moves += moved
            if moved > 0 or last_rebalanced == -1:
                last_rebalanced = topic_index


def _balance_topic(ti: int, subs: list[int], own: list[int], sizes: list[int],
                   base: list, mut: list, index_of: dict, low: int, high: int) -> int:
    """Kafka's balanceTopic with its MemberAssignmentBalancer, for one topic.

    Subscribers sorted by (size, index); the least loaded range grows rightwards level
    by level, the most loaded range leftwards; a partition (the owner's highest
    remaining one) moves from the next most loaded member to the next least loaded one
    until the two ranges' levels differ by at most one.
    """
    ranked = sorted(subs, key=sizes.__getitem__)
    num = len(ranked)
    least_end = 0
    least_level = low - 1
    next_least = 0
    most_start = num
    most_end = num
    most_level = high + 1
    next_most = num - 1

    # The topic's partitions grouped by owner, each owner's range [start, end).
    order = sorted(range(len(own)), key=own.__getitem__)
    start: dict[int, int] = {}
    stop: dict[int, int] = {}
    for i, p in enumerate(order):
        o = own[p]
        if o not in start:
            start[o] = i
        stop[o] = i + 1

    moved = 0
    while most_level - least_level > 1:
        # Next most loaded member that still has partitions of this topic.
        while True:
            if next_most < most_start:
                if most_end <= most_start and most_start > 0:
                    most_level = sizes[ranked[most_start - 1]]
                else:
                    most_level -= 1
                while most_start > 0 and sizes[ranked[most_start - 1]] == most_level:
                    most_start -= 1
                next_most = most_end - 1
            if next_most < 0:
                giver = -1
                break
            giver = ranked[next_most]
            next_most -= 1
            e = stop.get(giver)
            if e is None or e - start[giver] <= 0:
                # Exclude it: swap it with the end of the most loaded range.
                a = next_most + 1
                ranked[a], ranked[most_end - 1] = ranked[most_end - 1], ranked[a]
                most_end -= 1
                continue
            break
        if giver == -1:
            break
        e = stop[giver] - 1
        stop[giver] = e
        p = order[e]

        # Next least loaded member.
        if next_least >= least_end:
            least_level += 1
            while least_end < num and sizes[ranked[least_end]] == least_level:
                least_end += 1
            next_least = 0
        taker = ranked[next_least]
        next_least += 1
        if most_level - least_level <= 1:
            break

        # Move p from giver to taker.
        d = mut[giver]
        if d is None:
            d = mut[giver] = _unfrozen(base[giver], index_of)
            base[giver] = None
        s = d.get(ti)
        if s is not None:
            s.discard(p)
            if not s:
                del d[ti]
        sizes[giver] -= 1
        d = mut[taker]
        if d is None:
            d = mut[taker] = _unfrozen(base[taker], index_of)
            base[taker] = None
        s = d.get(ti)
        if s is None:
            d[ti] = {p}
        else:
            s.add(p)
        sizes[taker] += 1
        own[p] = taker
        moved += 1
    return moved


class UniformAssignor(ServerAssignor):
    """Kafka's ``UniformAssignor`` ("uniform"), the default server-side assignor."""
    name = "uniform"

    def assign(self, group_spec: GroupSpec, topics: SubscribedTopicDescriber) -> GroupAssignment:
        if not group_spec.members:
            return {}
        with gc_paused():
            if group_spec.subscription_type is SubscriptionType.HOMOGENEOUS:
                return assign_homogeneous(group_spec, topics)
            return assign_heterogeneous(group_spec, topics)

