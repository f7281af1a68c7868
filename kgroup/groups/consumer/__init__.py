"""KIP-848 consumer groups: the group (`group`), reconciliation (`reconciliation`), the
ConsumerGroupHeartbeat/Describe handlers (`protocol`), record replay (`replay`), online
migration from and to classic groups (`migration`) and the classic-protocol members of a
consumer group (`classic_members`)."""
from __future__ import annotations

from kgroup.groups.classic_bridge import serve_classic_members

from . import classic_members as _classic
from .group import ClassicMemberMetadata, ConsumerGroup, ConsumerGroupMember, ResolvedRegularExpression

# Classic-protocol members of a consumer group: the classic handlers look these hooks up.
serve_classic_members(ConsumerGroup, _classic)

from . import protocol, replay  # noqa: E402,F401  (register handlers and replays)

__all__ = ["ConsumerGroup", "ConsumerGroupMember", "ClassicMemberMetadata", "ResolvedRegularExpression"]
