"""Scripted scenarios: named steps run against a coordinator, remembered by log position.

    s = Scenario(Coordinator(...))
    s.step("A commits", request("OffsetCommit", 9, ...))
    s.step("an hour passes", advance_ms=3_600_000)
    s.state_after(0)        # the coordinator as of the end of step 0 (look-back, no re-run)

Widgets step through a scenario forwards and backwards with `Coordinator.as_of`.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgroup.coordinator import Coordinator
from kgroup.runtime import PendingResponse


@dataclass(frozen=True)
class Step:
    index: int
    label: str
    request: Any
    response: Any
    start_position: int  # log position before the step
    end_position: int    # log position after the step
    time_ms: int         # clock after the step
    #: earlier steps whose waiting JoinGroup/SyncGroup answer this step completed
    answered: tuple[int, ...] = ()
    #: soft state seen on the live coordinator after the step (Kafka does not persist
    #: it, so look-back cannot rebuild it): classic members, waiting answers, timers
    observed: dict = field(default_factory=dict, compare=False)
    #: the fault that hit this step (`kgroup serve`'s failure lab: a fault rule, a moved
    #: coordinator, a broker killed), as text; None for none
    fault: str | None = None


class Scenario:
    """A list of steps already run on `coordinator`."""

    def __init__(self, coordinator: Coordinator) -> None:
        self.coordinator = coordinator
        self.steps: list[Step] = []
        self._waiting: dict[int, PendingResponse] = {}

    def step(self, label: str, request: Any = None, *, advance_ms: int = 0, client_id: str = "kgroup") -> Step:
        """Send `request` (if any, as client `client_id`), then advance the clock by
        `advance_ms` (firing timers)."""
        c = self.coordinator
        start = c.position
        response = c.handle(request, client_id=client_id) if request is not None else None
        if advance_ms:
            c.advance(advance_ms)
        index = len(self.steps)
        answered = []
        for i in sorted(self._waiting):
            if self._waiting[i].done:
                answered.append(i)
                del self._waiting[i]
        if isinstance(response, PendingResponse):
            if response.done:
                answered.append(index)
            else:
                self._waiting[index] = response
        s = Step(index, label, request, response, start, c.position, c.now(), tuple(answered), self._observe())
        self.steps.append(s)
        return s

    def _observe(self) -> dict:
        c = self.coordinator
        members = []
        for g in c.groups.values():
            describe = getattr(g, "describe_members", None)
            if describe is not None:
                members += [{"group": g.group_id, **row} for row in describe()]
        return {"groups": c.groups_table(), "members": members, "timers": c.timers.pending()}

    def response_of(self, index: int) -> Any:
        """Step `index`'s answer: the kio response, or None while it is still waiting."""
        r = self.steps[index].response
        if isinstance(r, PendingResponse):
            return r.response if r.done else None
        return r

    def entries(self, index: int) -> list[Any]:
        """The log entries step `index` wrote."""
        s = self.steps[index]
        return [self.coordinator.log.entry_at(i) for i in range(s.start_position, s.end_position)]

    def state_after(self, index: int) -> Coordinator:
        """The coordinator as it was at the end of step `index` (replayed, read-only)."""
        return self.coordinator.as_of(self.steps[index].end_position)

    def __len__(self) -> int:
        return len(self.steps)


