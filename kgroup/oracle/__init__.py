"""Apache Kafka beside kgroup: the real broker and its tools as a test oracle.

`KafkaBroker` runs Apache Kafka (`KAFKA_VERSION`) on loopback from jars Maven fetches into the
user's Maven cache; `kgroup.oracle.compare` runs one real-client scenario against it and against
`kgroup serve` and lists every difference — in what the clients saw, in the `__consumer_offsets`
records, in what Kafka's own dump tool and group tools print.

Java 17 and Maven are needed only here: nothing else in kgroup imports this package.
"""
from kgroup.oracle.kafka import KAFKA_VERSION, ENABLE_HINT, KafkaBroker, KafkaUnavailable, kafka_classpath

__all__ = ["KAFKA_VERSION", "ENABLE_HINT", "KafkaBroker", "KafkaUnavailable", "kafka_classpath"]
