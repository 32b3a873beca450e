"""Hostile scenario files: code, alias bombs, files that broke the loader, unbounded numbers."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.hostile.conftest import good, invalid, refused, schedbench

HANDLER = """\
name: {name}
description: A tool whose behaviour is Python code.
user: Run it.
tools:
  - name: act
    description: Does something.
    parameters:
      type: object
      properties: {{command: {{type: string}}}}
    handler: {handler}
script:
  - tool_calls: [{{name: act, args: {{command: "touch {mark}"}}}}]
  - content: done
expect:
  status: completed
  tool_calls: 1
  final_contains: done
"""

REFUSED = (
    "a handler is Python code that runs as you; allow it with --trust-handlers, "
    "or --handlers-from DIR for modules in DIR"
)


def handler_file(folder: Path, name: str, handler: str, mark: Path) -> Path:
    path = folder / f"{name}.yaml"
    path.write_text(HANDLER.format(name=name, handler=handler, mark=mark))
    return path


# -- handlers are code: opt-in -------------------------------------------------------------


def test_validate_reports_a_handler_unless_allowed(folder, tmp_path):
    handler_file(folder, "shell", "os:system", tmp_path / "pwned")
    (folder / "fine.yaml").write_text(good("fine"))
    invalid(
        schedbench("scenarios", "validate", "--scenario-dir", str(folder)),
        [
            f"{folder}/shell.yaml: tools[0].handler: 'os:system' refused: {REFUSED}",
            "1 valid, 1 invalid (2 files)",
        ],
    )


def test_run_refuses_a_handler_before_anything_runs_or_is_created(folder, tmp_path):
    mark = tmp_path / "pwned"
    handler_file(folder, "shell", "os:system", mark)
    out = tmp_path / "out"
    done = schedbench(
        "run", "--scenario-dir", str(folder), "--engines", "raw", "--quick", "--out", str(out)
    )
    refused(done, "run", f"scenario 'shell': tools[0].handler: 'os:system' refused: {REFUSED}")
    assert not mark.exists()  # the scripted command never ran
    assert not out.exists()  # and no half-made run folder


def test_handlers_from_a_directory_allow_only_modules_in_it(folder, tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (code / "greeter.py").write_text("def greet(command):\n    return {'said': command}\n")
    (code / "json.py").write_text("def loads(command):\n    return 'shadowed'\n")
    handler_file(folder, "greet", "greeter:greet", tmp_path / "unused")
    handler_file(folder, "shell", "os:system", tmp_path / "pwned")
    handler_file(folder, "shadow", "json:loads", tmp_path / "unused")
    python = f"{Path(os.__file__).resolve()}"
    json_file = Path(__import__("json").__file__).resolve()
    invalid(
        schedbench(
            "scenarios", "validate", "--scenario-dir", str(folder), "--handlers-from", str(code)
        ),
        [
            f"{folder}/shadow.yaml: tools[0].handler: 'json:loads' refused: module 'json' is not "
            f"in --handlers-from {code} (it is {json_file})",
            f"{folder}/shell.yaml: tools[0].handler: 'os:system' refused: module 'os' is not in "
            f"--handlers-from {code} (it is {python})",
            "1 valid, 2 invalid (3 files)",
        ],
    )


def test_an_allowed_handler_runs_on_every_engine_kind(folder, tmp_path):
    code = tmp_path / "code"
    code.mkdir()
    (code / "greeter.py").write_text("def greet(command):\n    return {'said': command}\n")
    handler_file(folder, "greet", "greeter:greet", tmp_path / "unused")
    out = tmp_path / "out"
    done = schedbench(
        "run", "--scenario-dir", str(folder), "--handlers-from", str(code),
        "--engines", "raw,scheduler", "--repeat", "2", "--rounds", "1", "--warmup", "0",
        "--no-throughput", "--no-footprint", "--no-ttft", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    rows = [line for line in (out / "runs.jsonl").read_text().splitlines() if line]
    assert len(rows) == 4
    assert all('"status": "completed"' in row and '"expect_ok": true' in row for row in rows)


@pytest.mark.parametrize(
    ("handler", "problem"),
    [
        (
            "no_such_module_anywhere:f",
            "cannot import 'no_such_module_anywhere' (ModuleNotFoundError: "
            "No module named 'no_such_module_anywhere')",
        ),
        (
            "tests.hostile.handlers:nothing_here",
            "'tests.hostile.handlers' has no callable 'nothing_here'",
        ),
        (
            "tests.hostile.handlers_that_raise:f",
            "cannot import 'tests.hostile.handlers_that_raise' (RuntimeError: broken on import)",
        ),
    ],
)
def test_an_unimportable_handler_is_a_validation_error(folder, tmp_path, handler, problem):
    handler_file(folder, "broken", handler, tmp_path / "unused")
    invalid(
        schedbench("scenarios", "validate", "--scenario-dir", str(folder), "--trust-handlers"),
        [f"{folder}/broken.yaml: tools[0].handler: {problem}", "0 valid, 1 invalid (1 files)"],
    )
    done = schedbench(
        "run", "--scenario-dir", str(folder), "--trust-handlers", "--engines", "raw",
        "--quick", "--out", str(tmp_path / "out"),
    )  # fmt: skip
    refused(done, "run", f"scenario 'broken': tools[0].handler: {problem}")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(
    "command",
    [
        ["trace", "shell", "--engine", "raw"],
        ["debug-score", "--engines", "raw", "--scenarios", "shell", "--cost-runs", "1"],
    ],
)
def test_trace_and_debug_score_refuse_a_handler_too(folder, tmp_path, command):
    mark = tmp_path / "pwned"
    handler_file(folder, "shell", "os:system", mark)
    done = schedbench(*command, "--scenario-dir", str(folder), cwd=tmp_path)
    message = f"scenario 'shell': tools[0].handler: 'os:system' refused: {REFUSED}"
    refused(done, command[0], message)
    assert not mark.exists()
    assert not (tmp_path / "reports").exists()  # debug-score's default --out was not made


# -- alias bombs and other files that broke the loader -------------------------------------


def alias_bomb(name: str, where: str, levels: int = 9) -> str:
    """A tiny file whose anchors expand ×9 per level (9**9 values for 9 levels), inside the
    tool's JSON Schema (``parameters``) or its result (``returns``)."""
    anchors = ["a0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]"]
    for level in range(1, levels + 1):
        refs = ", ".join(f"*a{level - 1}" for _ in range(9))
        anchors.append(f"a{level}: &a{level} [{refs}]")
    nested = "".join(f"\n        {anchor}" for anchor in anchors)
    if where == "parameters":
        tool = f"    parameters:\n      type: object\n      $defs:{nested}\n"
        returns = "{}"
    else:
        tool, returns = "", nested
    return (
        f"name: {name}\ndescription: d\nuser: u\ntools:\n  - name: t\n    description: d\n"
        f"{tool}    behavior:\n      returns: {returns}\n"
        "script:\n  - tool_calls: [{name: t}]\n  - content: done\n"
    )


