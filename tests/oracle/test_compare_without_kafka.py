"""The harness's own parts that need no broker: what is normalised, and nothing more, and how a
missing Java is reported."""
from __future__ import annotations

import json

import pytest

from kgroup.oracle import ENABLE_HINT, KafkaUnavailable, kafka
from kgroup.oracle.compare import Difference, _record_differences, normalise, normalise_table, records_by_group
from kgroup.records import decode_record


def test_member_and_topic_ids_times_and_hashes_are_normalised_and_nothing_else():
    doc = {"memberId": "abc", "topicId": "T-random", "commitTimestamp": 1795853700607, "expireTimestamp": -1,
           "metadataHash": -4799478171332041826, "offset": 10, "clientId": "c1"}
    assert normalise(doc) == {"memberId": "M1", "topicId": "T1", "commitTimestamp": "<time>", "expireTimestamp": -1,
                              "metadataHash": "<hash>", "offset": 10, "clientId": "c1"}
    assert normalise({"offset": 10}) != normalise({"offset": 11})


def test_a_tools_table_blanks_member_ids_and_the_coordinator_and_sorts_its_rows():
    kafka = ("\nGROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS\n"
             "g yV4XFPGBQEWwRDKPZ+ElUQ /127.0.0.1 c2 2\ng Ahx+YgaiQbGFjapZLxERMg /127.0.0.1 c1 2\n")
    kgroup = ("GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS\n"
              "g 5YpQrIHmSm6ilqv1aIfGMA /127.0.0.1 c1 2\ng aABd1qi+Rxa8toPFRTmeQw /127.0.0.1 c2 2\n")
    assert normalise_table(kafka) == normalise_table(kgroup)
    assert normalise_table(kafka)[1] == ["g", "<member>", "/127.0.0.1", "c1", "2"]
    assert normalise_table(kafka) != normalise_table(kgroup.replace("c2 2", "c2 3"))


class _Entry:
    def __init__(self, record):
        self.record = record


def _member_metadata(member_id: str, client_id: str):
    from kgroup import records as R
    return R.ConsumerGroupMemberMetadata(
        R.ConsumerGroupMemberMetadataKey(group_id="g", member_id=member_id),
        R.ConsumerGroupMemberMetadataValue(client_id=client_id, client_host="/127.0.0.1",
                                           subscribed_topic_names=["t"], classic_member_metadata=None))


def _target(member_id: str, partitions: list[int]):
    from kgroup import records as R
    V = R.ConsumerGroupTargetAssignmentMemberValue
    return R.ConsumerGroupTargetAssignmentMember(
        R.ConsumerGroupTargetAssignmentMemberKey(group_id="g", member_id=member_id),
        V(topic_partitions=[V.TopicPartition(topic_id=R.ZERO_UUID, partitions=partitions)]))


def test_members_are_named_after_their_client_ids_and_a_hash_ordered_run_is_put_in_one_order():
    kafka = [_member_metadata("x1", "c1"), _member_metadata("x2", "c2"), _target("x2", [1]), _target("x1", [0])]
    kgroup = [_member_metadata("y1", "c1"), _member_metadata("y2", "c2"), _target("y1", [0]), _target("y2", [1])]
    k, g = (records_by_group(map(_Entry, rs), {"g"}) for rs in (kafka, kgroup))
    assert k == g and k["g"][0]["key"]["data"]["memberId"] == "M:c1"
    swapped = [_member_metadata("y1", "c1"), _member_metadata("y2", "c2"), _target("y1", [1]), _target("y2", [0])]
    diffs = _record_differences(k, records_by_group(map(_Entry, swapped), {"g"}))
    assert diffs and all(isinstance(d, Difference) and d.aspect == "records" for d in diffs)


def test_the_records_kafka_wrote_decode_and_encode_byte_for_byte():
    # bytes Kafka 4.4.0 wrote for a librdkafka KIP-848 member (its __consumer_offsets segment):
    # the ClassicMemberMetadata tag is present and null (01 00 01 00)
    key = bytes.fromhex("00050004673834380016537032326f4433455362797a51357a52734a786d5941")
    value = bytes.fromhex("000000000872646b61666b610b2f3132372e302e302e3102076f726465727301000493e00001000100")
    record = decode_record(key, value)
    assert record.value.classic_member_metadata is None
    assert record.encode() == (key, value)
    assert json.loads(record.to_json())["value"]["data"]["classicMemberMetadata"] is None


def test_without_java_the_oracle_says_how_to_get_it(monkeypatch, tmp_path):
    monkeypatch.setattr(kafka.shutil, "which", lambda name: None)
    monkeypatch.setenv("KGROUP_CACHE", str(tmp_path))
    with pytest.raises(KafkaUnavailable) as e:
        kafka.kafka_classpath()
    assert "`java` is not on PATH" in str(e.value) and ENABLE_HINT in str(e.value)


def test_a_cooperative_members_view_at_join_is_not_compared_but_its_topics_are():
    """The owned partitions and generation a cooperative-sticky member sends depend on whether it
    read its last SyncGroup answer before rejoining (the client's timing): normalised away."""
    import base64

    from kgroup.oracle.compare import _cooperative_subscription
    from kgroup.protocol.consumer_protocol import Subscription, encode_subscription

    def b64(sub):
        return base64.b64encode(encode_subscription(sub, 3)).decode()
    before = b64(Subscription(("orders",), generation_id=-1))
    after = b64(Subscription(("orders",), user_data=bytes(8), owned_partitions=(("orders", 2),), generation_id=2))
    other = b64(Subscription(("payments",), generation_id=-1))
    assert _cooperative_subscription(before) == _cooperative_subscription(after)
    assert _cooperative_subscription(before) != _cooperative_subscription(other)


def test_a_cooperative_leader_echoing_a_members_user_data_is_that_members_view_at_join():
    """librdkafka's leader writes each member's subscription user data back into its assignment,
    so the assignment carries the member's view at join too (CI: c2's gen-3 assignment held an
    empty user data against Kafka and [] + generation 2 against kgroup). The partitions are still
    compared, and user data the leader did not echo stays as it is."""
    import base64

    from kgroup.oracle.compare import _cooperative_assignment
    from kgroup.protocol.consumer_protocol import Assignment, Subscription, encode_assignment, encode_subscription

    def b64(raw):
        return base64.b64encode(raw).decode()

    def joined(user_data):
        return b64(encode_subscription(Subscription(("orders",), user_data=user_data), 3))

    def assigned(partitions, user_data):
        return b64(encode_assignment(Assignment(partitions, user_data), 0))
    early, late = bytes(0), bytes(7) + b"\x02"
    assert (_cooperative_assignment(assigned([("orders", 0)], early), joined(early))
            == _cooperative_assignment(assigned([("orders", 0)], late), joined(late)))
    assert (_cooperative_assignment(assigned([("orders", 0)], early), joined(early))
            != _cooperative_assignment(assigned([("orders", 1)], early), joined(early)))
    not_echoed = assigned([("orders", 0)], b"leader's own")
    assert _cooperative_assignment(not_echoed, joined(early)) == not_echoed
