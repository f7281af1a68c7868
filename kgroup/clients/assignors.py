"""Kafka's client-side partition assignors (the leader runs them in a classic consumer group).

range, roundrobin, sticky and cooperative-sticky, as in org.apache.kafka.clients.consumer
(RangeAssignor, RoundRobinAssignor, AbstractStickyAssignor + StickyAssignor /
CooperativeStickyAssignor, Kafka 3.6+ with KIP-881 rack awareness and the KAFKA-15170 fix).

The Java code walks several java.util.HashMap/HashSet instances whose iteration order
decides ties (which member gets a spare slot, which of two equal claims wins, which
partition moves). We replay those orders instead of using Python's, so the result is
Kafka's and never depends on dict order or hash randomisation. The member map is the
leader's ``HashMap<memberId, Subscription>`` filled in the order `members` is given
(the JoinGroup response order).

    assignor = get_assignor("cooperative-sticky")
    result = assignor.assign({"t": 6}, [MemberSubscription("m1", None, Subscription(("t",)))])
    result["m1"].partitions   # (("t", 0), ... ("t", 5))
"""
from __future__ import annotations

import enum
import struct
from abc import ABC, abstractmethod
from bisect import bisect_left
from dataclasses import dataclass
from typing import Callable

from kgroup.javaorder import java_order
from kgroup.log.partitioner import java_string_hashcode
from kgroup.protocol.consumer_protocol import (Assignment, ConsumerProtocolError, Subscription,
                                               _group_by_topic, _Reader)

__all__ = ["RebalanceProtocol", "MemberSubscription", "ClientAssignor", "RangeAssignor", "RoundRobinAssignor",
           "StickyAssignor", "CooperativeStickyAssignor", "ASSIGNORS", "get_assignor"]

TP = tuple[str, int]
DEFAULT_GENERATION = -1


class RebalanceProtocol(enum.Enum):
    EAGER = 0
    COOPERATIVE = 1


@dataclass(frozen=True)
class MemberSubscription:
    """What the group leader sees for one member."""

    member_id: str
    group_instance_id: str | None
    subscription: Subscription


# --- Java semantics helpers ---------------------------------------------------------------


def _jkey(s: str) -> bytes:
    """Sort key giving Java's String.compareTo order (UTF-16 code units)."""
    return s.encode("utf-16-be", "surrogatepass")


def _spread(h: int) -> int:
    """HashMap.hash() of an already computed hashCode (for non-String keys)."""
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def _capacity_for(size: int) -> int:
    cap = 16
    while size > cap * 3 // 4:
        cap *= 2
    return cap


def _hashmap_put_order(keys: list[str]) -> list[str]:
    """Iteration order of a default java.util.HashMap after put()-ing `keys` in order."""
    return java_order(keys, _capacity_for(len(keys)))


def _tp_hash(tp: TP) -> int:
    # TopicPartition.hashCode(): 31 * (31 + partition) + topic.hashCode(), in int32.
    return (31 * (31 + tp[1]) + java_string_hashcode(tp[0])) & 0xFFFFFFFF


class _JavaHashSet:
    """Just enough of java.util.HashSet<TopicPartition> to know which element
    `iterator().next()` returns: bucket order, then insertion order within a bucket;
    the table only grows."""

    def __init__(self) -> None:
        self._seq: dict[TP, int] = {}
        self._counter = 0
        self._cap = 16

    def add(self, tp: TP) -> None:
        if tp not in self._seq:
            self._seq[tp] = self._counter
            self._counter += 1
            self._cap = max(self._cap, _capacity_for(len(self._seq)))

    def discard(self, tp: TP) -> None:
        self._seq.pop(tp, None)

    def __len__(self) -> int:
        return len(self._seq)

    def first(self) -> TP:
        mask = self._cap - 1
        return min(self._seq, key=lambda tp: (_spread(_tp_hash(tp)) & mask, self._seq[tp]))


class _SortedMembers:
    """java.util.TreeSet<String> ordered by (current assignment size, member id), as the
    sticky general algorithm uses it: callers remove a member before its size changes."""

    def __init__(self, sizes: Callable[[str], int]) -> None:
        self._size = sizes
        self._keys: list[tuple[int, bytes, str]] = []

    def _key(self, m: str) -> tuple[int, bytes, str]:
        return (self._size(m), _jkey(m), m)

    def add(self, m: str) -> None:
        k = self._key(m)
        i = bisect_left(self._keys, k)
        if i == len(self._keys) or self._keys[i] != k:
            self._keys.insert(i, k)

    def remove(self, m: str) -> None:
        k = self._key(m)
        i = bisect_left(self._keys, k)
        if i < len(self._keys) and self._keys[i] == k:
            del self._keys[i]

    def __iter__(self):
        return iter([k[2] for k in self._keys])

    def first(self) -> str:
        return self._keys[0][2]

    def last(self) -> str:
        return self._keys[-1][2]


