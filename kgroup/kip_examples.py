"""The KIPs' worked examples as runnable scenarios (used by the notebooks and the tests).

`migration_example()` is KIP-1071's "Online Migration from a Classic Consumer Group to a
Streams Group" example (see its docstring).

`rolling_bounce()` is KIP-1071's "Topology updates" example: three Streams clients A, B, C
(one thread each) with a sticky assignor and nine stateless tasks T1–T9; C is bounced to
topology epoch 1, then B. Each phase is run heartbeat by heartbeat as a `Scenario` until
nothing changes any more, and the members' assignments are recorded beside the KIP's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgroup.assignors.streams import TASK_ASSIGNOR_OVERRIDE, FixedTaskAssignor, TaskSets
from kgroup.clock import ManualClock
from kgroup.cluster import Cluster
from kgroup.coordinator import Coordinator
from kgroup.groups.streams import Subtopology, Topology
from kgroup.scenario import Scenario, ScriptedClassicStreamsMember, ScriptedStreamsMember

#: KIP-1071's text for each phase of the rolling bounce (member (#topology epoch): tasks).
KIP_ROLLING_BOUNCE = {
    "uniform start": {"A(#0)": "T1, T2, T3", "B(#0)": "T4, T5, T6", "C(#0)": "T7, T8, T9"},
    "C shut down": {"A(#0)": "T1, T2, T3, T7", "B(#0)": "T4, T5, T6, T8, T9"},
    "C back with topology epoch 1": {"A(#0)": "T2, T3, T7", "B(#0)": "T5, T6, T8", "C(#1)": "T1, T4, T9"},
    "B shut down": {"A(#0)": "T2, T3, T7", "C(#1)": "T1, T4, T9, T5, T6, T8"},
    "B back with topology epoch 1": {"A(#0)": "T2, T3, T7", "B(#1)": "T1, T4, T9", "C(#1)": "T5, T6, T8"},
}


@dataclass
class Phase:
    label: str
    first_step: int
    last_step: int
    #: member name -> (topology epoch, active tasks as T-labels)
    assignment: dict[str, tuple[int, list[str]]] = field(default_factory=dict)

    def text(self) -> dict[str, str]:
        """In the KIP's notation: {"A(#0)": "T1, T2, T3", ...}."""
        return {f"{m}(#{e})": ", ".join(ts) for m, (e, ts) in sorted(self.assignment.items())}


@dataclass
class RollingBounce:
    coordinator: Coordinator
    scenario: Scenario
    members: dict[str, ScriptedStreamsMember]
    phases: list[Phase]
    #: task (subtopology, partition) -> the KIP's label T1..T9
    labels: dict[tuple[str, int], str]

    def table(self) -> list[dict[str, Any]]:
        """One row per phase and member: kgroup's assignment beside the KIP's."""
        rows = []
        for phase in self.phases:
            kip = KIP_ROLLING_BOUNCE.get(phase.label, {})
            ours = phase.text()
            for key in sorted(set(kip) | set(ours)):
                rows.append({"phase": phase.label, "member": key, "kgroup": ours.get(key, "—"),
                             "KIP-1071": kip.get(key, "—")})
        return rows


def _sort_key(label: str) -> int:
    return int(label[1:])


def settle(scenario: Scenario, members: dict[str, ScriptedStreamsMember], running: list[str],
           label: str, max_rounds: int = 20) -> None:
    """Heartbeat every running member in turn until a whole round changes nothing."""
    for _ in range(max_rounds):
        changed = False
        for name in running:
            m = members[name]
            if m.failed:
                continue
            before = scenario.coordinator.position
            step = scenario.step(f"{label}: {name} heartbeats (epoch {m.epoch})", m.heartbeat())
            changed |= m.update(scenario.response_of(step.index)) or scenario.coordinator.position != before
        if not changed:
            return
    raise RuntimeError(f"{label}: the group did not settle in {max_rounds} rounds")


