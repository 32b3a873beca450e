"""Malformed scenario files: one clear line each (file, field path, reason), exit code 2."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bench.cli import main
from bench.engines import ENGINE_NAMES
from scenarios import ScenarioError, load_scenario, load_scenarios

GOOD = """\
name: {name}
description: A valid scenario used as a neighbour of the broken one.
user: What is the weather in Paris?
tools:
  - name: get_weather
    description: Current weather for a city.
    parameters:
      type: object
      properties:
        city: {{type: string}}
      required: [city]
    behavior:
      returns: {{city: Paris, temperature: 14}}
script:
  - tool_calls: [{{name: get_weather, args: {{city: Paris}}}}]
  - content: It is 14 °C in Paris.
"""

# file name -> (YAML text, the one problem line after "<path>: ")
BROKEN = {
    "bad_yaml": (
        "name: bad_yaml\ndescription: d\nuser: [unclosed\nscript:\n  - content: hi\n",
        "invalid YAML: line 4, column 7: expected ',' or ']', but got ':'",
    ),
    "wrong_type": (
        GOOD.format(name="wrong_type") + "expect:\n  llm_calls: three\n",
        "expect.llm_calls: Input should be a valid integer, unable to parse string as an integer",
    ),
    "wrong_status": (
        GOOD.format(name="wrong_status") + "expect:\n  status: done\n",
        "expect.status: Input should be 'completed', 'failed', 'aborted' or 'error'",
    ),
    "undefined_tool": (
        GOOD.format(name="undefined_tool").replace(
            "  - content: It", "  - tool_calls: [{name: serch}]\n  - content: It"
        ),
        "script[1].tool_calls[0].name: tool 'serch' is not defined",
    ),
    "args_violate_schema": (
        GOOD.format(name="args_violate_schema").replace("args: {city: Paris}", "args: {city: 75}"),
        "script[0].tool_calls[0].args.city: 75 is not of type 'string'",
    ),
    "missing_required_arg": (
        GOOD.format(name="missing_required_arg").replace("args: {city: Paris}", "args: {}"),
        "script[0].tool_calls[0].args: 'city' is a required property",
    ),
    "name_mismatch": (
        GOOD.format(name="another_name"),
        "name: 'another_name' must equal the file name 'name_mismatch'",
    ),
    "ends_in_tool_calls": (
        GOOD.format(name="ends_in_tool_calls").replace("  - content: It is 14 °C in Paris.\n", ""),
        "script: ends with tool calls but expect.status is completed; "
        "end with a content turn or expect another status",
    ),
    "two_outcomes": (
        GOOD.format(name="two_outcomes").replace(
            "      returns: {city: Paris, temperature: 14}",
            "      returns: {city: Paris}\n      raises: boom",
        ),
        "tools[0].behavior: choose one of returns | raises | hangs | results, not returns and raises",
    ),
    "override_without_reason": (
        GOOD.format(name="override_without_reason")
        + "expect:\n  engines:\n    lc-react: {llm_calls: 3}\n",
        "expect.engines.lc-react.reason: Field required",
    ),
    "unknown_field": (
        GOOD.format(name="unknown_field").replace("user:", "usr: typo\nuser:"),
        "usr: unknown field; did you mean 'user'?",
    ),
    "deny_without_confirmation": (
        GOOD.format(name="deny_without_confirmation").replace(
            "    behavior:", "    approval: deny\n    behavior:"
        ),
        "tools[0].approval: 'deny' has no effect without require_confirmation: true",
    ),
    "negative_timeout": (
        GOOD.format(name="negative_timeout") + "limits:\n  run_timeout_s: -1\n",
        "limits.run_timeout_s: Input should be greater than 0",
    ),
    "unquoted_comma": (
        GOOD.format(name="unquoted_comma").replace(
            "city: {type: string}", "city: {type: string, description: A city, e.g. Paris.}"
        ),
        "tools[0].parameters: properties.city: key 'e.g. Paris.' has no value; in YAML a comma "
        "splits a {...} mapping, so quote text that contains one",
    ),
    "fault_without_effect": (
        GOOD.format(name="fault_without_effect").replace(
            "  - content: It", "  - fault: {times: 2}\n    content: It"
        ),
        "script[1].fault: a fault needs a status, a delay_s, a stream or a first_token_s",
    ),
    "unknown_stream_fault": (
        GOOD.format(name="unknown_stream_fault").replace(
            "  - content: It", "  - fault: {stream: cut}\n    content: It"
        ),
        "script[1].fault.stream: Input should be 'truncate', 'drop', 'corrupt' or 'stall'",
    ),
    "status_and_stream": (
        GOOD.format(name="status_and_stream").replace(
            "  - content: It", "  - fault: {status: 500, stream: drop}\n    content: It"
        ),
        "script[1].fault: a status fault answers an error body: it has no stream to break",
    ),
    "stall_without_duration": (
        GOOD.format(name="stall_without_duration").replace(
            "  - content: It", "  - fault: {stream: stall}\n    content: It"
        ),
        "script[1].fault: stream: stall needs stall_s, and stall_s needs stream: stall",
    ),
    "where_without_stream": (
        GOOD.format(name="where_without_stream").replace(
            "  - content: It", "  - fault: {first_token_s: 0.5, at: 0.2}\n    content: It"
        ),
        "script[1].fault: at: says where a stream breaks; set stream too",
    ),
    "resume_without_stall": (
        GOOD.format(name="resume_without_stall").replace(
            "  - content: It", "  - fault: {stream: drop, resume: false}\n    content: It"
        ),
        "script[1].fault: resume: only applies to stream: stall",
    ),
    "fault_times_word": (
        GOOD.format(name="fault_times_word").replace(
            "  - content: It", "  - fault: {status: 503, times: forever}\n    content: It"
        ),
        "script[1].fault.times: must be a number of requests from 1 to 100, or 'always'",
    ),
    "break_point_out_of_range": (
        GOOD.format(name="break_point_out_of_range").replace(
            "  - content: It", "  - fault: {stream: drop, at: 1}\n    content: It"
        ),
        "script[1].fault.at: Input should be less than 1",
    ),
    "repeat_not_last": (
        GOOD.format(name="repeat_not_last").replace(
            "args: {city: Paris}}]", "args: {city: Paris}}]\n    repeat: true"
        ),
        "script[0].repeat: only the last turn may repeat",
    ),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_one_clear_line_per_broken_file(tmp_path, name):
    text, problem = BROKEN[name]
    path = tmp_path / f"{name}.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert caught.value.lines == [f"{path}: {problem}"]
    assert str(caught.value) == f"{path}: {problem}"


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_validate_names_the_file_field_and_reason_and_exits_2(tmp_path, capsys, name):
    text, problem = BROKEN[name]
    (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "zz_fine.yaml").write_text(GOOD.format(name="zz_fine"), encoding="utf-8")
    assert main(["scenarios", "validate", "--scenario-dir", str(tmp_path)]) == 2
    out = capsys.readouterr()
    assert out.out == f"{tmp_path / name}.yaml: {problem}\n1 valid, 1 invalid (2 files)\n"
    assert out.err == ""


def test_validate_reports_every_broken_file_at_once(tmp_path, capsys):
    for name, (text, _) in BROKEN.items():
        (tmp_path / f"{name}.yaml").write_text(text, encoding="utf-8")
    assert main(["scenarios", "validate", "--scenario-dir", str(tmp_path)]) == 2
    expected = [f"{tmp_path / name}.yaml: {BROKEN[name][1]}" for name in sorted(BROKEN)]
    expected.append(f"0 valid, {len(BROKEN)} invalid ({len(BROKEN)} files)")
    assert capsys.readouterr().out.splitlines() == expected


def test_validate_flags_an_override_for_an_unknown_engine(tmp_path, capsys):
    text = GOOD.format(name="typo_engine") + (
        "expect:\n  engines:\n    lc-reakt: {reason: a typo, llm_calls: 3}\n"
    )
    (tmp_path / "typo_engine.yaml").write_text(text, encoding="utf-8")
    assert main(["scenarios", "validate", "--scenario-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().out == (
        f"{tmp_path / 'typo_engine.yaml'}: expect.engines.lc-reakt: unknown engine; did you mean "
        "'lc-react'? valid engines: " + ", ".join(ENGINE_NAMES) + "\n0 valid, 1 invalid (1 files)\n"
    )


def test_load_scenarios_lists_all_bad_files(tmp_path):
    for name in ("wrong_type", "name_mismatch"):
        (tmp_path / f"{name}.yaml").write_text(BROKEN[name][0], encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenarios(tmp_path)
    assert caught.value.lines == [
        f"{tmp_path / 'name_mismatch.yaml'}: {BROKEN['name_mismatch'][1]}",
        f"{tmp_path / 'wrong_type.yaml'}: {BROKEN['wrong_type'][1]}",
    ]


def test_list_refuses_a_directory_with_a_broken_file(tmp_path, capsys):
    (tmp_path / "wrong_type.yaml").write_text(BROKEN["wrong_type"][0], encoding="utf-8")
    assert main(["scenarios", "list", "--scenario-dir", str(tmp_path)]) == 2
    out = capsys.readouterr()
    assert out.out == ""
    assert out.err == (
        "schedbench scenarios: error: cannot load scenarios:\n"
        f"{tmp_path / 'wrong_type.yaml'}: {BROKEN['wrong_type'][1]}\n"
    )


def test_validate_on_a_missing_or_empty_directory(tmp_path, capsys):
    missing = tmp_path / "nope"
    assert main(["scenarios", "validate", "--scenario-dir", str(missing)]) == 2
    assert capsys.readouterr().err == f"schedbench scenarios: error: {missing}: not a directory\n"
    assert main(["scenarios", "validate", "--scenario-dir", str(tmp_path)]) == 2
    assert capsys.readouterr().err == (
        f"schedbench scenarios: error: {tmp_path}: no *.yaml scenario files\n"
    )


def _console_script() -> str:
    script = Path(sys.executable).parent / "schedbench"
    return str(script) if script.exists() else shutil.which("schedbench") or "schedbench"


def test_validate_exits_2_as_a_real_process(tmp_path):
    text, problem = BROKEN["undefined_tool"]
    (tmp_path / "undefined_tool.yaml").write_text(text, encoding="utf-8")
    done = subprocess.run(
        [_console_script(), "scenarios", "validate", "--scenario-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert done.returncode == 2
    assert done.stdout == (
        f"{tmp_path / 'undefined_tool.yaml'}: {problem}\n0 valid, 1 invalid (1 files)\n"
    )
    assert "Traceback" not in done.stderr


# -- every problem of a file in one pass, with "did you mean" ------------------------------

SEARCH = GOOD.replace("get_weather", "search_weather")


def test_a_file_with_three_mistakes_reports_all_three_in_field_order(tmp_path):
    text = (
        SEARCH.format(name="three")
        .replace("user:", "usr: typo\nuser:")
        .replace("  - content: It", "  - tool_calls: [{name: serch_weather}]\n  - content: It")
        + "expect:\n  llm_calls: three\n"
    )
    path = tmp_path / "three.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert caught.value.lines == [
        f"{path}: script[1].tool_calls[0].name: tool 'serch_weather' is not defined; "
        "did you mean 'search_weather'?",
        f"{path}: expect.llm_calls: Input should be a valid integer, unable to parse string as "
        "an integer",
        f"{path}: usr: unknown field; did you mean 'user'?",
    ]


def test_cross_field_problems_are_all_reported_not_only_the_first(tmp_path):
    text = (
        GOOD.format(name="many")
        .replace("args: {city: Paris}}]", "args: {city: 75}}]\n    repeat: true")
        .replace("    behavior:", "    approval: deny\n    behavior:")
        + "expect:\n  tools: [get_wether]\n  engines:\n    lc-reakt: {reason: typo}\n"
    )
    path = tmp_path / "many.yaml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path, engines=ENGINE_NAMES)
    assert caught.value.lines == [
        f"{path}: tools[0].approval: 'deny' has no effect without require_confirmation: true",
        f"{path}: script[0].repeat: only the last turn may repeat",
        f"{path}: script[0].tool_calls[0].args.city: 75 is not of type 'string'",
        f"{path}: expect.tools[0]: tool 'get_wether' is not defined; did you mean 'get_weather'?",
        f"{path}: expect.engines.lc-reakt: unknown engine; did you mean 'lc-react'? valid "
        "engines: " + ", ".join(ENGINE_NAMES),
    ]


@pytest.mark.parametrize(
    ("edit", "problems"),
    [
        (
            ("    behavior:", "    behaviour:"),
            ["tools[0].behaviour: unknown field; did you mean 'behavior'?"],
        ),
        (
            ("args: {city: Paris}}]", "arg: {city: Paris}}]"),
            [
                "script[0].tool_calls[0].arg: unknown field; did you mean 'args'?",
                "script[0].tool_calls[0].args: 'city' is a required property",
            ],
        ),
        (
            ("  - content: It is 14 °C in Paris.\n", "  - content: It is 14 °C in Paris.\n"
             "expect:\n  engines:\n    raw: {reason: r, llm_call: 3}\n"),
            ["expect.engines.raw.llm_call: unknown field; did you mean 'llm_calls'?"],
        ),
        (
            ("      returns:", "      zzz: 1\n      returns:"),
            [
                "tools[0].behavior.zzz: unknown field; valid fields: returns, raises, hangs, "
                "latency_ms, fail_times, fail_message, fail_rate, returns_size_kb, results"
            ],
        ),
    ],
)  # fmt: skip
def test_unknown_fields_say_which_field_was_meant(tmp_path, edit, problems):
    path = tmp_path / "typo.yaml"
    path.write_text(GOOD.format(name="typo").replace(*edit), encoding="utf-8")
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert caught.value.lines == [f"{path}: {problem}" for problem in problems]


# -- tool argument schemas are closed by default ---------------------------------------------


@pytest.mark.parametrize(
    ("args", "problems"),
    [
        (
            # an unquoted comma in a flow mapping: a second key with no value
            "{city: Paris, France}",
            [
                "script[0].tool_calls[0].args: key 'France' has no value; in YAML a comma "
                "splits a {...} mapping, so quote text that contains one"
            ],
        ),
        (
            "{cty: Paris}",
            [
                "script[0].tool_calls[0].args: 'city' is a required property",
                "script[0].tool_calls[0].args: argument 'cty' is not in the tool's schema; "
                "did you mean 'city'?",
            ],
        ),
        (
            "{city: Paris, units: metric}",
            [
                "script[0].tool_calls[0].args: argument 'units' is not in the tool's schema; "
                "the tool takes city"
            ],
        ),
    ],
)
def test_scripted_arguments_outside_the_schema_are_errors(tmp_path, args, problems):
    path = tmp_path / "extra.yaml"
    path.write_text(GOOD.format(name="extra").replace("args: {city: Paris}", f"args: {args}"))
    with pytest.raises(ScenarioError) as caught:
        load_scenario(path)
    assert caught.value.lines == [f"{path}: {problem}" for problem in problems]


def test_a_schema_that_allows_other_keys_keeps_them_allowed(tmp_path):
    text = GOOD.format(name="open").replace(
        "      required: [city]", "      required: [city]\n      additionalProperties: true"
    )
    path = tmp_path / "open.yaml"
    path.write_text(text.replace("args: {city: Paris}", "args: {city: Paris, units: metric}"))
    scenario = load_scenario(path)
    assert scenario.script[0].tool_calls[0].args == {"city": "Paris", "units": "metric"}
    assert scenario.tools[0].valid_args({"city": "Paris", "units": "metric"}) is True


def test_the_closure_judges_arguments_but_is_never_sent(tmp_path):
    from bench.engines.base import RunRecord, ToolCallRecord
    from bench.engines.kit.tools import ScenarioTool
    from bench.runner.expectations import observed

    path = tmp_path / "closed.yaml"
    path.write_text(GOOD.format(name="closed"))
    scenario = load_scenario(path)
    tool = scenario.tools[0]
    as_written = {
        "type": "object",
        "properties": {"city": {"type": "string"}},
        "required": ["city"],
    }
    assert ScenarioTool(tool).openai_schema()["function"]["parameters"] == as_written
    assert tool.args_schema == {**as_written, "additionalProperties": False}
    ran = [{"city": "Paris"}, {"city": "Paris", "France": None}]
    record = RunRecord(
        engine="raw", scenario="closed", status="completed", final_answer="It is 14 °C.",
        llm_calls=2, tool_calls=2, wall_ms=1.0, cpu_ms=1.0, prompt_tokens=1,
        completion_tokens=1, requests=[], termination="stop",
        tools=[ToolCallRecord("get_weather", args, True, 0.1) for args in ran],
    )  # fmt: skip
    assert observed(record, scenario)["invalid_tool_args"] == 1


def test_nested_object_schemas_are_closed_unless_they_say_otherwise():
    from scenarios.argschema import closed_schema

    schema = {
        "type": "object",
        "properties": {
            "address": {"type": "object", "properties": {"city": {"type": "string"}}},
            "tags": {"type": "array", "items": {"type": "object", "properties": {"k": {}}}},
            "extra": {"type": "object", "properties": {}, "additionalProperties": True},
            "either": {"anyOf": [{"type": "object", "properties": {"a": {}}}]},
        },
    }
    assert closed_schema(schema) == {
        "type": "object",
        "properties": {
            "address": {
                "type": "object",
                "properties": {"city": {"type": "string"}},
                "additionalProperties": False,
            },
            "tags": {
                "type": "array",
                "items": {"type": "object", "properties": {"k": {}}, "additionalProperties": False},
            },
            "extra": {"type": "object", "properties": {}, "additionalProperties": True},
            "either": {"anyOf": [{"type": "object", "properties": {"a": {}}}]},
        },
        "additionalProperties": False,
    }
    assert "additionalProperties" not in schema  # the schema as written is left as it was


def test_a_scenario_built_in_code_is_held_to_the_same_cross_checks():
    from pydantic import ValidationError

    from scenarios import ScriptToolCall, ToolDef, Turn
    from scenarios.schema import Scenario

    with pytest.raises(ValidationError) as caught:
        Scenario(
            name="code",
            description="d",
            user="u",
            tools=[ToolDef(name="search", description="d")],
            script=[
                Turn(tool_calls=[ScriptToolCall(name="serch", args={"q": 1})]),
                Turn(content="c"),
            ],
        )
    [error] = caught.value.errors()
    assert error["msg"] == (
        "Value error, script[0].tool_calls[0].name: tool 'serch' is not defined; did you mean "
        "'search'?"
    )
