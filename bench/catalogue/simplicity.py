"""False simplicity: the simplest agent and the article's complex one, written on each engine.

The article: "little code for simple cases, more than hand-written for complex ones (an agent
with memory, several tools and a custom stop condition needs eight imports and ~20 lines of
setup before any logic)". Two programs per engine (``bench/catalogue/programs/``), each
counted whole by ``bench.engines.codesize`` (statements; imports and docstrings not), each
run against its own scenario and checked:

- **simple** (``simplicity_weather``): one tool, one question. The answer carries the
  tool's result; the backend saw ``weather("Paris")``.
- **complex** (``simplicity_support``): two questions in one conversation. The second
  question's first request carries the first question and its answer (memory); three tools
  run (``lookup_order`` and ``refund_policy`` together, then ``issue_refund``); the backend
  refunds the first time and answers ``needs_review`` the second, which must end that run at
  once with the hand-over message (``HANDOFF``): no model request after that result.

The tools are the program's own and call the ``Backend`` they are given (the same for every
engine), which records each call.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from importlib import import_module
from typing import Any, Literal

from bench.catalogue.harness import catalogue_mock
from bench.catalogue.kit import chat_model_factory
from bench.catalogue.observe import Request, request_from_mock
from bench.engines.codesize import measure_target
from bench.referee import MockLLM

Case = Literal["simple", "complex"]
CASES: tuple[Case, ...] = ("simple", "complex")
HANDOFF = "A human agent will review this refund and get back to you."
SIMPLE_QUESTION = "What is the weather in Paris right now?"
QUESTIONS = (
    "My lamp from order B777 arrived broken. Can I get my 120 back?",
    "The second lamp of that order is broken too; refund it as well.",
)
FIRST_ANSWER = "Your refund of 120 on order B777 is done."
SCENARIOS: dict[Case, str] = {"simple": "simplicity_weather", "complex": "simplicity_support"}


@dataclass(frozen=True)
class Program:
    engine: str
    case: Case
    module: str  # under bench.catalogue.programs
    note: str = ""  # what to know when reading its result

    @property
    def target(self) -> str:
        return f"bench/catalogue/programs/{self.module}.py"

    @property
    def entry(self) -> Any:
        name = "ask" if self.case == "simple" else "chat"
        return getattr(import_module(f"bench.catalogue.programs.{self.module}"), name)


_FILES = {
    "lc-create-agent": "langchain_v1",
    "lc-agentexecutor": "agentexecutor",
    "scheduler": "scheduler",
    "openai-agents": "openai_agents",  # a peer: runs in its own environment
}
NOTES = {
    ("openai-agents", "complex"): "the mock names tool calls by their turn (call_t0_0, ...) and "
    "plays its script from the top for each question, so both questions' calls get the same "
    "ids; the Agents SDK keeps one conversation item per call id and loses the second "
    "question's calls (a real model never repeats an id): a limit of the mock, not a result",
}
PROGRAMS: tuple[Program, ...] = tuple(
    Program(
        engine,
        case,
        f"{stem}_{'simple' if case == 'simple' else 'support'}",
        NOTES.get((engine, case), ""),
    )
    for engine, stem in _FILES.items()
    for case in CASES
)


@dataclass
class Backend:
    """The services the programs' tools call; every call recorded as (method, arguments)."""

    calls: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    refunded: set[str] = field(default_factory=set)

    def weather(self, city: str) -> dict[str, Any]:
        self.calls.append(("weather", {"city": city}))
        return {"city": city, "temperature": 14, "unit": "celsius", "conditions": "light rain"}

    def lookup_order(self, order_id: str) -> dict[str, Any]:
        self.calls.append(("lookup_order", {"order_id": order_id}))
        return {"order_id": order_id, "item": "desk lamp", "quantity": 2, "paid": 240}

    def refund_policy(self, category: str) -> dict[str, Any]:
        self.calls.append(("refund_policy", {"category": category}))
        return {"category": category, "window_days": 30, "automatic_refunds_per_order": 1}

    def issue_refund(self, order_id: str, amount: float) -> dict[str, Any]:
        self.calls.append(("issue_refund", {"order_id": order_id, "amount": float(amount)}))
        if order_id in self.refunded:
            return {"order_id": order_id, "status": "needs_review"}
        self.refunded.add(order_id)
        return {"order_id": order_id, "status": "refunded", "amount": amount}


@dataclass
class ProgramResult:
    program: Program
    statements: int
    answers: list[str]
    failures: list[str]
    raised: str | None = None

    @property
    def works(self) -> bool:
        return not self.failures


def _last_user(request: Request) -> str:
    users = [m for m in request.messages if m.get("role") == "user"]
    return str(users[-1].get("content") or "") if users else ""


def check_simple(answers: list[str], backend: Backend, requests: list[Request]) -> list[str]:
    problems = []
    if [r.turn for r in requests] != [0, 1]:
        problems.append(f"requests for turns {[r.turn for r in requests]}, expected [0, 1]")
    if backend.calls != [("weather", {"city": "Paris"})]:
        problems.append(f"backend calls {backend.calls}, expected one weather('Paris')")
    if len(answers) != 1 or "14 °C" not in answers[0]:
        problems.append(f"the answer {answers!r} lacks the tool's result (14 °C)")
    return problems


def check_complex(answers: list[str], backend: Backend, requests: list[Request]) -> list[str]:
    problems = []
    if answers != [FIRST_ANSWER, HANDOFF]:
        problems.append(f"answers {answers!r}, expected {[FIRST_ANSWER, HANDOFF]!r}")
    per_question = [[r for r in requests if _last_user(r) == q] for q in QUESTIONS]
    turns = [[r.turn for r in rs] for rs in per_question]
    if turns != [[0, 1, 2], [0, 1]]:
        problems.append(
            f"turns per question {turns}, expected [[0, 1, 2], [0, 1]]: the second run must "
            "stop right after the refund under review"
        )
    if len(per_question[1]) + len(per_question[0]) != len(requests):
        problems.append("requests that belong to neither question")
    if per_question[1]:
        texts = per_question[1][0].texts()
        if QUESTIONS[0] not in texts or FIRST_ANSWER not in texts:
            problems.append("the second question's request lacks the first exchange (memory)")
    refund = ("issue_refund", {"order_id": "B777", "amount": 120.0})
    expected = sorted(
        [("lookup_order", {"order_id": "B777"}), ("refund_policy", {"category": "lamps"}), refund]
        * 2,
        key=repr,
    )
    if sorted(backend.calls, key=repr) != expected:
        problems.append(f"backend calls {backend.calls}")
    return problems


async def run_program(program: Program, mock: MockLLM | None = None) -> ProgramResult:
    """Run one program against its scenario and check it."""
    mock = mock or catalogue_mock()
    mock.reset()
    scenario = SCENARIOS[program.case]
    model = chat_model_factory(program.engine, mock, f"scenario/{scenario}")()
    backend = Backend()
    first = len(mock.requests)
    raised = None
    answers: list[str] = []
    try:
        if program.case == "simple":
            answers = [await program.entry(model, backend, SIMPLE_QUESTION)]
        else:
            answers = list(await program.entry(model, backend, list(QUESTIONS)))
    except Exception as exc:
        raised = f"{type(exc).__name__}: {exc}"[:500]
    requests = [request_from_mock(r) for r in mock.requests[first:]]
    check = check_simple if program.case == "simple" else check_complex
    failures = check(answers, backend, requests)
    if raised:
        failures.insert(0, f"the program raised {raised}")
    statements = measure_target(program.target).statements
    return ProgramResult(program, statements, answers, failures, raised)
