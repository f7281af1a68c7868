"""StreamsGroupHeartbeat and StreamsGroupDescribe on the wire: ApiVersions advertises v0-1 as
Kafka 4.4.0 does, a v1 client gets v1 answers (AssignorName, AcceptableRecoveryLag) and a v0
client still gets v0 ones."""
from __future__ import annotations

from kgroup.errors import ErrorCode

JOIN = dict(group_id="app", member_id="A", member_epoch=0, endpoint_information_epoch=0, rebalance_timeout=30_000,
            topology={"epoch": 0, "subtopologies": [{"subtopology_id": "0", "source_topics": ["orders"]}]},
            active_tasks=[], standby_tasks=[], warmup_tasks=[], process_id="p", client_tags=[])


def test_api_versions_advertise_the_v1_streams_apis(server, wire):
    r = wire.call("ApiVersions", 3, client_software_name="t", client_software_version="1")
    table = {k.api_key: (k.min_version, k.max_version) for k in r.api_keys}
    assert table[88] == (0, 1) and table[89] == (0, 1)
    assert table[93] == (0, 0)    # StreamsGroupTopologyDescriptionUpdate, as Kafka 4.4.0 advertises it


def test_v1_and_v0_clients_each_get_their_version(server, wire):
    r = wire.call("StreamsGroupHeartbeat", 1, **JOIN)
    assert type(r).__version__ == 1 and r.error_code == ErrorCode.none
    assert r.acceptable_recovery_lag == 10_000 and r.topology_description_required is False
    r0 = wire.call("StreamsGroupHeartbeat", 0, group_id="app", member_id="A", member_epoch=r.member_epoch,
                   endpoint_information_epoch=r.endpoint_information_epoch)
    assert type(r0).__version__ == 0 and r0.error_code == ErrorCode.none
    assert not hasattr(r0, "topology_description_required")

    d = wire.call("StreamsGroupDescribe", 1, group_ids=["app"], include_authorized_operations=False,
                  include_topology_description=True).groups[0]
    assert (d.error_code, d.group_state, d.assignor_name) == (ErrorCode.none, "Stable", "sticky")
    assert (d.topology_description_status, d.topology_description) == (1, None)
    d0 = wire.call("StreamsGroupDescribe", 0, group_ids=["app"], include_authorized_operations=False).groups[0]
    assert type(d0).__version__ == 0 and d0.group_state == "Stable"

    u = wire.call("StreamsGroupTopologyDescriptionUpdate", 0, group_id="app", member_id="A", topology_epoch=0,
                  topology_description={"subtopologies": [], "global_stores": []})
    assert u.error_code == ErrorCode.unsupported_version
