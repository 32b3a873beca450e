"""``schedbench scenarios new NAME [--from TEMPLATE] [--scenario-dir D]``."""

from __future__ import annotations

import pytest

from bench.cli import main
from scenarios import BUILTIN_DIR, load_scenario, load_scenarios


def test_new_writes_a_commented_file_that_validates(tmp_path, capsys):
    directory = tmp_path / "private" / "scenarios"  # created on demand
    assert main(["scenarios", "new", "my_case", "--scenario-dir", str(directory)]) == 0
    target = directory / "my_case.yaml"
    assert capsys.readouterr().out == (
        f"wrote {target}\n"
        f"next: edit it, then run `schedbench scenarios validate --scenario-dir {directory}`\n"
    )
    text = target.read_text(encoding="utf-8")
    template = (BUILTIN_DIR / "_template.yaml").read_text(encoding="utf-8")
    assert text == template.replace("name: _template   ", "name: my_case   ", 1)
    assert "# fault: {status: 429, retry_after_s: 0.05, times: 1}" in text  # comments kept
    scenario = load_scenario(target)
    assert scenario.name == "my_case"
    assert main(["scenarios", "validate", "--scenario-dir", str(directory)]) == 0
    assert capsys.readouterr().out == "1 valid, 0 invalid (1 files)\n"


def test_new_then_list_shows_it(tmp_path, capsys):
    assert main(["scenarios", "new", "listed_case", "--scenario-dir", str(tmp_path)]) == 0
    capsys.readouterr()
    assert main(["scenarios", "list", "--scenario-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"1 scenarios in {tmp_path}" in out
    assert "│ listed_case │ happy-path │     1 │     2 │" in out


def test_new_refuses_to_overwrite(tmp_path, capsys):
    target = tmp_path / "taken.yaml"
    target.write_text("# mine, do not touch\n", encoding="utf-8")
    assert main(["scenarios", "new", "taken", "--scenario-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"schedbench scenarios: error: {target} already exists; "
        "choose another name or delete it first\n"
    )
    assert target.read_text(encoding="utf-8") == "# mine, do not touch\n"


def test_new_refuses_to_overwrite_a_builtin(capsys):
    before = (BUILTIN_DIR / "single_tool.yaml").read_text(encoding="utf-8")
    assert main(["scenarios", "new", "single_tool"]) == 2
    assert capsys.readouterr().err == (
        f"schedbench scenarios: error: {BUILTIN_DIR / 'single_tool.yaml'} already exists; "
        "choose another name or delete it first\n"
    )
    assert (BUILTIN_DIR / "single_tool.yaml").read_text(encoding="utf-8") == before


@pytest.mark.parametrize("name", ["My_case", "my-case", "my case", "../escape", "a.yaml", ""])
def test_new_refuses_bad_names(tmp_path, capsys, name):
    assert main(["scenarios", "new", name, "--scenario-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"schedbench scenarios: error: invalid scenario name {name!r}: use lowercase letters, "
        "digits and underscores (it is also the file name)\n"
    )
    assert list(tmp_path.iterdir()) == []


def test_new_from_a_builtin_copies_it_with_the_new_name(tmp_path, capsys):
    args = ["scenarios", "new", "my_returns", "--from", "customer_returns"]
    assert main([*args, "--scenario-dir", str(tmp_path)]) == 0
    target = tmp_path / "my_returns.yaml"
    assert capsys.readouterr().out.splitlines()[0] == f"wrote {target} (from customer_returns)"
    source = (BUILTIN_DIR / "customer_returns.yaml").read_text(encoding="utf-8")
    assert target.read_text(encoding="utf-8") == (
        "# Copied from customer_returns by `schedbench scenarios new`.\n"
        + source.replace("name: customer_returns\n", "name: my_returns\n", 1)
    )
    copy, original = load_scenario(target), load_scenarios()["customer_returns"]
    assert copy.model_dump(exclude={"name"}) == original.model_dump(exclude={"name"})


def test_new_from_a_scenario_in_the_same_directory(tmp_path, capsys):
    assert main(["scenarios", "new", "first", "--scenario-dir", str(tmp_path)]) == 0
    (tmp_path / "first.yaml").write_text(
        (tmp_path / "first.yaml").read_text(encoding="utf-8").replace("Paris", "Lyon"),
        encoding="utf-8",
    )
    assert (
        main(["scenarios", "new", "second", "--from", "first", "--scenario-dir", str(tmp_path)])
        == 0
    )
    assert load_scenario(tmp_path / "second.yaml").user == "What is the weather in Lyon right now?"


def test_new_from_a_path(tmp_path, capsys):
    source = BUILTIN_DIR / "single_tool.yaml"
    assert (
        main(
            ["scenarios", "new", "by_path", "--from", str(source), "--scenario-dir", str(tmp_path)]
        )
        == 0
    )
    assert load_scenario(tmp_path / "by_path.yaml").tools[0].name == "get_weather"


def test_new_from_an_unknown_template_lists_the_valid_ones(tmp_path, capsys):
    (tmp_path / "mine.yaml").write_text(
        (BUILTIN_DIR / "single_tool.yaml")
        .read_text(encoding="utf-8")
        .replace("name: single_tool", "name: mine"),
        encoding="utf-8",
    )
    assert main(["scenarios", "new", "x", "--from", "nope", "--scenario-dir", str(tmp_path)]) == 2
    known = sorted([*load_scenarios(), "mine"])
    assert capsys.readouterr().err == (
        f"schedbench scenarios: error: unknown template 'nope'; valid templates: {', '.join(known)}\n"
    )
    assert not (tmp_path / "x.yaml").exists()


def test_new_refuses_an_invalid_template_and_writes_nothing(tmp_path, capsys):
    (tmp_path / "broken.yaml").write_text(
        "name: broken\ndescription: d\nuser: u\nscript: []\n", encoding="utf-8"
    )
    assert main(["scenarios", "new", "y", "--from", "broken", "--scenario-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        "schedbench scenarios: error: the template does not validate:\n"
        f"{tmp_path / 'y.yaml'}: script: List should have at least 1 item after validation, not 0\n"
    )
    assert not (tmp_path / "y.yaml").exists()
