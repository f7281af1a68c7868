"""The reconciliation grid (`widgets.reconciliation`) over a `kgroup serve` server's recorded
KIP-848 group, heartbeat by heartbeat, and a walk through it one held request at a time.

    served_reconciliation(server, "billing")          # the grid over what the server recorded
    walk = PausedReconciliation(server, "billing")    # with `server.pause("billing")`: step by step

The grid's coordinator side is read by look-back (`Coordinator.as_of`), as the stepper's
(`widgets.stepper_served`) is; its client side is what each consumer said on the wire.
"""
from __future__ import annotations

import html
import time
from typing import Any

from kgroup.errors import ErrorCode
from widgets.reconciliation import (SERVER_STATE_WORDS, MemberView, ReconciliationSnapshot, ReconciliationView,
                                    heartbeat_words, partition_names, wire_partitions)
from widgets.record_log import log_row
from widgets.stepper_served import group_of, wrote_for
from widgets.tables import mimebundle

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
            if wrote_for(x, group) or x.fault is not None:   # a fault: a moved coordinator, a broker killed
                chosen.add(x.seq)
        elif (x.api == "ConsumerGroupHeartbeat" or x.api in _CLASSIC_APIS) and group_of(x.request) == group:
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
                request, answer, error = heartbeat_words(cluster, req, resp)
                topics |= set(req.subscribed_topic_names or ())
                k.instance_id = req.instance_id if req.instance_id is not None else k.instance_id
                if req.topic_partitions is not None:
                    k.owned = wire_partitions(cluster, req.topic_partitions)
                if req.member_epoch < 0:
                    k.state, k.owned, k.epoch = "left", frozenset(), req.member_epoch
                elif resp is not None and resp.error_code in _FENCED:
                    k.state, k.owned = "fenced", frozenset()
                elif resp is not None and resp.error_code == ErrorCode.none:
                    k.epoch = resp.member_epoch
                    if resp.assignment is not None:
                        k.given = wire_partitions(cluster, resp.assignment.topic_partitions)
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


__all__ = ["PausedReconciliation", "reconciliation_snapshots", "served_reconciliation"]
