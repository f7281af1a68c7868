"""Failover and continue: the KIP examples with the coordinator (or the share coordinator)
thrown away and rebuilt from its logs at every step must end as they end without a failover,
and a coordinator that took over must not reuse its predecessor's member ids.

Soft state (pending JoinGroups, timers) is handled as Kafka handles a coordinator move: the
clients join again, `on_loaded` hooks re-arm the timers."""
from __future__ import annotations

import pytest

from invariants_testing import COUNTS, durable_view, reload
from kgroup.dumps.replay import describe_share_partitions
from test_group_invariants import _machine


def test_a_process_restarted_after_a_failover_gets_a_fresh_member_id(reliability) -> None:
    """Kafka's JoinGroup gives a new member a random UUID: the coordinator that took over must not
    hand a restarted process the id of its crashed predecessor, which is still a member until its
    session times out (the new process would take over the dead one's session)."""
    COUNTS.use(reliability)
    m = _machine("classic", "kip")()
    m.start("A")
    m.run(10)
    dead = m.clients["A"].member_id
    m.crash("A")
    m.coordinator_failover()
    m.start("A")
    m.run(2)
    assert dead in m.c.groups["g"].members            # still there until its session times out
    assert m.clients["A"].member_id not in ("", dead)
    m.clock_jump(11_000)
    m.run(30)
    assert list(m.c.groups["g"].members) == [m.clients["A"].member_id]


# -- the KIP examples, failed over at every step ----------------------------------------------

def fail_over_in_place(c, keep_soft: tuple[str, ...] = ()) -> None:
    """Replace everything `c` holds by what a coordinator rebuilt from its logs holds (the
    examples keep `c` in closures: the object stays, its state is the reloaded one's).
    `keep_soft`: soft-state keys that stand for configuration in an example (e.g. the KIP's
    fixed task assignor), carried over as a restarted broker would read its config again."""
    new = reload(c)
    for key in keep_soft:
        if key in c.soft_state:
            new.soft_state[key] = c.soft_state[key]
    c.__dict__ = new.__dict__   # one state, whichever object a timer or a closure holds


def _failing_over_at(monkeypatch, k: int, keep_soft: tuple[str, ...] = ()) -> list:
    """Make `Scenario.step` fail the coordinator over right after its k-th step."""
    from kgroup.scenario import Scenario
    original = Scenario.step
    done = []

    def step(self, *args, **kw):
        s = original(self, *args, **kw)
        if len(self.steps) == k + 1:
            fail_over_in_place(self.coordinator, keep_soft)
            COUNTS["failovers survived"] += 1
            done.append(k)
        COUNTS["steps explored"] += 1
        return s

    monkeypatch.setattr(Scenario, "step", step)
    return done


def _durable(c) -> dict:
    """The end state: what the logs say (a reload of them). A rebalance a classic group has in
    memory is not in them (in Kafka neither: a failover right after the downgrade of the
    migration example loses the rebalance the leaving member started)."""
    return durable_view(reload(c))


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_kip1071_rolling_bounce_failed_over_at_every_step(profile: str, reliability, monkeypatch) -> None:
    """KIP-1071's rolling bounce: a coordinator failover after any heartbeat changes nothing."""
    from kgroup.kip_examples import rolling_bounce
    COUNTS.use(reliability)
    reference = rolling_bounce(profile=profile)
    for k in range(len(reference.scenario.steps)):
        with monkeypatch.context() as mp:
            done = _failing_over_at(mp, k)
            ex = rolling_bounce(profile=profile)
        assert done == [k]
        assert [(p.label, p.assignment) for p in ex.phases] == [(p.label, p.assignment) for p in reference.phases], k
        assert _durable(ex.coordinator) == _durable(reference.coordinator), k


@pytest.mark.parametrize("profile", ["kip", "kafka"])
def test_kip1071_migration_failed_over_at_every_step(profile: str, reliability, monkeypatch) -> None:
    """KIP-1071's online migration (classic -> streams -> classic) failed over after any step
    ends where it ends without a failover."""
    from kgroup.assignors.streams import TASK_ASSIGNOR_OVERRIDE
    from kgroup.kip_examples import migration_example
    COUNTS.use(reliability)
    reference = migration_example(profile=profile)
    for k in range(len(reference.scenario.steps)):
        with monkeypatch.context() as mp:
            done = _failing_over_at(mp, k, keep_soft=(TASK_ASSIGNOR_OVERRIDE,))
            ex = migration_example(profile=profile)
        assert done == [k]
        assert ex.table() == reference.table(), k
        assert _durable(ex.coordinator) == _durable(reference.coordinator), k


def test_kip932_durable_state_with_the_share_coordinator_failed_over_before_every_write(reliability,
                                                                                           monkeypatch) -> None:
    """KIP-932's durable-state example: the share coordinator (the `__share_group_state` leader)
    moves before any write of the share-partition leader; the new one, rebuilt from the log,
    accepts the same writes (same state epoch, leader epoch), so every row is the same."""
    from kgroup import Coordinator
    from kgroup.groups.share.coordinator import SHARE_COORDINATOR, share_coordinator
    from kgroup.groups.share.persister import CoordinatorPersister
    from kgroup.kip_examples import share_durable_state_example
    COUNTS.use(reliability)
    calls = []
    original = CoordinatorPersister.write_state

    def counting(self, *args, **kw):
        calls.append(1)
        return original(self, *args, **kw)

    with monkeypatch.context() as mp:
        mp.setattr(CoordinatorPersister, "write_state", counting)
        reference = share_durable_state_example()
    writes = len(calls)
    assert writes > 5
    for k in range(writes):
        n = []

        def failing_over(self, *args, **kw):
            if len(n) == k:
                c = self.coordinator
                fresh = share_coordinator(Coordinator.load(c.share_state_log, cluster=c.cluster, config=c.config,
                                                           profile=c.profile, clock=c.clock))
                fresh.coordinator = c
                c.components[SHARE_COORDINATOR] = fresh
                COUNTS["failovers survived"] += 1
            n.append(1)
            COUNTS["steps explored"] += 1
            return original(self, *args, **kw)

        with monkeypatch.context() as mp:
            mp.setattr(CoordinatorPersister, "write_state", failing_over)
            ex = share_durable_state_example()
        assert ex.rows == reference.rows, k
        assert describe_share_partitions(ex.coordinator) == describe_share_partitions(reference.coordinator), k
