"""Every invariant of the group state machines can fail: a plausible bug per invariant (one
per rule where an invariant checks several), put into kgroup with `monkeypatch` only, must be
caught by that invariant alone (issue 15: "every invariant can fail").

Each test runs the machine of its group type with only the targeted invariant collected (the
others are overridden by plain methods, which hypothesis does not collect), with the "mutation"
hypothesis profile (no shrinking) made deterministic. The same run without the mutant must
pass; with it, it must fail in the targeted invariant, at the assertion that encodes the broken
rule. The CheckedCoordinator mutants run with no invariant at all: their exception must come out
of `CheckedCoordinator.handle` or `Coordinator.advance`.

Rules no mutant here breaks within this budget: a task twice on one Streams process (the
same-process wait in reconciliation and the sticky assignor both prevent it; breaking one opens
windows shorter than a step) and Archived being final (a leader that revives Archived records
delivers them to the same handler, which archives them again). The SPSO moving back is caught
on the share coordinator's records (`durable_share_state_never_goes_back`), which keep what a
step heals.
"""
from __future__ import annotations

import dataclasses
import traceback
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.stateful import INVARIANT_MARKER

from invariants_testing import COUNTS
from kgroup.coordinator import Coordinator
from kgroup.groups.classic.group import ClassicGroup
from kgroup.groups.modern import MemberState
from kgroup.groups.share.partition import SharePartition
from test_group_invariants import _machine

# the "mutation" profile (ci sizes, no shrinking), drawn the same way every run
MUTATION_SETTINGS = settings(settings.get_profile("mutation"), derandomize=True, database=None,
                             report_multiple_bugs=False)


# -- the mutants: each a plausible bug in kgroup, put in with monkeypatch ----------------------------

def classic_replay_drops_rebalance_timeout(mp: pytest.MonkeyPatch) -> None:
    """The GroupMetadata replay reads each member as a v0 record would: the rebalance timeout
    falls back to the session timeout, although the record carries it."""
    original = ClassicGroup.from_metadata.__func__

    def from_metadata(cls, group_id, value):
        group = original(cls, group_id, value)
        for m in group.members.values():
            m.rebalance_timeout_ms = m.session_timeout_ms
        return group
    mp.setattr(ClassicGroup, "from_metadata", classmethod(from_metadata))


def member_ids_reseeded_identically_after_load(mp: pytest.MonkeyPatch) -> None:
    """The revert of the fix in `Coordinator._on_loaded`: a coordinator taking over seeds its
    member-id generator as a fresh one does, so it hands out its predecessor's ids again."""
    import random
    from kgroup.runtime import LOAD_HOOKS

    def _on_loaded(self):
        self._ids = random.Random(self._seed)
        for hook in LOAD_HOOKS:
            hook(self)
    mp.setattr(Coordinator, "_on_loaded", _on_loaded)


def leaving_leader_keeps_leader_id(mp: pytest.MonkeyPatch) -> None:
    """A classic group whose leader leaves (LeaveGroup, session expiry) keeps the departed
    member as its leader (Kafka's ClassicGroup.remove picks another member)."""
    original = ClassicGroup.remove

    def remove(self, member_id):
        leader = self.leader_id
        original(self, member_id)
        if leader == member_id:
            self.leader_id = leader
    mp.setattr(ClassicGroup, "remove", remove)


def static_replacement_keeps_old_index(mp: pytest.MonkeyPatch) -> None:
    """KIP-345 static replacement moves the member to its new id but leaves the instance-id
    index on the old one (Kafka's ClassicGroup.replaceStaticMember updates both)."""
    original = ClassicGroup.replace_static_member

    def replace_static_member(self, group_instance_id, old_member_id, new_member_id):
        new = original(self, group_instance_id, old_member_id, new_member_id)
        self.static_members[group_instance_id] = old_member_id
        return new
    mp.setattr(ClassicGroup, "replace_static_member", replace_static_member)


def consumer_reconcile_ignores_previous_owner(mp: pytest.MonkeyPatch) -> None:
    """Reconciliation hands a partition to its new owner before the old owner revoked it (it
    reads every partition as free)."""
    from kgroup.groups.consumer import protocol
    original = protocol.reconcile

    def reconcile(member, target_epoch, target, *, partition_epoch, **kw):
        return original(member, target_epoch, target, partition_epoch=lambda t, p: -1, **kw)
    mp.setattr(protocol, "reconcile", reconcile)


def streams_revoking_member_reports_previous_epoch(mp: pytest.MonkeyPatch) -> None:
    """A member asked to revoke is written at its previous epoch instead of keeping its current
    one (Kafka's CurrentAssignmentBuilder keeps the member epoch while revoking)."""
    from kgroup.groups.streams import protocol
    original = protocol.reconcile

    def reconcile(member, *args, **kw):
        updated = original(member, *args, **kw)
        if updated is not member and updated.state == MemberState.UNREVOKED_PARTITIONS \
                and member.state != MemberState.UNREVOKED_PARTITIONS:
            updated = dataclasses.replace(updated, member_epoch=member.previous_member_epoch,
                                          previous_member_epoch=member.member_epoch)
        return updated
    mp.setattr(protocol, "reconcile", reconcile)


