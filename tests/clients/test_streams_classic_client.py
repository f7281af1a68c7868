"""The simulated Kafka Streams client in classic mode (group.protocol=classic): Kafka Streams'
SubscriptionInfo/AssignmentInfo on the wire, a classic group of its own, and KIP-1071's online
migration as a rolling upgrade (classic -> streams) and downgrade, instance by instance."""
from __future__ import annotations

import pytest

from kgroup import Cluster, Coordinator, ManualClock
from kgroup.clients import Simulation, StreamsApplication, StreamsConfig
from kgroup.groups.streams import StreamsGroup, Subtopology, TopicInfo, Topology
from kgroup.protocol.consumer_protocol import decode_subscription
from kgroup.protocol.streams_protocol import decode_subscription_info

TOPOLOGY = Topology(0, (Subtopology("0", source_topics=("orders",),
                                    state_changelog_topics=(TopicInfo("app-store-changelog"),)),))


def world(profile="kip", protocol="classic", n=3):
    c = Coordinator(cluster=Cluster({"orders": 6, "app-store-changelog": 6}, seed=1), clock=ManualClock(1_000_000),
                    profile=profile, config={"group.streams.initial.rebalance.delay.ms": 0})
    sim = Simulation(c, tick_ms=100)
    apps = [sim.add(StreamsApplication(c, StreamsConfig("app", TOPOLOGY, group_protocol=protocol), name=x, seed=x))
            for x in "ABC"[:n]]
    return c, sim, apps


def every_task_once(sim, apps):
    owned = [t for a in apps for t in a.tasks()["active"]]
    return sorted(owned) == sorted(sim.partitions()) and not sim.double_owned_partitions()


def test_classic_mode_forms_a_classic_group_with_kafka_streams_user_data():
    c, sim, apps = world()
    sim.run_until_stable("app")
    g = c.groups["app"]
    assert str(g.type) == "classic" and g.protocol_name == "stream" and len(g.members) == 3
    assert every_task_once(sim, apps) and all(len(a.tasks()["active"]) == 2 for a in apps)
    m = next(m for m in g.members.values() if m.client_id.startswith("A-"))
    sub, _ = decode_subscription(m.metadata("stream"))
    info = decode_subscription_info(sub.user_data)
    assert info.process_id == apps[0].process_id and info.version == 11
    assert info.active_tasks == []                                  # it joined owning nothing
    # its next JoinGroup says which tasks it runs as active (offset sum -2)
    assert set(apps[0].threads[0].subscription_info().active_tasks) == apps[0].tasks()["active"]


def test_rolling_upgrade_classic_to_streams_kip():
    c, sim, apps = world()
    sim.run_until_stable("app")
    generation = c.groups["app"].generation_id
    apps[0].switch_protocol("streams", sim)
    sim.run_until_stable("app")
    g = c.groups["app"]
    assert isinstance(g, StreamsGroup) and g.group_epoch > generation
    assert sorted(m.uses_classic_protocol for m in g.members.values()) == [False, True, True]
    assert every_task_once(sim, apps)
    for a in apps[1:]:
        a.switch_protocol("streams", sim)
        sim.run_until_stable("app")
    g = c.groups["app"]
    assert not any(m.uses_classic_protocol for m in g.members.values()) and len(g.members) == 3
    assert every_task_once(sim, apps)


def test_rolling_downgrade_streams_to_classic_kip():
    c, sim, apps = world(protocol="streams")
    sim.run_until_stable("app")
    for a in apps[:2]:
        a.switch_protocol("classic", sim)
        sim.run_until_stable("app")
    assert isinstance(c.groups["app"], StreamsGroup)                # C still speaks the Streams protocol
    apps[2].switch_protocol("classic", sim)                         # the last one: back to classic
    sim.run_until_stable("app")
    assert str(c.groups["app"].type) == "classic" and every_task_once(sim, apps)


def test_rolling_upgrade_is_refused_while_classic_members_remain_kafka():
    c, sim, apps = world(profile="kafka")
    sim.run_until_stable("app")
    apps[0].switch_protocol("streams", sim)
    sim.run(5_000)
    assert str(c.groups["app"].type) == "classic"
    assert apps[0].errors == {"A-1": ("GROUP_ID_NOT_FOUND", "Group app is not a streams group.")}


@pytest.mark.parametrize("bad", ["eager", ""])
def test_group_protocol_is_checked(bad):
    c = Coordinator(cluster=Cluster({"orders": 1}, seed=1))
    with pytest.raises(ValueError):
        StreamsApplication(c, StreamsConfig("app", TOPOLOGY, group_protocol=bad))
