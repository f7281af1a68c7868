"""The KIPs' worked examples as runnable scenarios (used by the notebooks and the tests).

`rolling_bounce()` is KIP-1071's "Topology updates" example: three Streams clients A, B, C
(one thread each) with a sticky assignor and nine stateless tasks T1–T9; C is bounced to
topology epoch 1, then B. Each phase is run heartbeat by heartbeat as a `Scenario` until
nothing changes any more, and the members' assignments are recorded beside the KIP's.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgroup.clock import ManualClock
from kgroup.cluster import Cluster
from kgroup.coordinator import Coordinator
from kgroup.groups.streams import Subtopology, Topology
from kgroup.scenario import Scenario, ScriptedStreamsMember

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
