"""Every `__consumer_offsets` and `__share_group_state` record, restated from Kafka's schemas.

Written by hand from apache/kafka's `group-coordinator/.../common/message/*.json`
and `share-coordinator/.../common/message/*.json` (trunk, 2024-2025). Field
names are Kafka's (they become snake_case attributes and camelCase JSON keys);
field order is wire order. Keys are always version 0 and never flexible: the
int16 in front of a key is the record *type*, not a version.

Conventions: `versions` defaults to "0+"; `nullable=` gives nullableVersions;
`tag=` makes a field tagged (taggedVersions = versions unless `tagged=` says
otherwise); `default=` is Kafka's explicit default (None for "null"). Records
from type 3 on, and the share-state ones, are declared with `_record` (value
version 0 only, flexible; key and value named `<name>Key` and `<name>Value`);
layouts the three group types' records have alike are stated once.
"""
from __future__ import annotations

from typing import Any, Callable

from .schema import ZERO_UUID, Field as F, Message, RecordSchema, Struct as S

CONSUMER_OFFSETS = "__consumer_offsets"
SHARE_GROUP_STATE = "__share_group_state"


def _key(name: str, *fields: F) -> Message:
    return Message(name, *fields, versions="0", flexible="none")


def _group_key(name: str) -> Message:
    return _key(name, F("GroupId", "string"))


def _member_key(name: str) -> Message:
    return _key(name, F("GroupId", "string"), F("MemberId", "string"))


def _record(type_: int, name: str, key: Callable[[str], Message], *value_fields: F, **kw: Any) -> RecordSchema:
    """A record whose value has version 0 only, flexible (types 3 on, and `__share_group_state`'s):
    key `<name>Key` built by `key`, value `<name>Value` holding `value_fields`."""
    return RecordSchema(type_, name, key(f"{name}Key"), Message(f"{name}Value", *value_fields, flexible="0+"), **kw)


# --- 0: LegacyOffsetCommit (written by 0.8.2 brokers; later brokers write type 1) -------------

LEGACY_OFFSET_COMMIT = RecordSchema(
    0, "LegacyOffsetCommit",
    _key("LegacyOffsetCommitKey",
         F("group", "string"),
         F("topic", "string"),
         F("partition", "int32")),
    Message("LegacyOffsetCommitValue",
            F("offset", "int64"),
            F("metadata", "string"),
            F("commitTimestamp", "int64"),
            versions="0"),
)

# --- 1: OffsetCommit ----------------------------------------------------------------------

OFFSET_COMMIT = RecordSchema(
    1, "OffsetCommit",
    _key("OffsetCommitKey",
         F("group", "string"),
         F("topic", "string"),
         F("partition", "int32")),
    Message("OffsetCommitValue",
            F("offset", "int64"),
            # v3 (Kafka 2.1, KIP-320): leader epoch of the last consumed record.
            F("leaderEpoch", "int32", versions="3+", default=-1),
            F("metadata", "string"),
            F("commitTimestamp", "int64"),
            # v1 only (0.10.1, KIP-211 dropped it again in v2).
            F("expireTimestamp", "int64", versions="1", default=-1),
            # Newest trunk (4.x, topic ids in offset commits): shown for v4 by Kafka's
            # OffsetMessageFormatterTest. Tag 0 is inferred (the only tagged field); not
            # seen in a stored schema file.
            F("topicId", "uuid", versions="4+", tag=0, default=ZERO_UUID),
            versions="0-4", flexible="4+"),
    default_version=3,
)

# --- 2: GroupMetadata (classic groups) ------------------------------------------------------

_MEMBER_METADATA = S(
    "MemberMetadata",
    F("memberId", "string"),
    # v3 (2.3, KIP-345 static membership).
    F("groupInstanceId", "string", versions="3+", nullable="3+", default=None),
    F("clientId", "string"),
    F("clientHost", "string"),
    # v1 (0.10.1, KIP-62).
    F("rebalanceTimeout", "int32", versions="1+", default=-1),
    F("sessionTimeout", "int32"),
    F("subscription", "bytes"),
    F("assignment", "bytes"),
)

