"""Real clients in the existing widgets: a `kgroup serve` server's recorded exchanges as a
`Scenario`, so the `Stepper` walks a real client's rebalance exchange by exchange.

    server = Server(coordinator, record=True).start()
    ...                                    # real consumers join, rebalance, commit
    Stepper(served_scenario(server, group="billing"))
    RecordLogView(server.coordinator)      # the same records, filterable

Each step is one exchange the coordinator served (or one round of its timers that wrote
records): the request as the client sent it, the answer as kgroup sent it, the records it
wrote, and the state after it rebuilt by look-back (`Coordinator.as_of`, read on the server's
loop while it serves). Soft state (waiting JoinGroups, timers) is not recorded, as in any
look-back. widgets import kgroup, never the reverse.

The other widgets read the same history:

    served_reconciliation(server, "billing")          # KIP-848: the reconciliation grid, heartbeat by heartbeat
    strip = ServedShareStrip(server, "sg", "orders")  # share group: the share strip (create before fetching)

The grid's coordinator side is look-back too; the share strip's acquisition locks are the
leader's soft state, so it reads the live leader after each exchange (`Server.observe`).
"""
from __future__ import annotations

import html
import time
from typing import Any

from kgroup.errors import ErrorCode
from kgroup.protocol import ms
from kgroup.scenario import Scenario, Step
from widgets.reconciliation import (SERVER_STATE_WORDS, MemberView, ReconciliationSnapshot, ReconciliationView, fmt_tps,
                                    partition_names)
from widgets.record_log import log_row, mimebundle


def _group_of(request: Any) -> str | None:
    group = getattr(request, "group_id", None)
    if group is None and getattr(request, "groups", None):  # OffsetFetch v8+: batched groups
        first = request.groups[0]
        group = getattr(first, "group_id", None)
    return group


def _wrote_for(exchange: Any, group: str) -> bool:
    for record in exchange.records:
        key = record.key
        if getattr(key, "group", getattr(key, "group_id", None)) == group:
            return True
    return False


class ServedScenario(Scenario):
    """A `Scenario` over recorded exchanges; its look-backs go through `server.call`."""

    def __init__(self, server: Any, exchanges: list[Any]) -> None:
        super().__init__(server.coordinator)
        self.server = server
        self.exchanges = exchanges
        for i, x in enumerate(exchanges):
            if x.api_key is not None:
                label = f"{x.client_id}: {x.api}"
            else:
                label = f"fault: {x.fault}" if x.fault is not None else "the coordinator's timers"
            self.steps.append(Step(i, label, x.request, x.response, x.start_position, x.end_position, x.at_ms,
                                   fault=x.fault))

    def entries(self, index: int) -> list[Any]:
        return list(self.exchanges[index].written.get("__consumer_offsets", ()))

    def state_after(self, index: int) -> Any:
        return self.server.call(self.coordinator.as_of, self.steps[index].end_position)


def served_scenario(server: Any, *, group: str | None = None, since: int = 0, timers: bool = True) -> ServedScenario:
    """The server's recorded exchanges (`Server(..., record=True)`) from the `since`-th on, as
    a scenario for the `Stepper`; `group`: only the requests naming it (and the timer rounds
    that wrote its records); `timers=False` leaves the timer rounds out."""
    chosen = []
    for x in server.exchanges()[since:]:
        if x.api_key is None:
            if (timers and (group is None or _wrote_for(x, group))) or x.fault is not None:
                chosen.append(x)   # a fault (a moved coordinator, a broker killed) is every group's business
        elif group is None or _group_of(x.request) == group or _wrote_for(x, group):
            chosen.append(x)
    if not chosen:
        raise ValueError("no recorded exchange to step through (is the server recording? Server(..., record=True))")
    return ServedScenario(server, chosen)


# ---------------------------------------------------------------------------------------
# The reconciliation grid over a served KIP-848 group

#: the classic protocol's group APIs: a classic member of a consumer group (KIP-848 migration)
_CLASSIC_APIS = frozenset({"JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup"})
_FENCED = frozenset({ErrorCode.fenced_member_epoch, ErrorCode.unknown_member_id})


