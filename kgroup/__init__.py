"""kgroup: an in-process, sans-IO re-implementation of Apache Kafka's group coordinator.

    from kgroup import Coordinator, Cluster
    from kgroup.protocol import request
"""
from kgroup.clock import ManualClock
from kgroup.cluster import Cluster
from kgroup.config import Config
from kgroup.coordinator import Coordinator
from kgroup.errors import ConfigError, ErrorCode, KafkaError
from kgroup.runtime import PendingResponse, ResponseNotReadyError

__all__ = ["Coordinator", "Cluster", "Config", "ManualClock", "ErrorCode", "KafkaError", "ConfigError",
           "PendingResponse", "ResponseNotReadyError"]
__version__ = "0.1.0"
