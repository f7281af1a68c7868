"""StreamsGroupDescribeResponse version 1 (kio has version 0 only), built from
`message/StreamsGroupDescribeResponse.json`: the message's class and its structs', by name."""
from kgroup.protocol.schema.builder import message_classes

globals().update(message_classes("StreamsGroupDescribeResponse", 1, __name__))
