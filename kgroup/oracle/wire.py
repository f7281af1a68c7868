"""Raw Kafka requests to any endpoint, for scenarios no client library sends: a request built
from plain data (`kgroup.protocol.request`), framed, answered, decoded.

    with Wire("127.0.0.1:9092", client_id="raw") as w:
        r = w.call("StreamsGroupHeartbeat", 1, group_id="app", member_id="m1", member_epoch=0, ...)
"""
from __future__ import annotations

import socket
import struct
import time
from typing import Any

from kgroup.protocol import request, response_class
from kgroup.serve.framing import decode_response, encode_request


class Wire:
    """One connection speaking raw Kafka frames; every read is bounded by `timeout`."""

    def __init__(self, bootstrap: str, *, client_id: str = "kgroup-raw", timeout: float = 30.0) -> None:
        host, port = bootstrap.rsplit(":", 1)
        self.sock = socket.create_connection((host, int(port)), timeout=timeout)
        self.client_id = client_id
        self.correlation_id = 0

    def call(self, api: str | int, version: int, **data: Any) -> Any:
        """Send one request and return the decoded answer (its correlation id checked)."""
        self.correlation_id += 1
        self.sock.sendall(encode_request(self.correlation_id, request(api, version, **data), client_id=self.client_id))
        (size,) = struct.unpack(">i", self._read(4))
        correlation_id, answer = decode_response(self._read(size), response_class(api, version))
        if correlation_id != self.correlation_id:
            raise ConnectionError(f"answer to request {correlation_id}, expected {self.correlation_id}")
        return answer

    def find_coordinator(self, group_id: str, timeout: float) -> None:
        """FindCoordinator for the group until it is answered without error, as a client does
        first (Kafka creates `__consumer_offsets` on the first one); TimeoutError after `timeout` s."""
        deadline = time.monotonic() + timeout
        while self.call("FindCoordinator", 4, key_type=0, coordinator_keys=[group_id]).coordinators[0].error_code:
            if time.monotonic() > deadline:
                raise TimeoutError(f"no coordinator for {group_id} in {timeout:.0f} s")
            time.sleep(0.2)

    def _read(self, n: int) -> bytes:
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("the endpoint closed the connection")
            data += chunk
        return data

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> "Wire":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
