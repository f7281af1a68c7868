"""Errors: Kafka error codes inside the coordinator, typed exceptions at the library edge."""
from __future__ import annotations

from kio.schema.errors import ErrorCode

__all__ = ["ErrorCode", "KafkaError", "ConfigError", "UnsupportedRequestError"]


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
