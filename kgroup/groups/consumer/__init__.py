"""KIP-848 consumer groups: the group (`group`), reconciliation (`reconciliation`), the
ConsumerGroupHeartbeat/Describe handlers (`protocol`), record replay (`replay`) and online
migration from and to classic groups (`migration`)."""
from __future__ import annotations

from . import migration as _migration
from .group import ClassicMemberMetadata, ConsumerGroup, ConsumerGroupMember, ResolvedRegularExpression

# Classic-protocol members of a consumer group: the classic handlers look these hooks up.
ConsumerGroup.classic_join = _migration.classic_join
ConsumerGroup.classic_sync = _migration.classic_sync
ConsumerGroup.classic_heartbeat = _migration.classic_heartbeat
ConsumerGroup.classic_leave = _migration.classic_leave
ConsumerGroup.describe_as_classic = _migration.describe_as_classic

from . import protocol, replay  # noqa: E402,F401  (register handlers and replays)

__all__ = ["ConsumerGroup", "ConsumerGroupMember", "ClassicMemberMetadata", "ResolvedRegularExpression"]
