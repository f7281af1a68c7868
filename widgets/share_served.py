"""The share-partition strip (`widgets.share`) over a `kgroup serve` server's share group: one
picture per exchange that changed the share-partition.

    strip = ServedShareStrip(server, "sg", "orders")  # create before the consumers fetch

Acquisition locks are the share-partition leader's soft state, which no log holds, so the
strip reads the live leader after each exchange (`Server.observe`) rather than looking back.
"""
from __future__ import annotations

import html
from typing import Any

from widgets.share import partition_rows, strip_chart, strip_frame, strip_html
from widgets.tables import mimebundle

_SHARE_APIS = frozenset({"ShareFetch", "ShareAcknowledge", "ShareGroupHeartbeat"})
_ACK_WORDS = {0: "gap", 1: "accepted", 2: "released", 3: "rejected", 4: "renewed"}


def _batch_ranges(pairs: list[tuple[int, int]]) -> str:
    """Acknowledgement batches [(first, last)] as "3-5, 9"."""
    return ", ".join(f"{a}-{z}" if a != z else f"{a}" for a, z in pairs)


def _share_words(x: Any, topic_id: Any, partition: int) -> str:
    """What a share exchange did to one share-partition, from its request and answer."""
    who = x.client_id or "?"
    if x.api_key is None:
        return "the coordinator's timers (acquisition locks, sessions)"
    parts = []
    acks: dict[str, list[tuple[int, int]]] = {}
    for t in getattr(x.request, "topics", None) or ():
        if t.topic_id != topic_id:
            continue
        for p in t.partitions:
            if p.partition_index != partition:
                continue
            for b in getattr(p, "acknowledgement_batches", ()) or ():
                types = set(b.acknowledge_types) or {1}
                word = _ACK_WORDS.get(next(iter(types)), "acknowledged") if len(types) == 1 else "acknowledged"
                acks.setdefault(word, []).append((b.first_offset, b.last_offset))
    parts += [f"{word} {_batch_ranges(rs)}" for word, rs in acks.items()]
    if x.api == "ShareFetch" and x.response is not None:
        got = [(a.first_offset, a.last_offset, a.delivery_count)
               for t in x.response.responses if t.topic_id == topic_id
               for p in t.partitions if p.partition_index == partition for a in p.acquired_records]
        if got:
            parts.append("acquired " + ", ".join(f"{a}-{z} (delivery {n})" if a != z else f"{a} (delivery {n})"
                                                  for a, z, n in got))
    if x.api == "ShareGroupHeartbeat" and x.request.member_epoch == -1:
        parts.append("left the group (its locks released)")
    return f"{who}: {x.api}" + (" — " + "; ".join(parts) if parts else "")


