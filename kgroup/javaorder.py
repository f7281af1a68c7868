"""Java `HashMap` iteration order, so kgroup lists members in the order Kafka does.

Kafka's classic group keeps its members in a `java.util.HashMap<String, ...>`. That
order decides more than display: the leader picked when the leader leaves, the member list the
leader receives, and the member order inside the GroupMetadata records the broker writes. A
Python dict keeps insertion order, so kgroup imitates HashMap here to match those bytes.

HashMap puts a key in bucket `spread(hashCode) & (capacity - 1)`. The table starts
at 16 buckets and doubles when size exceeds 0.75 × capacity, and it never shrinks.
A bucket keeps its keys in insertion order; a resize splits buckets without
reordering. Iteration walks the buckets in order. Treeified buckets (8 or more colliding keys in
a table of at least 64) are not modelled: string member ids never collide that much.
"""
from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator
from operator import mul
from typing import Any, TypeVar

from kgroup.log.partitioner import java_string_hashcode

V = TypeVar("V")

_DEFAULT_CAPACITY = 16
_LOAD_FACTOR = 0.75


_HASH_CACHE: dict[str, int] = {}
_POWERS: dict[int, list[int]] = {}


def cached_string_hashcode(s: str) -> int:
    """`java_string_hashcode`, remembered: the assignors hash the same member and process ids
    at every assignment. ASCII strings (ids) are hashed without a Python-level loop."""
    h = _HASH_CACHE.get(s)
    if h is None:
        if s.isascii():
            n = len(s)
            powers = _POWERS.get(n)
            if powers is None:   # 31^(n-1), ..., 31, 1 (mod 2^32)
                powers = _POWERS[n] = [pow(31, n - 1 - i, 1 << 32) for i in range(n)]
            h = sum(map(mul, s.encode(), powers)) & 0xFFFFFFFF
            if h & 0x80000000:
                h -= 1 << 32
        else:
            h = java_string_hashcode(s)
        if len(_HASH_CACHE) >= 1 << 16:   # bounded: ids come and go
            _HASH_CACHE.clear()
        _HASH_CACHE[s] = h
    return h


def java_spread_hash(key: str) -> int:
    """HashMap.hash(key): the String hash code with its high half folded in (unsigned)."""
    h = java_string_hashcode(key) & 0xFFFFFFFF
    return h ^ (h >> 16)


def java_order(keys: Iterable[str], capacity: int = _DEFAULT_CAPACITY) -> list[str]:
    """Keys (given in insertion order) in the order a HashMap of `capacity` iterates them."""
    return java_hash_order(keys, java_string_hashcode, capacity)


def java_hash_order(keys: Iterable[Any], hash32: Callable[[Any], int], capacity: int | None = None) -> list:
    """Keys in the iteration order of a Java `HashMap`/`HashSet` holding them, for any key type
    given its Java `hashCode` (`hash32`). Keys sharing a bucket keep their given order.
    `capacity` defaults to what `put()`-ing the keys one by one into a new map grows to."""
    keys = list(keys)
    if capacity is None:
        capacity = _DEFAULT_CAPACITY
        while len(keys) > capacity * _LOAD_FACTOR:
            capacity *= 2
    mask = capacity - 1

    def bucket(k: Any) -> int:
        h = hash32(k) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & mask
    return sorted(keys, key=bucket)  # stable: same-bucket keys keep their order


def table_size_for(n: int) -> int:
    """`HashMap.tableSizeFor`: the table a `new HashMap<>(n)` allocates on its first insert."""
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def compute_if_absent_order(keys: Iterable[Any], hash32: Callable[[Any], int],
                            initial_capacity: int | None = None) -> list:
    """The iteration order of a HashMap filled by `computeIfAbsent` for each of `keys` (repeats
    allowed), made with `new HashMap<>(initial_capacity)` (None: `new HashMap<>()`).

    Unlike `put`, `computeIfAbsent` links a new key at the *head* of its bucket, and it
    resizes *before* inserting, only when the size already exceeds the threshold (so a map can
    end one key over it)."""
    threshold = _DEFAULT_CAPACITY if initial_capacity is None else table_size_for(initial_capacity)
    table: list[list] | None = None
    size = 0
    spread: dict[Any, int] = {}   # key -> its spread hash, in insertion order
    for k in keys:
        if table is None or size > threshold:
            capacity = threshold if table is None else 2 * len(table)
            threshold = int(capacity * _LOAD_FACTOR)
            grown: list[list] = [[] for _ in range(capacity)]
            for bucket in table or ():   # a split keeps the order within a bucket
                for key in bucket:
                    grown[spread[key] & (capacity - 1)].append(key)
            table = grown
        if k in spread:
            continue
        h = spread[k] = _spread(hash32(k))
        table[h & (len(table) - 1)].insert(0, k)
        size += 1
    return [k for bucket in table or () for k in bucket]


