"""Every `__consumer_offsets` (and `__share_group_state`) record type, byte-exact.

    from kgroup.records import decode_record, OffsetCommit, OffsetCommitKey, OffsetCommitValue

    rec = decode_record(key_bytes, value_bytes)      # typed record, e.g. OffsetCommit
    rec.key.group, rec.value.offset, rec.version      # snake_case schema fields
    rec.encode()                                      # -> (key_bytes, value_bytes)
    rec.to_json()                                     # Kafka's console-formatter JSON

    OffsetCommit(OffsetCommitKey(group="g", topic="t", partition=0),
                 OffsetCommitValue(offset=42, commit_timestamp=1718000000000))

Modules: `definitions` (the schemas, written out by hand), `schema` (the small
schema language), `codec` (compiled decoders/encoders/renderers), `structs`
(typed immutable struct classes), `records` (record classes, `decode_record`),
`jsondoc`, `uuids`, `errors`.
"""
from __future__ import annotations

from .errors import (RecordDecodeError, RecordEncodeError, RecordError, UnknownRecordTypeError,
                     UnsupportedVersionError)
from .jsondoc import JsonDoc
from .records import (CONSUMER_OFFSETS, RECORD_TYPES, SHARE_GROUP_STATE, SHARE_STATE_RECORD_TYPES,
                      CoordinatorRecord, clear_key_cache, decode_record, record_type_name)
from .records import (LegacyOffsetCommit, OffsetCommit, GroupMetadata, ConsumerGroupMetadata,
                      ConsumerGroupPartitionMetadata, ConsumerGroupMemberMetadata,
                      ConsumerGroupTargetAssignmentMetadata, ConsumerGroupTargetAssignmentMember,
                      ConsumerGroupCurrentMemberAssignment, ShareGroupPartitionMetadata, ShareGroupMemberMetadata,
                      ShareGroupMetadata, ShareGroupTargetAssignmentMetadata, ShareGroupTargetAssignmentMember,
                      ShareGroupCurrentMemberAssignment, ShareGroupStatePartitionMetadata,
                      ConsumerGroupRegularExpression, StreamsGroupMetadata, StreamsGroupPartitionMetadata,
                      StreamsGroupMemberMetadata, StreamsGroupTargetAssignmentMetadata,
                      StreamsGroupTargetAssignmentMember, StreamsGroupCurrentMemberAssignment, StreamsGroupTopology,
                      StreamsGroupTargetAssignmentResolvedTopicIds, ShareSnapshot, ShareUpdate)
from .structs import StructBase
from .uuids import ZERO_UUID, kafka_str_to_uuid, uuid_to_kafka_str