GROUP_METADATA = RecordSchema(
    2, "GroupMetadata",
    _key("GroupMetadataKey", F("group", "string")),
    Message("GroupMetadataValue",
            F("protocolType", "string"),
            F("generation", "int32"),
            F("protocol", "string", nullable="0+"),
            F("leader", "string", nullable="0+"),
            # v2 (2.1, KIP-211).
            F("currentStateTimestamp", "int64", versions="2+", default=-1),
            F("members", [_MEMBER_METADATA]),
            versions="0-4", flexible="4+"),
    default_version=3,
)

# --- layouts the consumer, share and streams group records have alike ---------------------------


def _topics_metadata() -> F:
    """The subscribed topics' metadata of the *GroupPartitionMetadata records (4, 9, 18). A new
    struct per record: each value class gets nested classes of its own."""
    return F("Topics", [S("TopicMetadata",
                          F("TopicId", "uuid"),
                          F("TopicName", "string"),
                          F("NumPartitions", "int32"),
                          F("PartitionMetadata", [S("PartitionMetadata",
                                                    F("Partition", "int32"),
                                                    F("Racks", "[]string"))]))])


# The *GroupTargetAssignmentMetadata records (6, 12, 20).
_TARGET_ASSIGNMENT_METADATA_FIELDS = (
    F("AssignmentEpoch", "int32"),
    # KIP-1263 (4.3), for the three group types: when the assignment computation finished.
    F("AssignmentTimestamp", "int64", tag=0, default=0),
)


def _target_topic_partitions() -> F:
    """A member's target assignment in the consumer (7) and share (13) group records; a new
    struct per record, as for `_topics_metadata`."""
    return F("TopicPartitions", [S("TopicPartition",
                                   F("TopicId", "uuid"),
                                   F("Partitions", "[]int32"))])


# The *GroupCurrentMemberAssignment records (8, 14, 22) begin alike, before their partitions or tasks.
_MEMBER_EPOCH_FIELDS = (
    F("MemberEpoch", "int32"),
    F("PreviousMemberEpoch", "int32"),
    F("State", "int8"),
)


# The consumer and Streams member records (5, 19) begin alike: who the member is.
_MEMBER_IDENTITY_FIELDS = (
    F("InstanceId", "string", nullable="0+"),
    F("RackId", "string", nullable="0+"),
    F("ClientId", "string"),
    F("ClientHost", "string"),
)

# KIP-1251: the assignment epoch of each partition (consumer groups) or active task (Streams groups),
# aligned with Partitions; absent from records written before, where the member epoch stands in.
_ASSIGNMENT_EPOCHS = F("AssignmentEpochs", "[]int32", nullable="0+", tag=0, default=None)


# --- 3-8, 16: consumer groups (KIP-848) ------------------------------------------------------

CONSUMER_GROUP_METADATA = _record(
    3, "ConsumerGroupMetadata", _group_key,
    F("Epoch", "int32"),
    # KIP-1101 (4.1): hash of the subscribed topics' metadata.
    F("MetadataHash", "int64", tag=0, default=0),
    # KIP-1282: creation time of the group.
    F("CreationTimeMs", "int64", tag=1, default=-1),
)

# Deprecated after 4.0 (replaced by MetadataHash); still replayed.
CONSUMER_GROUP_PARTITION_METADATA = _record(4, "ConsumerGroupPartitionMetadata", _group_key, _topics_metadata())

_CLASSIC_MEMBER_METADATA = S(
    "ClassicMemberMetadata",
    F("SessionTimeoutMs", "int32"),
    F("SupportedProtocols", [S("ClassicProtocol",
                               F("Name", "string"),
                               F("Metadata", "bytes"))]),
)
CONSUMER_GROUP_MEMBER_METADATA = _record(
    5, "ConsumerGroupMemberMetadata", _member_key,
    *_MEMBER_IDENTITY_FIELDS,
    F("SubscribedTopicNames", "[]string"),
    F("SubscribedTopicRegex", "string", nullable="0+"),
    F("RebalanceTimeoutMs", "int32", default=-1),
    F("ServerAssignor", "string", nullable="0+"),
    # Set for members that joined with the classic protocol (KIP-848 upgrade path, 3.8).
    # Kafka's schema gives no "null" default, so the default is an empty struct: Kafka 4.4.0
    # writes the tag with null for every consumer-protocol member (01 00 01 00), and a
    # record without the tag reads as the empty struct.
    F("ClassicMemberMetadata", _CLASSIC_MEMBER_METADATA, nullable="0+", tag=0),
)

CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA = _record(
    6, "ConsumerGroupTargetAssignmentMetadata", _group_key, *_TARGET_ASSIGNMENT_METADATA_FIELDS)

CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER = _record(
    7, "ConsumerGroupTargetAssignmentMember", _member_key, _target_topic_partitions())

_CG_TOPIC_PARTITIONS = S(
    "TopicPartitions",
    F("TopicId", "uuid"),
    F("Partitions", "[]int32"),
    _ASSIGNMENT_EPOCHS,
)
CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT = _record(
    8, "ConsumerGroupCurrentMemberAssignment", _member_key,
    *_MEMBER_EPOCH_FIELDS,
    F("AssignedPartitions", [_CG_TOPIC_PARTITIONS]),
    F("PartitionsPendingRevocation", [_CG_TOPIC_PARTITIONS]),
)


def _regular_expression_key(name: str) -> Message:
    return _key(name, F("GroupId", "string"), F("RegularExpression", "string"))


CONSUMER_GROUP_REGULAR_EXPRESSION = _record(
    16, "ConsumerGroupRegularExpression", _regular_expression_key,
    F("Topics", "[]string"),
    F("Version", "int64"),
    F("Timestamp", "int64"),
)

# --- 9-15: share groups (KIP-932) -------------------------------------------------------------

# Obsolete: superseded by ShareGroupStatePartitionMetadata (15) and MetadataHash.
SHARE_GROUP_PARTITION_METADATA = _record(9, "ShareGroupPartitionMetadata", _group_key, _topics_metadata())

SHARE_GROUP_MEMBER_METADATA = _record(
    10, "ShareGroupMemberMetadata", _member_key,
    F("RackId", "string", nullable="0+"),
    F("ClientId", "string"),
    F("ClientHost", "string"),
    F("SubscribedTopicNames", "[]string"),
)

SHARE_GROUP_METADATA = _record(
    11, "ShareGroupMetadata", _group_key,
    F("Epoch", "int32"),
    # A plain (untagged) field, added without a version bump before GA.
    F("MetadataHash", "int64"),
)

SHARE_GROUP_TARGET_ASSIGNMENT_METADATA = _record(
    12, "ShareGroupTargetAssignmentMetadata", _group_key, *_TARGET_ASSIGNMENT_METADATA_FIELDS)

SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER = _record(
    13, "ShareGroupTargetAssignmentMember", _member_key, _target_topic_partitions())

SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT = _record(
    14, "ShareGroupCurrentMemberAssignment", _member_key,
    *_MEMBER_EPOCH_FIELDS,
    F("AssignedPartitions", [S("TopicPartitions",
                               F("TopicId", "uuid"),
                               F("Partitions", "[]int32"))]),
)

_TOPIC_PARTITIONS_INFO = S(
    "TopicPartitionsInfo",
    F("TopicId", "uuid"),
    F("TopicName", "string"),
    F("Partitions", "[]int32"),
    # (a CreateTimestamp field stood here before GA; Kafka 4.4.0 neither writes nor reads it:
    # the initialisation time is kept in memory, taken at replay)
)
SHARE_GROUP_STATE_PARTITION_METADATA = _record(
    15, "ShareGroupStatePartitionMetadata", _group_key,
    F("InitializingTopics", [_TOPIC_PARTITIONS_INFO]),  # added before GA
    F("InitializedTopics", [_TOPIC_PARTITIONS_INFO]),
    F("DeletingTopics", [S("TopicInfo",
                           F("TopicId", "uuid"),
                           F("TopicName", "string"))]),
)

# --- 17-24: streams groups (KIP-1071) ---------------------------------------------------------

_KEY_VALUE_FIELDS = (F("Key", "string"), F("Value", "string"))

