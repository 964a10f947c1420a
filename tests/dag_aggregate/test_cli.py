"""The ``dag`` click group through CliRunner."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from sfn_patterns_cli.dag_aggregate.cli import group

from .helpers import EXAMPLES, write_sql


def run(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(group, list(args))
    return result.exit_code, result.stdout, result.stderr


def test_plan_json() -> None:
    code, out, _ = run("plan", "--sql-dir", str(EXAMPLES))
    assert code == 0
    doc = json.loads(out)
    assert {"tasks", "edges", "levels", "groups", "stages", "external_sources"} <= set(doc)
    assert len(doc["tasks"]) == 12
    assert all(len(edge) == 2 for edge in doc["edges"])
    assert set(doc["stages"]) == {"simple-level", "parent-level"}
    assert sorted(t for g in doc["groups"].values() for t in g) == doc["tasks"]
    assert "raw.events" in doc["external_sources"]


def test_render_writes_file(tmp_path: Path) -> None:
    out = tmp_path / "out" / "dag.asl.json"
    code, stdout, _ = run(
        "render", "--sql-dir", str(EXAMPLES), "--strategy", "parent-level",
        "--max-concurrency", "3", "--database", "dev", "--cluster-identifier", "c",
        "--db-user", "admin", "--default-timeout", "600", "--compact", "-o", str(out),
    )  # fmt: skip
    assert code == 0
    assert stdout == ""
    definition = json.loads(out.read_text())
    maps = [s for s in definition["States"].values() if s["Type"] == "Map"]
    assert maps
    assert {m["MaxConcurrency"] for m in maps} == {3}
    assert "\n" not in out.read_text().strip()


def test_simulate(tmp_path: Path) -> None:
    directory = write_sql(
        tmp_path / "sql",
        {"a": "SELECT 1", "b": "SELECT 1", "c": "SELECT x FROM agg.a, agg.b"},
    )
    durations = tmp_path / "d.json"
    durations.write_text(json.dumps({"a": 5, "b": 3, "c": 2}))
    code, out, _ = run(
        "simulate", "--sql-dir", str(directory), "--durations", str(durations),
        "--max-concurrency", "1",
    )  # fmt: skip
    assert code == 0
    # one slot: 5 + 3 then 2 for every strategy; lower bound = total work 10
    assert json.loads(out) == {
        "lower_bound": 10.0,
        "makespan": {"simple-level": 10.0, "parent-level": 10.0, "dependency": 10.0},
    }


@pytest.mark.parametrize("suffix", [".svg", ".html"])
def test_graph_writes_svg_and_html(tmp_path: Path, suffix: str) -> None:
    out = tmp_path / f"dag{suffix}"
    code, _, _ = run("graph", "--sql-dir", str(EXAMPLES), "-o", str(out))
    assert code == 0
    text = out.read_text()
    assert "<svg" in text
    assert "kpi_overview" in text
    assert "L_4E" in text  # group legend
    if suffix == ".svg":
        import xml.etree.ElementTree as ET

        root = ET.fromstring(text)
        assert root.tag.endswith("svg")
        nodes = root.findall(".//{http://www.w3.org/2000/svg}g[@class='node']")
        assert len(nodes) == 12
    else:
        assert text.startswith("<!DOCTYPE html>")


def bad_inputs(tmp: Path) -> list[tuple[list[str], str]]:
    cyclic = write_sql(tmp / "cyc", {"a": "SELECT * FROM agg.b", "b": "SELECT * FROM agg.a"})
    bad = write_sql(tmp / "bad", {"a": "SELECT FROM WHERE ("})
    render_args = ["--database", "d", "--workgroup-name", "w"]
    return [
        (["plan", "--sql-dir", str(cyclic)], "cycle: a -> b -> a"),
        (["plan", "--sql-dir", str(bad)], "a.sql:1:"),
        (["plan", "--sql-dir", str(tmp / "missing")], "does not exist"),
        (
            ["render", "--sql-dir", str(EXAMPLES), "--strategy", "fastest", *render_args],
            "unknown strategy 'fastest'",
        ),
        (["graph", "--sql-dir", str(EXAMPLES), "-o", str(tmp / "x.png")], "must end in .svg"),
    ]


def test_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    for args, message in bad_inputs(tmp_path):
        code, out, err = run(*args)
        assert code == 2, args
        assert out == ""
        assert message in err, err
        assert len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err


def test_help_texts() -> None:
    for command in ([], ["plan"], ["render"], ["simulate"], ["graph"]):
        code, out, _ = run(*command, "--help")
        assert code == 0
        assert "Usage:" in out
    assert "simple-level" in run("render", "--help")[1]
