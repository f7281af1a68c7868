"""The notebook UI layer: ipywidgets views over a kgroup coordinator.

Every widget is interactive in JupyterLab and also renders statically (HTML) when
a notebook runs headless, so papermill outputs still show the picture.
"""
from widgets.reconciliation import ReconciliationRecorder, ReconciliationView
from widgets.record_log import RecordLogView, log_frame
from widgets.stepper import Stepper
from widgets.stepper_served import ServedScenario, served_scenario

__all__ = ["ReconciliationRecorder", "ReconciliationView", "RecordLogView", "ServedScenario", "Stepper", "log_frame",
           "served_scenario"]
