"""`kgroup consumer-groups --reset-offsets`: plans from a dump's history, printed as Kafka's dry run
or as the CSV its --export writes, read back as its --from-file reads it.

Kafka's ResetConsumerGroupOffsetTest pins the round trip (testResetOffsetsExportImportPlan and
...SingleGroupArg: `--all-topics --to-offset 2 --export`, imported with `--from-file`, gives
{tp0: 2, tp1: 2}; the multi-group form carries the group) and the checks of its options.
"""
from __future__ import annotations

import warnings

import pytest

from kgroup import Cluster, Coordinator
from kgroup.admin import Admin, TopicPartition
from kgroup.tools import open_dump
from kgroup.tools.reset_offsets import (ResetPlan, earliest_committed, export_csv, format_dry_run, parse_reset_plan,
                                        plan_reset)

from kgroup_testing import SAMPLES, run_cli

OFFSETS = str(SAMPLES / "offsets")


def committed_group(c: Coordinator, group: str, offsets: dict[tuple[str, int], int]) -> None:
    Admin(c).alter_consumer_group_offsets(group, {TopicPartition(t, p): o for (t, p), o in offsets.items()})


# ---------------------------------------------------------------------------- Kafka's round trips

def test_export_import_single_group_as_kafkas_test():
    # testResetOffsetsExportImportPlanSingleGroupArg: --group G --all-topics --to-offset 2 --export
    c = Coordinator(cluster=Cluster({"bar": 2}))
    for p in range(2):
        c.cluster.produce("bar", p, [b"x"] * 50)
    committed_group(c, "g", {("bar", 0): 50, ("bar", 1): 50})
    plan = plan_reset(c, ["g"], all_topics=True, to_offset=2)
    text = export_csv(plan, single_group=True)
    assert sorted(text.split("\n")[:-2]) == ["bar,0,2", "bar,1,2"] and text.endswith("\n\n")
    assert parse_reset_plan(text, ["g"]) == {"g": {("bar", 0): 2, ("bar", 1): 2}}


def test_export_import_several_groups_as_kafkas_test():
    # testResetOffsetsExportImportPlan: the universal group,topic,partition,offset form
    c = Coordinator(cluster=Cluster({"foo": 2, "bar": 1}))
    for t, n in (("foo", 2), ("bar", 1)):
        for p in range(n):
            c.cluster.produce(t, p, [b"x"] * 10)
    committed_group(c, "g1", {("foo", 0): 5, ("foo", 1): 5})
    committed_group(c, "g2", {("bar", 0): 7})
    plan = plan_reset(c, ["g1", "g2"], all_topics=True, to_offset=2)
    text = export_csv(plan, single_group=False)
    assert sorted(text.split()) == ["g1,foo,0,2", "g1,foo,1,2", "g2,bar,0,2"]
    assert parse_reset_plan(text, ["g1", "g2"]) == {"g1": {("foo", 0): 2, ("foo", 1): 2}, "g2": {("bar", 0): 2}}


def test_csv_quotes_as_jacksons_writer():
    plan = ResetPlan({'a,"b"': {("t", 0): 1}})
    assert export_csv(plan, single_group=False) == '"a,""b""",t,0,1\n\n'
    assert parse_reset_plan(export_csv(plan, single_group=False), ['a,"b"', "x"]) == {'a,"b"': {("t", 0): 1}}


def test_shift_and_offset_move_into_the_log_range_with_kafkas_warning():
    c = Coordinator(cluster=Cluster({"t": 1}))
    c.cluster.produce("t", 0, [b"x"] * 10)
    committed_group(c, "g", {("t", 0): 8})
    plan = plan_reset(c, ["g"], all_topics=True, shift_by=5)
    assert plan.offsets == {"g": {("t", 0): 10}}
    assert "New offset (13) is higher than latest offset for topic partition t-0. Value will be set to 10" in plan.warnings
    with pytest.raises(ValueError, match="Cannot shift offset for partition t-1 since there is no current"):
        plan_reset(c, ["g"], topics=["t:1"], shift_by=1)