# --- the assignor interface -------------------------------------------------------------


class ClientAssignor(ABC):
    """A ConsumerPartitionAssignor: the member's userData, and the leader's assignment."""

    name: str = ""
    supported_protocols: tuple[RebalanceProtocol, ...] = (RebalanceProtocol.EAGER,)

    def subscription_user_data(self, topics: set[str], owned: list[TP], generation: int) -> bytes | None:
        """The UserData this member puts in its subscription (None: no user data)."""
        return None

    def assign(self, partitions_per_topic: dict[str, int], members: list[MemberSubscription],
               racks_per_partition: dict[TP, set[str]] | None = None) -> dict[str, Assignment]:
        """Every member's assignment. `partitions_per_topic` is the leader's metadata
        (topics missing from it, or with no partitions, are skipped as Kafka skips them);
        `racks_per_partition` gives the racks of each partition's replicas."""
        subs = _member_map(members)
        if not subs:
            return {}
        subscribed = {t for m in subs.values() for t in m.subscription.topics}
        ppt = {t: n for t, n in partitions_per_topic.items() if t in subscribed and n > 0}
        racks = {} if racks_per_partition is None else racks_per_partition
        raw = self._assign(ppt, subs, racks)
        return {mid: Assignment(raw.get(mid, ())) for mid in subs}

    @abstractmethod
    def _assign(self, ppt: dict[str, int], subs: dict[str, MemberSubscription],
                racks: dict[TP, set[str]]) -> dict[str, list[TP]]:
        ...

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"


def _member_map(members: list[MemberSubscription]) -> dict[str, MemberSubscription]:
    """The leader's HashMap<memberId, Subscription>, as a dict in Java iteration order."""
    by_id: dict[str, MemberSubscription] = {}
    for m in members:
        if not isinstance(m, MemberSubscription):
            raise TypeError(f"expected MemberSubscription, got {type(m).__name__}")
        by_id[m.member_id] = m          # a repeated id replaces the earlier entry, as put() does
    return {k: by_id[k] for k in _hashmap_put_order(list(by_id))}


def _member_info_key(m: MemberSubscription, position: int) -> tuple:
    # AbstractPartitionAssignor.MemberInfo.compareTo: static members (by group.instance.id)
    # before dynamic ones (by member.id); the position breaks ties as the stable sort does.
    if m.group_instance_id is not None:
        return (0, _jkey(m.group_instance_id), position)
    return (1, _jkey(m.member_id), position)


def _rack(m: MemberSubscription) -> str | None:
    r = m.subscription.rack_id
    return r if r else None            # Kafka ignores an empty rack id


def _use_rack_aware(consumer_racks: set[str], partition_racks: dict[TP, set[str]]) -> bool:
    """AbstractPartitionAssignor.useRackAwareAssignment: consumer racks meet partition
    racks, and not every partition has replicas on every rack."""
    all_racks: set[str] = set().union(*partition_racks.values()) if partition_racks else set()
    if not consumer_racks or consumer_racks.isdisjoint(all_racks):
        return False
    return not all(r == all_racks for r in partition_racks.values())


# --- range ------------------------------------------------------------------------------


class _TopicState:
    """RangeAssignor.TopicAssignmentState: one topic's quota bookkeeping."""

    def __init__(self, topic: str, n: int, members: list[MemberSubscription], racks: dict[TP, set[str]]):
        self.topic = topic
        self.consumers: dict[str, str | None] = {m.member_id: _rack(m) for m in members}
        self.unassigned: dict[TP, None] = {(topic, p): None for p in range(n)}
        self.num_assigned = {c: 0 for c in self.consumers}
        k = len(self.consumers)
        self.per_consumer = n // k if k else 0
        self.remaining_extra = n % k if k else 0
        consumer_racks = {r for r in self.consumers.values() if r is not None}
        if consumer_racks:
            self.partition_racks = {(topic, p): set(racks.get((topic, p), ())) for p in range(n)}
        else:
            self.partition_racks = {}
        self.needs_rack_aware = _use_rack_aware(consumer_racks, self.partition_racks)
        # TopicAssignmentState groups by its LinkedHashMap of (member, rack): same members, same order, same racks.
        self.group_key = tuple(self.consumers.items())

    def racks_match(self, consumer: str, tp: TP) -> bool:
        rack = self.consumers[consumer]
        return rack is None or rack in self.partition_racks.get(tp, ())

    def max_assignable(self, consumer: str) -> int:
        return max(0, self.per_consumer + (1 if self.remaining_extra > 0 else 0) - self.num_assigned[consumer])

    def on_assigned(self, consumer: str, tps: list[TP]) -> None:
        self.num_assigned[consumer] += len(tps)
        if self.num_assigned[consumer] > self.per_consumer:
            self.remaining_extra -= 1
        for tp in tps:
            self.unassigned.pop(tp, None)


