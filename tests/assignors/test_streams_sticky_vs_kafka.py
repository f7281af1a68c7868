"""kgroup's ``sticky`` task assignor against Apache Kafka's own
``org.apache.kafka.coordinator.group.streams.assignor.StickyTaskAssignor``, run in a JVM
(``java/StreamsAssignorOracle.java``): the same inputs must give exactly the same assignment.

Every test batches its inputs into one JVM run. Without Java/Maven the tests are skipped (with
the command that enables them); under CI they must run.
"""
from __future__ import annotations

import base64
import json
import random
import uuid
from pathlib import Path

import pytest

from kgroup.assignors.streams import GroupSpec, MemberSpec, StickyTaskAssignor, SubtopologySpec, TaskSets
from kgroup.assignors.streams.api import TaskAssignorException

from java_oracle import java_oracle

JAVA_SOURCES = Path(__file__).parent / "java"
STICKY = StickyTaskAssignor()


@pytest.fixture(scope="module")
def kafka_sticky():
    """Runs Kafka's StickyTaskAssignor on a batch of GroupSpecs: one result (or error) each."""
    return java_oracle(JAVA_SOURCES, "StreamsAssignorOracle", _to_json)


def _tasks_json(tasks) -> dict:
    return {s: sorted(ps) for s, ps in sorted(tasks.items()) if ps}


def _to_json(spec: GroupSpec) -> dict:
    members = []
    for m in spec.members.values():   # the coordinator's HashMap is filled in this order
        offsets: dict[str, dict[str, int]] = {}
        for (s, p), o in m.task_offsets.items():
            offsets.setdefault(s, {})[str(p)] = o
        members.append({"memberId": m.member_id, "processId": m.process_id, "rackId": m.rack_id,
                        "instanceId": m.instance_id, "clientTags": dict(m.client_tags),
                        "active": _tasks_json(m.current.active), "standby": _tasks_json(m.current.standby),
                        "warmup": _tasks_json(m.current.warmup), "taskOffsets": offsets, "taskEndOffsets": {}})
    return {"members": members,
            "subtopologies": [{"id": s, "partitions": sub.num_partitions, "stateful": sub.stateful}
                              for s, sub in spec.subtopologies.items()],
            "numStandbyReplicas": spec.num_standby_replicas}


def _kgroup_json(spec: GroupSpec) -> dict:
    try:
        result = STICKY.assign(spec)
    except TaskAssignorException as e:
        return {"error": f"TaskAssignorException: {e}"}
    return {"members": {m: {"active": _tasks_json(t.active), "standby": _tasks_json(t.standby)}
                        for m, t in sorted(result.items())}}


def _assert_same(specs: list[GroupSpec], kafka: list[dict]) -> None:
    mismatches = [(i, json.dumps(_to_json(spec)), ours, theirs)
                  for i, (spec, theirs) in enumerate(zip(specs, kafka))
                  if (ours := _kgroup_json(spec)) != theirs]
    assert not mismatches, "\n\n".join(f"case {i}: {inp}\n  kgroup: {ours}\n  kafka:  {theirs}"
                                       for i, inp, ours, theirs in mismatches[:3]) + \
        f"\n\n{len(mismatches)} of {len(specs)} cases differ"


# -- the case seen with a real broker -----------------------------------------------------------