BOMB_LINE = (
    "refused YAML: line {line}: aliases expand to more than 50,000 keys and values; "
    "write the data out or use fewer aliases"
)


@pytest.mark.parametrize(("where", "line"), [("parameters", 14), ("returns", 13)])
def test_an_alias_bomb_is_refused_at_once_by_every_command(folder, tmp_path, where, line):
    bomb = folder / "bomb.yaml"
    bomb.write_text(alias_bomb("bomb", where))
    assert bomb.stat().st_size < 1024
    (folder / "fine.yaml").write_text(good("fine"))
    message = f"{bomb}: " + BOMB_LINE.format(line=line)
    invalid(
        schedbench("scenarios", "validate", "--scenario-dir", str(folder)),
        [message, "1 valid, 1 invalid (2 files)"],
    )
    for command in (
        ["scenarios", "list"],
        ["run", "--quick", "--engines", "raw", "--out", str(tmp_path / "out")],
        ["mock", "serve", "--port", "0"],
    ):
        done = schedbench(*command, "--scenario-dir", str(folder))
        assert "Traceback" not in done.stderr
        assert done.returncode == 2
        name = command[0] if command[0] != "scenarios" else "scenarios"
        assert done.error_lines == [f"schedbench {name}: error: cannot load scenarios:", message]
        assert done.seconds < 30
    assert not (tmp_path / "out").exists()


def test_a_smaller_alias_expansion_is_still_fine(folder):
    (folder / "anchors.yaml").write_text(alias_bomb("anchors", "returns", levels=3))
    invalid_or_ok = schedbench("scenarios", "validate", "--scenario-dir", str(folder))
    assert invalid_or_ok.returncode == 0, invalid_or_ok.stdout
    assert invalid_or_ok.stdout == "1 valid, 0 invalid (1 files)\n"