class ScriptedStreamsMember:
    """A Streams member for step-by-step scenarios: it sends the heartbeats a Kafka Streams
    thread would (full on join, then only what changed) and takes every assignment at once,
    so a notebook can move one heartbeat at a time. (`kgroup.clients` has the full client,
    with revocation time, restoration and its own timing.)

        a = ScriptedStreamsMember("app", "A", topology, process_id="pA")
        s.step("A joins", a.heartbeat());  a.update(s.response_of(-1))
    """

    def __init__(self, group_id: str, member_id: str, topology: Any, *, process_id: str | None = None,
                 instance_id: str | None = None, rebalance_timeout_ms: int = 30_000,
                 endpoint: tuple[str, int] | None = None) -> None:
        self.group_id, self.member_id, self.topology = group_id, member_id, topology
        self.process_id = process_id or f"process-{member_id}"
        self.instance_id, self.rebalance_timeout_ms, self.endpoint = instance_id, rebalance_timeout_ms, endpoint
        self.epoch = 0
        self.tasks: dict[str, dict[str, list[int]]] = {"active": {}, "standby": {}, "warmup": {}}
        self._report = True  # the next heartbeat reports the owned tasks
        #: the error that stopped this member (a Streams client gives up on these), or None
        self.failed: str | None = None

    def heartbeat(self, *, leave: bool = False, temporary: bool = False, report: bool = False,
                  task_offsets: dict | None = None, task_end_offsets: dict | None = None) -> Any:
        """The next StreamsGroupHeartbeat request: a leave with epoch -1 when `leave`, or -2 (a
        static member leaving for a moment, keeping its identity) when `temporary`. `report`
        sends the owned tasks even if unchanged; `task_offsets`/`task_end_offsets` map
        (subtopology, partition) to the changelog offsets the member reports."""
        from kgroup.protocol import request

        def offsets(d: dict | None) -> list[dict] | None:
            return None if d is None else [{"subtopology_id": st, "partition": p, "offset": o}
                                           for (st, p), o in sorted(d.items())]

        def ids(role: str) -> list[dict] | None:
            if not (self._report or report) and self.epoch != 0:
                return None
            return [{"subtopology_id": s, "partitions": ps} for s, ps in sorted(self.tasks[role].items())]
        joining = self.epoch == 0
        data = dict(group_id=self.group_id, member_id=self.member_id,
                    member_epoch=-2 if temporary else -1 if leave else self.epoch, endpoint_information_epoch=0,
                    instance_id=self.instance_id, rebalance_timeout=self.rebalance_timeout_ms if joining else -1,
                    topology=self.topology.to_request_data() if joining and not (leave or temporary) else None,
                    active_tasks=ids("active"), standby_tasks=ids("standby"), warmup_tasks=ids("warmup"),
                    process_id=self.process_id if joining else None,
                    user_endpoint=({"host": self.endpoint[0], "port": self.endpoint[1]}
                                   if joining and self.endpoint else None),
                    client_tags=[] if joining else None, task_offsets=offsets(task_offsets),
                    task_end_offsets=offsets(task_end_offsets))
        self._report = False
        return request("StreamsGroupHeartbeat", 0, **data)

    def update(self, response: Any) -> bool:
        """Take the answer: the new epoch and, when sent, the new tasks (True if they changed)."""
        code = response.error_code
        if int(code) != 0:
            if code.name in _FATAL:
                self.failed = f"{code.name.upper()}: {response.error_message}"
                return False
            # Fenced or unknown: lose everything and rejoin.
            self.epoch, self.tasks, self._report = 0, {"active": {}, "standby": {}, "warmup": {}}, True
            return True
        self.epoch = response.member_epoch
        if response.active_tasks is None:
            return False
        new = {role: {t.subtopology_id: sorted(t.partitions) for t in getattr(response, f"{role}_tasks")}
               for role in ("active", "standby", "warmup")}
        changed = new != self.tasks
        self.tasks = new
        self._report = changed  # acknowledge by reporting what it now owns
        return changed

    def restart(self, topology: Any = None) -> None:
        """A new process instance of the same member: it rejoins (epoch 0) with nothing."""
        self.topology = topology or self.topology
        self.epoch, self.tasks, self._report = 0, {"active": {}, "standby": {}, "warmup": {}}, True
        self.failed = None


