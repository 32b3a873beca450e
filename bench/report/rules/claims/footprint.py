"""The 50+-modules-vs-~400-lines claim: modules imported and the core loop's size."""

from __future__ import annotations

from collections.abc import Mapping

from bench.report.facts import Facts, exact, known
from bench.report.frames import RAW
from bench.report.rules.common import Claim, Part
from bench.report.rules.thresholds import T, _three_way
from bench.report.verdicts import Verdict, judge


def claim_footprint(f: Facts) -> Claim:
    text = 'LangChain core "depends on 50+ modules"; the self-built loop is ~400 lines.'
    limit = T.LINES_CLAIMED * T.LINES_TOLERANCE
    rule = (
        f"modules: importing LangChain's default stack loads ≥ {T.MODULES_CLAIMED} modules more "
        "than the bare HTTP loop (raw) in a fresh interpreter; supported or refuted. lines: "
        f"the scheduler's core loop file has ≤ {limit:.0f} logical lines (~{T.LINES_CLAIMED} "
        f"with 50 % tolerance), refuted above {T.LINES_CLAIMED * T.LINES_REFUTED:.0f}; counted "
        "when the run was made, formatting-invariant"
    )
    parts = []
    lc = f.langchain.default if f.langchain else None
    if lc and known(f.modules.get(lc)) and known(f.modules.get(RAW)):
        extra = exact(f.modules[lc].point - f.modules[RAW].point)

        def decide_modules(v: Mapping[str, float]) -> Verdict:
            m = v["extra"]
            return _three_way(m, m >= T.MODULES_CLAIMED, m < T.MODULES_CLAIMED)

        sb = f.self_built.production if f.self_built else None
        measured = (
            f"{lc} loads {f.modules[lc].point:,.0f} modules, raw {f.modules[RAW].point:,.0f} "
            f"(+{extra.point:,.0f})"
        )
        if sb and known(f.modules.get(sb)):
            measured += f"; {sb} {f.modules[sb].point:,.0f}"
        parts.append(Part("50+ modules", measured, judge({"extra": extra}, decide_modules)))
    loop = f.code.get(("scheduler core loop", "code"))
    package = f.code.get(("scheduler", "code"))
    if loop:
        lines = exact(loop["logical_lines"])

        def decide_lines(v: Mapping[str, float]) -> Verdict:
            n = v["lines"]
            return _three_way(n, n <= limit, n > T.LINES_CLAIMED * T.LINES_REFUTED)

        measured = f"the core loop file is {lines.point:,.0f} logical lines"
        if package:
            measured += (
                f"; the whole scheduler/ package (memory, multi-agent, OTel, streaming, "
                f"pools) {package['logical_lines']:,.0f}"
            )
        parts.append(Part("~400-line loop", measured, judge({"lines": lines}, decide_lines)))
    return Claim("footprint", text, rule, tuple(parts), "modules and code sizes not measured")