class RangeAssignor(ClientAssignor):
    """Per topic: members in MemberInfo order, partitions in order, the first
    ``n % members`` members get one extra. Rack-aware (KIP-881) when members have racks
    and some partitions are only on some racks."""

    name = "range"

    def _assign(self, ppt, subs, racks):
        per_topic: dict[str, list[tuple[tuple, MemberSubscription]]] = {}
        for pos, m in enumerate(subs.values()):
            for t in m.subscription.topics:
                per_topic.setdefault(t, []).append((_member_info_key(m, pos), m))
        states = []
        for topic, n in ppt.items():
            members = [m for _, m in sorted(per_topic.get(topic, []), key=lambda km: km[0])]
            states.append(_TopicState(topic, n, members, racks))
        out: dict[str, list[TP]] = {mid: [] for mid in subs}

        def give(consumer: str, tps: list[TP], st: _TopicState) -> None:
            out[consumer].extend(tps)
            st.on_assigned(consumer, tps)

        def assign_ranges(st: _TopicState, may_assign: Callable[[str, TP], bool]) -> None:
            for c in st.consumers:
                if not st.unassigned:
                    break
                limit = st.max_assignable(c)
                tps = [tp for tp in st.unassigned if may_assign(c, tp)][:limit]
                if tps:
                    give(c, tps, st)

        if any(st.needs_rack_aware for st in states):
            # Topics with the same members and partition count are co-partitioned: partition
            # p of all of them goes to one member whose rack holds p for every topic.
            groups: dict[tuple, dict[int, list[_TopicState]]] = {}
            for st in states:
                groups.setdefault(st.group_key, {}).setdefault(len(st.partition_racks), []).append(st)
            for by_count in groups.values():
                for num_partitions, co in by_count.items():
                    if len(co) > 1:
                        remaining = list(co[0].consumers)
                        for p in range(num_partitions):
                            match = next((c for c in remaining if all(
                                t.racks_match(c, (t.topic, p)) and t.max_assignable(c) > 0 for t in co)), None)
                            if match is None:
                                continue
                            for t in co:
                                give(match, [(t.topic, p)], t)
                            if not any(t.max_assignable(match) > 0 for t in co):
                                remaining.remove(match)
                                if not remaining:
                                    break
                    elif co[0].needs_rack_aware:
                        assign_ranges(co[0], co[0].racks_match)
        for st in states:
            assign_ranges(st, lambda c, tp: True)
        return out


# --- round robin ------------------------------------------------------------------------


class RoundRobinAssignor(ClientAssignor):
    """All partitions (topics in name order) dealt to the members in MemberInfo order,
    skipping members not subscribed to the partition's topic."""

    name = "roundrobin"

    def _assign(self, ppt, subs, racks):
        ordered = [m for _, m in sorted(((_member_info_key(m, i), m) for i, m in enumerate(subs.values())),
                                        key=lambda km: km[0])]
        out: dict[str, list[TP]] = {mid: [] for mid in subs}
        topics = sorted({t for m in subs.values() for t in m.subscription.topics}, key=_jkey)
        cursor = 0
        for topic in topics:
            for p in range(ppt.get(topic, 0)):
                while topic not in ordered[cursor % len(ordered)].subscription.topics:
                    cursor += 1
                out[ordered[cursor % len(ordered)].member_id].append((topic, p))
                cursor += 1
        return out


# --- sticky -----------------------------------------------------------------------------


@dataclass
class _MemberData:
    partitions: list[TP]
    generation: int | None      # None: Optional.empty()


