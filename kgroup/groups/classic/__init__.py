"""Classic groups: the group model (`group`) and the JoinGroup/SyncGroup protocol (`protocol`)."""
from kgroup.groups.classic.group import (CONSUMER_PROTOCOL_TYPE, GROUP_METADATA_VALUE_VERSION, ClassicGroup,
                                         ClassicGroupState, ClassicMember)

__all__ = ["ClassicGroup", "ClassicGroupState", "ClassicMember", "CONSUMER_PROTOCOL_TYPE",
           "GROUP_METADATA_VALUE_VERSION"]