def _spread(h: int) -> int:
    h &= 0xFFFFFFFF
    return h ^ (h >> 16)


def hashset_capacity(n: int) -> int:
    """The table size of `new HashSet<>(collection)` / `new HashMap<>(map)` of `n` elements."""
    wanted = max(int(n / _LOAD_FACTOR) + 1, _DEFAULT_CAPACITY)
    return 1 << (wanted - 1).bit_length()


def java_string_set_order(names: Iterable[str]) -> list[str]:
    """A `new HashSet<>(collection)` of strings, as it iterates (how Kafka lists the names in
    the records it builds from a set)."""
    names = list(names)
    return java_hash_order(names, java_string_hashcode, hashset_capacity(len(names)))


def topic_partition_hash(topic: str, partition: int) -> int:
    """Kafka's `TopicPartition.hashCode()`: `31 * (31 + partition) + topic.hashCode()`."""
    return (31 * (31 + partition) + java_string_hashcode(topic)) & 0xFFFFFFFF


def by_partition(group_ids: Iterable[str], partition_of: Callable[[str], int],
                 topic: str = "__consumer_offsets") -> list[tuple[int, list[str]]]:
    """Group ids split by `__consumer_offsets` partition as Kafka's GroupCoordinatorService splits
    a describe or a DeleteGroups (a `HashMap<TopicPartition, List<String>>`): the partitions in
    that map's iteration order, each with its ids in request order. The service answers partition
    after partition in this order: it combines the partitions' futures in the order it made them,
    so the order does not depend on which partition answers first."""
    split: dict[int, list[str]] = {}
    for g in group_ids:
        split.setdefault(partition_of(g), []).append(g)
    order = java_hash_order(split, lambda p: topic_partition_hash(topic, p))
    return [(p, split[p]) for p in order]


def service_order(group_ids: Iterable[str], partition_of: Callable[[str], int],
                  invalid: Callable[[str], bool] = lambda g: False) -> list[str]:
    """The order GroupCoordinatorService answers a describe in: the `invalid` ids first (it answers
    those itself, in request order), then `by_partition`."""
    ids = list(group_ids)
    return [g for g in ids if invalid(g)] + [g for _, part in by_partition(
        [g for g in ids if not invalid(g)], partition_of) for g in part]


def java_uuid_hash(u: "uuid.UUID") -> int:
    """Kafka's `Uuid.hashCode()`: the xor of both 64-bit halves, folded to 32 bits."""
    h = (u.int >> 64) ^ (u.int & 0xFFFFFFFFFFFFFFFF)
    return ((h >> 32) ^ h) & 0xFFFFFFFF


class JavaHashMap(dict[str, V]):
    """A dict whose iteration order is java.util.HashMap's for the same operations."""

    def __init__(self, items: Iterable[tuple[str, V]] = ()) -> None:
        super().__init__()
        self.capacity = 0  # the table is allocated on the first put, as in Java
        self._order: list[str] | None = None
        for k, v in items:
            self[k] = v

    def __setitem__(self, key: str, value: V) -> None:
        if key not in self:
            if self.capacity == 0:
                self.capacity = _DEFAULT_CAPACITY
            if len(self) + 1 > self.capacity * _LOAD_FACTOR:
                self.capacity *= 2
            self._order = None
        super().__setitem__(key, value)

    def __delitem__(self, key: str) -> None:
        super().__delitem__(key)
        self._order = None

    def pop(self, key: str, *default: Any) -> Any:  # type: ignore[override]
        if key in self:
            self._order = None
        return super().pop(key, *default)

    def clear(self) -> None:
        super().clear()
        self._order = None

    def _java_keys(self) -> list[str]:
        if self._order is None:
            self._order = java_order(super().__iter__(), self.capacity or _DEFAULT_CAPACITY)
        return self._order

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._java_keys()))

    def keys(self):  # type: ignore[override]
        return list(self._java_keys())

    def values(self):  # type: ignore[override]
        return [dict.__getitem__(self, k) for k in self._java_keys()]

    def items(self):  # type: ignore[override]
        return [(k, dict.__getitem__(self, k)) for k in self._java_keys()]

    def first_key(self) -> str | None:
        keys = self._java_keys()
        return keys[0] if keys else None

    def __repr__(self) -> str:
        return f"JavaHashMap({dict(self.items())!r})"

    def __deepcopy__(self, memo: dict) -> "JavaHashMap[V]":
        import copy
        clone: JavaHashMap[V] = JavaHashMap()
        clone.capacity = self.capacity
        for k in super().__iter__():
            dict.__setitem__(clone, k, copy.deepcopy(dict.__getitem__(self, k), memo))
        return clone
