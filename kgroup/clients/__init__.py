"""Simulated group members that drive the coordinator the way real clients do.

    from kgroup.clients import ClassicConsumer, ConsumerConfig, Simulation, rolling_restart
    from kgroup.clients import ConsumerGroupConsumer          # KIP-848 (group.protocol=consumer)
"""
from kgroup.clients.classic import ClassicConsumer, ConsumerConfig, MemberState, RebalanceEvent
from kgroup.clients.consumer import (ConsumerGroupConsumer, ConsumerMemberState, GroupConsumerConfig, HeartbeatExchange,
                                     RebalanceListener)
from kgroup.clients.driver import Simulation, rolling_restart, rolling_upgrade

__all__ = ["ClassicConsumer", "ConsumerConfig", "MemberState", "RebalanceEvent", "Simulation", "rolling_restart",
           "ConsumerGroupConsumer", "ConsumerMemberState", "GroupConsumerConfig", "HeartbeatExchange",
           "RebalanceListener", "rolling_upgrade"]
