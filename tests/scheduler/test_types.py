"""Types (issue 14, point 15 and the "Types" bullet): arguments coerced to the annotations,
pydantic models as parameters, data types in a leaf module, no import cycles."""

from __future__ import annotations

import ast
import enum
from pathlib import Path

import pydantic
import pytest

from scheduler import ToolArgumentsError, tool

PACKAGE = Path(__file__).resolve().parents[2] / "scheduler"


class Priority(enum.Enum):
    LOW = "low"
    HIGH = "high"


class Item(pydantic.BaseModel):
    sku: str
    quantity: int = 1


class Order(pydantic.BaseModel):
    order_id: str
    items: list[Item]


# -- point 15: validated arguments reach the handler as the annotated types ----------------


def test_p15_arguments_are_coerced_to_the_annotations():
    seen = {}

    @tool
    def schedule(
        priority: Priority, count: int, ratio: float, tags: list[Priority] | None = None
    ) -> str:
        """Schedule something."""
        seen.update(priority=priority, count=count, ratio=ratio, tags=tags)
        return "ok"

    args = schedule.check_arguments(
        '{"priority": "high", "count": 2.0, "ratio": 3, "tags": ["low"]}'
    )
    schedule.handler(**args)
    assert seen == {"priority": Priority.HIGH, "count": 2, "ratio": 3.0, "tags": [Priority.LOW]}
    assert (type(seen["count"]), type(seen["ratio"])) == (int, float)
    with pytest.raises(ToolArgumentsError, match=r"2\.5 is not of type 'integer'"):
        schedule.check_arguments('{"priority": "high", "count": 2.5, "ratio": 1}')


def test_p15_pydantic_models_are_parameters():
    received = []

    @tool
    def place(order: Order, note: str = "") -> str:
        """Place an order."""
        received.append(order)
        return "placed"

    schema = place.parameters
    assert schema["properties"]["order"]["$ref"] == "#/$defs/Order"
    assert set(schema["$defs"]) == {"Order", "Item"}
    assert schema["required"] == ["order"]
    args = place.check_arguments('{"order": {"order_id": "A1", "items": [{"sku": "X"}]}}')
    place.handler(**args)
    assert received == [Order(order_id="A1", items=[Item(sku="X", quantity=1)])]
    with pytest.raises(ToolArgumentsError) as caught:
        place.check_arguments('{"order": {"order_id": "A1", "items": [{"quantity": "many"}]}}')
    assert caught.value.errors == [
        "order.items.0.sku: Field required",
        "order.items.0.quantity: Input should be a valid integer, unable to parse string as an integer",
    ]


# -- data types in a leaf module; no module imports another in a circle -------------------


def _imports(path: Path) -> set[str]:
    """Every scheduler module ``path`` imports: module level, TYPE_CHECKING or in a function."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("scheduler"):
            if node.module == "scheduler":
                found.update(f"scheduler.{a.name}" for a in node.names)
            else:
                found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("scheduler."))
    return found


def _graph() -> dict[str, set[str]]:
    modules = {f"scheduler.{p.stem}": p for p in PACKAGE.glob("*.py") if p.stem != "__init__"}
    return {name: _imports(path) & modules.keys() for name, path in modules.items()}


def test_scheduler_modules_import_each_other_in_one_direction():
    graph = _graph()
    order: list[str] = []
    visiting: list[str] = []

    def visit(name: str) -> None:
        if name in order:
            return
        assert name not in visiting, "import cycle: " + " -> ".join([*visiting, name])
        visiting.append(name)
        for dependency in sorted(graph[name]):
            visit(dependency)
        visiting.pop()
        order.append(name)

    for name in sorted(graph):
        visit(name)
    assert graph["scheduler.types"] <= {"scheduler.errors", "scheduler.trace"}
    assert graph["scheduler.errors"] == set() and graph["scheduler.trace"] <= {"scheduler.errors"}


# -- hooks are registered through typed overloads (mypy checks a hook against its event) ---

HOOK_USE = """\
from scheduler import LightweightAgent, Veto


def wire(agent: LightweightAgent) -> None:
    agent.on("before_tool", lambda *, state, call, arguments: Veto("no")).on(
        "after_step", lambda *, state, step: None
    )
    agent.on("before_tool", lambda *, state, step: None)
"""


def test_hook_registration_is_typed_per_event(tmp_path, monkeypatch):
    from mypy import api

    monkeypatch.setenv("MYPYPATH", str(PACKAGE.parent))  # find `scheduler` from anywhere
    snippet = tmp_path / "wire_hooks.py"
    snippet.write_text(HOOK_USE)
    out, err, status = api.run(
        [
            str(snippet),
            "--strict",
            "--no-error-summary",
            "--hide-error-context",
            "--config-file=",
            f"--cache-dir={PACKAGE.parent / '.mypy_cache'}",
        ]
    )
    errors = [line.split(":", 1)[1] for line in out.splitlines() if ": error:" in line]
    assert (status, err, len(errors)) == (1, "", 1), out
    assert errors[0].startswith('8: error: No overload variant of "on" of "HookRegistry"')


def _lines_of_code(path: Path) -> int:
    """Lines that are not blank, comments or docstrings."""
    tree = ast.parse(path.read_text())
    docs: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (
            isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
            and isinstance(body[0].value.value, str)
        ):
            docs.update(range(body[0].lineno, body[0].end_lineno + 1))
    return sum(
        1
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if line.strip() and not line.strip().startswith("#") and number not in docs
    )


def test_the_core_loop_stays_under_500_lines_of_code():
    assert _lines_of_code(PACKAGE / "loop.py") < 500
