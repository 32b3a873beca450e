"""The ``--baseline`` section: this run against an earlier one, judged by ``bench.results.compare``.

The statistics are the runner's (``schedbench compare``: ratio of medians and a two-sided
Mann–Whitney U test per engine × scenario × latency × transport); this module only lays
them out as report blocks. The baseline is the reference, this run is the changed one.
"""

from __future__ import annotations

from pathlib import Path

from bench.report.document import Block, Bullets, Cell, Note, Paragraph, Table
from bench.results import compare, fmt, stats


def compare_blocks(run_dir: Path, baseline_dir: Path, *, metric: str = "wall_ms") -> list[Block]:
    """Blocks comparing ``run_dir`` (changed) with ``baseline_dir`` (reference)."""
    ref = compare.load_run(baseline_dir)
    changed = compare.load_run(run_dir)
    every = compare.compare_runs(ref, changed, metric=metric)
    results = compare.judged(every)
    blocks: list[Block] = [
        Paragraph.of(
            f"Reference: {baseline_dir}. This run: {run_dir}. Metric: median {metric}; "
            f"significance: two-sided Mann–Whitney U at alpha = {stats.ALPHA:g} "
            "(the statistics of `schedbench compare`)."
        )
    ]
    diffs = compare.environment_differences(ref.meta, changed.meta)
    if diffs:
        blocks.append(Note("The environments differ: " + "; ".join(diffs)))
    skipped = ref.folder.skipped_summary()
    if skipped:
        blocks.append(Note(f"The baseline run {baseline_dir}: {skipped}."))
    if not every:
        blocks.append(Note("The two runs have no benchmark in common."))
        return blocks
    failed = [c for c in every if c.comparison is None]
    if failed:
        blocks.append(
            Note(
                "No speed claim where one side has no completed run: "
                + "; ".join(f"{c.key[0]}/{c.key[1]}: {compare.failure_text(c)}" for c in failed)
            )
        )
    small = [c for c in results if c.too_small]
    if small:
        blocks.append(Note(compare.small_sample_warning(small, stats.ALPHA)))
    if not results:
        return blocks
    cmps = [c.comparison for c in results if c.comparison is not None]
    slower = sum(1 for c in cmps if c.significant and c.ratio > 1)
    faster = sum(1 for c in cmps if c.significant and c.ratio < 1)
    geo = stats.geometric_mean(c.ratio for c in cmps)
    blocks.append(
        Bullets(
            (
                Paragraph.of(f"Geometric mean over {len(results)} benchmarks: {fmt.change(geo)}."),
                Paragraph.of(
                    f"{slower} significantly slower, {faster} significantly faster, "
                    f"{len(results) - slower - faster} not significant."
                ),
            )
        )
    )
    rows = []
    for c in results:
        engine, scenario, latency, transport = c.key
        cmp = c.comparison
        assert cmp is not None  # judged
        css = ""
        if cmp.significant:
            css = "verdict-refuted" if cmp.ratio > 1 else "verdict-supported"
        rows.append(
            (
                scenario,
                engine,
                f"{latency}, {transport}",
                fmt.ms(cmp.ref_median),
                fmt.ms(cmp.changed_median),
                Cell(compare.verdict(cmp, too_small=c.too_small), css),
                f"{cmp.pvalue:.3g}",
                f"{c.n_ref}/{c.n_changed}",
            )
        )
    blocks.append(
        Table(
            ("scenario", "engine", "profile", "baseline", "this run", "change", "p", "n"),
            tuple(rows),
            caption="Ratio of medians, this run ÷ baseline; 'significant' at p < alpha.",
            css="comparison",
            numeric=(3, 4, 6, 7),
        )
    )
    return blocks
