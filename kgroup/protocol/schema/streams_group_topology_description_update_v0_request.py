"""StreamsGroupTopologyDescriptionUpdateRequest version 0 (kio does not have this API), built from
`message/StreamsGroupTopologyDescriptionUpdateRequest.json`: the message's class and its structs', by name."""
from kgroup.protocol.schema.builder import message_classes

globals().update(message_classes("StreamsGroupTopologyDescriptionUpdateRequest", 0, __name__))
