"""aiokafka, unmodified, against kgroup serve: produce, a classic group member consuming and
committing; what it saw and what kgroup's coordinator wrote. Loopback only, bounded in time."""
from __future__ import annotations

import asyncio

import pytest
from serve_testing import last_commits, written

aiokafka = pytest.importorskip("aiokafka")


async def _produce_and_consume(bootstrap: str) -> list[bytes]:
    producer = aiokafka.AIOKafkaProducer(bootstrap_servers=bootstrap, compression_type="gzip")
    await producer.start()
    try:
        for i in range(8):
            await producer.send_and_wait("orders", b"a%d" % i, partition=i % 2)
    finally:
        await producer.stop()
    consumer = aiokafka.AIOKafkaConsumer("orders", bootstrap_servers=bootstrap, group_id="aio", client_id="aio-1",
                                         auto_offset_reset="earliest", enable_auto_commit=False)
    await consumer.start()
    got: list[bytes] = []
    try:
        async with asyncio.timeout(45):
            async for msg in consumer:
                got.append(msg.value)
                if len(got) == 8:
                    break
        await consumer.commit()
    finally:
        await consumer.stop()
    return got


def test_aiokafka_group_member_consumes_and_commits(served):
    got = asyncio.run(_produce_and_consume(served.bootstrap))
    assert sorted(got) == sorted(b"a%d" % i for i in range(8))
    assert last_commits(served, "aio") == {("orders", 0): 4, ("orders", 1): 4}
    members = [r.value.members for r in written(served, "GroupMetadata") if r.key.group == "aio" and r.value]
    assert any(m and m[0].client_id == "aio-1" for m in members)
