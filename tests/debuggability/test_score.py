"""The scorer: planted facts, normalisation rules, structured flattening (localisation: test_localise)."""

from __future__ import annotations

import json

import pytest

from bench.debuggability.score import (
    durations_ms,
    fact_found,
    flatten,
    latency_matches,
    normalise,
    score_output,
    step_found,
)
from bench.debuggability.truth import Fact

# n = 8 facts, each with the one line of output that states it (and nothing else)
PLANTED: list[tuple[Fact, str]] = [
    (Fact("tool", 1, "search_knowledge_base"), "called search_knowledge_base"),
    (Fact("arg", 1, "return policy", key="query"), "args {'query': 'return policy'}"),
    (Fact("result", 1, "KB-17", key="article_id"), 'result {"article_id": "KB-17"}'),
    (Fact("error", 2, "upstream is down"), "RuntimeError: Upstream is DOWN"),
    (Fact("tokens", 1, 115, key="prompt"), "usage prompt_tokens=115"),
    (Fact("latency", 2, 200.0, key="fetch"), "fetch took 0.2s"),
    (Fact("termination", None, "max_steps", alts=("iteration limit",)), "iteration limit hit"),
]
FACTS = [fact for fact, _ in PLANTED]


@pytest.mark.parametrize("k", range(len(PLANTED) + 1))
def test_exactly_k_of_n_planted_facts_score_k_over_n(k: int) -> None:
    lines = ["== some unrelated framework noise =="] + [line for _, line in PLANTED[:k]]
    score = score_output("\n".join(lines), FACTS)
    assert score.facts_total == len(FACTS)
    assert score.facts_found == k
    assert score.recall == pytest.approx(k / len(FACTS))
    assert list(score.found) == FACTS[:k]
    assert list(score.missed) == FACTS[k:]


@pytest.mark.parametrize("skip", range(len(PLANTED)))
def test_each_planted_fact_is_found_only_by_its_own_line(skip: int) -> None:
    lines = [line for i, (_, line) in enumerate(PLANTED) if i != skip]
    score = score_output("\n".join(lines), FACTS)
    assert score.missed == (FACTS[skip],)


def test_size_and_noise() -> None:
    output = "called search_knowledge_base\nusage prompt_tokens=115\n"
    score = score_output(output, FACTS)
    assert (score.bytes, score.lines, score.facts_found) == (len(output), 2, 2)
    assert score.bytes_per_fact == pytest.approx(len(output) / 2)
    assert score_output("", FACTS).bytes_per_fact is None
    assert score_output("", FACTS).recall == 0.0


def test_normalise_case_whitespace_quotes_escapes_ansi_numbers() -> None:
    assert normalise('  "Query" :\n\t "Return   Policy" ') == "query:return policy"
    assert normalise("{'order_id': 'A123'}") == normalise('{"order_id": "A123"}')
    assert normalise('"{\\"order_id\\": \\"A123\\"}"') == "{order_id:a123}"
    assert normalise("\x1b[1m> Finished chain.\x1b[0m") == "> finished chain."
    assert normalise("order_id=A123") == "order_id:a123"
    assert normalise("price_eur: 89.0, rate 0.9210") == "price_eur:89,rate 0.921"
    assert normalise("caf\\u00e9") == "café"


def test_key_value_facts_need_the_key_next_to_the_value() -> None:
    fact = Fact("arg", 1, "A123", key="order_id")
    assert fact_found(fact, normalise("Invoking: `query_order` with `{'order_id': 'A123'}`"))
    assert fact_found(fact, normalise("Args: {order_id: A123}"))
    assert not fact_found(fact, normalise("I want to return order A123."))


def test_durations_in_ms_and_seconds() -> None:
    text = normalise("[chain/end] [3ms] took 0.25s (0.1ms) 1.5 seconds; 30 days, 2 steps")
    assert durations_ms(text) == pytest.approx([3.0, 250.0, 0.1, 1500.0])


def test_latency_tolerance_and_one_to_one_matching() -> None:
    facts = [Fact("latency", 1, 200.0), Fact("latency", 2, 0.01), Fact("latency", 3, 0.02)]
    # 0.2 s matches 200 ms; a single near-zero duration can serve only one fast fact
    assert latency_matches(facts, [200.0, 0.1]) in ({0, 1}, {0, 2})
    assert latency_matches(facts, [90.0]) == set()  # 200 ms ± 50 %: 90 ms is too far
    assert latency_matches(facts, [130.0, 3.0, 4.9]) == {0, 1, 2}


def test_tokens_need_a_token_label() -> None:
    fact = Fact("tokens", 1, 115, key="prompt")
    assert fact_found(fact, normalise('"usage": {"input_tokens": 115}'))
    assert fact_found(fact, normalise("gen_ai.usage.input_tokens=115"))
    assert not fact_found(fact, normalise("order 115 shipped"))
    assert not fact_found(fact, normalise("prompt_tokens: 1150"))


def test_a_token_label_covers_its_list_of_counts() -> None:
    # "Tokens: 80 input, 16 output" says what "input_tokens: 80, output_tokens: 16" says
    for text in ("Tokens: 80 input, 16 output", "input_tokens: 80, output_tokens: 16"):
        found = [fact_found(Fact("tokens", 1, n, key="k"), normalise(text)) for n in (80, 16)]
        assert found == [True, True], text
    assert not fact_found(Fact("tokens", 1, 16, key="k"), normalise("80 input, 16 output"))


def test_step_needs_an_explicit_step_label() -> None:
    for text in ("Step 2/15", "agent.step: 2", '"step": 2', "step #2"):
        assert step_found(normalise(text), 2), text
    for text in ("superstep 2", "step 12", "2 steps", "step: 2.5", "seq:step:2"):
        assert not step_found(normalise(text), 2), text


def test_termination_matches_reason_keys_and_synonyms_not_a_bare_word() -> None:
    fact = Fact("termination", None, "stop", alts=("reason:stop",))
    assert fact_found(fact, normalise('"finish_reason": "stop"'))
    assert fact_found(fact, normalise("agent.termination_reason=stop"))
    assert not fact_found(fact, normalise('{"stop": null}'))


def test_structured_output_is_flattened_with_nested_json_and_derived_durations() -> None:
    doc = {
        "runs": [
            {
                "name": "query_order",
                "inputs": {"input": json.dumps({"order_id": "A123"})},
                "start_time": "2026-11-29T10:00:00.000000",
                "end_time": "2026-11-29T10:00:00.250000",
                "attributes": {"duration_s": 0.5},
            }
        ]
    }
    lines = list(flatten(doc))
    assert "runs.inputs.input.order_id: A123" in lines
    assert "runs.duration_ms: 250.0000ms" in lines
    assert "runs.attributes.duration_s: 500.0000ms" in lines
    facts = [
        Fact("arg", 1, "A123", key="order_id"),
        Fact("latency", 1, 250.0),
        Fact("latency", 1, 500.0),
    ]
    score = score_output(json.dumps(doc, indent=2), facts)
    assert score.structured
    assert score.facts_found == 3


def test_json_lines_count_as_structured() -> None:
    output = '{"type": "task", "name": "get_quote"}\n{"type": "task_result", "step": 2}\n'
    score = score_output(output, [Fact("tool", 1, "get_quote")])
    assert score.structured and score.facts_found == 1