def test_dry_run_is_kafkas_print_offsets_to_reset():
    plan = ResetPlan({"g": {("orders", 0): 150}})
    assert format_dry_run(plan) == ("\n" + "GROUP".ljust(30) + " " + "TOPIC".ljust(30) + " " + "PARTITION".ljust(10)
                                    + " " + "NEW-OFFSET".ljust(15) + "\n" + "g".ljust(30) + " " + "orders".ljust(30)
                                    + " " + "0".ljust(10) + " " + "150".ljust(15) + "\n")
    assert format_dry_run(ResetPlan()) == "\n"


# ---------------------------------------------------------------------------- from a dump's history

@pytest.mark.parametrize("when, expected", [
    ("2024-06-10T06:13:20Z", {("orders", 0): 100, ("orders", 1): 200, ("orders", 2): 300}),
    ("2024-06-10T06:13:26Z", {("orders", 0): 150, ("orders", 1): 200, ("orders", 2): 300}),
    ("2024-06-10T06:14:00Z", {("orders", 0): 150, ("orders", 1): 250})])   # orders-2 deleted by then
def test_to_committed_at_round_trips_through_from_file(capsys, when, expected):
    code, out, err = run_cli(capsys, "consumer-groups", "--dump", OFFSETS, "--reset-offsets", "--group", "billing",
                         "--all-topics", "--to-committed-at", when, "--export")
    assert code == 0, err
    assert parse_reset_plan(out, ["billing"]) == {"billing": expected}
    # exactly the offsets committed then, as the dump replayed to that moment holds them
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        then = open_dump(OFFSETS, at=when)
    assert {tp: o.offset for tp, o in then.offsets.store.group_offsets("billing").items()} == expected


def test_partitions_without_a_commit_then_are_left_out_and_named(capsys):
    code, out, err = run_cli(capsys, "consumer-groups", "--dump", OFFSETS, "--reset-offsets", "--group", "billing",
                         "--topic", "orders:0,1,5", "--to-committed-at", "2024-06-10T06:13:26Z", "--dry-run")
    assert code == 0
    rows = [line.split() for line in out.strip().splitlines()[1:]]
    assert sorted(rows) == [["billing", "orders", "0", "150"], ["billing", "orders", "1", "200"]]
    assert "billing orders-5: no offset committed at 2024-06-10T06:13:26.000Z; left out" in err


def test_earliest_committed_and_scenario_checks(capsys):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        c = open_dump(OFFSETS)
    assert earliest_committed(c, "billing") == {("orders", 0): 100, ("orders", 1): 200, ("orders", 2): 300}
    code, out, _ = run_cli(capsys, "consumer-groups", "--dump", OFFSETS, "--reset-offsets", "--group", "billing",
                       "--all-topics", "--to-earliest-committed", "--export")
    assert parse_reset_plan(out, ["billing"]) == {"billing": {("orders", 0): 100, ("orders", 1): 200}}
    code, _, err = run_cli(capsys, "consumer-groups", "--dump", OFFSETS, "--reset-offsets", "--group", "billing",
                       "--to-offset", "1")
    assert code == 2 and "One of the reset scopes should be defined: --all-topics, --topic." in err
    code, _, err = run_cli(capsys, "consumer-groups", "--dump", OFFSETS, "--reset-offsets", "--group", "billing",
                       "--all-topics", "--to-offset", "1", "--shift-by", "1")
    assert code == 2 and "exactly one of these options" in err
    code, _, err = run_cli(capsys, "consumer-groups", "--dump", OFFSETS, "--reset-offsets", "--group", "billing",
                       "--all-topics", "--to-offset", "1", "--execute")
    assert code == 2 and "never touches a cluster" in err


def test_an_active_group_gets_a_warning_not_a_refusal(capsys):
    code, out, err = run_cli(capsys, "consumer-groups", "--dump", str(SAMPLES / "kip848-log-dir"), "--reset-offsets",
                         "--group", "billing-app", "--topic", "orders", "--shift-by", "-10", "--dry-run")
    assert code == 0
    assert "group 'billing-app' is Stable here: Kafka resets only inactive groups" in err
    rows = {(r[1], int(r[2])): int(r[3]) for r in (line.split() for line in out.strip().splitlines()[1:])}
    assert rows == {("orders", 0): 610, ("orders", 1): 610, ("orders", 2): 400, ("orders", 3): 400,
                    ("orders", 4): 400, ("orders", 5): 400}