# KIP-1331 (KAFKA-20621, trunk 2026): the topology epoch whose description the plugin stores
# (-2: uncertain) and the one it rejected for good; -1 for none.
_DESCRIPTION_EPOCH_FIELDS = (
    F("StoredDescriptionTopologyEpoch", "int32", tag=2, default=-1),
    F("FailedDescriptionTopologyEpoch", "int32", tag=3, default=-1),
)
STREAMS_GROUP_METADATA = _record(
    17, "StreamsGroupMetadata", _group_key,
    F("Epoch", "int32"),
    F("MetadataHash", "int64"),
    F("ValidatedTopologyEpoch", "int32", tag=0, default=-1),
    # KAFKA-19765 (4.2+): the assignment configs the last target assignment was computed
    # with; null in a record written before they were kept (read as the defaults).
    F("LastAssignmentConfigs", [S("LastAssignmentConfig", *_KEY_VALUE_FIELDS)],
      nullable="0+", tag=1, default=None),
    *_DESCRIPTION_EPOCH_FIELDS,
    # Kafka 4.1's layout of the same version 0 (the schema was "subject to non-backwards-compatible
    # changes" before KIP-1071's GA): the configs as an untagged array. kgroup wrote it, with the
    # KIP-1331 tags, until it followed 4.2; such values still decode, re-encode and render as written.
    earlier_values=(
        Message("StreamsGroupMetadataValue41",
                F("Epoch", "int32"),
                F("MetadataHash", "int64"),
                F("ValidatedTopologyEpoch", "int32", tag=0, default=-1),
                F("AssignmentConfigs", [S("AssignmentConfig", *_KEY_VALUE_FIELDS)]),
                *_DESCRIPTION_EPOCH_FIELDS,
                flexible="0+"),
    ),
)

# Obsolete: superseded by MetadataHash.
STREAMS_GROUP_PARTITION_METADATA = _record(18, "StreamsGroupPartitionMetadata", _group_key, _topics_metadata())

STREAMS_GROUP_MEMBER_METADATA = _record(
    19, "StreamsGroupMemberMetadata", _member_key,
    *_MEMBER_IDENTITY_FIELDS,
    F("RebalanceTimeoutMs", "int32", default=-1),
    F("TopologyEpoch", "int32"),
    F("ProcessId", "string"),
    # A nullable, untagged struct: preceded by an int8 marker (-1 null, 1 present).
    F("UserEndpoint", S("Endpoint",
                        F("Host", "string"),
                        F("Port", "uint16")), nullable="0+", default=None),
    F("ClientTags", [S("KeyValue", *_KEY_VALUE_FIELDS)]),
    # kgroup addition (KIP-1071 online migration, which Kafka has not built): a member on the
    # classic protocol, as ConsumerGroupMemberMetadataValue has it. Tagged, so Kafka's reader
    # skips it and the untagged bytes stay Kafka's.
    F("ClassicMemberMetadata", _CLASSIC_MEMBER_METADATA, nullable="0+", tag=0, default=None),
)

STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA = _record(
    20, "StreamsGroupTargetAssignmentMetadata", _group_key, *_TARGET_ASSIGNMENT_METADATA_FIELDS)

def _tasks_tuple(task_ids: S, suffix: str = "") -> tuple[F, ...]:
    """Kafka's TasksTuple as record fields: the active, standby and warm-up task lists."""
    return tuple(F(f"{role}Tasks{suffix}", [task_ids]) for role in ("Active", "Standby", "Warmup"))


_TASK_IDS = S(
    "TaskIds",
    F("SubtopologyId", "string"),
    F("Partitions", "[]int32"),
)
STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER = _record(
    21, "StreamsGroupTargetAssignmentMember", _member_key, *_tasks_tuple(_TASK_IDS))

_CURRENT_TASK_IDS = S(
    "TaskIds",
    F("SubtopologyId", "string"),
    F("Partitions", "[]int32"),
    _ASSIGNMENT_EPOCHS,  # Kafka writes it for active tasks only
)
STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT = _record(
    22, "StreamsGroupCurrentMemberAssignment", _member_key,
    *_MEMBER_EPOCH_FIELDS, *_tasks_tuple(_CURRENT_TASK_IDS), *_tasks_tuple(_CURRENT_TASK_IDS, "PendingRevocation"))

_TOPIC_INFO = S(
    "TopicInfo",
    F("Name", "string"),
    F("Partitions", "int32"),
    F("ReplicationFactor", "int16"),
    F("TopicConfigs", [S("TopicConfig",
                         F("key", "string"),
                         F("value", "string"))]),
)
STREAMS_GROUP_TOPOLOGY = _record(
    23, "StreamsGroupTopology", _group_key,
    F("Epoch", "int32"),
    F("Subtopologies", [S("Subtopology",
                          F("SubtopologyId", "string"),
                          F("SourceTopics", "[]string"),
                          F("SourceTopicRegex", "[]string"),
                          F("StateChangelogTopics", [_TOPIC_INFO]),
                          F("RepartitionSinkTopics", "[]string"),
                          F("RepartitionSourceTopics", [_TOPIC_INFO]),
                          F("CopartitionGroups", [S("CopartitionGroup",
                                                    F("SourceTopics", "[]int16"),
                                                    F("SourceTopicRegex", "[]int16"),
                                                    F("RepartitionSourceTopics", "[]int16"))]))]),
)

