"""Re-exports only: the served adapters live beside the widgets they feed, in `widgets.*_served`."""
from widgets.reconciliation_served import PausedReconciliation, reconciliation_snapshots, served_reconciliation
from widgets.share_served import ServedShareStrip
from widgets.stepper_served import ServedScenario, served_scenario

__all__ = ["PausedReconciliation", "ServedScenario", "ServedShareStrip", "reconciliation_snapshots",
           "served_reconciliation", "served_scenario"]
