"""Fault rules: which requests a rule matches, and what it does to them.

    Fault("ConsumerGroupHeartbeat", group="g", nth=3, error="NOT_COORDINATOR")
    Fault("Heartbeat", delay_ms=12_000, times=1)         # an answer late past the session timeout
    Fault("SyncGroup", drop="after")                     # the coordinator wrote it; the client never heard
    Fault("OffsetCommit", observe=True)                  # count, do nothing
    Fault("SyncGroup", group="g", pause=True)            # held until server.step() or resume()
    parse_fault("JoinGroup group=g drop=before nth=1")  # the same small syntax as `kgroup serve --fault`

A rule matches on the API (name or key; None or "*": any) and version, the broker that got the
request, the group, member id, instance id or member epoch (generation) it names, a `topic` and
`partition` it names (a produce, a fetch, a commit...), and `when` (a predicate on the request). Of the matching requests it acts on the `nth` only, or on every one
up to `times`. It acts by answering `error` (Kafka's message for the code unless `message` says
otherwise), by delaying the answer `delay_ms`, by dropping the connection `before` the
coordinator runs the request or `after` it (with no answer), by holding it until the server's
`step()` or `resume()` lets it through (`pause`: what `Server.pause` does to every request, for
these only; the clock goes on), or not at all (`observe`).
`hits` counts the requests it acted on (observed); `wait(hits=1, timeout=...)` blocks until then.
"""
from __future__ import annotations

import shlex
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kgroup.errors import ErrorCode
from kgroup.lab.messages import message_of
from kgroup.protocol import API_KEYS, api_name

__all__ = ["Fault", "parse_fault"]

_DROPS = ("before", "after")


def _api_key(api: str | int) -> int:
    if isinstance(api, int):
        if api not in API_KEYS.values():
            raise ValueError(f"unknown Kafka API key {api}")
        return api
    try:
        return API_KEYS[api]
    except KeyError:
        raise ValueError(f"unknown Kafka API {api!r} (names as Kafka's: JoinGroup, ConsumerGroupHeartbeat, ...)") from None


def _error_code(error: ErrorCode | str | int) -> ErrorCode:
    if isinstance(error, ErrorCode):
        return error
    if isinstance(error, int) or (isinstance(error, str) and error.lstrip("-").isdigit()):
        return ErrorCode(int(error))
    try:
        return ErrorCode[error.lower()]
    except KeyError:
        raise ValueError(f"unknown error code {error!r} (use Kafka's name, e.g. NOT_COORDINATOR, or its number)") from None


def _named_groups(body: Any) -> list[str]:
    group = getattr(body, "group_id", None)
    if group is not None:
        return [group]
    groups = getattr(body, "groups", None) or ()
    return [g if isinstance(g, str) else getattr(g, "group_id", None) for g in groups]


_PARTITION_FIELDS = ("partition_index", "partition", "index")


def _named_partitions(body: Any, topic: str | None = None) -> set[tuple[str | None, int]]:
    """(topic name or None, partition) of every topic partition a request names, at any depth."""
    found: set[tuple[str | None, int]] = set()

    def walk(x: Any, where: str | None) -> None:
        if isinstance(x, (list, tuple)):
            for item in x:
                walk(item, where)
            return
        if not hasattr(x, "__dataclass_fields__"):
            return
        name = next((getattr(x, f) for f in ("name", "topic") if isinstance(getattr(x, f, None), str)), where)
        for f in _PARTITION_FIELDS:
            value = getattr(x, f, None)
            if isinstance(value, int) and not isinstance(value, bool):
                found.add((name, value))
        for index in getattr(x, "partition_indexes", None) or ():
            found.add((name, index))
        for f in x.__dataclass_fields__:
            value = getattr(x, f)
            if isinstance(value, (list, tuple)) and value and hasattr(value[0], "__dataclass_fields__"):
                walk(value, name)
    walk(body, None)
    return found


def _first(body: Any, *names: str) -> Any:
    for name in names:
        value = getattr(body, name, None)
        if value is not None:
            return value
    return None


