"""The customisations teams ask of an agent loop: what each requires, and how its effect is proved.

Each ``Customisation`` names its scenario (``bench/catalogue/scenarios/``), the requests a cell
must serve (user, question), and a ``check`` that reads only the ``Observation`` — the requests
the mock answered and the tools that ran — and returns what went wrong ([] = it works). The
constants below are the requirements every engine's cell is written against (the same policy,
timeouts, reminder, budget and secret for all).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from bench.catalogue.observe import Observation, Request

# -- the requirements, the same for every engine ---------------------------------------------

REFUND_LIMIT = 100  # veto_tool: refunds above this never run
REFUSAL = "refused by policy: refunds over 100 need a manager"  # ... and the model reads this
MAX_LIMIT = 10  # rewrite_args: search_orders' limit is capped at this
KEYWORD = "ESCALATE"  # stop_on_keyword: a tool result with it ends the run there
TOOL_TIMEOUTS_S = {"lookup_stock": 0.05, "fetch_report": 2.0}  # tool_timeouts: per tool
# inject_message: a system message after the first tool result (a system message, since the
# mock, like a chat model, reads a new user message as a new question)
REMINDER = "Reminder: quote every price in EUR."
SWITCH_AFTER_STEPS = 1  # switch_model: steps on the first model, then the large one
USER_BUDGET_TOKENS = 150  # user_budget: tokens (prompt + completion) per user, all runs
RETRY_STATUS = 429  # retry_one_class: only rate limits are retried ...
RETRY_MAX = 4  # ... up to this many times
RETRY_DELAY_S = 0.01  # ... this long apart
SECRET_PATTERN = r"sk-live-[A-Za-z0-9]+"  # redact_trace: what must not leave in the trace
REDACTED = "[REDACTED]"

SECRET = "sk-live-7Hq2Zx9LmP4wR8tY3vN6"  # the key in catalogue_redact's tool result
DEFAULT_USER = "dana"

Check = Callable[[Observation], list[str]]


@dataclass(frozen=True)
class Customisation:
    """One customisation of the catalogue."""

    key: str
    title: str
    effect: str  # what the check proves, in words
    scenario: str
    check: Check
    users: tuple[str, ...] = (DEFAULT_USER,)  # one request per user, in order

    @property
    def model(self) -> str:
        return f"scenario/{self.scenario}"


# -- checks ------------------------------------------------------------------------------------


def _models(requests: list[Request]) -> list[str]:
    return [r.model for r in requests]


def _turns(requests: list[Request]) -> list[int | None]:
    return [r.turn for r in requests]


def _completed(obs: Observation, turns: int) -> list[str]:
    """The run reached its final answer: one answered request per scripted turn, none raised."""
    problems = []
    answered = [r.turn for r in obs.requests if r.status == 200]
    if answered != list(range(turns)):
        problems.append(f"answered turns {answered}, expected {list(range(turns))}")
    problems += [f"the run raised {run.raised}" for run in obs.runs if run.raised]
    return problems


def _calls(obs: Observation) -> list[tuple[str, dict]]:
    return [(t.name, t.args) for t in obs.tools]


def _tool_message(request: Request, index: int) -> str:
    tools = request.tool_messages()
    return str(tools[index].get("content") or "") if len(tools) > index else ""


def check_veto(obs: Observation) -> list[str]:
    problems = _completed(obs, 3)
    if _calls(obs) != [("issue_refund", {"order_id": "A1", "amount": 40})]:
        problems.append(f"tools ran {_calls(obs)}: only the refund of 40 may run")
    if len(obs.requests) >= 3 and REFUSAL not in _tool_message(obs.requests[2], 1):
        problems.append("the model was not told the refusal for the vetoed call")
    return problems


def check_rewrite(obs: Observation) -> list[str]:
    problems = _completed(obs, 3)
    expected = [
        ("search_orders", {"customer": "dana", "limit": MAX_LIMIT}),
        ("search_orders", {"customer": "sam", "limit": 5}),
    ]
    if _calls(obs) != expected:
        problems.append(f"the tool received {_calls(obs)}, expected {expected}")
    return problems


def check_stop(obs: Observation) -> list[str]:
    problems = [f"the run raised {run.raised}" for run in obs.runs if run.raised]
    if _turns(obs.requests) != [0]:
        problems.append(f"requests for turns {_turns(obs.requests)}: only turn 0 may be asked")
    if [t.name for t in obs.tools] != ["check_account"]:
        problems.append(f"tools ran {[t.name for t in obs.tools]}: only check_account may run")
    return problems


def check_timeouts(obs: Observation) -> list[str]:
    problems = _completed(obs, 3)
    runs = {t.name: t for t in obs.tools}
    hung, slow = runs.get("lookup_stock"), runs.get("fetch_report")
    if hung is None or hung.ok or slow is None or not slow.ok:
        return [*problems, f"lookup_stock must be cut and fetch_report finish: {obs.tools}"]
    if hung.duration_ms >= slow.duration_ms:
        problems.append(
            f"lookup_stock was cut after {hung.duration_ms:.0f} ms, no sooner than fetch_report "
            f"finished ({slow.duration_ms:.0f} ms): one timeout for both, not one per tool"
        )
    if len(obs.requests) >= 2 and "timed out" not in _tool_message(obs.requests[1], 0).lower():
        problems.append("the model was not told that lookup_stock timed out")
    return problems


def check_inject(obs: Observation) -> list[str]:
    problems = _completed(obs, 3)
    for i, request in enumerate(obs.requests):
        texts = request.texts()
        count = sum(REMINDER in t for t in texts)
        if i == 0 and count:
            problems.append("the first request already carries the reminder")
        if i > 0:
            first_tool = next(
                (j for j, m in enumerate(request.messages) if m.get("role") == "tool"), -1
            )
            at = next((j for j, t in enumerate(texts) if REMINDER in t), -1)
            if count != 1 or at != first_tool + 1:
                problems.append(
                    f"request {i + 1}: the reminder {count} times, at message {at}; expected "
                    f"once, right after the first tool result (message {first_tool + 1})"
                )
    return problems


def check_switch(obs: Observation) -> list[str]:
    problems = _completed(obs, 3)
    small, large = "scenario/catalogue_switch", "scenario/catalogue_switch_large"
    expected = [small] * SWITCH_AFTER_STEPS + [large] * (3 - SWITCH_AFTER_STEPS)
    if _models(obs.requests) != expected:
        problems.append(f"models requested {_models(obs.requests)}, expected {expected}")
    return problems


def check_budget(obs: Observation) -> list[str]:
    problems = []
    spent: dict[str, int] = {}
    for run in obs.runs:
        before = spent.get(run.user, 0)
        for request in run.requests:
            if spent.get(run.user, 0) >= USER_BUDGET_TOKENS:
                problems.append(
                    f"{run.user}: a request was sent with {spent[run.user]} of "
                    f"{USER_BUDGET_TOKENS} tokens already spent"
                )
            spent[run.user] = spent.get(run.user, 0) + request.total_tokens
        answered = any(r.turn == 2 and r.status == 200 for r in run.requests)
        if not answered and spent.get(run.user, 0) < USER_BUDGET_TOKENS:
            problems.append(
                f"{run.user}: stopped at {spent.get(run.user, 0)} tokens, under the budget "
                f"(started at {before})"
            )
    requests = [len(run.requests) for run in obs.runs]
    if len(requests) != 3 or not 0 < requests[0] < 3 or requests[1] or requests[2] != requests[0]:
        problems.append(
            f"requests per run (dana, dana, sam) {requests}: dana's budget must cut her first "
            "run and refuse her second; sam's own budget must give him as much as her first"
        )
    return problems


def check_retry(obs: Observation) -> list[str]:
    statuses = [(r.turn, r.status) for r in obs.requests]
    expected = [(0, 429)] * 3 + [(0, 200), (1, 500)]
    if statuses != expected:
        return [
            f"(turn, status) of the requests {statuses}, expected {expected}: 429 retried "
            "until it passes, 500 not retried"
        ]
    return []


def check_redact(obs: Observation) -> list[str]:
    problems = _completed(obs, 2)
    trace = "\n".join(obs.traces)
    if not trace:
        return [*problems, "no trace left the process"]
    if SECRET in trace:
        problems.append("the secret is in the trace")
    if "get_credentials" not in trace or "ACME-42" not in trace:
        problems.append("the trace lost the tool call or the rest of its result")
    if len(obs.requests) >= 2 and SECRET not in _tool_message(obs.requests[1], 0):
        problems.append("the model did not get the tool result unchanged")
    return problems


CUSTOMISATIONS: tuple[Customisation, ...] = (
    Customisation(
        "veto_tool",
        "veto a tool call by a policy",
        "the refund over 100 never ran; the model read the refusal; the run went on",
        "catalogue_veto",
        check_veto,
    ),
    Customisation(
        "rewrite_args",
        "rewrite a tool's arguments",
        "the tool received limit 10 for the model's 500, and the model's 5 unchanged",
        "catalogue_rewrite",
        check_rewrite,
    ),
    Customisation(
        "stop_on_keyword",
        "stop the run on a custom condition (a keyword in a tool result)",
        "no model request and no tool after the result carrying ESCALATE; nothing raised",
        "catalogue_stop",
        check_stop,
    ),
    Customisation(
        "tool_timeouts",
        "a different timeout per tool",
        "the hung tool was cut (at 50 ms) before the slow one (500 ms, its own 2 s limit) "
        "finished; the model was told",
        "catalogue_timeouts",
        check_timeouts,
    ),
    Customisation(
        "inject_message",
        "inject a message between steps",
        "the reminder is in every request after the first tool result, once, right after it",
        "catalogue_inject",
        check_inject,
    ),
    Customisation(
        "switch_model",
        "switch the model after step N",
        "the model named in the requests: the first model for step 1, the large one after",
        "catalogue_switch",
        check_switch,
    ),
    Customisation(
        "user_budget",
        "a per-user token budget",
        "no request once a user spent 150 tokens (over all their runs); another user's budget is his own",
        "catalogue_budget",
        check_budget,
        users=(DEFAULT_USER, DEFAULT_USER, "sam"),
    ),
    Customisation(
        "retry_one_class",
        "a custom retry policy for one error class",
        "429 retried until it passed (4 attempts), the 500 not retried at all",
        "catalogue_retry",
        check_retry,
    ),
    Customisation(
        "redact_trace",
        "redact secrets from the trace",
        "the API key is nowhere in the trace that left the process (the rest is); the model got it",
        "catalogue_redact",
        check_redact,
    ),
)

BY_KEY: dict[str, Customisation] = {c.key: c for c in CUSTOMISATIONS}
SECRET_RE = re.compile(SECRET_PATTERN)