class ScriptedClassicStreamsMember:
    """A Kafka Streams consumer still on the classic protocol (cooperative rebalancing), for
    step-by-step scenarios of KIP-1071's online migration. It sends what Kafka Streams sends:
    JoinGroup with protocol type "consumer", protocol "stream" and a SubscriptionInfo (v11)
    saying which tasks it runs as active (offset sum -2) and which it keeps as standbys; it
    reads its tasks from the SyncGroup's AssignmentInfo and, having had to give a task up,
    rejoins at once (cooperative protocol).

        a = ScriptedClassicStreamsMember("app", "A", {"0": ("input",)}, process_id=..., generation=23,
                                         active=[("0", 0)], standby=[("0", 1)])
        s.step("A heartbeats", a.heartbeat());  a.take_heartbeat(s.response_of(-1))
    """

    def __init__(self, group_id: str, member_id: str, source_topics: dict[str, tuple[str, ...]], *,
                 process_id: str, generation: int = -1, active: Any = (), standby: Any = (),
                 instance_id: str | None = None, session_timeout_ms: int = 45_000,
                 rebalance_timeout_ms: int = 300_000, endpoint: tuple[str, int] | None = None,
                 task_offsets: dict | None = None) -> None:
        self.group_id, self.member_id, self.source_topics = group_id, member_id, dict(source_topics)
        self.process_id, self.generation, self.instance_id = process_id, generation, instance_id
        self.session_timeout_ms, self.rebalance_timeout_ms, self.endpoint = (session_timeout_ms,
                                                                            rebalance_timeout_ms, endpoint)
        self.active: set = set(active)
        self.standby: set = set(standby)
        #: task -> changelog offset sum of a task kept as standby (reported in the SubscriptionInfo)
        self.task_offsets: dict = dict(task_offsets or {})
        #: the consumer revoked tasks and must rejoin (cooperative), or was told to
        self.needs_rejoin = False
        #: AssignmentInfo.nextRebalanceMs of the last assignment (a probing rebalance, if not Long.MAX_VALUE)
        self.next_rebalance_ms: int | None = None

    # -- what it sends -----------------------------------------------------------------
    def subscription_info(self) -> Any:
        from kgroup.protocol.streams_protocol import LATEST_OFFSET, SubscriptionInfo
        sums = {t: self.task_offsets.get(t, 0) for t in self.standby}
        sums.update({t: LATEST_OFFSET for t in self.active})
        return SubscriptionInfo(self.process_id, sums, self.endpoint)

    def partitions(self, tasks: Any) -> list[tuple[str, int]]:
        return sorted((topic, p) for s, p in tasks for topic in self.source_topics.get(s, ()))

    def protocols(self) -> list[dict]:
        from kgroup.protocol.consumer_protocol import Subscription, encode_subscription
        from kgroup.protocol.streams_protocol import STREAMS_PROTOCOL_NAME, encode_subscription_info
        topics = sorted({t for ts in self.source_topics.values() for t in ts})
        sub = Subscription(topics, encode_subscription_info(self.subscription_info()),
                           owned_partitions=self.partitions(self.active), generation_id=self.generation)
        return [{"name": STREAMS_PROTOCOL_NAME, "metadata": encode_subscription(sub)}]

    def heartbeat(self) -> Any:
        from kgroup.protocol import request
        return request("Heartbeat", 4, group_id=self.group_id, generation_id=self.generation,
                       member_id=self.member_id, group_instance_id=self.instance_id)

    def join(self) -> Any:
        from kgroup.protocol import request
        return request("JoinGroup", 9, group_id=self.group_id, session_timeout=self.session_timeout_ms,
                       rebalance_timeout=self.rebalance_timeout_ms, member_id=self.member_id,
                       group_instance_id=self.instance_id, protocol_type="consumer", protocols=self.protocols(),
                       reason=None)

    def sync(self) -> Any:
        from kgroup.protocol import request
        from kgroup.protocol.streams_protocol import STREAMS_PROTOCOL_NAME
        return request("SyncGroup", 5, group_id=self.group_id, generation_id=self.generation,
                       member_id=self.member_id, group_instance_id=self.instance_id, protocol_type="consumer",
                       protocol_name=STREAMS_PROTOCOL_NAME, assignments=[])

    def leave(self) -> Any:
        from kgroup.protocol import request
        return request("LeaveGroup", 5, group_id=self.group_id,
                       members=[{"member_id": self.member_id, "group_instance_id": self.instance_id}])

    # -- what it does with the answers ---------------------------------------------------
    def take_heartbeat(self, response: Any) -> None:
        if response.error_code.name == "rebalance_in_progress":
            self.needs_rejoin = True

    def take_join(self, response: Any) -> None:
        if int(response.error_code) == 0:
            self.generation = response.generation_id
            self.member_id = response.member_id

    def take_sync(self, response: Any) -> bool:
        """Take the new tasks; True when it had to give some up (it then rejoins at once)."""
        from kgroup.protocol.consumer_protocol import decode_assignment
        from kgroup.protocol.streams_protocol import decode_assignment_info
        if int(response.error_code) != 0:
            self.needs_rejoin = response.error_code.name == "rebalance_in_progress"
            return False
        wire, _ = decode_assignment(bytes(response.assignment))
        info = decode_assignment_info(wire.user_data)
        active, standby = set(info.active_tasks), set(info.standby_tasks)
        revoked = bool(self.active - active)
        self.active, self.standby = active, standby
        self.next_rebalance_ms = info.next_rebalance_ms
        self.needs_rejoin = revoked
        return revoked


#: errors after which a Streams client stops instead of rejoining
_FATAL = {"invalid_request", "streams_invalid_topology", "streams_invalid_topology_epoch", "streams_topology_fenced",
          "group_max_size_reached", "unreleased_instance_id", "fenced_instance_id", "group_id_not_found"}
