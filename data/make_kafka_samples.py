"""Write data/kafka-4.4.0/: `__consumer_offsets` and `__share_group_state` segments that a real
Apache Kafka 4.4.0 wrote, and what Kafka's own dump tool printed for them.

    .venv/bin/python data/make_kafka_samples.py             # needs Java 17 and Maven
    .venv/bin/python data/make_kafka_samples.py --out /tmp/k

Starts one broker (`kgroup.oracle.KafkaBroker`), runs every oracle scenario against it with real
clients (`kgroup.oracle.scenarios.ALL`, then the Kafka Streams applications of
`kgroup.oracle.streams_scenarios.ALL`; names suffixed with the scenario's), stops the broker and
copies, for each partition that holds records, its segment file into
`<out>/<topic>-<partition>/00000000000000000000.log`. Beside them:

- `dump-log.txt`: `kafka-dump-log.sh --offsets-decoder` over the `__consumer_offsets` files, run
  from `<out>` (so the paths it prints are relative), and `share-dump-log.txt` the same with
  `--share-group-state-decoder`;
- `scenarios.txt`: the scenarios run, one per line.

Timestamps, member ids and topic ids differ on every run, so a rerun gives other bytes: the
committed files are one run's, and the tests read them as Kafka's (never kgroup's) bytes.
"""
from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a checkout without installing
    sys.path.insert(0, str(ROOT))

from kgroup.oracle import KAFKA_VERSION, KafkaBroker  # noqa: E402
from kgroup.oracle.compare import Run  # noqa: E402
from kgroup.oracle.scenarios import ALL as CLIENT_SCENARIOS  # noqa: E402
from kgroup.oracle.streams_scenarios import ALL as STREAMS_SCENARIOS  # noqa: E402

ALL = [*CLIENT_SCENARIOS, *STREAMS_SCENARIOS]

OUT = Path(__file__).resolve().parent / f"kafka-{KAFKA_VERSION}"
TOPICS = ("__consumer_offsets", "__share_group_state")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", type=Path, default=OUT)
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="kgroup-kafka-samples-") as tmp:
        broker = KafkaBroker(directory=tmp).start()
        try:
            for scenario in ALL:
                print(f"running {scenario.name} against Apache Kafka {KAFKA_VERSION} ...", flush=True)
                # names suffixed with the scenario's: "orders-classic-eager", ...
                scenario.run(Run("kafka", broker.bootstrap, scenario.name))
            segments = {topic: broker.segments(topic) for topic in TOPICS}
        finally:
            broker.stop()   # a clean shutdown: the segments are flushed and complete
        if args.out.exists():
            shutil.rmtree(args.out)
        args.out.mkdir(parents=True)
        copied: dict[str, list[Path]] = {}
        for topic, files in segments.items():
            for f in files:
                target = args.out / f.parent.name / f.name
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(f, target)
                copied.setdefault(topic, []).append(target.relative_to(args.out))
        # Kafka's own decoder over the copies, the paths as a user in `out` would type them
        tool = KafkaBroker(directory=tmp)
        for topic, name, decoder in (("__consumer_offsets", "dump-log.txt", "offsets"),
                                     ("__share_group_state", "share-dump-log.txt", "share")):
            if copied.get(topic):
                text = _in(args.out, lambda: tool.dump_log(copied[topic], decoder))
                (args.out / name).write_text(text)
        (args.out / "scenarios.txt").write_text("".join(f"{s.name}: {s.description}\n" for s in ALL))
    size = sum(f.stat().st_size for f in args.out.rglob("*") if f.is_file())
    print(f"wrote {args.out} ({size:,} bytes)")
    return 0


def _in(directory: Path, fn):
    import os
    here = os.getcwd()
    os.chdir(directory)
    try:
        return fn()
    finally:
        os.chdir(here)


if __name__ == "__main__":
    sys.exit(main())