def test_third_member_joins_while_the_second_waits_for_a_release(kafka_sticky):
    """Stateless subtopology of 6 tasks; A's target was [0,1,2] and B's [3,4,5], but B still
    waits for A's release (current: nothing) when C joins. Kafka's coordinator hands the
    assignor the members' *current* assignments, so B has no previous task to keep: tasks
    2-5 go round the least-loaded processes, ties as Kafka's PriorityQueue breaks them."""
    pa, pb, pc = ("92276658-1e27-a1c0-8a6a-63ec24ede6a4", "ae97ba94-d0ed-a82f-8f6d-05584ef8aa38",
                  "923a7369-94e3-bf91-1a61-dbe22e44158b")
    spec = GroupSpec(members={"A": MemberSpec("A", pa, 1, TaskSets.of(active=[("0", 0), ("0", 1), ("0", 2)])),
                              "B": MemberSpec("B", pb, 1),
                              "C": MemberSpec("C", pc, 1)},
                     subtopologies={"0": SubtopologySpec(6, False)}, topology_epoch=1)
    expected = {"members": {"A": {"active": {"0": [0, 1]}, "standby": {}},
                            "B": {"active": {"0": [3, 5]}, "standby": {}},
                            "C": {"active": {"0": [2, 4]}, "standby": {}}}}
    # Had the coordinator handed over B's *target* [3,4,5], B would keep 3 and 4 (what kgroup did).
    target = GroupSpec(members={**spec.members, "B": MemberSpec("B", pb, 1, TaskSets.of(
        active=[("0", 3), ("0", 4), ("0", 5)]))}, subtopologies=spec.subtopologies, topology_epoch=1)
    kafka = kafka_sticky([spec, target])
    assert kafka[0] == expected
    assert kafka[1]["members"]["B"]["active"] == {"0": [3, 4]}
    _assert_same([spec, target], kafka)


def test_edge_cases(kafka_sticky):
    """No members (Kafka throws), no tasks, more members than tasks, a task claimed as active
    by two members, tasks outside the topology, warm-ups (ignored), offsets only."""
    sub = {"0": SubtopologySpec(3, True), "1": SubtopologySpec(2, False)}
    t = TaskSets.of
    specs = [
        GroupSpec(members={}, subtopologies=sub),
        GroupSpec(members={}, subtopologies={}),
        GroupSpec(members={"m": MemberSpec("m", "p", 0)}, subtopologies={}, num_standby_replicas=1),
        GroupSpec(members={f"m{i}": MemberSpec(f"m{i}", f"p{i % 3}", 0) for i in range(9)},
                  subtopologies=sub, num_standby_replicas=2),
        GroupSpec(members={"a": MemberSpec("a", "p1", 0, t(active=[("0", 0), ("0", 1)])),
                           "b": MemberSpec("b", "p2", 0, t(active=[("0", 0), ("9", 4)], warmup=[("0", 2)])),
                           "c": MemberSpec("c", "p2", 0, t(standby=[("0", 1)]), task_offsets={("0", 1): 5})},
                  subtopologies=sub, num_standby_replicas=1),
        GroupSpec(members={"a": MemberSpec("a", "p1", 0, task_offsets={("0", 0): 7, ("0", 2): 1}),
                           "b": MemberSpec("b", "p2", 0, task_offsets={("0", 0): 9}),
                           "c": MemberSpec("c", "p3", 0, t(active=[("0", 5)]))},
                  subtopologies=sub, num_standby_replicas=2),
        GroupSpec(members={"a": MemberSpec("a", "p1", 0), "b": MemberSpec("b", "p1", 0)},
                  subtopologies=sub, num_standby_replicas=1),
    ]
    _assert_same(specs, kafka_sticky(specs))


# -- random groups over successive assignments ---------------------------------------------------

def _member_id(rnd: random.Random) -> str:
    # Kafka's member ids are base64 Uuids (22 characters); any string would do.
    return base64.urlsafe_b64encode(rnd.getrandbits(128).to_bytes(16, "big")).decode()[:22]


def _process_id(rnd: random.Random) -> str:
    return str(uuid.UUID(int=rnd.getrandbits(128)))


def _partly(rnd: random.Random, tasks: TaskSets, keep: float) -> TaskSets:
    """Some of a member's target, as if it were still reconciling."""
    pick = lambda ids: [x for x in sorted(ids) if rnd.random() < keep]
    return TaskSets.of(active=pick(tasks.active_ids()), standby=pick(tasks.standby_ids()))


