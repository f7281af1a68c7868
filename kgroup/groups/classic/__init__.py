"""Classic groups: the group model (`group`), the JoinGroup/SyncGroup protocol with KIP-345
static membership (`protocol`) and GroupMetadata replay (`replay`)."""
from kgroup.groups.classic.group import (CONSUMER_PROTOCOL_TYPE, GROUP_METADATA_VALUE_VERSION, ClassicGroup,
                                         ClassicGroupState, ClassicMember)

from kgroup.runtime import makes_simple_groups

from . import protocol, replay  # noqa: E402,F401  (register handlers and replays)

# An offset commit without membership creates an empty classic group (Kafka's OffsetMetadataManager).
makes_simple_groups(ClassicGroup)
# A member's commit keeps its session alive: the session timers live with the handlers.
ClassicGroup.after_offset_commit = protocol.after_offset_commit

__all__ = ["ClassicGroup", "ClassicGroupState", "ClassicMember", "CONSUMER_PROTOCOL_TYPE",
           "GROUP_METADATA_VALUE_VERSION"]
