"""The `kgroup` command: output as Kafka's tools print it, clear errors, nothing lost on bad input."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
import types
from pathlib import Path

import pytest

from kgroup.cli import parse_at
from kgroup.dumps import DumpReport, read_dump, render_dump_log, render_jsonl

from kgroup_testing import SAMPLES, run_cli

T0 = 1_718_000_000_000


def corrupt_copy(tmp_path: Path, name: str = "transactions", at: int = 480) -> Path:
    """A copy of a sample with one byte flipped inside its third batch (bytes 442-582, offset 4)."""
    target = tmp_path / name
    shutil.copytree(SAMPLES / name, target)
    seg = next(target.glob("__consumer_offsets-*/*.log"))
    data = bytearray(seg.read_bytes())
    data[at] ^= 0xFF
    seg.write_bytes(bytes(data))
    return target


# ------------------------------------------------------------------------------ decode

@pytest.mark.parametrize("name", ["offsets", "transactions", "static-rolling-restart", "expiring-group"])
def test_decode_prints_what_the_render_functions_print(capsys, name):
    path = str(SAMPLES / name)
    code, out, err = run_cli(capsys, "dump", "decode", path)
    assert (code, err) == (0, "")
    assert out == "".join(line + "\n" for e in read_dump(path) if (line := render_jsonl(e)))
    code, out, err = run_cli(capsys, "dump", "decode", path, "--format", "dump-log")
    assert (code, err) == (0, "")
    assert out == "".join(line + "\n" for line in render_dump_log(read_dump(path)))


def test_decode_from_the_samples_folder_gives_the_committed_renderings(capsys, monkeypatch):
    monkeypatch.chdir(SAMPLES)
    code, out, _ = run_cli(capsys, "dump", "decode", "transactions", "--format", "dump-log")
    assert code == 0 and out == (SAMPLES / "transactions.dump-log.txt").read_text()
    code, out, _ = run_cli(capsys, "dump", "decode", "transactions")
    assert code == 0 and out == (SAMPLES / "transactions.console.jsonl").read_text()


def test_decode_reads_text_dumps_too(capsys):
    code, out, _ = run_cli(capsys, "dump", "decode", str(SAMPLES / "offsets.dump-log.txt"))
    assert code == 0 and out == (SAMPLES / "offsets.console.jsonl").read_text()


def test_a_corrupt_segment_reports_file_and_byte_and_prints_every_good_record(capsys, tmp_path):
    path = corrupt_copy(tmp_path)
    code, out, err = run_cli(capsys, "dump", "decode", str(path))
    assert code == 1
    seg = next(path.glob("__consumer_offsets-*/*.log"))
    assert f"{seg} @ byte 442: corrupt span of 141 bytes" in err
    assert "every readable record was printed" in err
    good = [json.loads(line) for line in (SAMPLES / "transactions.console.jsonl").read_text().splitlines()]
    # the damaged batch held one record (offset 4: payments-1 = 25); everything else is printed
    expected = [r for r in good if (r["key"]["data"]["partition"], r["value"]["data"]["offset"]) != (1, 25)]
    assert len(expected) == len(good) - 1
    assert [json.loads(line) for line in out.splitlines()] == expected
    code, out, err = run_cli(capsys, "dump", "decode", str(path), "--format", "dump-log")
    assert code == 1 and "@ byte 442" in err
    assert out.count("\n| offset: ") == 8 and "| offset: 4 " not in out and "| offset: 5 " in out


def test_a_damaged_text_line_is_reported_with_its_line_number(capsys, tmp_path):
    text = tmp_path / "saved.jsonl"
    lines = (SAMPLES / "offsets.console.jsonl").read_text().splitlines()
    lines[2] = lines[2][:40]
    text.write_text("\n".join(lines) + "\n")
    code, out, err = run_cli(capsys, "dump", "decode", str(text))
    assert code == 1
    assert f"{text}:3: unreadable JSON" in err
    assert out.splitlines() == lines[:2] + lines[3:]


def test_partial_records_have_no_json_but_print_as_dump_log(capsys, tmp_path):
    text = tmp_path / "old-dump-log.txt"
    text.write_text("Dumping /k/__consumer_offsets-12/00000000000000000000.log\nStarting offset: 0\n"
                    "| offset: 15 CreateTime: 1662649581270 keySize: 26 valueSize: 24 sequence: 0 headerKeys: [] "
                    "key: offset_commit::group=my-group,partition=my-topic-0 payload: offset=1\n")
    code, out, err = run_cli(capsys, "dump", "decode", str(text))
    assert code == 1 and out == ""
    assert f"{text}:3: a partial OffsetCommit record" in err and "--format dump-log" in err
    code, out, err = run_cli(capsys, "dump", "decode", str(text), "--format", "dump-log")
    assert code == 0 and "key: offset_commit::group=my-group,partition=my-topic-0 payload: offset=1" in out


# ------------------------------------------------------------------------------ errors

def test_missing_paths_are_named_with_exit_status_2(capsys, tmp_path):
    for command in ("decode", "stats", "describe", "to-parquet"):
        extra = ["--out", str(tmp_path / "o")] if command == "to-parquet" else []
        code, out, err = run_cli(capsys, "dump", command, str(SAMPLES / "offsets"), str(tmp_path / "nope"),
                             str(tmp_path / "nada"), *extra)
        assert code == 2 and out == ""
        assert err == f"kgroup dump {command}: error: no such file or directory: {tmp_path / 'nope'}, " \
                      f"{tmp_path / 'nada'}\n"


def test_a_file_that_is_no_dump_is_a_one_line_error(capsys, tmp_path):
    junk = tmp_path / "notes.txt"
    junk.write_text("shopping list\nmilk\n")
    code, out, err = run_cli(capsys, "dump", "stats", str(junk))
    assert code == 2 and out == ""
    assert err == f"kgroup dump stats: error: {junk}: neither a segment nor kafka-dump-log / console-consumer output\n"
    empty = tmp_path / "empty"
    empty.mkdir()
    code, _, err = run_cli(capsys, "dump", "decode", str(empty))
    assert code == 2 and err.startswith("kgroup dump decode: error: ") and "Traceback" not in err


def test_unknown_format_and_bad_at_are_usage_errors(capsys):
    code, out, err = run_cli(capsys, "dump", "decode", str(SAMPLES / "offsets"), "--format", "xml")
    assert code == 2 and out == "" and "argument --format: invalid choice: 'xml'" in err
    code, _, err = run_cli(capsys, "dump", "describe", str(SAMPLES / "offsets"), "--at", "42")
    assert code == 2 and "plain numbers are epoch milliseconds" in err and "offset:42" in err
    code, _, err = run_cli(capsys, "dump", "describe", str(SAMPLES / "offsets"), "--at", "last tuesday")
    assert code == 2 and "'last tuesday' is neither offset:N, an ISO-8601 time" in err


def test_parse_at():
    assert parse_at("offset:41") == ("offset", 41)
    assert parse_at(" OFFSET: 7") == ("offset", 7)
    assert parse_at("1718000100000") == ("time", 1_718_000_100_000)
    assert parse_at("2024-06-10T06:13:20Z") == ("time", T0)
    assert parse_at("2024-06-10T08:13:20+02:00") == ("time", T0)
    for bad in ("offset:-1", "offset:x", "99", "soon"):
        with pytest.raises(ValueError):
            parse_at(bad)


# ------------------------------------------------------------------------------ help

@pytest.mark.parametrize("argv", [[], ["dump"], ["dump", "decode"], ["dump", "stats"], ["dump", "describe"],
                                  ["dump", "to-parquet"]])
def test_every_help_explains_with_an_example(capsys, argv):
    code, out, _ = run_cli(capsys, *argv, "--help")
    assert code == 0
    assert "example" in out and "kgroup dump " in out.split("example", 1)[1]


def test_describe_help_explains_the_at_syntax(capsys):
    _, out, _ = run_cli(capsys, "dump", "describe", "--help")
    assert "offset:N" in out and "2024-06-10T06:15:00Z" in out and "epoch milliseconds" in out


def test_no_command_prints_help_and_exit_status_2(capsys):
    code, out, err = run_cli(capsys)
    assert code == 2 and out == "" and "dump decode" in err
    code, _, err = run_cli(capsys, "dump")
    assert code == 2 and "{decode,stats,describe,to-parquet}" in err


def test_python_dash_m_kgroup_runs_the_command_without_importing_pyspark(tmp_path):
    # -X importtime lists every module imported on stderr; cwd: a scratch dir, as kio's import
    # may leave a .hypothesis/ cache in the working directory
    r = subprocess.run([sys.executable, "-X", "importtime", "-m", "kgroup", "dump", "describe",
                        str(SAMPLES / "offsets"), "--json"], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert r.returncode == 0, r.stderr[-2000:]
    assert [g["group_id"] for g in json.loads(r.stdout)["groups"]] == ["billing", "reports"]
    imported = [line.rsplit("|", 1)[-1].strip() for line in r.stderr.splitlines() if line.startswith("import time:")]
    assert "kgroup.cli" in imported and not [m for m in imported if m.startswith("pyspark")]


# ------------------------------------------------------------------------------ stats

def test_stats_counts_types_groups_partitions_and_time(capsys):
    code, out, err = run_cli(capsys, "dump", "stats", str(SAMPLES / "transactions"))
    assert (code, err) == (0, "")
    report = DumpReport()
    list(read_dump(SAMPLES / "transactions", report=report))
    assert out.startswith(report.summary() + "\n")
    assert "time range: 2024-06-10T06:13:20.000Z .. 2024-06-10T06:13:29.000Z  (1718000000000 .. 1718000009000)" in out
    assert "__consumer_offsets-41  9        0..8" in out
    assert "payments-app  7        OffsetCommit 7" in out


def test_stats_json(capsys):
    code, out, _ = run_cli(capsys, "dump", "stats", str(SAMPLES / "offsets"), "--json")
    assert code == 0
    s = json.loads(out)
    assert s["report"]["entries"] == 10 and s["report"]["by_type"] == {"OffsetCommit": 9, "GroupMetadata": 1}
    assert [(p["partition"], p["entries"], p["first_offset"], p["last_offset"]) for p in s["partitions"]] == \
        [(9, 6, 0, 5), (30, 3, 0, 2), (49, 1, 0, 0)]
    assert {g["group"]: g["records"] for g in s["groups"]} == {"billing": 6, "reports": 1, "scratch": 3}
    assert s["time_range"]["first"] == T0 and s["time_range"]["last"] == T0 + 30_000
    assert s["problems"] == []


def test_stats_text_shows_the_busiest_groups_json_all(capsys, tmp_path):
    from kgroup import records as R
    from kgroup.log import OffsetsLog, partition_for

    log = OffsetsLog(50)
    for i in range(25):  # group gi commits i + 1 times
        g = f"g{i}"
        for n in range(i + 1):
            log.append(partition_for(g, 50), [R.OffsetCommit(R.OffsetCommitKey(group=g, topic="t", partition=0),
                                                              R.OffsetCommitValue(offset=n, commit_timestamp=T0), 3)],
                       timestamp=T0)
    log.write(tmp_path)
    code, out, _ = run_cli(capsys, "dump", "stats", str(tmp_path))
    listed = [line.split()[0] for line in out.split("groups (25):\n", 1)[1].splitlines()[1:-1]]
    assert code == 0 and listed == [f"g{i}" for i in range(24, 4, -1)]
    assert out.endswith("  ... and 5 more (--json lists every group)\n")
    code, out, _ = run_cli(capsys, "dump", "stats", str(tmp_path), "--json")
    assert len(json.loads(out)["groups"]) == 25


def test_stats_of_a_corrupt_dump_lists_the_problem(capsys, tmp_path):
    code, out, err = run_cli(capsys, "dump", "stats", str(corrupt_copy(tmp_path)), "--json")
    assert code == 1
    s = json.loads(out)
    assert s["report"]["corrupt_spans"] == 1 and s["report"]["entries"] == 8
    assert len(s["problems"]) == 1 and "@ byte 442" in s["problems"][0] and "@ byte 442" in err


# ------------------------------------------------------------------------------ describe

def _group(capsys, *argv: str) -> dict:
    code, out, err = run_cli(capsys, "dump", "describe", *argv, "--json")
    assert code == 0, err
    (group,) = json.loads(out)["groups"]
    return group


def test_describe_before_and_after_the_commit_marker(capsys):
    path = str(SAMPLES / "transactions")
    before = _group(capsys, path, "--at", "offset:4")
    after = _group(capsys, path, "--at", "offset:5")
    assert [o["offset"] for o in before["offsets"]] == [10, 25]
    assert [(o["producer_id"], o["offset"]) for o in before["pending_offsets"]] == [(1000, 20), (1000, 20)]
    assert [o["offset"] for o in after["offsets"]] == [20, 25] and after["pending_offsets"] == []


def test_describe_before_and_after_a_static_member_restarted(capsys):
    path = str(SAMPLES / "static-rolling-restart")
    before = _group(capsys, path, "--group", "orders-app", "--at", "2024-06-10T06:13:30Z")
    after = _group(capsys, path, "--group", "orders-app", "--at", str(T0 + 30_000))
    ids = lambda g: {m["group_instance_id"]: m["member_id"] for m in g["members"]}  # noqa: E731
    assert before["state"] == after["state"] == "Stable" and before["epoch"] == after["epoch"] == 1
    assert ids(before).keys() == ids(after).keys() == {"orders-app-0", "orders-app-1", "orders-app-2"}
    assert ids(before)["orders-app-0"] != ids(after)["orders-app-0"]  # replaced in place, no rebalance
    assert ids(before)["orders-app-2"] == ids(after)["orders-app-2"]


def test_describe_text(capsys):
    code, out, err = run_cli(capsys, "dump", "describe", str(SAMPLES / "transactions"), "--at", "offset:4")
    assert (code, err) == (0, "")
    assert out.splitlines()[:4] == [
        "replayed 5 records and 0 transaction markers (up to offset 4 on every partition)",
        "clock: 2024-06-10T06:13:23.000Z (1718000003000)",
        "offsets.topic.num.partitions: 50 (Kafka's default 50 puts each of the 1 group(s) on its partition)",
        "left out after the cut: 4 entries"]
    assert "payments-app  classic  state Empty  protocol type -  epoch 0  on __consumer_offsets-41" in out
    assert "    payments  1          25      0                       2024-06-10T06:13:23.000Z  -" in out
    assert "pending transactional offsets (2, not visible until their COMMIT marker):" in out


def test_describe_an_unknown_group(capsys):
    code, out, err = run_cli(capsys, "dump", "describe", str(SAMPLES / "offsets"), "--group", "nope")
    assert code == 1
    assert "group 'nope' is not in the dump (groups there: billing, reports)" in err


def test_describe_reports_dump_problems_and_what_it_could_not_replay(capsys, tmp_path):
    code, out, err = run_cli(capsys, "dump", "describe", str(corrupt_copy(tmp_path)))
    assert code == 1 and "@ byte 442" in err and "every readable record was replayed" in err
    assert "payments  1          20" in out  # the plain commit of 25 was in the damaged batch


def test_describe_partitions_option(capsys):
    code, out, _ = run_cli(capsys, "dump", "describe", str(SAMPLES / "offsets"), "--partitions", "64", "--json")
    assert code == 0 and json.loads(out)["replay"]["num_partitions"] == 64
    code, _, err = run_cli(capsys, "dump", "describe", str(SAMPLES / "offsets"), "--partitions", "10")
    assert code == 2 and "partition 49" in err


# ------------------------------------------------------------------------------ progress, to-parquet

def test_progress_bar_on_stderr_when_asked(capsys):
    code, out, err = run_cli(capsys, "dump", "stats", str(SAMPLES / "offsets"), "--progress")
    assert code == 0 and "reading dump" in err and "reading dump" not in out
    code, _, err = run_cli(capsys, "dump", "stats", str(SAMPLES / "offsets"))
    assert err == ""  # stderr is not a terminal here


def test_to_parquet_passes_its_options_to_the_spark_pipeline(capsys, monkeypatch, tmp_path):
    calls = []
    spark = types.SimpleNamespace(stop=lambda: calls.append("stop"))
    fake = types.ModuleType("kgroup.dumps.spark")
    fake.VIEWS = ("records", "compacted", "lag")
    fake.session = lambda master=None: calls.append(("session", master)) or spark
    fake.write_parquet = lambda spark_, paths, out_dir, **kw: calls.append(("write", spark_, paths, out_dir, kw)) or \
        {v: f"{out_dir}/{v}" for v in kw["views"]}
    import kgroup.dumps

    monkeypatch.setitem(sys.modules, "kgroup.dumps.spark", fake)
    monkeypatch.setattr(kgroup.dumps, "spark", fake, raising=False)  # when the real one was imported before
    ends = tmp_path / "ends.csv"
    ends.write_text("topic,partition,end_offset\n")
    out_dir = str(tmp_path / "pq")
    code, out, err = run_cli(capsys, "dump", "to-parquet", str(SAMPLES / "offsets"), "--out", out_dir, "--master",
                         "local[2]", "--end-offsets", str(ends), "--views", "records,compacted", "lag")
    assert code == 0, err
    assert calls[:2] == [("session", "local[2]"),
                         ("write", spark, [str(SAMPLES / "offsets")], out_dir,
                          {"views": ["records", "compacted", "lag"], "end_offsets": str(ends), "topic": None})]
    assert out.splitlines()[1].split() == ["records", f"{out_dir}/records"]
    code, _, err = run_cli(capsys, "dump", "to-parquet", str(SAMPLES / "offsets"), "--out", out_dir, "--views", "graphs")
    assert code == 2 and "unknown view(s) graphs; choose from records, compacted, lag" in err
    code, _, err = run_cli(capsys, "dump", "to-parquet", str(SAMPLES / "offsets"), "--out", out_dir, "--views", "lag")
    assert code == 2 and "--views lag needs --end-offsets" in err


@pytest.mark.slow  # starts Spark unless tests/dumps/test_spark.py's session is already running
def test_to_parquet_writes_views_that_agree_with_replay(capsys, tmp_path):
    """With real Spark (the session of tests/dumps/test_spark.py when it runs first)."""
    import pandas as pd

    from kgroup.dumps import describe_groups, replay

    code, out, err = run_cli(capsys, "dump", "to-parquet", str(SAMPLES / "transactions"), "--out", str(tmp_path),
                         "--views", "records", "compacted", "--master", "local[2]")
    assert code == 0, err
    assert [line.split()[0] for line in out.splitlines()[1:]] == ["records", "compacted"]
    records = pd.read_parquet(tmp_path / "records")
    assert len(records) == 9 and sorted(records["txn"].unique()) == ["aborted", "committed", "none", "open"]
    compacted = pd.read_parquet(tmp_path / "compacted")
    from_spark = {(r.topic_name, r.topic_partition): r.committed_offset for r in compacted.itertuples()}
    (group,) = describe_groups(replay(SAMPLES / "transactions"))
    assert from_spark == {(o["topic"], o["partition"]): o["offset"] for o in group["offsets"]} == \
        {("payments", 0): 20, ("payments", 1): 25}