def test_a_recursive_alias_is_refused(folder):
    (folder / "loop.yaml").write_text(good("loop") + "tags: &t [a, *t]\n")
    invalid(
        schedbench("scenarios", "validate", "--scenario-dir", str(folder)),
        [
            f"{folder}/loop.yaml: refused YAML: line 21: a recursive alias (a value that "
            "contains itself)",
            "0 valid, 1 invalid (1 files)",
        ],
    )


def test_each_broken_file_is_reported_and_the_others_still_checked(folder):
    (folder / "a_fine.yaml").write_text(good("a_fine"))
    (folder / "latin1.yaml").write_bytes(good("latin1").encode().replace(b"Paris?", b"Paris\xe9?"))
    (folder / "deep.yaml").write_text(good("deep") + "tags: " + "[" * 600 + "]" * 600 + "\n")
    (folder / "huge.yaml").write_text(good("huge") + "# " + "x" * (1024 * 1024) + "\n")
    (folder / "long_text.yaml").write_text(
        good("long_text").replace("d neighbour", "d " + "y" * 100_001)
    )
    os.mkfifo(folder / "fifo.yaml")  # reading it would block forever
    (folder / "nul.yaml").write_text(good("nul").replace("Paris?", "Paris\0?"))
    (folder / "z_fine.yaml").write_text(good("z_fine"))
    invalid(
        schedbench("scenarios", "validate", "--scenario-dir", str(folder)),
        [
            f"{folder}/deep.yaml: refused YAML: line 21: nested deeper than 32 levels",
            f"{folder}/fifo.yaml: not a regular file",
            f"{folder}/huge.yaml: larger than 1024 KiB; a scenario is data",
            f"{folder}/latin1.yaml: not UTF-8 text: byte 0xe9 at line 3",
            f"{folder}/long_text.yaml: refused YAML: line 2: a text of 100,030 characters; at "
            "most 100,000 (returns_size_kb pads a large result)",
            f"{folder}/nul.yaml: invalid YAML: line 3: character #x0000: special characters "
            "are not allowed",
            "2 valid, 6 invalid (8 files)",
        ],
    )


# -- numbers without bounds ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("edit", "problem"),
    [
        (
            (
                "      returns: {city: Paris, temperature: 14}",
                "      fail_times: 100000000000000000000000000000",
            ),
            "tools[0].behavior.fail_times: Input should be less than or equal to 100",
        ),
        (
            ("      returns: {city: Paris, temperature: 14}", "      latency_ms: 1e12"),
            "tools[0].behavior.latency_ms: Input should be less than or equal to 60000",
        ),
        (
            ("      returns: {city: Paris, temperature: 14}", "      returns_size_kb: 10000000"),
            "tools[0].behavior.returns_size_kb: Input should be less than or equal to 1024",
        ),
        (
            ("expect:", "limits: {max_steps: 1000000000}\nexpect:"),
            "limits.max_steps: Input should be less than or equal to 200",
        ),
        (
            ("expect:", "limits: {llm_timeout_s: 1e9}\nexpect:"),
            "limits.llm_timeout_s: Input should be less than or equal to 600",
        ),
        (
            ("  - content: It is", "  - fault: {status: 429, times: 1000000}\n    content: It is"),
            "script[1].fault.times: Input should be less than or equal to 100",
        ),
        (
            ("  - content: It is", "  - fault: {delay_s: 1e9}\n    content: It is"),
            "script[1].fault.delay_s: Input should be less than or equal to 600",
        ),
        (
            (
                "  - content: It is",
                "  - fault: {status: 429, retry_after_s: 1e9}\n    content: It is",
            ),
            "script[1].fault.retry_after_s: Input should be less than or equal to 60",
        ),
        (
            ("  - content: It is", "  - latency_ms: 1e12\n    content: It is"),
            "script[1].latency_ms: Input should be less than or equal to 60000",
        ),
    ],
)
def test_numbers_have_bounds(folder, edit, problem):
    (folder / "big.yaml").write_text(good("big").replace(*edit))
    invalid(
        schedbench("scenarios", "validate", "--scenario-dir", str(folder)),
        [f"{folder}/big.yaml: {problem}", "0 valid, 1 invalid (1 files)"],
    )


