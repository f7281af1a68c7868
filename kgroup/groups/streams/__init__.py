"""KIP-1071 Streams groups: the topology (`topology`) and its configuration against the
cluster (`configuration`, NOT_READY), internal-topic creation (`internal_topics`), the group
(`group`), reconciliation of active/standby/warm-up tasks (`reconciliation`), the
StreamsGroupHeartbeat/Describe handlers (`protocol`), record replay (`replay`), online
migration from and to classic groups (`migration`) and the classic-protocol members of a
Streams group (`classic_members`)."""
from __future__ import annotations

from .configuration import ConfiguredTopology, Status, StatusInfo, configure
from .group import Endpoint, StreamsGroup, StreamsGroupMember, StreamsGroupState
from .topology import CopartitionGroup, Subtopology, TopicInfo, Topology

from kgroup.groups.classic_bridge import serve_classic_members

from . import classic_members as _classic

# Classic-protocol members of a Streams group (KIP-1071 online migration): the classic
# handlers look these hooks up; under profile "kafka" they refuse, as Kafka does.
serve_classic_members(StreamsGroup, _classic)

from . import protocol, replay  # noqa: E402,F401  (register handlers and replays)

__all__ = ["StreamsGroup", "StreamsGroupMember", "StreamsGroupState", "Endpoint", "Topology", "Subtopology",
           "TopicInfo", "CopartitionGroup", "ConfiguredTopology", "Status", "StatusInfo", "configure"]