# Key and value struct classes (nested structs hang off them, e.g. GroupMetadataValue.MemberMetadata).
LegacyOffsetCommitKey = LegacyOffsetCommit.Key
LegacyOffsetCommitValue = LegacyOffsetCommit.Value
OffsetCommitKey = OffsetCommit.Key
OffsetCommitValue = OffsetCommit.Value
GroupMetadataKey = GroupMetadata.Key
GroupMetadataValue = GroupMetadata.Value
ConsumerGroupMetadataKey = ConsumerGroupMetadata.Key
ConsumerGroupMetadataValue = ConsumerGroupMetadata.Value
ConsumerGroupPartitionMetadataKey = ConsumerGroupPartitionMetadata.Key
ConsumerGroupPartitionMetadataValue = ConsumerGroupPartitionMetadata.Value
ConsumerGroupMemberMetadataKey = ConsumerGroupMemberMetadata.Key
ConsumerGroupMemberMetadataValue = ConsumerGroupMemberMetadata.Value
ConsumerGroupTargetAssignmentMetadataKey = ConsumerGroupTargetAssignmentMetadata.Key
ConsumerGroupTargetAssignmentMetadataValue = ConsumerGroupTargetAssignmentMetadata.Value
ConsumerGroupTargetAssignmentMemberKey = ConsumerGroupTargetAssignmentMember.Key
ConsumerGroupTargetAssignmentMemberValue = ConsumerGroupTargetAssignmentMember.Value
ConsumerGroupCurrentMemberAssignmentKey = ConsumerGroupCurrentMemberAssignment.Key
ConsumerGroupCurrentMemberAssignmentValue = ConsumerGroupCurrentMemberAssignment.Value
ShareGroupPartitionMetadataKey = ShareGroupPartitionMetadata.Key
ShareGroupPartitionMetadataValue = ShareGroupPartitionMetadata.Value
ShareGroupMemberMetadataKey = ShareGroupMemberMetadata.Key
ShareGroupMemberMetadataValue = ShareGroupMemberMetadata.Value
ShareGroupMetadataKey = ShareGroupMetadata.Key
ShareGroupMetadataValue = ShareGroupMetadata.Value
ShareGroupTargetAssignmentMetadataKey = ShareGroupTargetAssignmentMetadata.Key
ShareGroupTargetAssignmentMetadataValue = ShareGroupTargetAssignmentMetadata.Value
ShareGroupTargetAssignmentMemberKey = ShareGroupTargetAssignmentMember.Key
ShareGroupTargetAssignmentMemberValue = ShareGroupTargetAssignmentMember.Value
ShareGroupCurrentMemberAssignmentKey = ShareGroupCurrentMemberAssignment.Key
ShareGroupCurrentMemberAssignmentValue = ShareGroupCurrentMemberAssignment.Value
ShareGroupStatePartitionMetadataKey = ShareGroupStatePartitionMetadata.Key
ShareGroupStatePartitionMetadataValue = ShareGroupStatePartitionMetadata.Value
ConsumerGroupRegularExpressionKey = ConsumerGroupRegularExpression.Key
ConsumerGroupRegularExpressionValue = ConsumerGroupRegularExpression.Value
StreamsGroupMetadataKey = StreamsGroupMetadata.Key
StreamsGroupMetadataValue = StreamsGroupMetadata.Value
StreamsGroupMetadataValue41 = StreamsGroupMetadata.EARLIER_VALUES[0]  # Kafka 4.1's layout
StreamsGroupPartitionMetadataKey = StreamsGroupPartitionMetadata.Key
StreamsGroupPartitionMetadataValue = StreamsGroupPartitionMetadata.Value
StreamsGroupMemberMetadataKey = StreamsGroupMemberMetadata.Key
StreamsGroupMemberMetadataValue = StreamsGroupMemberMetadata.Value
StreamsGroupTargetAssignmentMetadataKey = StreamsGroupTargetAssignmentMetadata.Key
StreamsGroupTargetAssignmentMetadataValue = StreamsGroupTargetAssignmentMetadata.Value
StreamsGroupTargetAssignmentMemberKey = StreamsGroupTargetAssignmentMember.Key
StreamsGroupTargetAssignmentMemberValue = StreamsGroupTargetAssignmentMember.Value
StreamsGroupCurrentMemberAssignmentKey = StreamsGroupCurrentMemberAssignment.Key
StreamsGroupCurrentMemberAssignmentValue = StreamsGroupCurrentMemberAssignment.Value
StreamsGroupTopologyKey = StreamsGroupTopology.Key
StreamsGroupTopologyValue = StreamsGroupTopology.Value
StreamsGroupTargetAssignmentResolvedTopicIdsKey = StreamsGroupTargetAssignmentResolvedTopicIds.Key
StreamsGroupTargetAssignmentResolvedTopicIdsValue = StreamsGroupTargetAssignmentResolvedTopicIds.Value
ShareSnapshotKey = ShareSnapshot.Key
ShareSnapshotValue = ShareSnapshot.Value
ShareUpdateKey = ShareUpdate.Key
ShareUpdateValue = ShareUpdate.Value