class _RackInfo:
    """AbstractStickyAssignor.RackInfo."""

    def __init__(self, ppt: dict[str, int], subs: dict[str, MemberSubscription], racks: dict[TP, set[str]]):
        consumers_by_rack: dict[str, list[str]] = {}
        for mid, m in subs.items():
            r = _rack(m)
            if r is not None:
                consumers_by_rack.setdefault(r, []).append(mid)
        partition_racks: dict[TP, set[str]] = {}
        if consumers_by_rack:
            for t, n in ppt.items():
                for p in range(n):
                    partition_racks[(t, p)] = set(racks.get((t, p), ()))
        if _use_rack_aware(set(consumers_by_rack), partition_racks):
            self.consumer_racks = {c: r for r, cs in consumers_by_rack.items() for c in cs}
            self.partition_racks = partition_racks
        else:
            self.consumer_racks = {}
            self.partition_racks = {}
        # Computed from every partition's racks whenever some member has a rack.
        self.num_consumers = {tp: sum(len(consumers_by_rack.get(r, ())) for r in rs)
                              for tp, rs in partition_racks.items()}

    def mismatch(self, consumer: str, tp: TP) -> bool:
        rack = self.consumer_racks.get(consumer)
        return rack is not None and rack not in self.partition_racks.get(tp, ())

    def sort_by_rack_consumers(self, tps: list[TP]) -> list[TP]:
        if not self.num_consumers:
            return tps
        return sorted(tps, key=lambda tp: self.num_consumers.get(tp, 0))   # stable, like List.sort

    def next_rack_consumer(self, tp: TP, consumers: list[str], first: int) -> int:
        racks = self.partition_racks.get(tp)
        if not racks:
            return -1
        for i in range(len(consumers)):
            idx = (first + i) % len(consumers)
            rack = self.consumer_racks.get(consumers[idx])
            if rack is not None and rack in racks:
                return idx
        return -1


class _AbstractSticky(ClientAssignor):
    """AbstractStickyAssignor: keep owned partitions, balance, align racks."""

    def __init__(self) -> None:
        # Partitions moving between members in the last assign(): tp -> new owner, or None
        # when the general algorithm ran (the cooperative assignor then works it out).
        self.partitions_transferring_ownership: dict[TP, str] | None = {}

    @abstractmethod
    def _member_data(self, sub: Subscription) -> _MemberData:
        ...

    def _assign(self, ppt, subs, racks):
        rack_info = _RackInfo(ppt, subs, racks)
        owned: dict[str, list[TP]] = {}
        multi: dict[TP, None] = {}
        max_gen = [DEFAULT_GENERATION]
        if self._all_subscriptions_equal(set(ppt), subs, owned, multi, max_gen):
            self.partitions_transferring_ownership = {}
            return _ConstrainedBuilder(ppt, rack_info, owned, multi, self.partitions_transferring_ownership).build()
        self.partitions_transferring_ownership = None
        return _GeneralBuilder(ppt, rack_info, owned, subs, self, max_gen[0]).build()

    def _all_subscriptions_equal(self, all_topics: set[str], subs: dict[str, MemberSubscription],
                                 owned: dict[str, list[TP]], multi: dict[TP, None], max_gen: list[int]) -> bool:
        equal = True
        subscribed: set[str] = set()
        previous_owner: dict[TP, str] = {}
        for consumer, m in subs.items():
            topics = m.subscription.topics
            if not subscribed:
                subscribed.update(topics)      # re-seeded while still empty, as in Kafka
            elif equal and not (len(topics) == len(subscribed) and subscribed.issuperset(topics)):
                equal = False
            data = self._member_data(m.subscription)
            gen = DEFAULT_GENERATION if data.generation is None else data.generation
            max_gen[0] = max(max_gen[0], gen)
            mine: list[TP] = []
            owned[consumer] = mine
            for tp in data.partitions:
                if tp[0] not in all_topics:
                    continue
                other = previous_owner.get(tp)
                if other is None:
                    mine.append(tp)
                    previous_owner[tp] = consumer
                    continue
                # The other claimant's generation is read from its subscription, not its user data.
                other_gen = subs[other].subscription.generation_id
                other_gen = other_gen if other_gen >= 0 else DEFAULT_GENERATION
                if gen == other_gen:
                    multi[tp] = None            # same generation: nobody keeps it
                    _remove_first(owned[other], tp)
                    previous_owner[tp] = consumer
                elif gen > other_gen:
                    mine.append(tp)
                    _remove_first(owned[other], tp)
                    previous_owner[tp] = consumer
        return equal


def _remove_first(lst: list, item) -> None:
    try:
        lst.remove(item)
    except ValueError:
        pass


class _AssignmentBuilder:
    """AbstractAssignmentBuilder: the partitions per topic, the racks and the members' current
    assignment both builders start from, and the number of partitions in all."""

    def __init__(self, ppt: dict[str, int], rack_info: _RackInfo, current: dict[str, list[TP]]):
        self.ppt = ppt
        self.rack = rack_info
        self.current = current
        self.total = sum(ppt.values())     # totalPartitionsCount