@dataclass(eq=False)
class Fault:
    """One rule (see the module docstring)."""

    api: str | int | None = None
    version: int | None = None
    broker: int | None = None
    group: str | None = None
    member: str | None = None
    instance: str | None = None
    epoch: int | None = None
    topic: str | None = None
    partition: int | None = None
    nth: int | None = None
    times: int | None = None
    when: Callable[[Any], bool] | None = None
    error: ErrorCode | str | int | None = None
    message: str | None = None
    delay_ms: int = 0
    drop: str | None = None
    pause: bool = False
    observe: bool = False
    #: requests that matched, and those acted on (observed)
    matched: int = field(default=0, init=False)
    hits: int = field(default=0, init=False)

    def __post_init__(self) -> None:
        self.api_key = None if self.api in (None, "*") else _api_key(self.api)
        if self.error is not None:
            self.error = _error_code(self.error)
        if self.drop is not None and self.drop not in _DROPS:
            raise ValueError(f"drop must be 'before' or 'after', not {self.drop!r}")
        if self.delay_ms < 0:
            raise ValueError(f"delay_ms must be >= 0, not {self.delay_ms}")
        if self.error is not None and self.drop is not None:
            raise ValueError("a rule answers an error or drops the connection, not both")
        if self.observe and (self.error is not None or self.drop or self.delay_ms or self.pause):
            raise ValueError("an observe rule does nothing but count: no error, drop, delay or pause")
        if not self.observe and self.error is None and self.drop is None and not self.delay_ms and not self.pause:
            raise ValueError("a rule needs an action: error=, delay_ms=, drop=, pause=True or observe=True")
        if self.nth is not None and self.nth < 1:
            raise ValueError(f"nth counts from 1, not {self.nth}")
        self._hit = threading.Condition()

    # -- matching --------------------------------------------------------------------------
    def matches(self, api_key: int, version: int, broker_id: int, body: Any) -> bool:
        """Whether the request is one this rule is about (counting aside)."""
        if self.api_key is not None and api_key != self.api_key:
            return False
        if self.version is not None and version != self.version:
            return False
        if self.broker is not None and broker_id != self.broker:
            return False
        if self.group is not None and self.group not in _named_groups(body):
            return False
        if self.member is not None and _first(body, "member_id") != self.member:
            return False
        if self.instance is not None and _first(body, "group_instance_id", "instance_id") != self.instance:
            return False
        if self.epoch is not None and _first(body, "member_epoch", "generation_id",
                                             "generation_id_or_member_epoch") != self.epoch:
            return False
        if self.topic is not None or self.partition is not None:
            named = _named_partitions(body)
            if not any((self.topic is None or t == self.topic) and (self.partition is None or p == self.partition)
                       for t, p in named):
                return False
        return self.when is None or bool(self.when(body))

    def fire(self, api_key: int, version: int, broker_id: int, body: Any) -> bool:
        """Count a request; True when the rule acts on it (or, observing, counts it as a hit)."""
        if not self.matches(api_key, version, broker_id, body):
            return False
        self.matched += 1
        if self.nth is not None and self.matched != self.nth:
            return False
        if self.times is not None and self.hits >= self.times:
            return False
        with self._hit:
            self.hits += 1
            self._hit.notify_all()
        return True

    def error_message(self) -> str | None:
        return self.message if self.message is not None else message_of(self.error)

    def wait(self, hits: int = 1, timeout: float = 30.0) -> int:
        """Block until the rule has acted `hits` times; returns its hits, or raises TimeoutError."""
        with self._hit:
            if not self._hit.wait_for(lambda: self.hits >= hits, timeout):
                raise TimeoutError(f"{self} acted {self.hits} time(s) in {timeout:g} s, not {hits}")
        return self.hits

    # -- display ---------------------------------------------------------------------------
    @property
    def action(self) -> str:
        if self.observe:
            return "observe"
        parts = ["pause"] if self.pause else []
        if self.delay_ms:
            parts.append(f"delay={self.delay_ms}")
        if self.error is not None:
            parts.append(f"error={self.error.name.upper()}")
        if self.drop is not None:
            parts.append(f"drop={self.drop}")
        return " ".join(parts)

    def __str__(self) -> str:
        what = "*" if self.api_key is None else api_name(self.api_key)
        if self.version is not None:
            what += f"@{self.version}"
        keys = [f"{k}={getattr(self, k)}" for k in ("broker", "group", "member", "instance", "epoch", "topic",
                                                     "partition", "nth", "times")
                if getattr(self, k) is not None]
        if self.when is not None:
            keys.append("when=<predicate>")
        return " ".join([what, *keys, self.action])

    def __repr__(self) -> str:
        return f"<Fault {self} hits={self.hits}>"


_INT_KEYS = ("version", "broker", "epoch", "partition", "nth", "times")
_STR_KEYS = ("group", "member", "instance", "topic", "message")


def parse_fault(text: str) -> Fault:
    """A rule from its text: ``API[@VERSION] [KEY=VALUE ...] ACTION`` (see `Fault`), e.g.
    ``"ConsumerGroupHeartbeat group=g nth=3 error=NOT_COORDINATOR"``, ``"Heartbeat delay=12000
    times=1"``, ``"SyncGroup drop=after"``, ``"JoinGroup group=g pause"``, ``"* broker=1 observe"``."""
    try:
        tokens = shlex.split(text)
    except ValueError as exc:
        raise ValueError(f"fault {text!r}: {exc}") from None
    if not tokens:
        raise ValueError("an empty fault rule: expected API[@VERSION] [KEY=VALUE ...] ACTION")
    api, _, version = tokens[0].partition("@")
    kw: dict[str, Any] = {"api": int(api) if api.isdigit() else api}
    if version:
        kw["version"] = version
    for token in tokens[1:]:
        key, sep, value = token.partition("=")
        if not sep:
            if token not in ("observe", "pause"):
                raise ValueError(f"fault {text!r}: {token!r} is not KEY=VALUE (or the word observe or pause)")
            kw[token] = True
        elif key in ("delay", "delay_ms"):
            kw["delay_ms"] = value
        elif key in _INT_KEYS or key in _STR_KEYS or key in ("error", "drop"):
            kw[key] = value
        else:
            raise ValueError(f"fault {text!r}: unknown key {key!r} (known: version, broker, group, member, "
                             "instance, epoch, topic, partition, nth, times, error, message, delay, drop; and the words "
                             "pause, observe)")
    for key in (*_INT_KEYS, "delay_ms"):
        if key in kw:
            try:
                kw[key] = int(kw[key])
            except ValueError:
                raise ValueError(f"fault {text!r}: {key} must be a whole number, not {kw[key]!r}") from None
    try:
        return Fault(**kw)
    except (ValueError, KeyError) as exc:
        raise ValueError(f"fault {text!r}: {exc}") from None
