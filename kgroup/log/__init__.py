"""kgroup.log: Kafka record batches, compression, segment files and the embedded offsets log.

    from kgroup.log import OffsetsLog, read_segment, encode_batch, partition_for

Layers: `compression` (codecs with Kafka's framings), `batch` (magic-2 batches and the
resynchronising reader), `legacy` (magic 0/1 message sets), `segment` (.log/.index/.timeindex
files), `partitioner` (which partition a group lives on) and `embedded` (`OffsetsLog`).
"""
from .batch import (LOG_OVERHEAD, V2_HEADER_SIZE, encode_batch, encode_control_batch, encode_records, iter_records,
                    read_batches)
from .compression import Compression, CompressionError, compress, decompress
from .embedded import LogEntry, OffsetsLog
from .legacy import encode_message, encode_message_set
from .model import (NO_PARTITION_LEADER_EPOCH, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, NO_SEQUENCE, NO_TIMESTAMP,
                    ControlMarker, ControlType, CorruptBatch, CorruptBatchError, LogRecord, RecordBatch, TimestampType)
from .partitioner import (java_string_hashcode, kafka_uuid_str, parse_kafka_uuid, partition_for, share_partition_key,
                          share_state_partition_for)
from .segment import (INDEX_INTERVAL_BYTES, parse_partition_dir_name, parse_segment_file_name, partition_dir_name,
                      read_offset_index, read_partition_dir, read_segment, read_time_index, segment_file_name,
                      segment_files, write_segment)

__all__ = [
    # compression
    "Compression", "CompressionError", "compress", "decompress",
    # batches
    "LogRecord", "RecordBatch", "CorruptBatch", "CorruptBatchError", "ControlMarker", "ControlType",
    "TimestampType", "encode_batch", "encode_control_batch", "encode_records", "read_batches", "iter_records",
    "LOG_OVERHEAD", "V2_HEADER_SIZE", "NO_PRODUCER_ID", "NO_PRODUCER_EPOCH", "NO_SEQUENCE", "NO_TIMESTAMP",
    "NO_PARTITION_LEADER_EPOCH",
    # legacy message sets
    "encode_message", "encode_message_set",
    # segments
    "segment_file_name", "parse_segment_file_name", "write_segment", "read_segment", "read_partition_dir",
    "segment_files", "partition_dir_name", "parse_partition_dir_name", "read_offset_index", "read_time_index",
    "INDEX_INTERVAL_BYTES",
    # partitioning
    "java_string_hashcode", "partition_for", "share_state_partition_for", "share_partition_key",
    "kafka_uuid_str", "parse_kafka_uuid",
    # embedded log
    "OffsetsLog", "LogEntry",
]