class _Client:
    """A real KIP-848 consumer as its heartbeats show it: the epoch it got, what it last said
    it owns, the assignment it was last sent."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.instance_id: str | None = None
        self.epoch: int | None = None
        self.owned: frozenset = frozenset()
        self.given: frozenset | None = None
        self.state = "joining"

    @property
    def running(self) -> bool:
        return self.state not in ("left", "fenced")


def _wire_tps(cluster: Any, topic_partitions: Any) -> frozenset:
    return partition_names(cluster, {tp.topic_id: tp.partitions for tp in topic_partitions})


def _heartbeat_words(cluster: Any, req: Any, resp: Any) -> tuple[str, str, bool]:
    """What a ConsumerGroupHeartbeat said and got, in the reconciliation widget's words."""
    parts = [f"epoch {req.member_epoch}"]
    if ms(req.rebalance_timeout) != -1:
        parts.append(f"rebalance timeout {ms(req.rebalance_timeout)} ms")
    if req.subscribed_topic_names is not None:
        parts.append("topics [" + ", ".join(req.subscribed_topic_names) + "]")
    if getattr(req, "subscribed_topic_regex", None) is not None:
        parts.append(f"regex {req.subscribed_topic_regex!r}")
    if req.server_assignor is not None:
        parts.append(f"assignor {req.server_assignor}")
    if req.topic_partitions is not None:
        parts.append("owns " + fmt_tps(_wire_tps(cluster, req.topic_partitions)))
    if resp is None:
        return ", ".join(parts), "(no answer recorded)", False
    if resp.error_code != ErrorCode.none:
        return ", ".join(parts), ErrorCode(resp.error_code).name.upper(), True
    answer = f"epoch {resp.member_epoch}"
    if resp.assignment is not None:
        answer += ", assignment " + fmt_tps(_wire_tps(cluster, resp.assignment.topic_partitions))
    return ", ".join(parts), answer, False


