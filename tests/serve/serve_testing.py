"""Helpers of the serve tests: a bare wire client, and bounded waiting."""
from __future__ import annotations

import socket
import struct
import time
from typing import Any

from kgroup.oracle.wire import Wire as RawWire
from kgroup.protocol import request, response_class
from kgroup.serve import Server
from kgroup.serve.framing import decode_response, encode_request


class Wire(RawWire):
    """`kgroup.oracle.wire.Wire` on a test server, with sends and answers apart (pipelining)."""

    def __init__(self, server: Server, timeout: float = 10.0) -> None:
        super().__init__(f"127.0.0.1:{server.port}", client_id="kgroup", timeout=timeout)

    def send(self, api: str | int, version: int, **data: Any) -> int:
        self.correlation_id += 1
        self.sock.sendall(encode_request(self.correlation_id, request(api, version, **data)))
        return self.correlation_id

    def receive(self, api: str | int, version: int) -> tuple[int, Any]:
        (size,) = struct.unpack(">i", self.read_exactly(4))
        return decode_response(self.read_exactly(size), response_class(api, version))

    def commit(self, group: str, partition: int, offset: int, *, topic: str = "orders", metadata: str = ""):
        """A standalone (admin-style) OffsetCommit v9 of one partition: the response."""
        return self.call("OffsetCommit", 9, group_id=group, generation_id_or_member_epoch=-1, member_id="",
                         group_instance_id=None, topics=[{"name": topic, "partitions": [
                             {"partition_index": partition, "committed_offset": offset, "committed_leader_epoch": -1,
                              "committed_metadata": metadata}]}])

    def read_exactly(self, n: int) -> bytes:
        return self._read(n)

    def closed_by_server(self, within: float = 5.0) -> bool:
        """True when the server closes this connection within `within` seconds."""
        self.sock.settimeout(within)
        try:
            return self.sock.recv(1) == b""
        except socket.timeout:
            return False
        except ConnectionError:
            return True

def wait_until(predicate: Any, timeout: float, what: str) -> None:
    """Poll `predicate` until true; fail with `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)


def written(server: Server, *kinds: str) -> list[Any]:
    """The records of these types (class names, e.g. "OffsetCommit") in the coordinator's
    `__consumer_offsets` log, in log order; read on the server's loop."""
    def collect() -> list[Any]:
        return [e.record for e in server.coordinator.log
                if e.record is not None and (not kinds or type(e.record).__name__ in kinds)]
    return server.call(collect)


def last_commits(server: Server, group: str) -> dict[tuple[str, int], int]:
    """(topic, partition) -> offset of the group's last OffsetCommit record of each partition."""
    out = {}
    for r in written(server, "OffsetCommit"):
        if r.key.group == group and r.value is not None:
            out[(r.key.topic, r.key.partition)] = r.value.offset
    return out


def share_group_reads_from_earliest(bootstrap: str, group: str) -> None:
    """Set `share.auto.offset.reset=earliest` on `group` with librdkafka's AdminClient
    (IncrementalAlterConfigs on a GROUP resource): share groups start at the latest offset otherwise."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    entry = ConfigEntry("share.auto.offset.reset", "earliest", incremental_operation=AlterConfigOpType.SET)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    for future in admin.incremental_alter_configs([ConfigResource(ResourceType.GROUP, group,
                                                                  incremental_configs=[entry])]).values():
        future.result(timeout=10)
