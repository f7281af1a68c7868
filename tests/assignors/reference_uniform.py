"""A slow, plain model of Kafka's two uniform builders: the oracle for differential tests.

One (topic, partition) pair at a time, plain dicts and sets, no shortcuts; it follows the
steps of UniformHomogeneousAssignmentBuilder (after KAFKA-18688) and
UniformHeterogeneousAssignmentBuilder (after KAFKA-17710) with this package's documented
clean-ups of the current assignment (partitions beyond the count dropped; in the
heterogeneous builder a partition held twice stays with the first member).
"""
from __future__ import annotations

from kgroup.assignors import GroupSpec, PartitionAssignorException, java_hashset_order


def _counts(topic_ids, topics):
    counts = {}
    for tid in topic_ids:
        n = topics.num_partitions(tid)
        if n < 0:
            raise PartitionAssignorException(f"unknown topic {tid}")
        counts[tid] = n
    return counts


def _frozen(target):
    return {m: {t: frozenset(ps) for t, ps in d.items() if ps} for m, d in target.items()}


def reference_homogeneous(spec: GroupSpec, topics) -> dict:
    ids = list(spec.members)
    if not ids:
        return {}
    counts = _counts(spec.members[ids[0]].subscribed_topic_ids, topics)
    if not counts:
        return {m: {} for m in ids}
    current = {m: {t: sorted(p for p in ps if t not in counts or p < counts[t])
                   for t, ps in (spec.current_assignment.get(m) or {}).items()} for m in ids}
    held = {(t, p) for m in ids for t, ps in current[m].items() if t in counts for p in ps}
    unassigned = [(t, p) for t in java_hashset_order(list(counts)) for p in range(counts[t])
                  if (t, p) not in held]
    min_quota, extra = divmod(sum(counts.values()), len(ids))
    target, unfilled = {}, []
    for m in ids:
        quota, flag = min_quota, extra > 0
        if flag:
            quota += 1
        keep: dict = {}
        for t, ps in current[m].items():
            if t not in counts:
                continue
            for p in ps:
                if quota > 0:
                    keep.setdefault(t, set()).add(p)
                    quota -= 1
                else:
                    unassigned.append((t, p))
        if quota > 0 and flag:
            quota, flag = quota - 1, False
        if quota == 0 and flag:
            extra -= 1
        if quota > 0 or (extra > 0 and not flag):
            unfilled.append([m, quota])
        target[m] = keep
    for entry in reversed(unfilled):
        if extra > 0:
            extra -= 1
            entry[1] += 1
    pending = iter(unassigned)
    for m, quota in unfilled:
        for _ in range(quota):
            t, p = next(pending)
            target[m].setdefault(t, set()).add(p)
    assert next(pending, None) is None
    return _frozen(target)


class _Balancer:
    """Kafka's MemberAssignmentBalancer over a list of member positions."""

    def __init__(self, members, size):
        self.size = size
        self.ranked = sorted(members, key=lambda m: (size[m], m))
        n = len(self.ranked)
        self.least_end, self.next_least = 0, 0
        self.least_level = size[self.ranked[0]] - 1
        self.most_start, self.most_end, self.next_most = n, n, n - 1
        self.most_level = size[self.ranked[-1]] + 1

    def least(self):
        size, ranked = self.size, self.ranked
        if self.next_least >= self.least_end:
            self.least_level += 1
            while self.least_end < len(ranked) and size[ranked[self.least_end]] == self.least_level:
                self.least_end += 1
            self.next_least = 0
        m = ranked[self.next_least]
        self.next_least += 1
        return m

    def most(self):
        size, ranked = self.size, self.ranked
        if self.next_most < self.most_start:
            if self.most_end <= self.most_start and self.most_start > 0:
                self.most_level = size[ranked[self.most_start - 1]]
            else:
                self.most_level -= 1
            while self.most_start > 0 and size[ranked[self.most_start - 1]] == self.most_level:
                self.most_start -= 1
            self.next_most = self.most_end - 1
        if self.next_most < 0:
            return None
        m = ranked[self.next_most]
        self.next_most -= 1
        return m

    def exclude_most(self):
        a, b = self.next_most + 1, self.most_end - 1
        self.ranked[a], self.ranked[b] = self.ranked[b], self.ranked[a]
        self.most_end -= 1

    def balanced(self):
        return self.most_level - self.least_level <= 1


def reference_heterogeneous(spec: GroupSpec, topics) -> dict:
    ids = list(spec.members)
    if not ids:
        return {}
    subs = {i: spec.members[m].subscribed_topic_ids for i, m in enumerate(ids)}
    counts = _counts(set().union(*subs.values()), topics)
    if not counts:
        return {m: {} for m in ids}
    subscribers = {t: [i for i in range(len(ids)) if t in subs[i]] for t in counts}
    owner: dict = {}
    size = {i: 0 for i in range(len(ids))}
    for i, m in enumerate(ids):
        for t, ps in (spec.current_assignment.get(m) or {}).items():
            if t in subs[i]:
                for p in sorted(ps):
                    if p < counts[t] and (t, p) not in owner:
                        owner[(t, p)] = i
                        size[i] += 1

    def key(t):
        return (-(counts[t] / len(subscribers[t])), len(subscribers[t]), t)

    order = sorted(counts, key=key)
    for t in order:
        free = [p for p in range(counts[t]) if (t, p) not in owner]
        if not free:
            continue
        balancer = _Balancer(subscribers[t], size)
        for p in free:
            m = balancer.least()
            owner[(t, p)] = m
            size[m] += 1

    sweep = [t for t in order if len(subscribers[t]) >= 2]
    last = -1
    for _ in range(16):
        stop = False
        for k, t in enumerate(sweep):
            if k == last:
                stop = True
                break
            moved = _balance_topic(t, counts[t], subscribers[t], owner, size)
            if moved or last == -1:
                last = k
        if stop:
            break

    target = {m: {} for m in ids}
    for (t, p), i in owner.items():
        target[ids[i]].setdefault(t, set()).add(p)
    return _frozen(target)


def _balance_topic(t, n, subscribers, owner, size):
    balancer = _Balancer(subscribers, size)
    if size[balancer.ranked[-1]] - size[balancer.ranked[0]] <= 1:
        return 0
    held: dict = {}
    for p in range(n):
        held.setdefault(owner[(t, p)], []).append(p)
    moved = 0
    while not balancer.balanced():
        while True:
            giver = balancer.most()
            if giver is None or held.get(giver):
                break
            balancer.exclude_most()
        if giver is None:
            break
        p = held[giver].pop()
        taker = balancer.least()
        if balancer.balanced():
            break
        owner[(t, p)] = taker
        size[giver] -= 1
        size[taker] += 1
        moved += 1
    return moved