def test_a_forever_script_with_max_steps_in_the_billions_is_refused(folder):
    text = good("forever").replace(
        "  - content: It is 14 degrees in Paris.\n",
        "  - tool_calls: [{name: get_weather, args: {city: Lyon}}]\n    repeat: true\n",
    )
    text = text.replace(
        "expect:\n  status: completed",
        "limits: {max_steps: 1000000000}\nexpect:\n  status: aborted",
    )
    (folder / "forever.yaml").write_text(text)
    invalid(
        schedbench("scenarios", "validate", "--scenario-dir", str(folder)),
        [
            f"{folder}/forever.yaml: limits.max_steps: Input should be less than or equal to 200",
            "0 valid, 1 invalid (1 files)",
        ],
    )


def test_a_catastrophic_pattern_in_a_tool_schema_cannot_hang_the_loader(folder):
    text = good("redos").replace(
        "city: {type: string}", 'city: {type: string, pattern: "^(a|aa)+$"}'
    )
    (folder / "redos.yaml").write_text(text.replace("city: Paris}", f"city: {'a' * 60}!}}"))
    invalid(
        schedbench("scenarios", "validate", "--scenario-dir", str(folder)),
        [
            f"{folder}/redos.yaml: script[0].tool_calls[0].args.city: pattern '^(a|aa)+$' takes "
            "longer than 0.2 s on 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa' (or the file's "
            "patterns over 1.0 s in all); simplify the regular expression (catastrophic "
            "backtracking)",
            "0 valid, 1 invalid (1 files)",
        ],
    )


# -- YAML values no constructor can build, and files too dense to compose -------------------

LONG_INT = "1" * 5000


def test_a_huge_integer_or_an_impossible_date_is_one_line_for_every_command(folder, tmp_path):
    (folder / "bigint.yaml").write_text(good("bigint").replace("temperature: 14", LONG_INT))
    (folder / "date.yaml").write_text(
        good("date").replace(
            "user: What", "history: [{role: user, content: 2026-13-45}]\nuser: What"
        )
    )
    (folder / "hexint.yaml").write_text(good("hexint").replace("14}", f"0x{'f' * 4000}}}"))
    (folder / "fine.yaml").write_text(good("fine"))
    lines = [
        f"{folder}/bigint.yaml: refused YAML: line 13: an integer of more than 4,300 digits",
        f"{folder}/date.yaml: invalid YAML: line 3, column 33: cannot read '2026-13-45' as a "
        "timestamp: month must be in 1..12 (quote it to make it text)",
        f"{folder}/hexint.yaml: refused YAML: line 13: an integer of more than 4,300 digits",
    ]
    invalid(
        schedbench("scenarios", "validate", "--scenario-dir", str(folder)),
        [*lines, "1 valid, 3 invalid (4 files)"],
    )
    for command in (
        ["scenarios", "list"],
        ["run", "--quick", "--engines", "raw", "--out", str(tmp_path / "out")],
    ):
        done = schedbench(*command, "--scenario-dir", str(folder))
        assert "Traceback" not in done.stderr
        assert done.returncode == 2
        assert done.error_lines == [
            f"schedbench {command[0]}: error: cannot load scenarios:",
            *lines,
        ]
    assert not (tmp_path / "out").exists()


def test_a_dense_file_is_refused_while_it_is_composed(folder):
    # 60,000 values, then a syntax error at the end: a loader that composed the whole
    # document before counting would report the syntax error (or blame aliases)
    dense = good("dense") + "tags: [" + ", ".join(["a"] * 60_000) + "]]\n"
    (folder / "dense.yaml").write_text(dense)
    invalid(
        schedbench("scenarios", "validate", "--scenario-dir", str(folder)),
        [
            f"{folder}/dense.yaml: refused YAML: line 21: more than 50,000 keys and values in "
            "the file; a scenario holds its script, not a data set",
            "0 valid, 1 invalid (1 files)",
        ],
    )


def test_the_node_limit_counts_a_file_of_exactly_the_limit_as_fine():
    from scenarios.loader import MAX_NODES, safe_yaml

    # the root list and its values: MAX_NODES nodes in all
    assert safe_yaml("[" + ", ".join(["1"] * (MAX_NODES - 1)) + "]") == [1] * (MAX_NODES - 1)