class _ConstrainedBuilder(_AssignmentBuilder):
    """ConstrainedAssignmentBuilder: every member subscribes to the same topics."""

    def __init__(self, ppt, rack_info: _RackInfo, current: dict[str, list[TP]],
                 multi: dict[TP, None], transferring: dict[TP, str]):
        super().__init__(ppt, rack_info, current)
        self.multi = multi
        self.transferring = transferring
        self.maybe_revoked: dict[TP, str] = {}
        self.under: list[str] = []
        self.exactly: list[str] = []
        n = len(current)
        self.min_q = self.total // n
        self.max_q = -(-self.total // n)
        self.expected_over = self.total % n
        self.current_over = 0
        self.assignment: dict[str, list[TP]] = {c: [] for c in current}
        self.assigned: list[TP] = []

    def build(self) -> dict[str, list[TP]]:
        self._assign_owned()
        unassigned = self._unassigned()
        self.under.sort(key=_jkey)
        self.exactly.sort(key=_jkey)
        unassigned = self.rack.sort_by_rack_consumers(unassigned)
        unassigned = self._rack_round_robin(unassigned)
        self._round_robin(unassigned)
        self._verify()
        return self.assignment

    def _assign_owned(self) -> None:
        for consumer, claimed in self.current.items():
            owned = []
            for tp in claimed:
                if self.rack.mismatch(consumer, tp):
                    self.maybe_revoked[tp] = consumer   # KAFKA-15170: it may move
                else:
                    owned.append(tp)
            owned.sort(key=lambda tp: (tp[1], _jkey(tp[0])))   # by partition, then topic
            for tp in self.multi:
                _remove_first(owned, tp)
            mine = self.assignment[consumer]
            if len(owned) < self.min_q:
                mine.extend(owned)
                self.assigned.extend(owned)
                self.under.append(consumer)
            elif len(owned) >= self.max_q and self.current_over < self.expected_over:
                self.current_over += 1
                if self.current_over == self.expected_over:
                    self.exactly.clear()
                keep = owned[:self.max_q]
                mine.extend(keep)
                self.assigned.extend(keep)
                for tp in owned[self.max_q:]:
                    self.maybe_revoked[tp] = consumer
            else:
                keep = owned[:self.min_q]
                mine.extend(keep)
                self.assigned.extend(keep)
                for tp in owned[self.min_q:]:
                    self.maybe_revoked[tp] = consumer
                if self.current_over < self.expected_over:
                    self.exactly.append(consumer)

    def _unassigned(self) -> list[TP]:
        taken = set(self.assigned)
        return [(t, p) for t in sorted(self.ppt, key=_jkey) for p in range(self.ppt[t]) if (t, p) not in taken]

    def _give(self, tp: TP, consumer: str) -> int:
        mine = self.assignment[consumer]
        mine.append(tp)
        if (tp in self.maybe_revoked and self.maybe_revoked[tp] != consumer) or tp in self.multi:
            self.transferring[tp] = consumer
        return len(mine)

    def _rack_round_robin(self, unassigned: list[TP]) -> list[TP]:
        if not self.rack.consumer_racks:
            return unassigned
        left = []
        next_index = 0
        for tp in unassigned:
            consumer = None
            idx = self.rack.next_rack_consumer(tp, self.under, next_index)
            if idx >= 0:
                consumer = self.under[idx]
                count = len(self.assignment[consumer]) + 1
                if count >= self.min_q:
                    self.under.remove(consumer)
                    if count < self.max_q and self.current_over < self.expected_over:
                        self.exactly.append(consumer)
                else:
                    idx += 1
                next_index = idx % len(self.under) if self.under else 0
            elif self.exactly:
                first = self.rack.next_rack_consumer(tp, self.exactly, 0)
                if first >= 0:
                    consumer = self.exactly[first]
                    if len(self.assignment[consumer]) + 1 == self.max_q:
                        del self.exactly[first]
                        self.current_over += 1
                        if self.current_over == self.expected_over:
                            self.exactly.clear()
            if consumer is None:
                left.append(tp)
            else:
                self._give(tp, consumer)
        return left

    def _round_robin(self, unassigned: list[TP]) -> None:
        pos = 0                              # a java.util.Iterator over self.under
        for tp in unassigned:
            from_iter = False
            if pos < len(self.under):
                consumer = self.under[pos]
                pos += 1
                from_iter = True
            elif not self.under and not self.exactly:
                raise RuntimeError("no more unfilled consumers to be assigned")   # Kafka: IllegalStateException
            elif not self.under:
                consumer = self.exactly.pop(0)
            else:
                pos = 1
                consumer = self.under[0]
                from_iter = True
            count = self._give(tp, consumer)
            if count == self.min_q:
                if from_iter:
                    pos -= 1
                    del self.under[pos]
                self.exactly.append(consumer)
            elif count == self.max_q:
                self.current_over += 1

    def _verify(self) -> None:
        if self.under:
            if self.current_over != self.expected_over:
                raise RuntimeError("sticky assignment left members under their quota")
            for m in self.under:
                if len(self.assignment[m]) != self.min_q:
                    raise RuntimeError(f"consumer {m} does not reach minQuota")


class _Movements:
    """AbstractStickyAssignor.PartitionMovements (only what changes the result)."""

    def __init__(self) -> None:
        self.by_topic: dict[str, dict[tuple[str, str], _JavaHashSet]] = {}
        self.moves: dict[TP, tuple[str, str]] = {}

    def _remove(self, tp: TP) -> tuple[str, str]:
        pair = self.moves.pop(tp)
        per_topic = self.by_topic[tp[0]]
        per_topic[pair].discard(tp)
        if not len(per_topic[pair]):
            del per_topic[pair]
        if not per_topic:
            del self.by_topic[tp[0]]
        return pair

    def _add(self, tp: TP, pair: tuple[str, str]) -> None:
        self.moves[tp] = pair
        self.by_topic.setdefault(tp[0], {}).setdefault(pair, _JavaHashSet()).add(tp)

    def move(self, tp: TP, old: str, new: str) -> None:
        if tp in self.moves:
            src, _dst = self._remove(tp)
            if src != new:
                self._add(tp, (src, new))
        else:
            self._add(tp, (old, new))

    def partition_to_move(self, tp: TP, old: str, new: str) -> TP:
        per_topic = self.by_topic.get(tp[0])
        if per_topic is None:
            return tp
        if tp in self.moves:
            old = self.moves[tp][0]
        reverse = per_topic.get((new, old))
        # Moving back a partition of the same topic that travelled the other way keeps stickiness.
        return tp if reverse is None else reverse.first()


class _GeneralBuilder(_AssignmentBuilder):
    """GeneralAssignmentBuilder: members subscribe to different topics."""

    def __init__(self, ppt, rack_info: _RackInfo, current: dict[str, list[TP]],
                 subs: dict[str, MemberSubscription], assignor: _AbstractSticky, max_generation: int):
        super().__init__(ppt, rack_info, current)
        self.subs = subs
        self.assignor = assignor
        self.max_generation = max_generation
        self.topic_consumers: dict[str, list[str]] = {t: [] for t in ppt}
        self.consumer_topics: dict[str, list[str]] = {}
        for cid, m in subs.items():
            topics = [t for t in m.subscription.topics if t in ppt]
            self.consumer_topics[cid] = topics
            for t in topics:
                self.topic_consumers[t].append(cid)
            current.setdefault(cid, [])
        self.partition_owner: dict[TP, str] = {tp: c for c, tps in current.items() for tp in tps}
        sorted_topics = sorted(self.topic_consumers, key=lambda t: (len(self.topic_consumers[t]), _jkey(t)))
        self.topic_rank = {t: i for i, t in enumerate(sorted_topics)}
        self.sorted_all: list[TP] = [(t, p) for t in sorted_topics for p in range(ppt[t])]
        self.sorted_members = _SortedMembers(lambda c: len(self.current[c]))
        self.revocation_required = False
        self.movements = _Movements()

    def build(self) -> dict[str, list[TP]]:
        prev = self._previous_assignment()
        assigned = self._assign_owned()
        unassigned = self._unassigned(assigned)
        for c in self.current:
            self.sorted_members.add(c)
        self._balance(prev, unassigned)
        return self.current

    def _previous_assignment(self) -> dict[TP, tuple[str, int]]:
        # Claims from generations older than the newest one: a partition may go back to them.
        prev: dict[TP, tuple[str, int]] = {}
        for cid, m in self.subs.items():
            data = self.assignor._member_data(m.subscription)
            if data.generation is not None and data.generation < self.max_generation:
                gen = data.generation
            elif data.generation is None and self.max_generation > DEFAULT_GENERATION:
                gen = DEFAULT_GENERATION
            else:
                continue
            for tp in data.partitions:
                if tp not in prev or gen > prev[tp][1]:
                    prev[tp] = (cid, gen)
        return prev

    def _assign_owned(self) -> list[TP]:
        assigned: list[TP] = []
        for consumer, tps in self.current.items():
            topics = self.subs[consumer].subscription.topics
            keep = []
            for tp in tps:
                if tp[0] not in self.topic_consumers:
                    self.partition_owner.pop(tp, None)
                elif tp[0] not in topics or self.rack.mismatch(consumer, tp):
                    self.revocation_required = True
                else:
                    keep.append(tp)
                    assigned.append(tp)
            tps[:] = keep
        return assigned

    def _unassigned(self, assigned: list[TP]) -> list[TP]:
        taken = set(assigned)
        return [tp for tp in self.sorted_all if tp not in taken]

    def _max_size(self, topics: list[str]) -> int:
        if len(topics) == len(self.ppt):
            return self.total
        return sum(self.ppt[t] for t in topics)

    def _is_balanced(self) -> bool:
        lo = len(self.current[self.sorted_members.first()])
        hi = len(self.current[self.sorted_members.last()])
        if lo >= hi - 1:
            return True
        owner = {tp: c for c, tps in self.current.items() for tp in tps}
        for consumer in self.sorted_members:
            mine = self.current[consumer]
            count = len(mine)
            topics = self.consumer_topics[consumer]
            if count == self._max_size(topics):
                continue
            mine_set = set(mine)
            for t in topics:
                for p in range(self.ppt[t]):
                    if (t, p) not in mine_set:
                        other = owner.get((t, p))
                        if other is not None and count + 1 < len(self.current[other]):
                            return False
        return True

    @staticmethod
    def _balance_score(assignment: dict[str, list[TP]]) -> int:
        sizes = [len(v) for v in assignment.values()]
        return sum(abs(a - b) for i, a in enumerate(sizes) for b in sizes[i + 1:])

    def _maybe_assign(self, partitions: list[TP], rack: _RackInfo | None) -> list[TP]:
        """Assign each partition to the least-loaded eligible member; returns those left."""
        left = []
        for tp in partitions:
            if not self.topic_consumers[tp[0]]:
                left.append(tp)
                continue
            for consumer in self.sorted_members:
                if tp[0] in self.consumer_topics[consumer] and (rack is None or not rack.mismatch(consumer, tp)):
                    self.sorted_members.remove(consumer)
                    self.current[consumer].append(tp)
                    self.partition_owner[tp] = consumer
                    self.sorted_members.add(consumer)
                    break
            else:
                left.append(tp)
        return left

    def _can_topic_move(self, topic: str) -> bool:
        return len(self.topic_consumers[topic]) >= 2

    def _can_consumer_move(self, consumer: str) -> bool:
        tps = self.current[consumer]
        if len(tps) < self._max_size(self.consumer_topics[consumer]):
            return True
        return any(self._can_topic_move(tp[0]) for tp in tps)

    def _balance(self, prev: dict[TP, tuple[str, int]], unassigned: list[TP]) -> None:
        initializing = not self.current[self.sorted_members.last()]
        to_assign = unassigned
        if self.rack.consumer_racks:
            to_assign = self._maybe_assign(list(unassigned), self.rack)
        self._maybe_assign(to_assign, None)

        fixed_topics = {t for t in self.topic_consumers if not self._can_topic_move(t)}
        self.sorted_all = [tp for tp in self.sorted_all if tp[0] not in fixed_topics]
        unassigned = [tp for tp in unassigned if tp[0] not in fixed_topics]

        fixed: dict[str, list[TP]] = {}
        for consumer in list(self.consumer_topics):
            if not self._can_consumer_move(consumer):
                self.sorted_members.remove(consumer)
                fixed[consumer] = self.current.pop(consumer)

        before = {c: list(tps) for c, tps in self.current.items()}
        before_owner = dict(self.partition_owner)
        if not self.revocation_required:
            self._reassign(unassigned, prev)
        performed = self._reassign(self.sorted_all, prev)
        if not initializing and performed and self._balance_score(self.current) >= self._balance_score(before):
            for c in self.current:
                self.current[c] = list(before[c])
            self.partition_owner = before_owner
            # The TreeSet is keyed by sizes, which just changed back.
            self.sorted_members = _SortedMembers(lambda c: len(self.current[c]))
            for c in self.current:
                self.sorted_members.add(c)
        for consumer, tps in fixed.items():
            self.current[consumer] = tps
            self.sorted_members.add(consumer)

    def _reassign(self, partitions: list[TP], prev: dict[TP, tuple[str, int]]) -> bool:
        performed = False
        while True:
            modified = False
            for tp in partitions:
                if self._is_balanced():
                    break
                consumer = self.partition_owner.get(tp)
                if consumer is None or consumer not in self.current:
                    continue
                size = len(self.current[consumer])
                if tp in prev and prev[tp][0] in self.current and size > len(self.current[prev[tp][0]]) + 1:
                    self._move(tp, prev[tp][0])
                    performed = modified = True
                    continue
                # Kafka tries a same-rack member first, but both branches then pick the same
                # target (the least-loaded subscriber), so only "is someone 2+ lighter" matters.
                if any(size > len(self.current[o]) + 1 for o in self.topic_consumers[tp[0]] if o in self.current):
                    target = next(c for c in self.sorted_members if tp[0] in self.consumer_topics[c])
                    self._move(tp, target)
                    performed = modified = True
            if not modified:
                return performed

    def _move(self, tp: TP, new: str) -> None:
        old = self.partition_owner[tp]
        tp = self.movements.partition_to_move(tp, old, new)
        old = self.partition_owner[tp]
        self.sorted_members.remove(old)
        self.sorted_members.remove(new)
        self.movements.move(tp, old, new)
        self.current[old].remove(tp)
        self.current[new].append(tp)
        self.partition_owner[tp] = new
        self.sorted_members.add(new)
        self.sorted_members.add(old)


def _read_sticky_user_data(data: bytes, with_generation: bool) -> _MemberData:
    r = _Reader(data, "StickyAssignor user data")
    tps: list[TP] = []
    for _ in range(r.array_len("previous_assignment")):
        topic = r.string("topic")
        for _ in range(r.array_len("partitions")):
            tps.append((topic, r.int32("partition")))
    gen = r.int32("generation") if with_generation else None
    return _MemberData(tps, gen)


class StickyAssignor(_AbstractSticky):
    """Eager sticky: each member reports its previous assignment and generation in UserData."""

    name = "sticky"
    supported_protocols = (RebalanceProtocol.EAGER,)

    def subscription_user_data(self, topics, owned, generation):
        # Kafka sends nothing until the member has had an assignment (memberAssignment == null);
        # with generation -1 and nothing owned we take it that it has not.
        if generation == DEFAULT_GENERATION and not owned:
            return None
        grouped = _group_by_topic(list(owned))       # CollectionUtils.groupPartitionsByTopic
        parts = [struct.pack(">i", len(grouped))]
        for topic, partitions in grouped:
            raw = topic.encode("utf-8")
            parts.append(struct.pack(">h", len(raw)) + raw + struct.pack(">i", len(partitions)))
            parts.extend(struct.pack(">i", p) for p in partitions)
        parts.append(struct.pack(">i", generation))
        return b"".join(parts)

    def _member_data(self, sub: Subscription) -> _MemberData:
        # Always from user data: an eager member revoked everything before joining.
        if not sub.user_data:
            return _MemberData([], None)
        for with_generation in (True, False):      # STICKY_ASSIGNOR_USER_DATA_V1, then V0
            try:
                return _read_sticky_user_data(sub.user_data, with_generation)
            except ConsumerProtocolError:
                continue
        return _MemberData([], DEFAULT_GENERATION)


class CooperativeStickyAssignor(_AbstractSticky):
    """Cooperative sticky: a partition moving between members is withheld from its new
    owner in this rebalance (its old owner revokes it, and a follow-up rebalance hands it on)."""

    name = "cooperative-sticky"
    supported_protocols = (RebalanceProtocol.COOPERATIVE, RebalanceProtocol.EAGER)

    def subscription_user_data(self, topics, owned, generation):
        # Kept for old leaders that read the generation from user data (subscription v0/v1).
        return struct.pack(">i", generation)

    def _member_data(self, sub: Subscription) -> _MemberData:
        if sub.generation_id >= 0:               # subscription v2+ carries it directly
            return _MemberData(list(sub.owned_partitions), sub.generation_id)
        if sub.user_data is None:
            return _MemberData(list(sub.owned_partitions), None)
        if len(sub.user_data) < 4:
            return _MemberData(list(sub.owned_partitions), DEFAULT_GENERATION)
        return _MemberData(list(sub.owned_partitions), struct.unpack(">i", sub.user_data[:4])[0])

    def _assign(self, ppt, subs, racks):
        result = super()._assign(ppt, subs, racks)
        moving = self.partitions_transferring_ownership
        if moving is None:
            moving = self._transferring(subs, result)
        for tp, consumer in moving.items():
            _remove_first(result[consumer], tp)
        return result

    @staticmethod
    def _transferring(subs: dict[str, MemberSubscription], result: dict[str, list[TP]]) -> dict[TP, str]:
        added: dict[TP, str] = {}
        revoked: set[TP] = set()
        for consumer, tps in result.items():
            owned = set(subs[consumer].subscription.owned_partitions)
            mine = set(tps)
            for tp in tps:
                if tp not in owned:
                    added[tp] = consumer
            revoked.update(tp for tp in owned if tp not in mine)
        return {tp: c for tp, c in added.items() if tp in revoked}


ASSIGNORS: dict[str, type[ClientAssignor]] = {
    cls.name: cls for cls in (RangeAssignor, RoundRobinAssignor, StickyAssignor, CooperativeStickyAssignor)
}


def get_assignor(name: str) -> ClientAssignor:
    """A fresh assignor for a partition.assignment.strategy name."""
    try:
        return ASSIGNORS[name]()
    except KeyError:
        raise ValueError(f"unknown assignor {name!r}; known: {', '.join(ASSIGNORS)}") from None
