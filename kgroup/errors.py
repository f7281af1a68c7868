"""Errors: Kafka error codes inside the coordinator, typed exceptions at the library edge."""
from __future__ import annotations

from kio.schema.errors import ErrorCode

__all__ = ["ErrorCode", "KafkaError", "ConfigError", "RecordTooLargeError", "UnsupportedRequestError", "operation_error"]


class KafkaError(Exception):
    """A Kafka error code raised inside a handler.

    The runtime turns it into the API's error response; it never leaves
    `Coordinator.handle`.
    """

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        self.code = code
        self.message = message
        super().__init__(f"{code.name.upper()}: {message}" if message else code.name.upper())


class ConfigError(ValueError):
    """An unknown configuration name or a value outside Kafka's bounds."""


class UnsupportedRequestError(TypeError):
    """`handle()` was given something that is not a request kgroup's coordinator serves."""


class RecordTooLargeError(KafkaError):
    """A write bigger than one batch of `__consumer_offsets` may be (Kafka's RecordTooLargeException):
    nothing of it is written."""

    def __init__(self, size: int, partition: int, limit: int) -> None:
        super().__init__(ErrorCode.message_too_large,
                         f"Message batch size is {size} bytes in append to partition __consumer_offsets-{partition} "
                         f"which exceeds the maximum configured size of {limit}.")


#: how the coordinator answers a write that failed (Kafka's CoordinatorOperationExceptionHelper):
#: storage-side errors become the coordinator errors a client knows how to retry, without a message
_OPERATION_ERRORS = {
    ErrorCode.network_exception: ErrorCode.coordinator_load_in_progress,
    ErrorCode.unknown_topic_or_partition: ErrorCode.coordinator_not_available,
    ErrorCode.not_enough_replicas: ErrorCode.coordinator_not_available,
    ErrorCode.request_timed_out: ErrorCode.coordinator_not_available,
    ErrorCode.not_leader_or_follower: ErrorCode.not_coordinator,
    ErrorCode.kafka_storage_error: ErrorCode.not_coordinator,
    ErrorCode.message_too_large: ErrorCode.unknown_server_error,
    ErrorCode.record_list_too_large: ErrorCode.unknown_server_error,
    ErrorCode.invalid_fetch_size: ErrorCode.unknown_server_error,
    ErrorCode.unknown_server_error: ErrorCode.unknown_server_error,
}


def operation_error(code: ErrorCode, message: str | None) -> tuple[ErrorCode, str | None]:
    """The error code and message a failed coordinator operation answers with: a mapped error
    loses its message; any other keeps both."""
    if code in _OPERATION_ERRORS:
        return _OPERATION_ERRORS[code], None
    return code, message
