"""Well-behaved protocol-level members of consumer, share and Streams groups, for histories that
two coordinators must answer alike: each member sends what a real client sends (its epoch, what it
owns, a full request on join), and takes what the answer gives it (its new epoch, its assignment
when the answer carries one, a rejoin after FENCED_MEMBER_EPOCH or UNKNOWN_MEMBER_ID)."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgroup import Cluster, Coordinator
from kgroup.clock import ManualClock
from kgroup.errors import ErrorCode
from kgroup.groups.streams import Subtopology, TopicInfo, Topology
from kgroup.protocol import request

GROUP = "g"
TOPICS = {"orders": 4, "payments": 2}
#: two subtopologies, one stateful (so standby tasks exist when configured)
TOPOLOGY = Topology(0, (Subtopology("0", source_topics=("orders",)),
                        Subtopology("1", source_topics=("payments",),
                                    state_changelog_topics=(TopicInfo("g-store-changelog"),))))
KINDS = ("consumer", "share", "streams")


def coordinator(profile: str, config: dict | None = None) -> Coordinator:
    """A coordinator whose cluster already has every topic the histories use (Streams
    internal topics included, so no creation happens behind a heartbeat)."""
    cluster = Cluster({**TOPICS, "g-store-changelog": 2}, seed=3)
    return Coordinator(cluster=cluster, profile=profile, config=config)


def reload(c: Coordinator) -> Coordinator:
    """A coordinator rebuilt from `c`'s logs on the same cluster, config and profile, with a clock of
    its own at `c`'s time (a shared clock would let one side's `advance` move the other's time,
    which the assignment timestamps of KIP-1263 show)."""
    return Coordinator.load(c.log, share_state_log=c.share_state_log, cluster=c.cluster, config=c.config,
                            profile=c.profile, clock=ManualClock(c.clock.now_ms()))


def _tasks(field_: Any) -> dict[str, list[int]] | None:
    if field_ is None:
        return None
    return {t.subtopology_id: sorted(t.partitions) for t in field_}


def _task_data(tasks: dict[str, list[int]]) -> list[dict]:
    return [{"subtopology_id": s, "partitions": ps} for s, ps in sorted(tasks.items()) if ps]


@dataclass
class Member:
    """One member of a group of `kind`, as its client sees itself."""

    kind: str
    member_id: str
    instance_id: str | None = None
    topics: tuple[str, ...] = ("orders",)
    epoch: int = 0
    #: consumer/share: {topic_id: partitions}; Streams: {"active"|"standby"|"warmup": {subtopology: partitions}}
    owned: dict = field(default_factory=dict)

    def _request(self, epoch: int, full: bool) -> Any:
        if self.kind == "consumer":
            owned = [{"topic_id": t, "partitions": sorted(ps)} for t, ps in self.owned.items()]
            return request("ConsumerGroupHeartbeat", 1, group_id=GROUP, member_id=self.member_id, member_epoch=epoch,
                           instance_id=self.instance_id, rack_id=None, rebalance_timeout=30_000 if full else -1,
                           subscribed_topic_names=list(self.topics) if full else None, subscribed_topic_regex=None,
                           server_assignor=None, topic_partitions=owned if full or epoch > 0 else None)
        if self.kind == "share":
            return request("ShareGroupHeartbeat", 1, group_id=GROUP, member_id=self.member_id, member_epoch=epoch,
                           rack_id=None, subscribed_topic_names=list(self.topics) if full else None)
        owned = self.owned or {"active": {}, "standby": {}, "warmup": {}}
        return request("StreamsGroupHeartbeat", 0, group_id=GROUP, member_id=self.member_id, member_epoch=epoch,
                       endpoint_information_epoch=0, instance_id=self.instance_id, rack_id=None,
                       rebalance_timeout=30_000 if full else -1,
                       topology=TOPOLOGY.to_request_data() if full and epoch == 0 else None,
                       active_tasks=_task_data(owned["active"]), standby_tasks=_task_data(owned["standby"]),
                       warmup_tasks=_task_data(owned["warmup"]), process_id=f"p-{self.member_id}" if full else None,
                       user_endpoint=None, client_tags=[] if full else None, task_offsets=None,
                       task_end_offsets=None, shutdown_application=False)

    def heartbeat(self, c: Coordinator) -> Any:
        """A join (epoch 0) or a keep-alive that reports what the member owns."""
        response = c.handle(self._request(self.epoch, full=self.epoch == 0), client_id=self.member_id)
        self._take(response)
        return response

    def leave(self, c: Coordinator, static: bool = False) -> Any:
        """LeaveGroup by heartbeat: -1, or -2 for a static member leaving for a moment."""
        epoch = -2 if static and self.instance_id is not None else -1
        response = c.handle(self._request(epoch, full=False), client_id=self.member_id)
        self.epoch, self.owned = 0, {}
        return response

    def _take(self, r: Any) -> None:
        if r.error_code in (ErrorCode.fenced_member_epoch, ErrorCode.unknown_member_id):
            self.epoch, self.owned = 0, {}
            return
        if r.error_code != ErrorCode.none:
            return
        self.epoch = r.member_epoch
        if self.kind == "streams":
            if r.active_tasks is not None:
                self.owned = {"active": _tasks(r.active_tasks), "standby": _tasks(r.standby_tasks) or {},
                              "warmup": _tasks(r.warmup_tasks) or {}}
        elif r.assignment is not None:
            self.owned = {tp.topic_id: list(tp.partitions) for tp in r.assignment.topic_partitions}


def view(response: Any) -> Any:
    """A response as comparable data (kio objects compare by value already)."""
    return response


def play(c: Coordinator, members: dict[str, Member], step: tuple) -> Any:
    """Apply one step of a history: ("hb", name) / ("leave", name) / ("static_leave", name) /
    ("advance", ms). Returns what the coordinator answered (None for time passing)."""
    op, arg = step
    if op == "advance":
        c.advance(arg)
        return None
    m = members[arg]
    if op == "hb":
        return m.heartbeat(c)
    return m.leave(c, static=op == "static_leave")
