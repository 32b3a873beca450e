"""The unstable-versions claim: code of one LangChain line run on every newer line."""

from __future__ import annotations

from collections.abc import Mapping

from bench.report.facts import Facts, exact
from bench.report.rules.common import Claim, Part
from bench.report.verdicts import Verdict, judge
from bench.results.rows import first_line
from bench.results.versions import upgrade_histories


def claim_versions(f: Facts) -> Claim:
    text = "Unstable versions: breaking changes between releases."
    rule = (
        "the reference agent written as each LangChain line's docs wrote it, run unchanged on "
        "every newer line measured, each a fresh install of that line (the upgrade direction "
        "of the version matrix). Per line the code was written for: supported when it fails "
        "on a newer line (a breaking change; the measured fix, and whether a deprecation "
        "warning of the line before named what broke, are shown); partly when it runs on every newer line but "
        "warns of deprecations; refuted when it runs on every newer line with no deprecation "
        "warning. Code that does not run on its own line is left out. Lines combine as "
        "everywhere. Releases within a line are not measured"
    )
    measured_lines = [r.line for r in f.versions if not r.error]
    newest = measured_lines[-1] if measured_lines else None
    parts = []
    for history in upgrade_histories(f.versions):
        own = history.on(history.written_for)
        if not history.newer or (own is not None and not own.ran):
            continue
        broken = history.first_break
        warned = sum(len(c.deprecations) for c in history.newer)

        def decide(v: Mapping[str, float]) -> Verdict:
            if v["broken"]:
                return "supported"
            return "partly" if v["warns"] else "refuted"

        if broken is not None:
            before = history.before_break
            measured = f"fails on {broken.run_on} ({first_line(broken.error, 120)})"
            if before is not None:
                measured += f" after {before.deprecations_text} on {before.run_on}"
                measured += "" if history.announced else " (none naming what broke)"
            fix = broken.fix
            measured += f"; fix: {fix.summary}" if fix is not None else "; no fix declared"
        else:
            measured = (
                f"runs unchanged up to {history.newer[-1].run_on}, with {warned:,} deprecation "
                "warnings"
            )
        inputs = {"broken": exact(float(broken is not None)), "warns": exact(float(warned > 0))}
        label = f"LangChain {history.written_for} code → {newest}"
        parts.append(Part(label, measured, judge(inputs, decide)))
    why_not = "needs the LangChain version matrix (code of an older line run on a newer one)"
    if any(r.backport is not None for r in f.versions):
        why_not = (
            "not measured in the upgrade direction: this run's versions.json is a legacy table "
            "(today's baseline back-ported to older lines), which does not show whether code "
            "written for a line runs on a newer one"
        )
    return Claim("versions", text, rule, tuple(parts), why_not)