def _random_histories(seed: int, groups: int, rounds: int) -> list[GroupSpec]:
    """Groups that change over a few assignments: members join and leave, the previous
    assignment is the last result (sometimes only part of it, or moved to a replacement member),
    some members report task offsets; ids are random, so Java's hash order decides ties."""
    rnd = random.Random(seed)
    specs = []
    for _ in range(groups):
        subtopologies = {str(s): SubtopologySpec(rnd.randint(1, 8), rnd.random() < 0.6)
                         for s in rnd.sample(range(12), rnd.randint(1, 4))}
        standbys = rnd.randint(0, 2)
        processes = [_process_id(rnd) for _ in range(rnd.randint(1, 5))]
        members: dict[str, str] = {}
        for _ in range(rnd.randint(1, 8)):
            members[_member_id(rnd)] = rnd.choice(processes)
        previous: dict[str, TaskSets] = {}
        for _ in range(rounds):
            tasks = [(s, p) for s, sub in subtopologies.items() for p in range(sub.num_partitions)]
            specs_of = {}
            for m, p in members.items():
                current = previous.get(m, TaskSets())
                if rnd.random() < 0.3:
                    current = _partly(rnd, current, rnd.random())
                offsets = {}
                if rnd.random() < 0.3:
                    offsets = {t: rnd.choice([0, 10, 100, rnd.randint(0, 1000)])
                               for t in rnd.sample(tasks, rnd.randint(0, len(tasks)))}
                specs_of[m] = MemberSpec(m, p, 0, current, task_offsets=offsets)
            spec = GroupSpec(members=specs_of, subtopologies=subtopologies, num_standby_replicas=standbys)
            specs.append(spec)
            previous = STICKY.assign(spec)
            # the group changes before the next assignment
            change = rnd.random()
            if change < 0.3 and len(members) < 8:
                if rnd.random() < 0.3:
                    processes.append(_process_id(rnd))
                members[_member_id(rnd)] = rnd.choice(processes)
            elif change < 0.5 and len(members) > 1:
                del members[rnd.choice(list(members))]
            elif change < 0.6:
                # a member replaced (a static member's new id takes over its assignment)
                old = rnd.choice(list(members))
                new = _member_id(rnd)
                members[new] = members.pop(old)
                previous[new] = previous.pop(old)
            elif change < 0.7:
                s = rnd.choice(list(subtopologies))
                subtopologies = {**subtopologies, s: SubtopologySpec(rnd.randint(1, 8), subtopologies[s].stateful)}
            elif change < 0.8:
                standbys = rnd.randint(0, 2)
    return specs


@pytest.mark.parametrize("seed", [1, 2])
def test_random_groups_match_kafka(kafka_sticky, seed):
    specs = _random_histories(seed, groups=40, rounds=4)
    _assert_same(specs, kafka_sticky(specs))


def test_larger_groups_match_kafka(kafka_sticky):
    """Up to 40 members on up to 12 processes, so processes' member heaps and HashMap buckets
    holding several ids come into play."""
    rnd = random.Random(99)
    specs = []
    for _ in range(30):
        subtopologies = {str(s): SubtopologySpec(rnd.randint(1, 24), rnd.random() < 0.5) for s in range(rnd.randint(1, 5))}
        processes = [_process_id(rnd) for _ in range(rnd.randint(1, 12))]
        ms = {_member_id(rnd): rnd.choice(processes) for _ in range(rnd.randint(1, 40))}
        spec = GroupSpec(members={m: MemberSpec(m, p, 0) for m, p in ms.items()},
                         subtopologies=subtopologies, num_standby_replicas=rnd.randint(0, 2))
        specs.append(spec)
        result = STICKY.assign(spec)
        survivors = rnd.sample(list(ms), max(1, len(ms) * 2 // 3))
        more = {_member_id(rnd): rnd.choice(processes) for _ in range(rnd.randint(0, 6))}
        specs.append(GroupSpec(
            members={**{m: MemberSpec(m, ms[m], 0, result[m]) for m in survivors},
                     **{m: MemberSpec(m, p, 0) for m, p in more.items()}},
            subtopologies=subtopologies, num_standby_replicas=spec.num_standby_replicas))
    _assert_same(specs, kafka_sticky(specs))