def rolling_bounce(*, tasks: int = 9, profile: str = "kip", start_ms: int = 1_718_000_000_000,
                   group_id: str = "app") -> RollingBounce:
    """Run KIP-1071's rolling bounce; see the module docstring."""
    c = Coordinator(cluster=Cluster({"input": tasks}, seed=1), clock=ManualClock(start_ms), profile=profile,
                    config={"group.streams.assignor.name": "sticky",
                            "group.streams.initial.rebalance.delay.ms": 0})
    s = Scenario(c)
    v0 = Topology(0, (Subtopology("0", source_topics=("input",)),))
    v1 = v0.with_epoch(1)
    members = {n: ScriptedStreamsMember(group_id, n, v0, process_id=f"process-{n}") for n in "ABC"}
    phases: list[Phase] = []
    labels: dict[tuple[str, int], str] = {}

    def phase(label: str, running: list[str]) -> None:
        first = len(s)
        settle(s, members, running, label)
        group = c.groups[group_id]
        if not labels:
            # The KIP *assumes* a uniform start A: T1-T3, B: T4-T6, C: T7-T9; name the tasks so.
            n = 0
            for name in "ABC":
                for task in sorted(group.members[name].assigned.active_ids(), key=lambda t: t[1]):
                    n += 1
                    labels[task] = f"T{n}"
        assignment = {name: (group.members[name].topology_epoch,
                             sorted((labels[t] for t in group.members[name].assigned.active_ids()), key=_sort_key))
                      for name in running if name in group.members}
        phases.append(Phase(label, first, len(s) - 1, assignment))

    phase("uniform start", ["A", "B", "C"])
    s.step("C shuts down (leaves the group)", members["C"].heartbeat(leave=True))
    members["C"].restart()
    phase("C shut down", ["A", "B"])
    members["C"].restart(v1)
    phase("C back with topology epoch 1", ["A", "B", "C"])
    s.step("B shuts down (leaves the group)", members["B"].heartbeat(leave=True))
    members["B"].restart()
    phase("B shut down", ["A", "C"])
    members["B"].restart(v1)
    phase("B back with topology epoch 1", ["A", "B", "C"])
    return RollingBounce(c, s, members, phases, labels)


__all__ = ["rolling_bounce", "RollingBounce", "Phase", "KIP_ROLLING_BOUNCE", "settle"]


# ---------------------------------------------------------------------------------------
# KIP-1071 "Online Migration from a Classic Consumer Group to a Streams Group", its example

def _t(*ps: int) -> list[tuple[str, int]]:
    return [("0", p) for p in ps]


#: The KIP's target assignments (the example states them; they are not an assignor's output).
KIP_MIGRATION_TARGETS = {
    24: {"A": TaskSets.of(active=_t(0, 2, 3), standby=_t(1, 5)),
         "B": TaskSets.of(active=_t(1, 4, 5), standby=_t(2, 3)),
         "C": TaskSets.of(standby=_t(0, 4), warmup=_t(2, 5))},
    25: {"A": TaskSets.of(active=_t(0, 3), standby=_t(1, 5)),
         "B": TaskSets.of(active=_t(1, 4, 5), standby=_t(2, 3)),
         "C": TaskSets.of(active=_t(2), standby=_t(0, 4), warmup=_t(5))},
}
#: The classic group's assignment at generation 23.
KIP_MIGRATION_CLASSIC = {"A": (_t(0, 2, 4), _t(1, 3, 5)), "B": (_t(1, 3, 5), _t(0, 2, 4))}

