"""The one visual language of every widget and chart: the same colours and marks for the same
thing (a state, a member, a record type) wherever it is shown."""
from __future__ import annotations

#: Streams task roles.
TASK_ROLES = {"active": "#1f77b4", "standby": "#9467bd", "warm-up": "#ff7f0e"}
#: KIP-932 share record states.
SHARE_STATES = {"Available": "#2ca02c", "Acquired": "#ffbf00", "Acknowledged": "#4c78a8", "Archived": "#9d9d9d"}
#: Errors, and stale/fenced members.
ERROR = "#d62728"
STALE = "#c7c7c7"
OK = "#2ca02c"

#: Record families in the record log and charts.
RECORD_FAMILIES = {
    "offsets": "#4c78a8",      # OffsetCommit, LegacyOffsetCommit
    "classic": "#f58518",      # GroupMetadata
    "consumer": "#54a24b",     # ConsumerGroup*
    "share": "#b279a2",        # ShareGroup*, ShareSnapshot/Update
    "streams": "#e45756",      # StreamsGroup*
    "control": "#79706e",      # transaction markers
}


def record_family(type_name: str) -> str:
    if type_name in ("OffsetCommit", "LegacyOffsetCommit"):
        return "offsets"
    if type_name == "GroupMetadata":
        return "classic"
    for prefix, family in (("ConsumerGroup", "consumer"), ("Share", "share"), ("StreamsGroup", "streams")):
        if type_name.startswith(prefix):
            return family
    return "control"
