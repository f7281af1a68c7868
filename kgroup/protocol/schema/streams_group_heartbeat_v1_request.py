"""StreamsGroupHeartbeatRequest version 1 (kio has version 0 only), built from
`message/StreamsGroupHeartbeatRequest.json`: the message's class and its structs', by name."""
from kgroup.protocol.schema.builder import message_classes

globals().update(message_classes("StreamsGroupHeartbeatRequest", 1, __name__))
