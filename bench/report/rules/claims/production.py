"""The not-production-ready claim: retries and built-in guards on the fault scenarios."""

from __future__ import annotations

from collections.abc import Mapping

from bench.report.facts import Facts, exact
from bench.report.rules.common import Claim, Part
from bench.report.rules.thresholds import T, _three_way
from bench.report.verdicts import Verdict, judge
from bench.results import fmt


def _kind_share(f: Facts, engine: str | None, kinds: tuple[str, ...]) -> tuple[int, int] | None:
    counts = f.fault_by_kind.get(engine or "")
    if not counts:
        return None
    ok = sum(counts.get(k, (0, 0))[0] for k in kinds)
    n = sum(counts.get(k, (0, 0))[1] for k in kinds)
    return (ok, n) if n else None


def claim_production(f: Facts) -> Claim:
    text = "Not production-ready: no built-in monitoring, circuit breaking or retries."
    rule = (
        "the fault matrix (each scenario's base outcome). retries: LangChain's default engine "
        "on the LLM faults (HTTP errors, timeouts, broken streams); supported if it survives ≤ "
        f"{fmt.pct(T.RETRIES_MISSING, decimals=0)}, refuted if ≥ "
        f"{fmt.pct(T.RETRIES_HANDLED, decimals=0)}. built-in guards: the tool and guard faults "
        "(failing or hung tools, loops, budgets, confirmations, malformed calls), the "
        "self-built production engine's share minus LangChain's production configuration "
        "with its built-ins only (no custom code); supported if the gap ≥ "
        f"{T.GUARD_GAP_SUPPORTED:.2f}, refuted if ≤ {T.GUARD_GAP_REFUTED:.2f}. Monitoring is "
        "judged under debugging."
    )
    lc, sb = f.langchain, f.self_built
    parts = []
    retries = _kind_share(f, lc.default if lc else None, ("llm",))
    if retries is not None and lc is not None:
        ok, n = retries
        share = exact(ok / n)

        def decide_retries(v: Mapping[str, float]) -> Verdict:
            s = v["share"]
            return _three_way(s, s <= T.RETRIES_MISSING, s >= T.RETRIES_HANDLED)

        parts.append(
            Part(
                "retries",
                f"{lc.default} (defaults) survives {ok}/{n} LLM-fault scenarios",
                judge({"share": share}, decide_retries),
            )
        )
    if lc is not None and sb is not None:
        builtin = lc.builtins or lc.production or lc.default
        theirs = _kind_share(f, builtin, ("tool", "guard"))
        ours = _kind_share(f, sb.production, ("tool", "guard"))
        if theirs is not None and ours is not None:
            gap = exact(ours[0] / ours[1] - theirs[0] / theirs[1])

            def decide_guards(v: Mapping[str, float]) -> Verdict:
                g = v["gap"]
                return _three_way(g, g >= T.GUARD_GAP_SUPPORTED, g <= T.GUARD_GAP_REFUTED)

            measured = (
                f"tool and guard faults handled: {sb.production} {ours[0]}/{ours[1]}; "
                f"{builtin} {theirs[0]}/{theirs[1]}"
            )
            full = _kind_share(f, lc.production, ("tool", "guard"))
            statements = f.configuration_statements(lc.production or "")
            if full is not None and lc.production and lc.production != builtin:
                measured += (
                    f"; with its custom code ({lc.production}, "
                    f"{statements.get('custom', 0):,.0f} statements) {full[0]}/{full[1]}"
                )
            parts.append(Part("built-in guards", measured, judge({"gap": gap}, decide_guards)))
    return Claim("production", text, rule, tuple(parts), "fault scenarios not run")