#: Every member-assignment line of the KIP's example: (phase, member, message, what the KIP says).
KIP_MIGRATION_LINES: list[tuple[str, str, str, str]] = [
    ("epoch 24", "A", "Heartbeat", "REBALANCE_IN_PROGRESS"),
    ("epoch 24", "A", "JoinGroupRequest", "active=[0_0, 0_2, 0_4], standby=[0_1, 0_3, 0_5]"),
    ("epoch 24", "A", "JoinGroupResponse", "generation ID=24"),
    ("epoch 24", "A", "SyncGroupResponse", "active=[0_0, 0_2, 0_3], standby=[0_1, 0_5]"),
    ("epoch 24", "B", "Heartbeat", "REBALANCE_IN_PROGRESS"),
    ("epoch 24", "B", "JoinGroupRequest", "active=[0_1, 0_3, 0_5], standby=[0_0, 0_2, 0_4]"),
    ("epoch 24", "B", "JoinGroupResponse", "generation ID=24"),
    ("epoch 24", "B", "SyncGroupResponse", "active=[0_1, 0_4, 0_5], standby=[0_2, 0_3]"),
    ("epoch 24", "C", "StreamsGroupHeartbeat", "epoch=24, active=[], standby=[0_0, 0_4], warm-up=[0_2, 0_5]"),
    ("epoch 25", "A", "Heartbeat", "REBALANCE_IN_PROGRESS"),
    ("epoch 25", "A", "JoinGroupRequest", "active=[0_0, 0_2, 0_3], standby=[0_1, 0_5], warm-up=[]"),
    ("epoch 25", "A", "JoinGroupResponse", "generation ID=24"),
    ("epoch 25", "A", "SyncGroupResponse", "active=[0_0, 0_3], standby=[0_1, 0_5]"),
    ("epoch 25", "B", "Heartbeat", "REBALANCE_IN_PROGRESS"),
    ("epoch 25", "B", "JoinGroupRequest", "active=[0_1, 0_4, 0_5], standby=[0_2, 0_3]"),
    ("epoch 25", "B", "JoinGroupResponse", "generation ID=25"),
    ("epoch 25", "B", "SyncGroupResponse", "active=[0_1, 0_4, 0_5], standby=[0_2, 0_3]"),
    ("epoch 25", "C", "StreamsGroupHeartbeat", "epoch=25, active=[], standby=[0_0, 0_4], warm-up=[0_5]"),
    ("follow-up", "A", "Heartbeat", "REBALANCE_IN_PROGRESS"),
    ("follow-up", "A", "JoinGroupRequest", "active=[0_0, 0_3], standby=[0_1, 0_5], warm-up=[]"),
    ("follow-up", "A", "JoinGroupResponse", "generation ID=25"),
    ("follow-up", "A", "SyncGroupResponse", "active=[0_0, 0_3], standby=[0_1, 0_5]"),
    ("follow-up", "B", "Heartbeat", "REBALANCE_IN_PROGRESS"),
    ("follow-up", "B", "JoinGroupRequest", "active=[0_1, 0_4, 0_5], standby=[0_2, 0_3]"),
    ("follow-up", "B", "JoinGroupResponse", "generation ID=25"),
    ("follow-up", "B", "SyncGroupResponse", "active=[0_1, 0_4, 0_5], standby=[0_2, 0_3]"),
    ("follow-up", "C", "StreamsGroupHeartbeat", "epoch=25, active=[0_2], standby=[0_0, 0_4], warm-up=[0_5]"),
]


def tasks_text(active: Any = (), standby: Any = (), warmup: Any = None) -> str:
    """The KIP's notation: `active=[0_0, 0_2], standby=[0_1]` (warm-up only when given)."""
    def fmt(ts: Any) -> str:
        return "[" + ", ".join(f"{s}_{p}" for s, p in sorted(ts, key=lambda t: (t[0], t[1]))) + "]"
    out = f"active={fmt(active)}, standby={fmt(standby)}"
    return out if warmup is None else f"{out}, warm-up={fmt(warmup)}"


@dataclass
class Exchange:
    """One classic member's Heartbeat → JoinGroup → SyncGroup round (or a Streams heartbeat)."""

    steps: list[int]
    heartbeat: str | None = None          # the Heartbeat answer (None: it rejoined without one)
    join_request: str | None = None       # owned tasks as its SubscriptionInfo says
    join_response: str | None = None      # "generation ID=n"
    sync_response: str | None = None      # its tasks as the AssignmentInfo says
    streams: str | None = None            # a Streams member: "epoch=n, active=[...], ..."


@dataclass
class MigrationExample:
    coordinator: Coordinator
    scenario: Scenario
    classic: dict[str, ScriptedClassicStreamsMember]
    streams: dict[str, ScriptedStreamsMember]
    assignor: FixedTaskAssignor
    #: phase -> member -> exchanges in order
    exchanges: dict[str, dict[str, list[Exchange]]]
    #: phase -> (first step, last step)
    phases: dict[str, tuple[int, int]]

    def answer(self, phase: str, member: str, message: str) -> tuple[str, list[str]]:
        """kgroup's answer for one KIP line, and every value it took in that phase. A heartbeat
        answer and a JoinGroup request are compared from the member's first exchange (what
        started its rebalance), a JoinGroup and a SyncGroup answer from its last (where it
        settled)."""
        ex = self.exchanges.get(phase, {}).get(member, [])
        field_ = {"Heartbeat": "heartbeat", "JoinGroupRequest": "join_request", "JoinGroupResponse": "join_response",
                  "SyncGroupResponse": "sync_response", "StreamsGroupHeartbeat": "streams"}[message]
        if message == "Heartbeat":
            seen = [e.heartbeat for e in ex[:1] if e.heartbeat is not None]
        else:
            seen = [getattr(e, field_) for e in ex if getattr(e, field_) is not None]
        if not seen:
            return "—", []
        pick = seen[0] if message in ("Heartbeat", "JoinGroupRequest") else seen[-1]
        return pick, seen

    def table(self) -> list[dict[str, Any]]:
        """Every line of the KIP's example beside what kgroup answered."""
        rows = []
        for phase, member, message, kip in KIP_MIGRATION_LINES:
            ours, seen = self.answer(phase, member, message)
            rows.append({"phase": phase, "member": member, "message": message, "KIP-1071": kip, "kgroup": ours,
                         "same": _norm(ours) == _norm(kip),
                         "on the way": " → ".join(seen) if len(seen) > 1 else "",
                         "why": KIP_MIGRATION_NOTES.get((phase, member, message), "")})
        return rows


