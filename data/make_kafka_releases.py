"""Record what each Apache Kafka release's broker advertises, for `kgroup serve --kafka-version`.

    .venv/bin/python data/make_kafka_releases.py                  # needs Java 17 and Maven
    .venv/bin/python data/make_kafka_releases.py 4.3.1 4.4.0      # only these

For each release: start its broker with default configs (`kgroup.oracle.KafkaBroker`, jars from
Maven Central), send ApiVersions v3, stop it; then rewrite the `RELEASES` table of
`kgroup/lab/releases.py` with what the brokers answered (api key -> (min, max), finalized
features). Kafka 3.7 predates KIP-853, so its controller is named by `controller.quorum.voters`.
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # run as a script from a checkout without installing
    sys.path.insert(0, str(ROOT))

from kgroup.oracle import kafka as oracle  # noqa: E402
from kgroup.oracle.wire import Wire  # noqa: E402

#: the latest patch release of each minor one kgroup answers as
VERSIONS = ["3.7.2", "3.9.1", "4.0.2", "4.1.2", "4.2.2", "4.3.1", "4.4.0"]
MODULE = ROOT / "kgroup" / "lab" / "releases.py"


class _Broker(oracle.KafkaBroker):
    """A broker of a release older than KIP-853 formats without `--standalone`."""

    def _java(self, main: str, *args: str, **kw):
        if self.version < "3.9":
            args = tuple(a for a in args if a != "--standalone")
        return super()._java(main, *args, **kw)


def record(version: str) -> tuple[dict[int, tuple[int, int]], dict[str, int]]:
    config = {}
    if version < "3.9":
        # the controller port start() picks: the second free port it asks for
        ports = [oracle._free_port(), oracle._free_port()]
        picks = iter(ports)
        free, oracle._free_port = oracle._free_port, lambda: next(picks)
        config["controller.quorum.voters"] = f"0@127.0.0.1:{ports[1]}"
    broker = _Broker(config, version=version)
    try:
        broker.start(timeout=300)
    finally:
        if version < "3.9":
            oracle._free_port = free
    try:
        answer = Wire(broker.bootstrap).call("ApiVersions", 3, client_software_name="kgroup",
                                             client_software_version="1")
        apis = {int(k.api_key): (int(k.min_version), int(k.max_version)) for k in answer.api_keys}
        features = {f.name: int(f.max_version_level) for f in answer.finalized_features}
        return apis, features
    finally:
        broker.stop()


def main(versions: list[str]) -> None:
    text = MODULE.read_text()
    for version in versions:
        apis, features = record(version)
        name = ".".join(version.split(".")[:2])
        row = (f'    "{name}": Release("{version}", {{{", ".join(f"{k}: {v}" for k, v in sorted(apis.items()))}}},\n'
               f'                     {{{", ".join(f"{k!r}: {v}" for k, v in sorted(features.items()))}}}),')
        pattern = re.compile('^    "' + re.escape(name) + r'": Release\(.*?\}\),$', re.M | re.S)
        if pattern.search(text):
            text = pattern.sub(lambda _: row, text)
        else:   # a new release: at the end of the table
            text = text.replace("\n}\n\n\ndef release(", f"\n{row}\n}}\n\n\ndef release(", 1)
        print(f"Kafka {version}: {len(apis)} APIs, features {features}", flush=True)
    MODULE.write_text(text)


if __name__ == "__main__":
    main(sys.argv[1:] or VERSIONS)
