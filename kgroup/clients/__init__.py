"""Simulated group members that drive the coordinator the way real clients do.

    from kgroup.clients import ClassicConsumer, ConsumerConfig, Simulation, rolling_restart
    from kgroup.clients import ConsumerGroupConsumer          # KIP-848 (group.protocol=consumer)
    from kgroup.clients import StreamsApplication, StreamsConfig, TopologyBuilder   # KIP-1071
    from kgroup.clients import ShareConsumer, AcknowledgeType                       # KIP-932
    from kgroup.clients import FaultyTransport     # Simulation(..., transport=FaultyTransport(c, seed=1, drop=0.1))
    from kgroup.clients import rolling_start       # thousands of bare members joining one by one
"""
from kgroup.clients.classic import ClassicConsumer, ConsumerConfig, MemberState, RebalanceEvent
from kgroup.clients.consumer import (ConsumerGroupConsumer, ConsumerMemberState, GroupConsumerConfig, HeartbeatExchange,
                                     RebalanceListener)
from kgroup.clients.crowd import CrowdRun, rolling_start
from kgroup.clients.driver import Simulation, rolling_restart, rolling_upgrade
from kgroup.clients.share import AcknowledgeType, ShareConsumer, ShareMemberState, ShareRecord
from kgroup.clients.streams import StateDirectory, StreamsApplication, StreamsConfig, StreamsMemberState, StreamThread
from kgroup.clients.streams_topology import TopologyBuilder
from kgroup.clients.transport import Fault, FaultyTransport, RequestTimeout, Transport

__all__ = ["ClassicConsumer", "ConsumerConfig", "MemberState", "RebalanceEvent", "Simulation", "rolling_restart",
           "ConsumerGroupConsumer", "ConsumerMemberState", "GroupConsumerConfig", "HeartbeatExchange",
           "RebalanceListener", "rolling_upgrade", "StreamsApplication", "StreamThread", "StreamsConfig",
           "StreamsMemberState", "StateDirectory", "TopologyBuilder", "ShareConsumer", "AcknowledgeType",
           "ShareMemberState", "ShareRecord", "Transport", "FaultyTransport", "Fault", "RequestTimeout", "CrowdRun",
           "rolling_start"]