#: Why kgroup's exchange differs from (or takes longer than) a line of the KIP's example.
KIP_MIGRATION_NOTES = {
    ("epoch 24", "A", "JoinGroupResponse"):
        "A must first give up active 0_4 (KIP: 'If the members need to revoke a task, their member epoch stays "
        "the same'): generation 23, then 24 once revoked.",
    ("epoch 24", "A", "SyncGroupResponse"):
        "0_3 is still B's active task until B revokes it; A gets it in a third JoinGroup.",
    ("epoch 24", "B", "JoinGroupResponse"):
        "B must first give up active 0_3: generation 23, then 24 once revoked.",
    ("epoch 24", "B", "SyncGroupResponse"): "B must first give up active 0_3 (generation 23 meanwhile).",
    ("epoch 25", "C", "StreamsGroupHeartbeat"):
        "C first drops warm-up 0_2 (still epoch 24), then moves to 25; 0_2 stays A's until A revokes it.",
    ("follow-up", "A", "Heartbeat"):
        "A rejoins on its own after revoking 0_2 (cooperative protocol): no heartbeat needed.",
    ("follow-up", "B", "Heartbeat"):
        "B is at generation 25 already: kgroup only asks members that must move to rejoin.",
    ("follow-up", "B", "JoinGroupRequest"): "No rejoin needed (see above).",
    ("follow-up", "B", "JoinGroupResponse"): "No rejoin needed: B keeps generation 25.",
    ("follow-up", "B", "SyncGroupResponse"): "No rejoin needed: B keeps active=[0_1, 0_4, 0_5], standby=[0_2, 0_3].",
}


def _norm(text: str) -> str:
    return text.replace(", warm-up=[]", "")


