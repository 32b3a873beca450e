"""The workload file: a bad one is refused with one line per problem naming the file, the
field and the reason; the example and the docs agree with the model."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench import PROJECT_ROOT
from bench.engines.registry import ENGINE_NAMES
from bench.workload import Workload, WorkloadError, load_workload
from bench.workload.model import describe

GOOD = """\
name: tiny
llm: {first_token_ms: 20, tokens_per_s: 2000, jitter: 0.1}
rate: 4
objective: {p95_ms: 1500}
scenarios: [single_tool]
"""


def write(tmp_path: Path, text: str, name: str = "w.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def problems(path: Path) -> list[str]:
    with pytest.raises(WorkloadError) as caught:
        load_workload(path, engine_names=ENGINE_NAMES)
    return caught.value.lines


def test_a_good_file_loads_with_its_defaults(tmp_path: Path) -> None:
    workload = load_workload(write(tmp_path, GOOD), engine_names=ENGINE_NAMES)
    assert workload.hosts == 1 and workload.host_rate == 4.0
    assert workload.streaming is False and workload.engines is None and workload.prices is None
    assert workload.latency_spec == "custom:ttft:20,tps:2000,jitter:0.1"


@pytest.mark.parametrize(
    ("change", "field", "reason"),
    [
        (("rate: 4", "rat: 4"), "rat", "unknown field; did you mean 'rate'?"),
        (("rate: 4", "rate: -1"), "rate", "greater than 0"),
        (("rate: 4\n", ""), "rate", "Field required"),
        (("jitter: 0.1", "jitter: 1.5"), "llm.jitter", "less than or equal to 0.99"),
        (("tokens_per_s: 2000", "tokens: 2000"), "llm.tokens", "did you mean 'tokens_per_s'?"),
        (("{p95_ms: 1500}", "{}"), "objective", "give p95_ms, p99_ms or both"),
        (
            ("{p95_ms: 1500}", "{p95_ms: 1500, p99_ms: 900}"),
            "objective",
            "p99_ms (900) is below p95_ms (1500)",
        ),
        (("[single_tool]", "[single_tool, single_tool]"), "scenarios", "named more than once"),
        (("[single_tool]", "[no_such_scenario]"), "scenarios[0]", "no scenario in scenarios/"),
        (("[single_tool]", "[single_tol]"), "scenarios[0]", "did you mean 'single_tool'?"),
        (("[single_tool]", "[tool_flaky, single_tool]"), "scenarios[0]", "is a fault scenario"),
        (("rate: 4", "rate: 9000"), "rate", "9000 runs/s over 1 host(s)"),
        (("name: tiny", "name: 'a b'"), "name", "should match pattern"),
        ((GOOD, GOOD + "engines: [raw, lc-create-agnet]\n"), "engines[1]", "did you mean"),
        ((GOOD, GOOD + "prices: {core_hour: -1}\n"), "prices.core_hour", "greater than or equal"),
        ((GOOD, GOOD + "scenario_dir: nowhere\n"), "scenario_dir", "is not a directory"),
        ((GOOD, GOOD + "streaming: maybe\n"), "streaming", "valid boolean"),
        ((GOOD, GOOD + "tools: {failure_rate: 0.95}\n"), "tools.failure_rate", "less than or"),
        ((GOOD, GOOD + "tools: {}\n"), "tools", "give latency_ms, failure_rate or both"),
        (
            (
                "{first_token_ms: 20, tokens_per_s: 2000, jitter: 0.1}",
                "{recorded: true, jitter: 0.1}",
            ),
            "llm",
            "jitter cannot be given with it",
        ),
        (
            ("{first_token_ms: 20, tokens_per_s: 2000, jitter: 0.1}", "{}"),
            "llm",
            "or recorded: true",
        ),
        (
            ("{first_token_ms: 20, tokens_per_s: 2000, jitter: 0.1}", "{recorded: true}"),
            "llm.recorded",
            "has turns without a recorded timing (script[0, 1])",
        ),
    ],
)
def test_a_bad_file_names_file_field_and_reason(
    tmp_path: Path, change: tuple[str, str], field: str, reason: str
) -> None:
    old, new = change
    assert old in GOOD
    path = write(tmp_path, GOOD.replace(old, new, 1))
    lines = problems(path)
    # a misspelt field is also a missing one: each problem on its own line
    assert len(lines) == (2 if field == "rat" else 1), lines
    mine = [line for line in lines if line.startswith(f"{path}: {field}: ")]
    assert len(mine) == 1 and reason in mine[0], lines


def test_every_problem_of_a_file_at_once(tmp_path: Path) -> None:
    text = GOOD.replace("rate: 4", "rate: 0").replace("jitter: 0.1", "jiter: 0.1")
    lines = problems(write(tmp_path, text))
    assert [line.split(": ")[1] for line in lines] == ["llm.jiter", "rate"]


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("name: [unclosed\n", "invalid YAML: line 2"),
        ("- a list\n", "expected a mapping of workload fields"),
        ("a: &x [*x]\n", "refused YAML"),
    ],
)
def test_a_file_that_is_no_workload(tmp_path: Path, text: str, reason: str) -> None:
    path = write(tmp_path, text)
    lines = problems(path)
    assert lines[0].startswith(f"{path}: ") and reason in lines[0], lines


def test_missing_and_binary_files(tmp_path: Path) -> None:
    assert problems(tmp_path / "absent.yaml") == [f"{tmp_path / 'absent.yaml'}: not a regular file"]
    binary = tmp_path / "b.yaml"
    binary.write_bytes(b"name: \xff\n")
    assert "not UTF-8" in problems(binary)[0]


def test_scenario_dir_is_relative_to_the_file(tmp_path: Path) -> None:
    mine = tmp_path / "mine"
    mine.mkdir()
    source = (PROJECT_ROOT / "scenarios" / "single_tool.yaml").read_text()
    (mine / "single_tool.yaml").write_text(source)
    path = write(tmp_path, GOOD + "scenario_dir: mine\n")
    workload = load_workload(path, engine_names=ENGINE_NAMES)
    assert workload.scenario_dir == str(mine.resolve())


def test_a_recorded_llm_plays_the_recording(tmp_path: Path) -> None:
    """``llm: {recorded: true}`` is the ``recorded`` profile, for a first scenario that is a
    recording (every turn with its timing)."""
    import yaml

    mine = tmp_path / "mine"
    mine.mkdir()
    data = yaml.safe_load((PROJECT_ROOT / "scenarios" / "single_tool.yaml").read_text())
    for turn in data["script"]:
        turn["timing"] = {"stream": True, "ttft_ms": 400.0, "total_ms": 650.0}
    (mine / "single_tool.yaml").write_text(yaml.safe_dump(data))
    text = GOOD.replace("{first_token_ms: 20, tokens_per_s: 2000, jitter: 0.1}", "{recorded: true}")
    workload = load_workload(write(tmp_path, text + "scenario_dir: mine\n"))
    assert workload.latency_spec == "recorded"
    assert describe(workload)["LLM"].startswith("as recorded")


def test_the_example_workload_is_valid() -> None:
    workload = load_workload(PROJECT_ROOT / "workloads" / "support-team.yaml")
    assert workload.streaming and workload.prices is not None and workload.hosts > 1


def test_the_docs_describe_every_field() -> None:
    docs = (PROJECT_ROOT / "docs" / "workload.md").read_text()
    documented = set(re.findall(r"^\| `([a-z_0-9.]+)` \|", docs, re.MULTILINE))
    fields = set(Workload.model_fields)
    for name in ("llm", "objective", "tools", "conversation", "prices"):
        annotation = Workload.model_fields[name].annotation
        model = next(
            a
            for a in (annotation, *getattr(annotation, "__args__", ()))
            if hasattr(a, "model_fields")
        )
        fields |= {f"{name}.{sub}" for sub in model.model_fields}
    assert fields == documented
