"""`kgroup serve` from the shell: prints where it listens, serves, stops cleanly on SIGINT or
SIGTERM, and leaves segment files `kgroup dump` and `Coordinator.load` read."""
from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest
from serve_testing import Wire

from kgroup import Coordinator
from kgroup.cli import main
from kgroup.errors import ErrorCode
from kgroup.log.batch import encode_batch
from kgroup.log.segment import read_segment


class _At:
    """What `Wire` needs of a server: its port."""

    def __init__(self, port: int) -> None:
        self.port = port


def start(*args: str) -> tuple[subprocess.Popen, int]:
    proc = subprocess.Popen([sys.executable, "-m", "kgroup", "serve", "--port", "0", *args],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    line = proc.stdout.readline()  # the first line comes once the port is open
    assert line.startswith("kgroup serve: listening on 127.0.0.1:"), (line, proc.stderr.read() if proc.poll() else "")
    return proc, int(line.rsplit(":", 1)[1])


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_serve_until_a_signal_then_write_the_logs(tmp_path, sig):
    proc, port = start("--topic", "orders:3", "--topic", "audit", "--config", "offsets.topic.num.partitions=5",
                       "--log-dir", str(tmp_path))
    try:
        w = Wire(_At(port))
        topics = {t.name: len(t.partitions) for t in w.call("Metadata", 12, topics=None).topics}
        assert topics == {"orders": 3, "audit": 1}
        r = w.call("Produce", 9, acks=-1, timeout=1000, topic_data=[{"name": "orders", "partition_data": [
            {"index": 2, "records": encode_batch([(b"k", b"v", 1_700_000_000_000)], base_offset=0)}]}])
        assert r.responses[0].partition_responses[0].error_code == ErrorCode.none
        r = w.commit("cli-group", 2, 1, metadata="m")
        assert r.topics[0].partitions[0].error_code == ErrorCode.none
        w.close()
    finally:
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)
    assert proc.returncode == 0, err
    assert out.splitlines()[-1] == "kgroup serve: stopped"
    # the offsets log as segments a new coordinator loads from the directory
    c = Coordinator.load(tmp_path, config={"offsets.topic.num.partitions": 5})  # --config reached the coordinator
    assert c.log.num_partitions == 5
    assert (tmp_path / f"__consumer_offsets-{c.partition_for('cli-group')}").is_dir()
    assert [(r["group"], r["topic"], r["partition"], r["offset"]) for r in c.offsets_table()] == \
        [("cli-group", "orders", 2, 1)]
    # and the topic data as produced
    assert [r.value for b in read_segment(tmp_path / "orders-2" / "00000000000000000000.log") for r in b.records] \
        == [b"v"]


def test_a_second_run_on_the_log_dir_goes_on_where_the_first_stopped(tmp_path):
    """Groups, offsets, topics (with their ids) and data come back from the segment files."""
    proc, port = start("--topic", "orders:3", "--log-dir", str(tmp_path))
    try:
        w = Wire(_At(port))
        first = {t.name: t.topic_id for t in w.call("Metadata", 12, topics=None).topics}
        w.call("Produce", 9, acks=-1, timeout=1000, topic_data=[{"name": "orders", "partition_data": [
            {"index": 1, "records": encode_batch([(b"k", b"v0", 1_700_000_000_000)], base_offset=0)}]}])
        r = w.commit("again", 1, 1)
        assert r.topics[0].partitions[0].error_code == ErrorCode.none
        w.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    proc, port = start("--log-dir", str(tmp_path))
    try:
        assert proc.stdout.readline().startswith(f"kgroup serve: going on from {tmp_path}: ")
        w = Wire(_At(port))
        assert {t.name: t.topic_id for t in w.call("Metadata", 12, topics=None).topics} == first
        fetched = w.call("OffsetFetch", 8, groups=[{"group_id": "again", "topics": None}], require_stable=False)
        assert [(t.name, p.partition_index, p.committed_offset) for t in fetched.groups[0].topics
                for p in t.partitions] == [("orders", 1, 1)]
        r = w.call("Produce", 9, acks=-1, timeout=1000, topic_data=[{"name": "orders", "partition_data": [
            {"index": 1, "records": encode_batch([(b"k", b"v1", 1_700_000_000_001)], base_offset=0)}]}])
        assert r.responses[0].partition_responses[0].base_offset == 1   # after the first run's record
        w.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
    assert [r.value for b in read_segment(tmp_path / "orders-1" / "00000000000000000000.log") for r in b.records] \
        == [b"v0", b"v1"]


def test_bad_arguments_are_usage_errors(capsys):
    assert main(["serve", "--topic", "orders:0"]) == 2
    assert main(["serve", "--config", "no.such.config=1", "--port", "0"]) == 2
    assert "unknown group coordinator config" in capsys.readouterr().err
    assert main(["serve", "--fault", "Heartbeat colour=red"]) == 2
    assert "unknown key 'colour'" in capsys.readouterr().err
    assert main(["serve", "--kafka-version", "2.8"]) == 2
    assert "invalid choice: '2.8'" in capsys.readouterr().err
    assert main(["serve", "--brokers", "0"]) == 2


def test_three_brokers_answering_as_kafka_3_9_with_a_fault_rule():
    proc, port = start("--brokers", "3", "--kafka-version", "3.9", "--topic", "orders:3",
                       "--fault", "OffsetCommit error=NOT_COORDINATOR nth=1")
    try:
        w = Wire(_At(port))   # the last of the three ports
        md = w.call("Metadata", 12, topics=None)
        assert len(md.brokers) == 3 and {p.leader_id for p in md.topics[0].partitions} == {0, 1, 2}
        assert 76 not in {k.api_key for k in w.call("ApiVersions", 3).api_keys}   # no share groups in 3.9
        coordinator = w.call("FindCoordinator", 4, key_type=0, coordinator_keys=["g"]).coordinators[0]
        at = Wire(_At(coordinator.port))
        commit = dict(group_id="g", generation_id_or_member_epoch=-1, member_id="", group_instance_id=None,
                      topics=[{"name": "orders", "partitions": [{"partition_index": 0, "committed_offset": 1,
                                                                 "committed_leader_epoch": -1,
                                                                 "committed_metadata": ""}]}])
        codes = [at.call("OffsetCommit", 8, **commit).topics[0].partitions[0].error_code for _ in range(2)]
        assert codes == [ErrorCode.not_coordinator, ErrorCode.none]
        w.close()
        at.close()
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)


def test_a_taken_port_is_reported(capsys):
    proc, port = start()
    try:
        started = time.monotonic()
        assert main(["serve", "--port", str(port)]) == 2
        assert time.monotonic() - started < 10
        assert "cannot listen" in capsys.readouterr().err
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)