def migration_example(*, profile: str = "kip", start_ms: int = 1_718_000_000_000, group_id: str = "app",
                      acceptable_recovery_lag: int = 100, observer: Any = None) -> MigrationExample:
    """Run KIP-1071's online-migration example heartbeat by heartbeat:

    - the classic group at generation 23 (A and B, Kafka Streams on the classic protocol,
      with the KIP's assignment) is loaded from its GroupMetadata record;
    - "epoch 24": C joins with the Streams protocol (the group converts; epoch 24 with the
      KIP's target); A, B and C exchange until nothing changes;
    - "epoch 25": C reports warm-up 0_2 caught up (epoch 25, the KIP's next target), then
      one round of A, B, C;
    - "follow-up": A reports 0_2 revoked; rounds until nothing changes;
    - "C leaves": the last Streams member leaves and the group is classic again.

    `observer(step, coordinator)` is called after every step (tests compare the live
    coordinator with one rebuilt from its log there)."""
    from kgroup.groups.classic import ClassicGroup, ClassicGroupState, ClassicMember
    from kgroup.groups.streams import TopicInfo
    from kgroup.protocol.consumer_protocol import Assignment as WireAssignment, encode_assignment
    from kgroup.protocol.streams_protocol import AssignmentInfo, encode_assignment_info

    changelog = f"{group_id}-store-changelog"
    # The classic application created its changelog topic long ago.
    cluster = Cluster({"input": 6, changelog: 6}, seed=1)
    topology = Topology(0, (Subtopology("0", source_topics=("input",),
                                        state_changelog_topics=(TopicInfo(changelog),)),))
    sources = {"0": ("input",)}
    processes = {"A": "00000000-0000-0000-0000-00000000000a", "B": "00000000-0000-0000-0000-00000000000b"}
    classic = {n: ScriptedClassicStreamsMember(group_id, n, sources, process_id=processes[n], generation=23,
                                               active=KIP_MIGRATION_CLASSIC[n][0], standby=KIP_MIGRATION_CLASSIC[n][1],
                                               task_offsets={t: 1_000 for t in KIP_MIGRATION_CLASSIC[n][1]})
               for n in "AB"}

    # The classic group as persisted at generation 23 (leader A computed this assignment).
    g = ClassicGroup(group_id, protocol_type="consumer", generation_id=23, protocol_name="stream",
                     current_state=ClassicGroupState.STABLE, current_state_timestamp=start_ms)
    for n, m in classic.items():
        g.add(ClassicMember(n, None, f"{n}-StreamThread-1-consumer", "/10.0.0.1", m.rebalance_timeout_ms,
                            m.session_timeout_ms, "consumer",
                            [(p["name"], p["metadata"]) for p in m.protocols()]))
    g.leader_id = "A"
    assignment = {}
    for n, m in classic.items():
        info = AssignmentInfo(active_tasks=tuple(sorted(m.active)),
                              standby_tasks={t: (("input", t[1]),) for t in sorted(m.standby)})
        assignment[n] = encode_assignment(WireAssignment(m.partitions(m.active), encode_assignment_info(info)))
    c = Coordinator.load([g.metadata_record(assignment)], cluster=cluster, clock=ManualClock(start_ms),
                         profile=profile,
                         config={"group.streams.initial.rebalance.delay.ms": 0,
                                 "group.streams.acceptable.recovery.lag": acceptable_recovery_lag})
    fixed = FixedTaskAssignor(KIP_MIGRATION_TARGETS[24])
    c.soft_state[TASK_ASSIGNOR_OVERRIDE] = fixed
    s = Scenario(c)
    streams = {"C": ScriptedStreamsMember(group_id, "C", topology, process_id="00000000-0000-0000-0000-00000000000c")}
    exchanges: dict[str, dict[str, list[Exchange]]] = {}
    phases: dict[str, tuple[int, int]] = {}

    def step(label: str, request: Any) -> Any:
        st = s.step(label, request)
        if observer is not None:
            observer(st, c)
        return st

    def classic_round(phase: str, name: str) -> bool:
        """Heartbeat (unless it rejoins at once), then JoinGroup + SyncGroup if it must rejoin."""
        m = classic[name]
        ex = Exchange([])
        if not m.needs_rejoin:
            st = step(f"{phase}: {name} heartbeats (generation {m.generation})", m.heartbeat())
            ex.steps.append(st.index)
            resp = s.response_of(st.index)
            ex.heartbeat = resp.error_code.name.upper()
            m.take_heartbeat(resp)
        if not m.needs_rejoin:
            if ex.heartbeat is not None:
                exchanges.setdefault(phase, {}).setdefault(name, []).append(ex)
            return False
        ex.join_request = tasks_text(m.active, m.standby)
        st = step(f"{phase}: {name} JoinGroup ({ex.join_request})", m.join())
        ex.steps.append(st.index)
        resp = s.response_of(st.index)
        m.take_join(resp)
        ex.join_response = (f"generation ID={resp.generation_id}" if int(resp.error_code) == 0
                            else resp.error_code.name.upper())
        st = step(f"{phase}: {name} SyncGroup (generation {m.generation})", m.sync())
        ex.steps.append(st.index)
        m.take_sync(s.response_of(st.index))
        ex.sync_response = tasks_text(m.active, m.standby)
        exchanges.setdefault(phase, {}).setdefault(name, []).append(ex)
        return True

    def streams_round(phase: str, name: str, **kw: Any) -> bool:
        m = streams[name]
        before = c.position
        if m.failed:
            return False     # a Streams client stops on a fatal error (kafka: GROUP_ID_NOT_FOUND here)
        st = step(f"{phase}: {name} heartbeats (epoch {m.epoch})", m.heartbeat(**kw))
        resp = s.response_of(st.index)
        changed = m.update(resp)
        t = m.tasks
        ex = Exchange([st.index], streams=resp.error_code.name.upper() if int(resp.error_code) else (
            f"epoch={m.epoch}, " + tasks_text(
                [(x, p) for x, ps in t["active"].items() for p in ps],
                [(x, p) for x, ps in t["standby"].items() for p in ps],
                [(x, p) for x, ps in t["warmup"].items() for p in ps])))
        exchanges.setdefault(phase, {}).setdefault(name, []).append(ex)
        return changed or c.position != before

    def rounds(phase: str, max_rounds: int = 10, once: bool = False) -> None:
        for _ in range(max_rounds):
            before = c.position
            rejoined = False
            for n in "AB":
                rejoined |= classic_round(phase, n)
            changed = streams_round(phase, "C")
            if once or not (rejoined or changed or c.position != before):
                return
        raise RuntimeError(f"{phase}: the group did not settle in {max_rounds} rounds")

    def phase(label: str, body: Any) -> None:
        first = len(s)
        body()
        phases[label] = (first, len(s) - 1)

    step("the classic group at generation 23 (A and B on the classic protocol)", None)

    def epoch_24() -> None:
        streams_round("epoch 24", "C")          # C joins: the group converts, epoch 24
        rounds("epoch 24")

    def epoch_25() -> None:
        fixed.assignment = dict(KIP_MIGRATION_TARGETS[25])   # what the KIP's assignor computes next
        # C's warm-up 0_2 is caught up (within acceptable.recovery.lag); 0_5 is not yet.
        streams_round("epoch 25", "C", report=True, task_offsets={("0", 2): 5_000, ("0", 5): 10},
                      task_end_offsets={("0", 2): 5_000, ("0", 5): 5_000})
        rounds("epoch 25", once=True)

    def c_leaves() -> None:
        if not streams["C"].failed:
            step("C leaves (the last Streams-protocol member)", streams["C"].heartbeat(leave=True))
        for n in "AB":   # the classic group rebalances: its members are told to rejoin
            m = classic[n]
            st = step(f"C leaves: {n} heartbeats (generation {m.generation})", m.heartbeat())
            m.take_heartbeat(s.response_of(st.index))
            exchanges.setdefault("C leaves", {}).setdefault(n, []).append(
                Exchange([st.index], heartbeat=s.response_of(st.index).error_code.name.upper()))

    phase("epoch 24", epoch_24)
    phase("epoch 25", epoch_25)
    phase("follow-up", lambda: rounds("follow-up"))
    phase("C leaves", c_leaves)
    return MigrationExample(c, s, classic, streams, fixed, exchanges, phases)


