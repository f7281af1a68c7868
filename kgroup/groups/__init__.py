"""One module per group type. `base` holds what every type shares."""
from kgroup.groups.base import Group, GroupType
from kgroup.groups.classic import ClassicGroup, ClassicGroupState

__all__ = ["Group", "GroupType", "ClassicGroup", "ClassicGroupState"]
