"""Round trips for every record type and value version (property-based)."""
from __future__ import annotations

import json
import pickle

from hypothesis import HealthCheck, given, settings

from kgroup.records import RECORD_TYPES, SHARE_STATE_RECORD_TYPES, decode_record
from records_strategies import every_record_version, records


@every_record_version
def test_round_trip(topic, cls, version):
    @settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
    @given(records(cls, version))
    def check(rec):
        key, value = rec.encode()
        assert key[:2] == cls.TYPE.to_bytes(2, "big")
        back = decode_record(key, value, topic=topic)
        assert type(back) is cls
        assert back == rec
        assert back.encode() == (key, value)
        # the JSON text is valid JSON and encodes json_obj()
        doc = back.to_json()
        assert json.loads(doc) == back.json_obj() == doc
        assert pickle.loads(pickle.dumps(back)) == back

    check()


def test_every_type_is_covered():
    assert sorted(RECORD_TYPES) == list(range(25))
    assert sorted(SHARE_STATE_RECORD_TYPES) == [0, 1]