__all__ += ["migration_example", "MigrationExample", "Exchange", "KIP_MIGRATION_LINES", "KIP_MIGRATION_TARGETS",
            "KIP_MIGRATION_CLASSIC", "KIP_MIGRATION_NOTES", "tasks_text"]


# ---------------------------------------------------------------------------------------
# KIP-932: "Managing durable share-partition state", its example table

#: The KIP's table: (operation, state changes, cumulative state), row by row.
KIP_SHARE_DURABLE_STATE = [
    ("Starting state of topic-partition with latest offset 100", "SPSO=100, SPEO=100", "SPSO=100, SPEO=100"),
    ("Fetch records 100-109", "SPEO=110, records 100-109 (acquired, delivery count 1)",
     "SPSO=100, SPEO=110, records 100-109 (acquired, delivery count 1)"),
    ("Acknowledge 100-109", "SPSO=110", "SPSO=110, SPEO=110"),
    ("Fetch records 110-119", "SPEO=120, records 110-119 (acquired, delivery count 1)",
     "SPSO=110, SPEO=120, records 110-119 (acquired, delivery count 1)"),
    ("Release 110", "record 110 (available, delivery count 1)",
     "SPSO=110, SPEO=120, record 110 (available, delivery count 1), records 111-119 (acquired, delivery count 1)"),
    ("Acknowledge 119", "record 110 (available, delivery count 1), records 111-118 acquired, record 119 acknowledged",
     "SPSO=110, SPEO=120, record 110 (available, delivery count 1), records 111-118 (acquired, delivery count 1), "
     "record 119 acknowledged"),
    ("Fetch records 110, 120", "SPEO=121, record 110 (acquired, delivery count 2), record 120 (acquired, delivery count 1)",
     "SPSO=110, SPEO=121, record 110 (acquired, delivery count 2), records 111-118 (acquired, delivery count 1), "
     "record 119 acknowledged, record 120 (acquired, delivery count 1)"),
    ("Lock timeout elapsed 111, 112", "records 111-112 (available, delivery count 1)",
     "SPSO=110, SPEO=121, record 110 (acquired, delivery count 2), records 111-112 (available, delivery count 1), "
     "records 113-118 (acquired, delivery count 1), record 119 acknowledged, record 120 (acquired, delivery count 1)"),
    ("Acknowledge 113-118", "records 113-118 acknowledged",
     "SPSO=110, SPEO=121, record 110 (acquired, delivery count 2), records 111-112 (available, delivery count 1), "
     "records 113-119 acknowledged, record 120 (acquired, delivery count 1)"),
    ("Fetch records 111,112", "records 111-112 (acquired, delivery count 2)",
     "SPSO=110, SPEO=121, record 110-112 (acquired, delivery count 2), records 113-119 acknowledged, "
     "record 120 (acquired, delivery count 1)"),
    ("Acknowledge 110", "SPSO=111",
     "SPSO=111, SPEO=121, record 111-112 (acquired, delivery count 2), records 113-119 acknowledged, "
     "record 120 (acquired, delivery count 1)"),
    ("Acknowledge 111,112", "SPSO=120", "SPSO=120, SPEO=121, record 120 (acquired, delivery count 1)"),
]