# Seen only at one (possibly pre-merge) commit; see the fact sheet's caveats.
STREAMS_GROUP_TARGET_ASSIGNMENT_RESOLVED_TOPIC_IDS = _record(
    24, "StreamsGroupTargetAssignmentResolvedTopicIds", _group_key,
    F("AssignmentEpoch", "int32"),
    F("ResolvedTopicIdsBySubtopology", [S("ResolvedTopicIds",
                                          F("SubtopologyId", "string"),
                                          F("TopicIds", "[]uuid"))]),
)

# --- __share_group_state (share coordinator, KIP-932) -----------------------------------------

_STATE_BATCH_FIELDS = (
    F("FirstOffset", "int64"),
    F("LastOffset", "int64"),
    F("DeliveryState", "int8"),  # 0 Available, 2 Acknowledged, 4 Archived
    F("DeliveryCount", "int16"),
)


def _share_partition_key(name: str) -> Message:
    return _key(name, F("GroupId", "string"), F("TopicId", "uuid"), F("Partition", "int32"))


SHARE_SNAPSHOT = _record(
    0, "ShareSnapshot", _share_partition_key,
    F("SnapshotEpoch", "int32"),
    F("StateEpoch", "int32"),
    F("LeaderEpoch", "int32"),
    F("StartOffset", "int64"),
    # KIP-1226 (4.2).
    F("DeliveryCompleteCount", "int32", tag=0, default=-1),
    F("CreateTimestamp", "int64"),
    F("WriteTimestamp", "int64"),
    F("StateBatches", [S("StateBatch", *_STATE_BATCH_FIELDS)]),
    topic=SHARE_GROUP_STATE,
)

SHARE_UPDATE = _record(
    1, "ShareUpdate", _share_partition_key,
    F("SnapshotEpoch", "int32"),
    F("LeaderEpoch", "int32"),
    F("StartOffset", "int64"),  # -1: unchanged
    F("DeliveryCompleteCount", "int32", tag=0, default=-1),  # KIP-1226 (4.2)
    F("StateBatches", [S("StateBatch", *_STATE_BATCH_FIELDS)]),
    topic=SHARE_GROUP_STATE,
)

CONSUMER_OFFSETS_SCHEMAS: tuple[RecordSchema, ...] = (
    LEGACY_OFFSET_COMMIT, OFFSET_COMMIT, GROUP_METADATA,
    CONSUMER_GROUP_METADATA, CONSUMER_GROUP_PARTITION_METADATA, CONSUMER_GROUP_MEMBER_METADATA,
    CONSUMER_GROUP_TARGET_ASSIGNMENT_METADATA, CONSUMER_GROUP_TARGET_ASSIGNMENT_MEMBER,
    CONSUMER_GROUP_CURRENT_MEMBER_ASSIGNMENT,
    SHARE_GROUP_PARTITION_METADATA, SHARE_GROUP_MEMBER_METADATA, SHARE_GROUP_METADATA,
    SHARE_GROUP_TARGET_ASSIGNMENT_METADATA, SHARE_GROUP_TARGET_ASSIGNMENT_MEMBER,
    SHARE_GROUP_CURRENT_MEMBER_ASSIGNMENT, SHARE_GROUP_STATE_PARTITION_METADATA,
    CONSUMER_GROUP_REGULAR_EXPRESSION,
    STREAMS_GROUP_METADATA, STREAMS_GROUP_PARTITION_METADATA, STREAMS_GROUP_MEMBER_METADATA,
    STREAMS_GROUP_TARGET_ASSIGNMENT_METADATA, STREAMS_GROUP_TARGET_ASSIGNMENT_MEMBER,
    STREAMS_GROUP_CURRENT_MEMBER_ASSIGNMENT, STREAMS_GROUP_TOPOLOGY,
    STREAMS_GROUP_TARGET_ASSIGNMENT_RESOLVED_TOPIC_IDS,
)
SHARE_GROUP_STATE_SCHEMAS: tuple[RecordSchema, ...] = (SHARE_SNAPSHOT, SHARE_UPDATE)
