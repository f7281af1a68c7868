"""`kgroup serve`: a Kafka-protocol endpoint on loopback in front of kgroup's coordinator, so
that unmodified Kafka clients (librdkafka, kafka-python, aiokafka) run their groups against it.

    from kgroup import Cluster, Coordinator
    from kgroup.serve import Server
    server = Server(Coordinator(cluster=Cluster({"orders": 3}))).start()
    server.bootstrap        # "127.0.0.1:PORT" for bootstrap.servers
    server.stop()

Modules: `framing` (frames, headers, kio codecs), `guard` (size checks before kio's reader),
`broker` (the broker APIs over the simulated cluster), `transactions` (the transaction
coordinator), `configs` (DescribeConfigs/IncrementalAlterConfigs by resource type), `server` (the
loop owning the coordinator, connections, routing), `clock` (the coordinator's clock on the wall
clock), `share_polls` (ShareFetch long polls), `recording` (exchanges kept, the gate holding
requests), `controls` (the notebook's pause, step, resume), `lab_controls` (the failure lab's
faults and leadership moves), `cli` (`kgroup serve`).
Nothing in kgroup imports this package except the command line, lazily.
"""
from kgroup.serve.server import Server

__all__ = ["Server"]