def classic_empty_group_restarts_generation(mp: pytest.MonkeyPatch) -> None:
    """A classic group that empties starts its generation again at 0, as a new group would
    (Kafka's ClassicGroup.initNextGeneration keeps counting)."""
    original = ClassicGroup.init_next_generation

    def init_next_generation(self, now):
        original(self, now)
        if not self.members:
            self.generation_id = 0
    mp.setattr(ClassicGroup, "init_next_generation", init_next_generation)


def streams_reconcile_ignores_previous_owner(mp: pytest.MonkeyPatch) -> None:
    """Streams reconciliation hands an active task to its new owner before the old owner
    revoked it (it reads every task as having no active owner)."""
    from kgroup.groups.streams import protocol
    original = protocol.reconcile

    class NoActiveOwner:
        def __init__(self, owners):
            self.current_standby_task_process_ids = owners.current_standby_task_process_ids
            self.current_warmup_task_process_ids = owners.current_warmup_task_process_ids

        def current_active_task_process_id(self, task):
            return None

    def reconcile(member, target_epoch, target, *, owners, **kw):
        return original(member, target_epoch, target, owners=NoActiveOwner(owners), **kw)
    mp.setattr(protocol, "reconcile", reconcile)


def share_delivery_limit_off_by_one(mp: pytest.MonkeyPatch) -> None:
    """The delivery-count limit check is off by one (`count > limit` where Kafka archives at
    `count >= limit`): a record is delivered limit + 1 times."""
    original = SharePartition.delivery_count_limit
    mp.setattr(SharePartition, "delivery_count_limit", lambda self: original(self) + 1)


def share_read_drops_start_offset(mp: pytest.MonkeyPatch) -> None:
    """The leader's ReadShareGroupState answer loses its start offset (a field mapping bug): a
    share-partition leader that takes over starts from offset 0 and writes that back."""
    from kgroup.groups.share.persister import CoordinatorPersister
    original = CoordinatorPersister.read_state

    def read_state(self, *args, **kw):
        ps = original(self, *args, **kw)
        return dataclasses.replace(ps, start_offset=0) if ps.start_offset > 0 else ps
    mp.setattr(CoordinatorPersister, "read_state", read_state)


def unknown_member_raises_key_error(mp: pytest.MonkeyPatch) -> None:
    """A heartbeat from a member the group no longer has raises a bare KeyError instead of
    KafkaError(UNKNOWN_MEMBER_ID)."""
    from kgroup.groups.consumer import protocol
    mp.setattr(protocol, "get_member", lambda group, member_id: group.members[member_id])


@dataclasses.dataclass(frozen=True)
class Mutant:
    kind: str
    profile: str
    mutate: Callable[[pytest.MonkeyPatch], None]
    #: the invariant that must catch it (None: the CheckedCoordinator, every invariant off)
    invariant: str | None
    #: the failing frame: its function name and a piece of its source line
    function: str
    line: str
    error: type[BaseException] = AssertionError
    #: examples hypothesis may try (0: the "mutation" profile's), for a mutant that shows late
    examples: int = 0


