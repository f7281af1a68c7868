"""The failure lab: what `kgroup serve` needs to stage what goes wrong in a Kafka cluster —
several brokers and who leads what (`Leadership`), fault rules on requests (`Fault`,
`parse_fault`), and waiting on a group's state live or over a recorded history (`holds`,
`first_moment`). The server (`kgroup.serve.Server`) applies them; the coordinator only sees its
partitions unloaded and loaded again (`Coordinator.unload`, `Coordinator.load_partition`)."""
from kgroup.lab.brokers import Leadership, Move
from kgroup.lab.faults import Fault, parse_fault
from kgroup.lab.waits import GroupView, Moment, first_moment, holds, view

__all__ = ["Fault", "GroupView", "Leadership", "Moment", "Move", "first_moment", "holds", "parse_fault", "view"]