def share_state_text(sp: Any) -> str:
    """A share-partition's state in the KIP's words: `SPSO=110, SPEO=120, record 110 (available,
    delivery count 1), records 111-119 (acquired, delivery count 1), record 119 acknowledged`."""
    runs: list[list[Any]] = []
    for v in sp.records():
        if v.offset < sp.spso:
            continue
        key = (v.state, 0 if v.state == "Acknowledged" else v.delivery_count)
        if runs and runs[-1][0] == key and runs[-1][2] == v.offset - 1:
            runs[-1][2] = v.offset
        else:
            runs.append([key, v.offset, v.offset])
    parts = [f"SPSO={sp.spso}", f"SPEO={sp.speo}"]
    for (state, count), first, last in runs:
        what = f"record {first}" if first == last else f"records {first}-{last}"
        parts.append(f"{what} acknowledged" if state == "Acknowledged"
                     else f"{what} ({state.lower()}, delivery count {count})")
    return ", ".join(parts)


def _kip_words(text: str) -> str:
    # The KIP writes "record 110-112" once where it means "records": compare the meaning.
    import re
    return re.sub(r"\brecord (\d+-\d+)", r"records \1", text)


@dataclass
class ShareDurableStateExample:
    coordinator: Coordinator
    #: per row: the leader's state text, the records written to __share_group_state, strip rows
    rows: list[dict[str, Any]]

    def table(self) -> list[dict[str, Any]]:
        """The KIP's table beside kgroup's state and what it wrote to `__share_group_state`."""
        return [{"operation": op, "KIP-932 cumulative state": kip, "kgroup": row["state"],
                 "same": _kip_words(kip) == row["state"], "written to __share_group_state": row["written"]}
                for (op, _changes, kip), row in zip(KIP_SHARE_DURABLE_STATE, self.rows)]


