"""What the invariant and failover suites share: reload a coordinator from its logs as a
failover would, compare a live coordinator with its reload, and move simulated clients over
to a new coordinator."""
from __future__ import annotations

import os
from collections import Counter
from typing import Any

from hypothesis import HealthCheck, Phase, settings

import dataclasses

from kgroup import Coordinator
from kgroup.errors import ErrorCode
from kgroup.runtime import PendingResponse
from kgroup.clients.classic import MemberState as ClassicState
from kgroup.dumps.replay import describe_groups, describe_share_partitions


class _Counts:
    """The `reliability` fixture's counter, for state machines (which take no fixtures): a test
    hands it over with `COUNTS.use(reliability)`; before that, counts go to a scratch counter."""

    def __init__(self) -> None:
        self.counter: Counter[str] = Counter()

    def use(self, counter: Counter[str]) -> None:
        self.counter = counter

    def __getitem__(self, name: str) -> int:
        return self.counter[name]

    def __setitem__(self, name: str, value: int) -> None:
        self.counter[name] = value


COUNTS = _Counts()


# what the mutation checks in the report were run with: the ci profile without shrinking
settings.register_profile("mutation", max_examples=25, stateful_step_count=30, deadline=None, database=None,
                          phases=[Phase.explicit, Phase.generate],
                          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def profile_settings() -> settings:
    """The hypothesis profile chosen for the reliability suites (conftest registers them)."""
    return settings.get_profile(os.environ.get("KGROUP_RELIABILITY", "ci"))


class CheckedCoordinator(Coordinator):
    """A coordinator that checks every answer it gives: each error code in it (top level, per
    topic, per partition, per member) is one of Kafka's, and there is at least one. A Python
    exception out of `handle` or `advance` fails the test by itself."""

    def handle(self, request: Any, **kw: Any) -> Any:
        response = super().handle(request, **kw)
        if isinstance(response, PendingResponse):
            response.add_done_callback(_check_response)   # runs at once if already answered
        else:
            _check_response(response)
        return response


def _check_response(response: Any) -> None:
    if isinstance(response, PendingResponse):
        response = response.response
    codes = list(_error_codes(response))
    assert codes, f"{type(response).__name__} carries no error code"
    for where, code in codes:
        assert isinstance(code, ErrorCode), f"{type(response).__name__}.{where} = {code!r} is not a Kafka error code"


def _error_codes(obj: Any, where: str = ""):
    if dataclasses.is_dataclass(obj):
        for f in dataclasses.fields(obj):
            value = getattr(obj, f.name)
            if f.name.endswith("error_code"):
                yield f"{where}{f.name}", value
            else:
                yield from _error_codes(value, f"{where}{f.name}.")
    elif isinstance(obj, (tuple, list)):
        for i, x in enumerate(obj):
            yield from _error_codes(x, f"{where}{i}.")


def reload(c: Coordinator) -> Coordinator:
    """A new coordinator rebuilt from `c`'s logs only (`__consumer_offsets` and
    `__share_group_state`), on the same cluster, config, profile and clock: a failover to
    another broker, which reads the same wall clock."""
    return type(c).load(c.log, share_state_log=c.share_state_log, cluster=c.cluster, config=c.config,
                            profile=c.profile, clock=c.clock)


#: member fields `describe()` shows that Kafka keeps in memory only: a classic member that joined
#: but has not sent SyncGroup yet (Kafka's `ClassicGroup.pendingSyncMembers`, with its timer)
SOFT_MEMBER_FIELDS = ("pending_sync",)


def durable_view(c: Coordinator) -> dict[str, Any]:
    """What a coordinator's durable state says: every group described (with its offsets), and
    every share-partition's durable state the share coordinator holds."""
    groups = describe_groups(c)
    for d in groups:
        d["members"] = [{k: v for k, v in m.items() if k not in SOFT_MEMBER_FIELDS} for m in d.get("members") or []]
    return {"groups": groups, "share_partitions": describe_share_partitions(c)}


def assert_reload_equal(c: Coordinator) -> Coordinator:
    """Records are the truth: `Coordinator.load` of the logs describes everything alike."""
    again = reload(c)
    live, loaded = durable_view(c), durable_view(again)
    for i, d in enumerate(live["groups"]):
        if d["type"] == "classic" and d["state"] in REBALANCING and i < len(loaded["groups"]):
            # Kafka writes a classic group's record when the leader's SyncGroup completes a
            # generation (and when it empties): mid-rebalance, the log holds the last generation
            # (GroupMetadataManager.classicGroupSyncToLeader / completeClassicGroupJoin)
            live["groups"][i] = _offsets_only(d)
            loaded["groups"][i] = _offsets_only(loaded["groups"][i])
    assert loaded["groups"] == live["groups"], _first_difference(live["groups"], loaded["groups"])
    assert loaded["share_partitions"] == live["share_partitions"]
    return again


REBALANCING = ("PreparingRebalance", "CompletingRebalance")


def live_view(c: Coordinator) -> dict[str, Any]:
    """`durable_view` with classic groups caught mid-rebalance shown by their offsets only (what
    a rebalance holds in memory until SyncGroup is not in the log, as in Kafka)."""
    view = durable_view(c)
    view["groups"] = [_offsets_only(d) if d["type"] == "classic" and d["state"] in REBALANCING else d
                      for d in view["groups"]]
    return view


def _offsets_only(d: dict) -> dict:
    return {k: d[k] for k in ("group_id", "partition", "offsets", "pending_offsets") if k in d}


def _first_difference(a: list, b: list) -> str:
    for x, y in zip(a, b):
        if x != y:
            keys = [k for k in x if x.get(k) != y.get(k)]
            return f"group {x.get('group_id')}: live {[(k, x.get(k)) for k in keys]} != reloaded {[(k, y.get(k)) for k in keys]}"
    return f"{len(a)} groups live, {len(b)} reloaded"


def point_clients_at(clients: Any, new: Coordinator) -> None:
    """Move simulated clients over to `new`, as Kafka's clients rediscover the coordinator
    (FindCoordinator) after NOT_COORDINATOR or a broken connection.

    A JoinGroup or SyncGroup still held in the old coordinator's purgatory never gets an
    answer: the connection broke, and Kafka's `AbstractCoordinator` marks the coordinator
    unknown and joins again (same member id) once it found the new one."""
    for k in clients:
        for obj in (k, getattr(k, "app", None)):
            if obj is not None and hasattr(obj, "c"):
                obj.c = new
            transport = getattr(obj, "transport", None)   # the network the client sends through
            if transport is not None and hasattr(transport, "c"):
                transport.c = new
        if not k.running:
            continue   # a stopped process has nothing to rejoin (its last JoinGroup may still be pending)
        for attr in ("_join", "_sync"):
            pending = getattr(k, attr, None)
            if pending is not None and not pending.done:
                setattr(k, attr, None)
                if isinstance(getattr(type(k), "rejoin_needed", None), property):
                    k._rejoin = True  # a classic Streams thread
                else:
                    k.rejoin_needed = True
                    k.state = ClassicState.UNJOINED


def takeover_timers(c: Coordinator) -> None:
    """What a coordinator taking over does to timers, done to the live one: every loaded
    member's session starts afresh, the periodic checks are scheduled an interval from now
    (the `on_loaded` hooks, Kafka's `onLoaded`). A run with this instead of a failover differs
    from the failed-over run only by the reload itself."""
    from kgroup.runtime import LOAD_HOOKS
    for hook in LOAD_HOOKS:
        hook(c)


def failover(sim: Any) -> Coordinator:
    """Throw the simulation's coordinator away and carry on with one reloaded from its logs."""
    new = reload(sim.c)
    sim.c = new
    if getattr(sim, "transport", None) is not None:
        sim.transport.c = new
    point_clients_at(sim.consumers, new)
    return new
