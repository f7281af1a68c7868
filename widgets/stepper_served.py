"""Real clients in the stepper: a `kgroup serve` server's recorded exchanges as a `Scenario`,
so the `Stepper` walks a real client's rebalance exchange by exchange.

    server = Server(coordinator, record=True).start()
    ...                                    # real consumers join, rebalance, commit
    Stepper(served_scenario(server, group="billing"))
    RecordLogView(server.coordinator)      # the same records, filterable

Each step is one exchange the coordinator served (or one round of its timers that wrote
records): the request as the client sent it, the answer as kgroup sent it, the records it
wrote, and the state after it rebuilt by look-back (`Coordinator.as_of`, read on the server's
loop while it serves). Soft state (waiting JoinGroups, timers) is not recorded, as in any
look-back. widgets import kgroup, never the reverse.

The other widgets read the same history: `widgets.reconciliation_served` (the KIP-848 grid)
and `widgets.share_served` (the share strip).
"""
from __future__ import annotations

from typing import Any

from kgroup.scenario import Scenario, Step


def group_of(request: Any) -> str | None:
    """The group a recorded request names."""
    group = getattr(request, "group_id", None)
    if group is None and getattr(request, "groups", None):  # OffsetFetch v8+: batched groups
        first = request.groups[0]
        group = getattr(first, "group_id", None)
    return group


def wrote_for(exchange: Any, group: str) -> bool:
    """Whether a recorded exchange wrote a record of `group`."""
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
            if (timers and (group is None or wrote_for(x, group))) or x.fault is not None:
                chosen.append(x)   # a fault (a moved coordinator, a broker killed) is every group's business
        elif group is None or group_of(x.request) == group or wrote_for(x, group):
            chosen.append(x)
    if not chosen:
        raise ValueError("no recorded exchange to step through (is the server recording? Server(..., record=True))")
    return ServedScenario(server, chosen)


__all__ = ["ServedScenario", "group_of", "served_scenario", "wrote_for"]