def share_durable_state_example(*, profile: str = "kip", start_ms: int = 1_718_000_000_000,
                                group_id: str = "myshare", topic: str = "foo") -> ShareDurableStateExample:
    """Run KIP-932's durable-state example on one share-partition through its leader, row by row.

    The topic-partition starts at offset 100 (`share.auto.offset.reset=latest` gives SPSO=100);
    records 100-109 arrive in one batch, 110-119 one record per batch, then 120. Three consumers
    X, Y, Z: X acquires 110-112 and Y 113-119 so that X's lock over 111-112 can elapse on its own
    ("Lock timeout elapsed 111, 112"). After every row: the leader's state in the KIP's words,
    the ShareSnapshot/ShareUpdate records the share coordinator wrote, and the strip's rows."""
    from kgroup.groups.share.partition import ACCEPT, RELEASE, share_partition

    c = Coordinator(cluster=Cluster({topic: 1}, seed=5), clock=ManualClock(start_ms), profile=profile)
    c.cluster.produce(topic, 0, [b"old"] * 100)
    tid = c.cluster.topic_id(topic)
    x, y, z = "X", "Y", "Z"
    rows: list[dict[str, Any]] = []
    holder: dict[str, Any] = {}

    def sp() -> Any:
        return holder["sp"]

    def start() -> None:
        holder["sp"] = share_partition(c, group_id, tid, 0)

    def fetch_100_109() -> None:
        c.cluster.produce(topic, 0, [f"r{o}".encode() for o in range(100, 110)])
        sp().acquire(x)

    def fetch_110_119() -> None:
        for o in range(110, 120):
            c.cluster.produce(topic, 0, [f"r{o}".encode()])
        sp().acquire(x, max_records=3)
        c.advance(1)
        sp().acquire(y, max_records=7)

    def fetch_110_120() -> None:
        c.cluster.produce(topic, 0, [b"r120"])
        sp().acquire(z)

    actions = [
        start,
        fetch_100_109,
        lambda: sp().acknowledge(x, [(100, 109, (ACCEPT,))]),
        fetch_110_119,
        lambda: sp().acknowledge(x, [(110, 110, (RELEASE,))]),
        lambda: sp().acknowledge(y, [(119, 119, (ACCEPT,))]),
        fetch_110_120,
        lambda: c.advance(30_000 - 1),            # X's lock (taken 1 ms before Y's) elapses
        lambda: sp().acknowledge(y, [(113, 118, (ACCEPT,))]),
        lambda: sp().acquire(x),
        lambda: sp().acknowledge(z, [(110, 110, (ACCEPT,))]),
        lambda: sp().acknowledge(x, [(111, 112, (ACCEPT,))]),
    ]
    for action in actions:
        before = len(c.share_state_log)
        action()
        written = []
        for e in list(c.share_state_log)[before:]:
            v = e.record.value
            batches = ", ".join(f"{b.first_offset}-{b.last_offset}:{_DELIVERY_STATE_NAMES[b.delivery_state]}"
                                f"/{b.delivery_count}" for b in v.state_batches)
            written.append(f"{type(e.record).__name__}(StartOffset={v.start_offset}"
                           + (f", StateBatches=[{batches}])" if batches else ")"))
        leader = sp()
        rows.append({"state": share_state_text(leader), "written": "; ".join(written) or "nothing",
                     "spso": leader.spso, "speo": leader.speo,
                     "strip": [{"offset": v.offset, "state": v.state, "delivery_count": v.delivery_count,
                                "lock_holder": v.member_id or ""}
                               for v in leader.strip(98, max(leader.next_offset, 101) + 1)]})
    return ShareDurableStateExample(c, rows)


_DELIVERY_STATE_NAMES = {0: "Available", 2: "Acknowledged", 4: "Archived"}


#: The KIP's "In-flight records example": offset -> (state, delivery count; 0 where it prints none).
KIP_SHARE_IN_FLIGHT = {0: ("Archived", 0), 1: ("Archived", 0), 2: ("Acquired", 1), 3: ("Available", 2),
                       4: ("Acquired", 1), 5: ("Acknowledged", 0), 6: ("Archived", 0), 7: ("Available", 0),
                       8: ("Available", 0), 9: ("Available", 0)}


def share_in_flight_example(*, profile: str = "kip", start_ms: int = 1_718_000_000_000, group_id: str = "myshare",
                            topic: str = "foo") -> Any:
    """Bring one share-partition into the state of KIP-932's in-flight records example and return
    its leader: ten records 0-9 (one per batch); A acquires and accepts 0-1, then acquires 2-8 and
    releases 3, accepts 5, rejects 6 and releases 7-8; B acquires 3 (its second delivery) and
    releases it. So 2 and 4 are Acquired (count 1), 3 Available after two deliveries, 5
    Acknowledged, 6 Archived, 7-8 Available (count 1: the KIP leaves their count blank) and 9 not
    yet fetched; the SPSO is 2."""
    from kgroup.groups.share.partition import ACCEPT, REJECT, RELEASE, share_partition

    c = Coordinator(cluster=Cluster({topic: 1}, seed=5), clock=ManualClock(start_ms), profile=profile)
    c.cluster.group_configs[group_id] = {"share.auto.offset.reset": "earliest"}
    for o in range(10):
        c.cluster.produce(topic, 0, [f"r{o}".encode()])
    sp = share_partition(c, group_id, c.cluster.topic_id(topic), 0)
    sp.acquire("A", max_records=2)
    sp.acknowledge("A", [(0, 1, (ACCEPT,))])
    sp.acquire("A", max_records=7)
    sp.acknowledge("A", [(3, 3, (RELEASE,)), (5, 5, (ACCEPT,)), (6, 6, (REJECT,)), (7, 8, (RELEASE,))])
    sp.acquire("B", max_records=1)
    sp.acknowledge("B", [(3, 3, (RELEASE,))])
    return sp