def reconciliation_snapshots(server: Any, group: str, *, since: int = 0) -> list[ReconciliationSnapshot]:
    """The recorded history of KIP-848 group `group` as the reconciliation widget's steps: one
    per ConsumerGroupHeartbeat (and per classic request of a classic member, and per round of
    the timers that wrote the group's records), from the `since`-th exchange on.

    The coordinator's side (group and assignment epochs; per member its epoch, state, current
    assignment, pending revocation, target) is read by look-back (`Coordinator.as_of`) after
    each exchange: what the coordinator wrote. The client's side is what each consumer said
    on the wire (followed from its first heartbeat, before `since` too): the epoch it was
    given, what it last reported owning (`owns`), and whether that is the assignment it was
    sent (stable) or not yet (reconciling). Members are named by their client id."""
    everything = server.exchanges()
    chosen = set()
    for x in everything[since:]:
        if x.api_key is None:
            if _wrote_for(x, group) or x.fault is not None:   # a fault: a moved coordinator, a broker killed
                chosen.add(x.seq)
        elif (x.api == "ConsumerGroupHeartbeat" or x.api in _CLASSIC_APIS) and _group_of(x.request) == group:
            chosen.add(x.seq)
    if not chosen:
        raise ValueError(f"no recorded heartbeat of group {group!r} "
                         "(is the server recording? Server(..., record=True))")
    heartbeats = [x for x in everything if x.api == "ConsumerGroupHeartbeat" and x.request.group_id == group]

    def member_of(x: Any) -> str:
        return (x.response.member_id if x.response is not None and x.response.member_id else None) \
            or x.request.member_id

    # a name per member: its client id (with its member id's start when two share one)
    ids: dict[str, str] = {}
    for x in heartbeats:
        if member_of(x):
            ids.setdefault(member_of(x), x.client_id or "?")
    taken = list(ids.values())
    names = {mid: (n if taken.count(n) == 1 else f"{n} {mid[:6]}") for mid, n in ids.items()}

    def build() -> list[ReconciliationSnapshot]:  # on the server's loop: look-backs read its log
        c = server.coordinator
        cluster = c.cluster
        clients: dict[str, _Client] = {}
        shown: set[str] = set()   # clients heard from since the first step
        topics: set[str] = set()
        start = None
        out = []
        for x in everything:
            step = x.seq in chosen
            kind, consumer, request, answer, error = "timer", None, "—", "—", False
            if x.api == "ConsumerGroupHeartbeat" and x.request.group_id == group:
                req, resp = x.request, x.response
                kind, mid = "heartbeat", member_of(x)
                k = clients.setdefault(mid, _Client(names.get(mid, mid[:8])))
                consumer = k.name
                request, answer, error = _heartbeat_words(cluster, req, resp)
                topics |= set(req.subscribed_topic_names or ())
                k.instance_id = req.instance_id if req.instance_id is not None else k.instance_id
                if req.topic_partitions is not None:
                    k.owned = _wire_tps(cluster, req.topic_partitions)
                if req.member_epoch < 0:
                    k.state, k.owned, k.epoch = "left", frozenset(), req.member_epoch
                elif resp is not None and resp.error_code in _FENCED:
                    k.state, k.owned = "fenced", frozenset()
                elif resp is not None and resp.error_code == ErrorCode.none:
                    k.epoch = resp.member_epoch
                    if resp.assignment is not None:
                        k.given = _wire_tps(cluster, resp.assignment.topic_partitions)
                    k.state = "joining" if k.given is None else "stable" if k.given == k.owned else "reconciling"
                if step:
                    shown.add(mid)
            elif x.api_key is not None:
                kind, consumer = "classic", x.client_id
            elif x.fault is not None:
                kind = "fault"
            if not step:
                continue
            start = x.at_ms if start is None else start
            snap = c.as_of(x.end_position)
            g = snap.groups.get(group)
            modern = g is not None and hasattr(g, "assignment_epoch")
            members = getattr(g, "members", {}) if modern else {}
            target = getattr(g, "target_assignment", {}) if modern else {}
            views = [_member_view(cluster, k.name, mid, k, members.get(mid), target)
                     for mid, k in clients.items() if mid in shown or mid in members]
            views += [_member_view(cluster, m.instance_id or f"{mid[:8]}…", mid, None, m, target)
                      for mid, m in members.items() if mid not in clients]
            tps = {(t, p) for t in topics if t in cluster for p in range(cluster.partitions(t))}
            tps |= {tp for v in views for tp in v.owned | v.assigned | v.target | v.revoking}
            records = tuple(row for row in (log_row(c.log.entry_at(i))
                                            for i in range(x.start_position, x.end_position))
                            if row["group"] == group)
            changed = error or bool(records) or x.fault is not None or (
                kind == "heartbeat" and x.response is not None and x.response.assignment is not None)
            out.append(ReconciliationSnapshot(
                index=len(out), time_ms=x.at_ms - start, kind=kind, consumer=consumer, request=request,
                response=answer, error=error, changed=changed, records=records,
                group_type=type(g).__name__ if g is not None else "—", group_state=g.state if g is not None else "—",
                group_epoch=g.group_epoch if modern else getattr(g, "generation_id", None),
                assignment_epoch=g.assignment_epoch if modern else None,
                members=tuple(views), partitions=tuple(sorted(tps)), fault=x.fault))
        return out
    return server.call(build)


def _member_view(cluster: Any, name: str, member_id: str, k: _Client | None, m: Any, target: dict) -> MemberView:
    return MemberView(
        name=name, member_id=member_id, instance_id=m.instance_id if m is not None else (k.instance_id if k else None),
        protocol="consumer" if m is None or not m.uses_classic_protocol else "classic",
        running=k.running if k is not None else True,
        client_state=k.state if k is not None else None, client_epoch=k.epoch if k is not None else None,
        member_epoch=m.member_epoch if m is not None else None,
        server_state=SERVER_STATE_WORDS.get(m.state.label, m.state.label) if m is not None else None,
        owned=k.owned if k is not None and k.running else frozenset(),
        assigned=partition_names(cluster, m.assigned_partitions) if m is not None else frozenset(),
        revoking=partition_names(cluster, m.partitions_pending_revocation) if m is not None else frozenset(),
        target=partition_names(cluster, target.get(member_id, {})) if m is not None else frozenset())


def served_reconciliation(server: Any, group: str, *, since: int = 0, changes_only: bool = False) -> ReconciliationView:
    """The reconciliation widget over a served KIP-848 group's recorded heartbeats
    (`reconciliation_snapshots`): it replays them (a real client's next heartbeat is its own)."""
    return ReconciliationView(reconciliation_snapshots(server, group, since=since), changes_only=changes_only)


# ---------------------------------------------------------------------------------------
# The share strip over a served share group

