"""KIP-932 share groups.

Three parts share the work, as in Kafka, each in its own module:

- the **group coordinator** side: membership and assignment (ShareGroupHeartbeat,
  ShareGroupDescribe, records 10-15 in `__consumer_offsets`);
- the **share-partition leader**: the in-flight records of each share-partition (states,
  delivery counts, acquisition locks; soft state) and ShareFetch/ShareAcknowledge;
- the **share coordinator**: the durable share-partition state (ShareSnapshot/ShareUpdate in
  `__share_group_state`) behind the Initialize/Read/Write/Delete share-group-state APIs.

`persister` is the boundary between the last two.
"""
from __future__ import annotations

from . import fetch, offsets, protocol, replay  # noqa: E402,F401  (register handlers and replays)
