"""Simulated group members that drive the coordinator the way real clients do.

    from kgroup.clients import ClassicConsumer, ConsumerConfig, Simulation, rolling_restart
"""
from kgroup.clients.classic import ClassicConsumer, ConsumerConfig, MemberState, RebalanceEvent
from kgroup.clients.driver import Simulation, rolling_restart

__all__ = ["ClassicConsumer", "ConsumerConfig", "MemberState", "RebalanceEvent", "Simulation", "rolling_restart"]