_SHARE_APIS = frozenset({"ShareFetch", "ShareAcknowledge", "ShareGroupHeartbeat"})
_ACK_WORDS = {0: "gap", 1: "accepted", 2: "released", 3: "rejected", 4: "renewed"}


def _ranges(pairs: list[tuple[int, int]]) -> str:
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
    parts += [f"{word} {_ranges(rs)}" for word, rs in acks.items()]
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
        from widgets.share import partition_rows
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
        from widgets.share import strip_frame
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
        from widgets.share import strip_chart
        p = self.pictures[self.index if index is None else index]
        return strip_chart(self.frame(index), spso=p["spso"], speo=p["speo"], title=p["what"])

    def to_html(self, index: int | None = None) -> str:
        from widgets.share import strip_html
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


class PausedReconciliation:
    """Walk a KIP-848 rebalance of real clients one request at a time: while the server is
    paused (`server.pause(group)`, or `pause()`), each `step()` (or a click on "step ▶") lets the next held
    coordinator request through and redraws the reconciliation grid at the heartbeat it became.

        server.pause("ledger")
        walk = PausedReconciliation(server, "ledger", poll=lambda: [c.poll(0) for c in consumers])
        ... a consumer joins ...
        walk                      # in JupyterLab: click "step ▶"; headless: walk.step(); walk.text()

    `poll` runs while waiting for a stepped request's answer (librdkafka applies what it was
    told from its poll loop). Steps start at the exchanges recorded after it is created."""

    def __init__(self, server: Any, group: str, *, poll: Any = None, timeout: float = 10.0) -> None:
        import ipywidgets as W

        self.server, self.group, self.poll, self.timeout = server, group, poll, timeout
        self.since = len(server.exchanges())
        self.stepped: list[Any] = []
        self.view: ReconciliationView | None = None
        self.button = W.Button(description="step ▶")
        self.reload = W.Button(description="what is held?", layout=W.Layout(width="auto"))
        self.held_label = W.HTML()
        self.box = W.VBox([W.HBox([self.button, self.reload, self.held_label])])
        self.button.on_click(lambda _b: self.step())
        self.reload.on_click(lambda _b: self.refresh())
        self.refresh()

    def held(self) -> list[str]:
        """The requests waiting in the server, as "client id: API"."""
        return self.server.held()

    def step(self) -> Any:
        """Let the next held request through; the exchange it became (None: nothing held, or
        no answer within `timeout`)."""
        held = self.held()
        if not held:
            self.refresh()
            return None
        n = len(self.server.exchanges())
        self.server.step()
        deadline = time.monotonic() + self.timeout
        done = None
        while done is None and time.monotonic() < deadline:
            if self.poll is not None:
                self.poll()
            done = next((x for x in self.server.exchanges()[n:] if f"{x.client_id}: {x.api}" == held[0]), None)
            if done is None:
                time.sleep(0.01)
        if done is not None:
            self.stepped.append(done)
        self.refresh()
        return done

    def snapshots(self) -> list[ReconciliationSnapshot]:
        try:
            return reconciliation_snapshots(self.server, self.group, since=self.since)
        except ValueError:  # no heartbeat of the group yet
            return []

    def refresh(self) -> None:
        """Redraw: the requests held now, the grid at the latest heartbeat."""
        snaps = self.snapshots()
        held = self.held()
        self.held_label.value = html.escape("held: " + (", ".join(held) if held else "nothing"))
        self.button.disabled = not held
        self.view = ReconciliationView(snaps) if snaps else None
        if self.view is not None:
            self.view.go(len(snaps) - 1)
        self.box.children = (self.box.children[0],) + ((self.view.widget,) if self.view is not None else ())

    def text(self) -> str:
        """The last step, as the grid prints it (or what was stepped when it was no heartbeat)."""
        last = self.stepped[-1] if self.stepped else None
        if last is not None and last.api != "ConsumerGroupHeartbeat":
            return f"{last.client_id}: {last.api} (not a heartbeat: the stepper shows it)"
        return self.view.to_text() if self.view is not None else "no heartbeat yet"

    def to_html(self) -> str:
        head = f"<p>{self.held_label.value}</p>"
        return head + (self.view.to_html() if self.view is not None else "<p>no heartbeat yet</p>")

    def _repr_mimebundle_(self, **kw):
        return mimebundle(self.box, self.to_html(), **kw)
