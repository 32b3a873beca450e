"""Load and validate scenario files, with errors that name the file, the field and the reason."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import yaml
from pydantic import ValidationError

from scenarios.schema import Scenario

BUILTIN_DIR = Path(__file__).resolve().parent


class ScenarioError(ValueError):
    """A scenario file that cannot be used; ``str()`` is one line per problem."""

    def __init__(self, path: Path | str, problems: list[str]):
        self.lines = [f"{path}: {problem}" for problem in problems]
        super().__init__("\n".join(self.lines))

    @classmethod
    def combine(cls, errors: list[ScenarioError]) -> ScenarioError:
        """One error holding every line of several."""
        combined = cls("", [])
        combined.lines = [line for error in errors for line in error.lines]
        combined.args = ("\n".join(combined.lines),)
        return combined


def _format_loc(loc: Iterable[object]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _problems(exc: ValidationError) -> list[str]:
    problems = []
    for err in exc.errors():
        message = err["msg"].removeprefix("Value error, ")
        # pydantic repeats the model name for union members; keep the user's path only
        loc = [p for p in err["loc"] if not (isinstance(p, str) and p[:1].isupper())]
        where = _format_loc(loc)
        problems.append(f"{where}: {message}" if where else message)
    return problems


def parse_scenario(text: str, source: Path | str = "<string>") -> Scenario:
    """Parse YAML text into a validated Scenario; raises ScenarioError."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        reason = getattr(exc, "problem", None) or str(exc)
        raise ScenarioError(source, [f"invalid YAML: {where}{reason}"]) from None
    if not isinstance(data, dict):
        raise ScenarioError(source, ["expected a mapping of scenario fields at the top level"])
    try:
        scenario = Scenario.model_validate(data)
    except ValidationError as exc:
        raise ScenarioError(source, _problems(exc)) from None
    stem = Path(str(source)).stem
    if str(source) != "<string>" and scenario.name != stem:
        raise ScenarioError(source, [f"name: '{scenario.name}' must equal the file name '{stem}'"])
    return scenario


def load_scenario(path: Path | str) -> Scenario:
    """Load one scenario file; raises ScenarioError naming the file, field and reason."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ScenarioError(path, [f"cannot read: {exc.strerror}"]) from None
    return parse_scenario(text, path)


def scenario_files(directory: Path | str | None = None) -> list[Path]:
    """The scenario files of a directory (default: the built-in scenarios), sorted by name."""
    directory = Path(directory) if directory is not None else BUILTIN_DIR
    if not directory.is_dir():
        raise ScenarioError(directory, ["not a directory"])
    return sorted(p for p in directory.glob("*.yaml") if not p.name.startswith("_"))


def load_scenarios(directory: Path | str | None = None) -> dict[str, Scenario]:
    """Every scenario of a directory by name; raises ScenarioError listing all bad files."""
    scenarios: dict[str, Scenario] = {}
    errors: list[ScenarioError] = []
    for path in scenario_files(directory):
        try:
            scenario = load_scenario(path)
        except ScenarioError as exc:
            errors.append(exc)
            continue
        scenarios[scenario.name] = scenario
    if errors:
        raise ScenarioError.combine(errors)
    return scenarios