MUTANTS = [
    # records are the truth: Coordinator.load of the log describes every group alike
    pytest.param(Mutant("classic", "kip", classic_replay_drops_rebalance_timeout, "reload_describes_alike",
                        "assert_reload_equal", 'assert loaded["groups"] == live["groups"]'),
                 id="classic-replay-drops-rebalance-timeout"),
    # KIP-848: a member epoch only moves forward
    # (shows only once a revocation happens: caught after 20-41 examples, depending on which
    # modules an earlier test imported into the process -- a dependence not understood yet; 25 was
    # too few in the full suite)
    pytest.param(Mutant("streams", "kip", streams_revoking_member_reports_previous_epoch,
                        "epochs_never_go_backwards", "epochs_never_go_backwards", "assert e >= last",
                        examples=100),
                 id="streams-revoking-member-reports-previous-epoch"),
    # Kafka's classic generation (like KIP-848's group epoch) only moves forward while the group lives
    pytest.param(Mutant("classic", "kip", classic_empty_group_restarts_generation,
                        "epochs_never_go_backwards", "epochs_never_go_backwards", "assert epoch >= self.group_epochs"),
                 id="classic-empty-group-restarts-generation"),
    # Kafka's JoinGroup gives a fresh random UUID: a member id is never handed out twice
    pytest.param(Mutant("classic", "kip", member_ids_reseeded_identically_after_load, "member_ids_are_never_reused",
                        "member_ids_are_never_reused", "assert owner =="),
                 id="coordinator-reseeds-member-ids-identically-after-load"),
    # KIP-345: each group.instance.id maps to one member of the group
    pytest.param(Mutant("classic", "kafka", static_replacement_keeps_old_index, "classic_group_is_consistent",
                        "classic_group_is_consistent", "assert g.static_members[iid] in g.members"),
                 id="classic-static-replacement-keeps-old-index"),
    # KIP-848: a partition goes to its new owner only once the old one revoked it
    pytest.param(Mutant("consumer", "kip", consumer_reconcile_ignores_previous_owner, "consumer_assignment_is_safe",
                        "consumer_assignment_is_safe", "assert (tid, p) not in owner"),
                 id="consumer-reconcile-ignores-previous-owner"),
    # KIP-1071: an active task runs on one member at a time
    pytest.param(Mutant("streams", "kip", streams_reconcile_ignores_previous_owner, "streams_assignment_is_safe",
                        "streams_assignment_is_safe", "assert task not in active"),
                 id="streams-reconcile-ignores-previous-owner"),
    # KIP-932: a record is delivered at most group.share.delivery.count.limit times
    pytest.param(Mutant("share", "kip", share_delivery_limit_off_by_one, "share_partitions_are_sane",
                        "share_partitions_are_sane", "assert r.delivery_count <= limit"),
                 id="share-delivery-limit-off-by-one"),
    # KIP-932: the SPSO never moves back (read from the share coordinator's records, in order)
    pytest.param(Mutant("share", "kip", share_read_drops_start_offset, "durable_share_state_never_goes_back",
                        "durable_share_state_never_goes_back", "assert v.start_offset >= known[1]"),
                 id="share-read-drops-start-offset"),
    # Kafka's errors are error codes in responses, never exceptions out of the coordinator
    pytest.param(Mutant("consumer", "kip", unknown_member_raises_key_error, None,
                        "handle", "response = super().handle(request, **kw)", KeyError),
                 id="unknown-member-raises-key-error"),
    # (the same rule, found by kgroup's own leader election crashing before the classic invariant
    # can see a leader outside the group)
    pytest.param(Mutant("classic", "kip", leaving_leader_keeps_leader_id, None,
                        "advance", "result = timer.callback()", KeyError),
                 id="classic-leaving-leader-keeps-leader-id"),
]


def collected_invariants(machine: type) -> list[str]:
    """The invariants hypothesis runs for `machine` (its own collection, not ours)."""
    return sorted(inv.function.__name__ for inv in machine.setup_state().invariants)


def only_invariant(base: type, keep: str | None) -> type:
    """`base` with every invariant but `keep` overridden by a plain (uncollected) method, and
    counting the examples and steps it runs."""
    def plain(name: str) -> Callable[[Any], None]:
        def off(self) -> None:
            """Switched off for this mutant."""
        off.__name__ = name
        return off
    names = [name for name in dir(base) if getattr(getattr(base, name), INVARIANT_MARKER, None) is not None]
    body: dict[str, Any] = {name: plain(name) for name in names if name != keep}
    runs = {"examples": 0, "steps": 0}

    def __init__(self) -> None:
        runs["examples"] += 1
        base.__init__(self)

    def step_done(self) -> None:
        runs["steps"] += 1
        base.step_done(self)
    body.update(__init__=__init__, step_done=step_done, RUNS=runs)
    return type(f"{base.__name__}_only_{keep}", (base,), body)


@pytest.mark.parametrize("mutant", MUTANTS)
def test_invariant_catches_mutant(mutant: Mutant, monkeypatch: pytest.MonkeyPatch, reliability) -> None:
    COUNTS.use(reliability)
    machine = only_invariant(_machine(mutant.kind, mutant.profile), mutant.invariant)
    # overriding really switches the others off: hypothesis collects only the target
    assert collected_invariants(machine) == ([mutant.invariant] if mutant.invariant else [])
    machine.TestCase.settings = settings(MUTATION_SETTINGS, max_examples=mutant.examples) if mutant.examples \
        else MUTATION_SETTINGS
    machine.TestCase().runTest()   # the same run without the bug passes
    machine.RUNS.update(examples=0, steps=0)
    mutant.mutate(monkeypatch)
    with pytest.raises(mutant.error) as caught:
        machine.TestCase().runTest()
    frames = traceback.extract_tb(caught.value.__traceback__)
    where = [(f.name, (f.line or "").strip()) for f in frames]
    assert any(name == mutant.function and line.startswith(mutant.line) for name, line in where), where
    if mutant.invariant is not None:
        assert any(name == mutant.invariant for name, _ in where), where
    print(f"{mutant.mutate.__name__}: caught after {machine.RUNS['examples']} examples, {machine.RUNS['steps']} steps")