__all__ = ["CONSUMER_OFFSETS", "SHARE_GROUP_STATE", "RECORD_TYPES", "SHARE_STATE_RECORD_TYPES", "CoordinatorRecord",
           "StructBase", "JsonDoc", "decode_record", "record_type_name", "clear_key_cache", "RecordError",
           "RecordDecodeError", "RecordEncodeError", "UnknownRecordTypeError", "UnsupportedVersionError", "ZERO_UUID",
           "uuid_to_kafka_str", "kafka_str_to_uuid", "LegacyOffsetCommit", "LegacyOffsetCommitKey",
           "LegacyOffsetCommitValue", "OffsetCommit", "OffsetCommitKey", "OffsetCommitValue", "GroupMetadata",
           "GroupMetadataKey", "GroupMetadataValue", "ConsumerGroupMetadata", "ConsumerGroupMetadataKey",
           "ConsumerGroupMetadataValue", "ConsumerGroupPartitionMetadata", "ConsumerGroupPartitionMetadataKey",
           "ConsumerGroupPartitionMetadataValue", "ConsumerGroupMemberMetadata", "ConsumerGroupMemberMetadataKey",
           "ConsumerGroupMemberMetadataValue", "ConsumerGroupTargetAssignmentMetadata",
           "ConsumerGroupTargetAssignmentMetadataKey", "ConsumerGroupTargetAssignmentMetadataValue",
           "ConsumerGroupTargetAssignmentMember", "ConsumerGroupTargetAssignmentMemberKey",
           "ConsumerGroupTargetAssignmentMemberValue", "ConsumerGroupCurrentMemberAssignment",
           "ConsumerGroupCurrentMemberAssignmentKey", "ConsumerGroupCurrentMemberAssignmentValue",
           "ShareGroupPartitionMetadata", "ShareGroupPartitionMetadataKey", "ShareGroupPartitionMetadataValue",
           "ShareGroupMemberMetadata", "ShareGroupMemberMetadataKey", "ShareGroupMemberMetadataValue",
           "ShareGroupMetadata", "ShareGroupMetadataKey", "ShareGroupMetadataValue",
           "ShareGroupTargetAssignmentMetadata", "ShareGroupTargetAssignmentMetadataKey",
           "ShareGroupTargetAssignmentMetadataValue", "ShareGroupTargetAssignmentMember",
           "ShareGroupTargetAssignmentMemberKey", "ShareGroupTargetAssignmentMemberValue",
           "ShareGroupCurrentMemberAssignment", "ShareGroupCurrentMemberAssignmentKey",
           "ShareGroupCurrentMemberAssignmentValue", "ShareGroupStatePartitionMetadata",
           "ShareGroupStatePartitionMetadataKey", "ShareGroupStatePartitionMetadataValue",
           "ConsumerGroupRegularExpression", "ConsumerGroupRegularExpressionKey", "ConsumerGroupRegularExpressionValue",
           "StreamsGroupMetadata", "StreamsGroupMetadataKey", "StreamsGroupMetadataValue",
           "StreamsGroupMetadataValue41", "StreamsGroupPartitionMetadata", "StreamsGroupPartitionMetadataKey",
           "StreamsGroupPartitionMetadataValue", "StreamsGroupMemberMetadata", "StreamsGroupMemberMetadataKey",
           "StreamsGroupMemberMetadataValue", "StreamsGroupTargetAssignmentMetadata",
           "StreamsGroupTargetAssignmentMetadataKey", "StreamsGroupTargetAssignmentMetadataValue",
           "StreamsGroupTargetAssignmentMember", "StreamsGroupTargetAssignmentMemberKey",
           "StreamsGroupTargetAssignmentMemberValue", "StreamsGroupCurrentMemberAssignment",
           "StreamsGroupCurrentMemberAssignmentKey", "StreamsGroupCurrentMemberAssignmentValue", "StreamsGroupTopology",
           "StreamsGroupTopologyKey", "StreamsGroupTopologyValue", "StreamsGroupTargetAssignmentResolvedTopicIds",
           "StreamsGroupTargetAssignmentResolvedTopicIdsKey", "StreamsGroupTargetAssignmentResolvedTopicIdsValue",
           "ShareSnapshot", "ShareSnapshotKey", "ShareSnapshotValue", "ShareUpdate", "ShareUpdateKey",
           "ShareUpdateValue"]