class ServedShareStrip:
    """The share-partition strip (widgets.share: one cell per offset with its state, delivery
    count and lock holder; SPSO and SPEO marked) over a served share group, one picture per
    exchange that changed it.

        strip = ServedShareStrip(server, "sg", "orders", 0)   # before the consumers fetch
        ...                                                   # real ShareConsumers fetch, acknowledge
        strip.refresh(); strip                                # ◀ ▶ through what each exchange did

    Acquired records and their locks are the share-partition leader's soft state, which no log
    holds (`__share_group_state` keeps the durable states only), so the strip watches the live
    leader: it asks the server (`Server.observe`) to read it right after every exchange of the
    group and every timer round; what changed becomes a picture, labelled with what the
    exchange said (acquired, accepted, released, rejected). Lock holders are named by the
    client id of the consumer holding them. Pictures are taken from the moment it is created."""

    def __init__(self, server: Any, group_id: str, topic: str, partition: int = 0, *, before: int = 2,
                 after: int = 3, max_offsets: int = 200) -> None:
        import ipywidgets as W

        from kgroup.groups.share.partition import leaders

        self.server, self.group_id, self.topic, self.partition = server, group_id, topic, partition
        self.topic_id = server.call(server.coordinator.cluster.topic_id, topic)
        self.observer = f"share strip {group_id} {topic}-{partition}"
        names: dict[str, str] = {}
        last: list[Any] = [None]
        key = (group_id, self.topic_id, partition)

        def look(x: Any) -> Any:  # on the server's loop, right after exchange x
            if x.api_key is not None:
                if x.api not in _SHARE_APIS or getattr(x.request, "group_id", None) != group_id:
                    return None
                if getattr(x.request, "member_id", None) and x.client_id:
                    names[x.request.member_id] = x.client_id
            sp = leaders(server.coordinator).partitions.get(key)
            if sp is None or not sp.loaded:  # never load one here: that is the leader's to do
                if x.fault is not None:
                    last[0] = None   # its leader is gone: the next leader's first picture is news
                return None
            picture = self._picture(sp, names)
            if picture == last[0]:
                return None
            last[0] = picture
            return picture
        self.max_offsets, self.before, self.after = max_offsets, before, after
        self.pictures: list[dict] = []
        self._seen = 0
        #: faults recorded since the last picture: the next picture says they came before it
        self._faults: list[str] = []

        def start() -> None:  # on the loop: the picture as it stands, and watching from here
            server.observe(self.observer, look)  # on the loop too: no exchange falls in between
            exchanges = server.exchanges()
            self._seen = exchanges[-1].seq if exchanges else 0
            sp = leaders(server.coordinator).partitions.get(key)
            if sp is not None and sp.loaded:
                last[0] = self._picture(sp, names)
                self.pictures.append({"seq": self._seen, "at_ms": server.coordinator.now(), "api": None,
                                      "client": None, "what": "as it stood when the strip started watching",
                                      **last[0]})
        server.call(start)
        self.prev = W.Button(description="◀ prev")
        self.next = W.Button(description="next ▶")
        self.slider = W.IntSlider(min=0, max=0, value=0, description="step")
        # sized to its text: the default width cuts this description off
        self.reload = W.Button(description="load new exchanges", layout=W.Layout(width="auto"))
        self.out = W.HTML()
        self.prev.on_click(lambda _b: self.go(self.index - 1))
        self.next.on_click(lambda _b: self.go(self.index + 1))
        self.reload.on_click(lambda _b: self.refresh())
        self.slider.observe(lambda _c: self._show(), names="value")
        self.widget = W.VBox([W.HBox([self.prev, self.slider, self.next, self.reload]), self.out])
        self.refresh()

    def _picture(self, sp: Any, names: dict[str, str]) -> dict:
        rows = partition_rows(sp, names=names, before=self.before, after=self.after)[: self.max_offsets]
        return {"rows": rows, "spso": sp.spso, "speo": sp.speo}

    def refresh(self) -> None:
        """Take the pictures of the exchanges recorded since the last refresh."""
        exchanges = self.server.exchanges()
        for x in exchanges:
            if x.seq <= self._seen:
                continue
            picture = x.observed.get(self.observer)
            if x.fault is not None:   # a fault (a broker killed...) marks the next picture
                self._faults.append(x.fault)
            if picture is not None:
                # a fault of its own (a broker killed) is said by the fault alone
                what = None if x.api_key is None and x.fault is not None else _share_words(x, self.topic_id,
                                                                                             self.partition)
                if self._faults:   # the faults since the last picture, this exchange's own included
                    what = f"⚡ {'; '.join(self._faults)}" + (f" — {what}" if what else "")
                    self._faults = []
                self.pictures.append({"seq": x.seq, "at_ms": x.at_ms, "what": what, "api": x.api,
                                      "client": x.client_id, **picture})
        if exchanges:
            self._seen = max(self._seen, exchanges[-1].seq)
        at_end = self.slider.value >= self.slider.max
        self.slider.max = max(0, len(self.pictures) - 1)
        if at_end:
            self.slider.value = self.slider.max
        self._show()

    def stop(self) -> None:
        """Stop watching the leader (the pictures taken stay)."""
        self.server.observe(self.observer, None)

    @property
    def index(self) -> int:
        return self.slider.value

    def go(self, index: int) -> None:
        self.slider.value = max(0, min(len(self.pictures) - 1, index))

    def __len__(self) -> int:
        return len(self.pictures)

    def frame(self, index: int | None = None):
        """The picture's offsets as the strip draws them (offset, state, delivery_count, lock_holder)."""
        return strip_frame(self.pictures[self.index if index is None else index]["rows"])

    def timeline(self):
        """One row per picture: which exchange, SPSO, SPEO and how many offsets in each state."""
        import pandas as pd
        rows = []
        for i, p in enumerate(self.pictures):
            counts = self.frame(i)["state"].value_counts()
            rows.append({"step": i + 1, "exchange": p["seq"], "what": p["what"], "SPSO": p["spso"], "SPEO": p["speo"],
                         **{s: int(counts.get(s, 0)) for s in ("Available", "Acquired", "Acknowledged", "Archived")}})
        return pd.DataFrame(rows, columns=["step", "exchange", "what", "SPSO", "SPEO", "Available", "Acquired",
                                           "Acknowledged", "Archived"])

    def chart(self, index: int | None = None):
        """The picture as an altair strip."""
        p = self.pictures[self.index if index is None else index]
        return strip_chart(self.frame(index), spso=p["spso"], speo=p["speo"], title=p["what"])

    def to_html(self, index: int | None = None) -> str:
        if not self.pictures:
            return (f"<p>no picture of {html.escape(self.group_id)} {html.escape(self.topic)}-{self.partition} yet "
                    "(its share-partition has no leader until a consumer fetches)</p>")
        i = self.index if index is None else index
        p = self.pictures[i]
        return (f"<h4>Step {i + 1}/{len(self.pictures)}: {html.escape(p['what'])} "
                f"<small>(exchange #{p['seq']}, t={(p['at_ms'] - self.pictures[0]['at_ms']) / 1000:.1f} s)</small></h4>"
                + strip_html(self.frame(i), spso=p["spso"], speo=p["speo"]))

    def _show(self) -> None:
        self.prev.disabled = self.index == 0
        self.next.disabled = self.index >= len(self.pictures) - 1
        self.out.value = self.to_html()

    def _repr_mimebundle_(self, **kw):
        return mimebundle(self.widget, self.to_html(), **kw)


__all__ = ["ServedShareStrip"]
