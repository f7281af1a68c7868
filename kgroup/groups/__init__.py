"""One package per group type; `base` and `modern` hold what they share.

This is the one place that knows which group types exist. Each package registers its
request handlers (`@handles`) and record replays (`@replays`) in `kgroup.runtime` when
imported; the coordinator only calls `load_group_types()` and then routes through those
registries, so it never imports a group module itself.
"""
from __future__ import annotations

import importlib

from kgroup.groups.base import Group, GroupType

#: The group-type packages, in the order their handlers are registered.
GROUP_TYPE_PACKAGES = (
    "kgroup.groups.classic",   # JoinGroup/SyncGroup/Heartbeat/LeaveGroup, KIP-345
    "kgroup.groups.consumer",  # KIP-848 ConsumerGroupHeartbeat
    "kgroup.groups.streams",   # KIP-1071 StreamsGroupHeartbeat
    "kgroup.groups.share",     # KIP-932 share groups: membership, admin APIs, ShareFetch/ShareAcknowledge
    "kgroup.groups.share.coordinator",  # KIP-932 share coordinator: APIs 83-87, __share_group_state
)


def load_group_types() -> None:
    """Import every group-type package so their handlers and replays register (idempotent)."""
    for name in GROUP_TYPE_PACKAGES:
        importlib.import_module(name)


def __getattr__(name: str):
    # `from kgroup.groups import ClassicGroup` keeps working without importing classic here.
    if name in ("ClassicGroup", "ClassicGroupState"):
        from kgroup.groups import classic
        return getattr(classic, name)
    raise AttributeError(name)


__all__ = ["Group", "GroupType", "GROUP_TYPE_PACKAGES", "load_group_types"]
