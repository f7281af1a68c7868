"""API versions kio does not have, owned by kgroup: each message is defined once, in Kafka's own
JSON format (`message/<Name>.json`, after Kafka's `common/message/`), and `builder` makes from it
the classes kio's generator would (frozen dataclasses with `kafka_type` field metadata, the
`__version__`/`__flexible__`/`__api_key__`/`__header_schema__` class variables), so that kio's
readers and writers, `kgroup.protocol.build` and the server's size guard take them as they take
kio's own. `<api>_v<N>_request.py` and `<api>_v<N>_response.py` hold the classes of one version.

Adding a version: bring the API's two JSON definitions up to that version (Kafka's files, with
the versions kgroup serves), add the two modules (three lines each, like their neighbours) and
list them in `SCHEMAS`; an API kio does not know at all also gets its name in `API_NAMES`.
`kgroup.protocol` looks here before kio, and the server's ApiVersions advertises what it finds.
"""
from __future__ import annotations

import importlib
from typing import Any

#: APIs kio does not know: api key -> kio-style (snake_case) name
API_NAMES: dict[int, str] = {
    93: "streams_group_topology_description_update",   # KIP-1331
}

#: (api key, version) -> (request class, response class), as "module:Class" under this package
SCHEMAS: dict[tuple[int, int], tuple[str, str]] = {
    # KIP-1331 (topology descriptions) and KIP-1357 (AssignorName): Kafka 4.4.0 serves v0-1
    (88, 1): ("streams_group_heartbeat_v1_request:StreamsGroupHeartbeatRequest",
              "streams_group_heartbeat_v1_response:StreamsGroupHeartbeatResponse"),
    (89, 1): ("streams_group_describe_v1_request:StreamsGroupDescribeRequest",
              "streams_group_describe_v1_response:StreamsGroupDescribeResponse"),
    (93, 0): ("streams_group_topology_description_update_v0_request:StreamsGroupTopologyDescriptionUpdateRequest",
              "streams_group_topology_description_update_v0_response:StreamsGroupTopologyDescriptionUpdateResponse"),
}


def versions(api_key: int) -> list[int]:
    """The versions of an API this package adds."""
    return [v for (k, v) in SCHEMAS if k == api_key]


def _load(path: str) -> Any:
    module, name = path.split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), name)


def request_class(api_key: int, version: int) -> type | None:
    entry = SCHEMAS.get((api_key, version))
    return None if entry is None else _load(entry[0])


def response_class(api_key: int, version: int) -> type | None:
    entry = SCHEMAS.get((api_key, version))
    return None if entry is None else _load(entry[1])
