"""KIP-1071 Streams groups: the topology (`topology`) and its configuration against the
cluster (`configuration`, NOT_READY), internal-topic creation (`internal_topics`), the group
(`group`), reconciliation of active/standby/warm-up tasks (`reconciliation`), the
StreamsGroupHeartbeat/Describe handlers (`protocol`) and record replay (`replay`)."""
from __future__ import annotations

from .configuration import ConfiguredTopology, Status, StatusInfo, configure
from .group import Endpoint, StreamsGroup, StreamsGroupMember, StreamsGroupState
from .topology import CopartitionGroup, Subtopology, TopicInfo, Topology

from . import protocol, replay  # noqa: E402,F401  (register handlers and replays)

__all__ = ["StreamsGroup", "StreamsGroupMember", "StreamsGroupState", "Endpoint", "Topology", "Subtopology",
           "TopicInfo", "CopartitionGroup", "ConfiguredTopology", "Status", "StatusInfo", "configure"]
