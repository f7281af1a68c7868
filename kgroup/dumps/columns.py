"""The row columns of a dump scan: names, types and Arrow schema, shared by `ranges` (which
plans and runs the scan) and `columnar` (which decodes runs of batches column-wise)."""
from __future__ import annotations

from typing import Any

import pyarrow as pa

__all__ = ["COLUMNS", "CONST_COLUMNS", "arrow_schema", "const_arrays"]

#: The columns of a row, in order, with their type (Spark names: string, short, int, long, boolean).
COLUMNS: tuple[tuple[str, str], ...] = (
    ("source", "string"),            # file the row was read from
    ("kind", "string"),              # segment | dump-log | console
    ("topic", "string"),             # __consumer_offsets | __share_group_state
    ("partition", "int"),            # partition of that topic (null when unknown)
    ("offset", "long"),
    ("position", "long"),            # byte position of the batch (segments) / of a corrupt span
    ("line", "long"),                # 1-based line (text dumps)
    ("timestamp", "long"),
    ("record_type", "string"),       # OffsetCommit, GroupMetadata, ... (null: control/unknown/corrupt)
    ("record_type_id", "short"),     # the key's int16 type prefix
    ("key", "string"),               # the key as Kafka prints it: {"type":1,"data":{...}}
    ("group_id", "string"),
    ("member_id", "string"),
    ("topic_name", "string"),        # the committed topic (OffsetCommit)
    ("topic_partition", "int"),      # the committed / share partition
    ("topic_id", "string"),          # Kafka's base64 uuid (share-group state keys, OffsetCommit v4)
    ("committed_offset", "long"),
    ("leader_epoch", "int"),
    ("commit_timestamp", "long"),
    ("generation", "int"),           # classic generation, group epoch, or target assignment epoch
    ("member_epoch", "int"),
    ("tombstone", "boolean"),
    ("txn", "string"),               # none | committed | aborted | open
    ("producer_id", "long"),
    ("control", "string"),           # COMMIT / ABORT / ... for control records
    ("json", "string"),              # record.to_json(), Kafka's console-formatter JSON
    ("error", "string"),             # why the row has no decoded record, with its position
    ("problem", "string"),           # null for entries; corrupt_span / garbage_line otherwise
    ("corrupt_bytes", "long"),       # length of a corrupt span
)

#: The columns that are the same for every row of a segment task (its file, kind, topic, partition).
CONST_COLUMNS = ("source", "kind", "topic", "partition")

_ARROW_SCHEMA = None


def arrow_schema() -> Any:
    """`COLUMNS` as a pyarrow schema."""
    global _ARROW_SCHEMA
    if _ARROW_SCHEMA is None:
        types = {"string": pa.string(), "short": pa.int16(), "int": pa.int32(), "long": pa.int64(),
                 "boolean": pa.bool_()}
        _ARROW_SCHEMA = pa.schema([pa.field(n, types[t]) for n, t in COLUMNS])
    return _ARROW_SCHEMA


def const_arrays(const: tuple, n: int) -> dict[str, Any]:
    """The `CONST_COLUMNS` of `n` rows that all have the values `const`, as Arrow arrays."""
    schema = arrow_schema()
    cols: dict[str, Any] = {}
    for name, v in zip(CONST_COLUMNS, const):
        typ = schema.field(name).type
        cols[name] = pa.nulls(n, typ) if v is None else pa.repeat(pa.scalar(v, typ), n)
    return cols
