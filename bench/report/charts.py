"""Chart renderers: each takes a small frame and returns a matplotlib ``Figure``.

They never touch pyplot's global state (figures are built with ``Figure()`` and drawn by the
Agg canvas when saved), never read files, and raise ``NoData`` when there is nothing to
draw. Every engine keeps its palette style (colour + marker + hatch + line style), so the
charts also read in greyscale. ``CHARTS`` lists them with the frame each one needs.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import matplotlib as mpl
import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.patches import Patch, Rectangle

from bench.engines.packages import GROUPS
from bench.errors import NoData
from bench.report import analysis, load_section
from bench.report.frames import RunData, order_engines
from bench.report.palette import OUTCOME_STYLES, style
from bench.report.write import real_dir, replace_file
from bench.results import fmt

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

RC: dict[RcKeyType, Any] = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.labelsize": 9,
    "legend.fontsize": 8,
    "axes.grid": True,
    "grid.alpha": 0.3,
    "grid.linewidth": 0.6,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "hatch.linewidth": 0.8,
    "svg.hashsalt": "schedbench",
    "svg.fonttype": "none",  # text stays text: small, searchable SVGs
    "figure.dpi": 100,
    "savefig.dpi": 130,
}


def _fig(width: float, height: float, **kw: Any) -> Figure:
    return Figure(figsize=(width, height), layout="constrained", **kw)


def _require(frame: pd.DataFrame | None, what: str, *columns: str) -> pd.DataFrame:
    if frame is None or frame.empty:
        raise NoData(f"no {what} in this run")
    frame = frame.dropna(subset=list(columns)) if columns else frame
    if frame.empty:
        raise NoData(f"no {what} values in this run")
    return frame


def _label(text: object, limit: int = 28) -> str:
    """A label short enough for a chart (long names would squeeze the axes away)."""
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _bytes(n: float) -> str:
    return (
        f"{n / 1000:,.0f} kB"
        if n >= 10_000
        else f"{n / 1000:.1f} kB"
        if n >= 1000
        else f"{n:.0f} B"
    )


def _plain_log(ax, axis: str = "x") -> None:
    """Log scale with plain tick labels (0.1, 1, 10, 100) instead of powers of ten."""
    fmt = mpl.ticker.FuncFormatter(lambda v, _: f"{v:,.10g}")
    getattr(ax, f"set_{axis}scale")("log")
    target = ax.xaxis if axis == "x" else ax.yaxis
    target.set_major_formatter(fmt)


def _engine_bars(ax, engines: list[str], values: list[float], *, horizontal: bool = True) -> list:
    y = np.arange(len(engines))
    kw = [
        {
            "color": style(e).color,
            "hatch": style(e).hatch,
            "edgecolor": "#333333",
            "linewidth": 0.6,
        }
        for e in engines
    ]
    bars = []
    for i, (v, k) in enumerate(zip(values, kw, strict=True)):
        if horizontal:
            bars.extend(ax.barh(y[i], v, height=0.7, **k))
        else:
            bars.extend(ax.bar(y[i], v, width=0.7, **k))
    if horizontal:
        ax.set_yticks(y, [_label(e) for e in engines])
        if not ax.yaxis_inverted():  # first engine on top (shared axes: invert once)
            ax.invert_yaxis()
    else:
        ax.set_xticks(y, [_label(e) for e in engines], rotation=30, ha="right")
    return bars


# ---------------------------------------------------------------------------------------------


def latency_by_scenario(stats: pd.DataFrame, fault_scenarios: tuple[str, ...] = ()) -> Figure:
    """Wall time per run, per scenario and engine: median, IQR (thick) and p95 (thin), log x.

    Happy-path scenarios on the left, fault scenarios (timeouts, retries) on the right.
    """
    stats = _require(stats, "per-scenario latency", "median_ms")
    engines = order_engines(stats["engine"])
    names = sorted(stats["scenario"].unique())
    groups = [
        ("happy-path scenarios", [s for s in names if s not in fault_scenarios]),
        ("fault scenarios", [s for s in names if s in fault_scenarios]),
    ]
    groups = [(title, g) for title, g in groups if g]
    rows = max(len(g) for _, g in groups)
    fig = _fig(6.0 * len(groups) + 0.5, 1.6 + 0.42 * rows)
    axes = fig.subplots(1, len(groups), squeeze=False)[0]
    band = 0.84
    step = band / max(len(engines), 1)
    for ax, (title, scenarios) in zip(axes, groups, strict=True):
        for i, engine in enumerate(engines):
            st = style(engine)
            g = stats[stats["engine"] == engine].set_index("scenario")
            ys, meds = [], []
            for j, scenario in enumerate(scenarios):
                if scenario not in g.index:
                    continue
                row = g.loc[scenario]
                y = j - band / 2 + step * (i + 0.5)
                ax.plot(
                    [row["p25_ms"], row["p75_ms"]],
                    [y, y],
                    color=st.color,
                    lw=2.5,
                    solid_capstyle="butt",
                )
                ax.plot([row["p75_ms"], row["p95_ms"]], [y, y], color=st.color, lw=0.9)
                ys.append(y)
                meds.append(row["median_ms"])
            ax.plot(
                meds,
                ys,
                linestyle="none",
                marker=st.marker,
                color=st.color,
                markeredgecolor="black",
                markeredgewidth=0.4,
                markersize=4.5,
                label=engine,
            )
        _plain_log(ax)
        ax.set_yticks(range(len(scenarios)), [_label(n) for n in scenarios])
        for j in range(1, len(scenarios)):
            ax.axhline(j - 0.5, color="#cccccc", lw=0.5)
        ax.set_ylim(rows - 0.5, -0.5)
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("wall time per run (ms, log scale)")
        ax.set_title(title)
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=min(len(engines), 7))
    fig.suptitle("Latency per run: marker = median, thick = IQR (p25–p75), thin = up to p95")
    return fig


def overhead_per_step(steps: pd.DataFrame) -> Figure:
    """Framework overhead per LLM step per engine: median bar, IQR whisker, log x."""
    steps = _require(steps, "overhead per step", "median_ms")
    steps = steps[steps["median_ms"] > 0]
    if steps.empty:
        raise NoData("no positive overhead per step")
    engines = list(steps["engine"])
    fig = _fig(7.5, 0.9 + 0.45 * len(engines))
    ax = fig.add_subplot()
    _engine_bars(ax, engines, list(steps["median_ms"]))
    lo = (steps["median_ms"] - steps["p25_ms"]).clip(lower=0)
    hi = (steps["p75_ms"] - steps["median_ms"]).clip(lower=0)
    ax.errorbar(
        steps["median_ms"],
        np.arange(len(engines)),
        xerr=[lo, hi],
        fmt="none",
        ecolor="black",
        capsize=3,
        lw=1,
    )
    _plain_log(ax)
    for y, (v, hi_v) in enumerate(zip(steps["median_ms"], steps["p75_ms"], strict=True)):
        ax.annotate(
            fmt.ms(v),
            (max(v, hi_v), y),
            xytext=(6, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    left, right = ax.get_xlim()
    ax.set_xlim(left, right * 3)
    ax.set_xlabel("framework overhead per LLM step (ms, log scale; median, whisker = IQR)")
    ax.set_title("Framework overhead per LLM step")
    return fig


def throughput(tp: pd.DataFrame) -> Figure:
    """Runs/s and p95 latency against concurrency, one column per latency profile."""
    tp = _require(tp, "throughput sweep", "runs_per_s")
    profiles = [p for p in ("zero", "realistic") if p in set(tp["latency_profile"])]
    profiles += sorted(set(tp["latency_profile"].dropna()) - set(profiles))
    fig = _fig(max(8.5, 4.2 * len(profiles) + 1.0), 6.5)
    axes = fig.subplots(2, len(profiles), squeeze=False)
    engines = order_engines(tp["engine"])
    for c, profile in enumerate(profiles):
        g = tp[tp["latency_profile"] == profile]
        for engine in engines:
            e = g[g["engine"] == engine].sort_values("concurrency")
            if e.empty:
                continue
            st = style(engine)
            kw = {
                "color": st.color,
                "marker": st.marker,
                "linestyle": st.linestyle,
                "label": engine,
            }
            axes[0][c].plot(
                e["concurrency"],
                e["runs_per_s"],
                markeredgecolor="black",
                markeredgewidth=0.4,
                **kw,
            )
            axes[1][c].plot(
                e["concurrency"], e["p95_ms"], markeredgecolor="black", markeredgewidth=0.4, **kw
            )
        axes[0][c].set_title(f"latency profile: {profile}")
        for r, label in enumerate(("throughput (runs/s, log)", "p95 latency per run (ms, log)")):
            ax = axes[r][c]
            _plain_log(ax, "x")
            _plain_log(ax, "y")
            ax.set_xlabel("concurrency (runs in flight, log)")
            ax.set_ylabel(label)
            levels = sorted(g["concurrency"].dropna().unique())
            if levels:
                ax.set_xticks(levels, [f"{v:g}" for v in levels])
                ax.minorticks_off()
            values = g["runs_per_s" if r == 0 else "p95_ms"]
            values = values[values > 0]
            if len(values) and values.max() / values.min() < 100:  # under two decades
                ax.yaxis.set_major_locator(mpl.ticker.LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
        axes[0][c].axhline(100, color="grey", lw=0.8, ls=":")
        axes[0][c].annotate(
            "100 runs/s",
            (axes[0][c].get_xlim()[0], 100),
            xytext=(2, 2),
            textcoords="offset points",
            fontsize=7,
            color="dimgrey",
        )
    handles, labels = axes[0][0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4)
    fig.suptitle("Throughput and p95 latency against concurrency (one engine process)")
    return fig


def overhead_share(steps: pd.DataFrame) -> Figure:
    """Derived: framework overhead per step as a share of the step, as LLM latency grows."""
    steps = _require(steps, "overhead per step", "median_ms")
    latencies = np.logspace(0, 4, 200)  # 1 ms .. 10 s per LLM call
    fig = _fig(7.5, 4.8)
    ax = fig.add_subplot()
    for _, row in steps.iterrows():
        if row["median_ms"] <= 0:
            continue
        st = style(row["engine"])
        share = analysis.overhead_share(row["median_ms"], latencies) * 100
        ax.plot(
            latencies,
            share,
            color=st.color,
            linestyle=st.linestyle,
            lw=1.6,
            marker=st.marker,
            markevery=(row.name * 3 % 20, 25),
            markeredgecolor="black",
            markeredgewidth=0.4,
            label=f"{row['engine']} ({fmt.ms(row['median_ms'])}/step)",
        )
    for pct in (1, 5, 10):
        ax.axhline(pct, color="grey", lw=0.8, ls=":")
        ax.annotate(
            f"{pct} %",
            (latencies[-1], pct),
            xytext=(-22, 2),
            textcoords="offset points",
            fontsize=7,
            color="dimgrey",
        )
    for v, label in ((300, "300 ms"), (1000, "1 s"), (3000, "3 s")):
        ax.axvline(v, color="#999999", lw=0.6, ls="--")
        ax.annotate(
            label,
            (v, 100),
            xytext=(2, -10),
            textcoords="offset points",
            fontsize=7,
            color="dimgrey",
        )
    _plain_log(ax, "x")
    ax.set_yscale("log")
    ax.set_ylim(0.001, 100)
    ax.yaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{v:g} %"))
    ax.set_xlabel("LLM latency per call (ms, log scale)")
    ax.set_ylabel("framework overhead, share of each step (%, log)")
    ax.set_title("Framework overhead as a share of end-to-end time (derived)")
    ax.legend(loc="lower left", fontsize=7)
    return fig


def tokens(tok: pd.DataFrame) -> Figure:
    """Prompt tokens per request, and the overhead per request over the raw loop."""
    tok = _require(tok, "token counts", "tokens_per_request")
    engines = list(tok["engine"])
    fig = _fig(9.5, 0.9 + 0.45 * len(engines))
    a1, a2 = fig.subplots(1, 2, sharey=True)
    _engine_bars(a1, engines, list(tok["tokens_per_request"]))
    a1.set_xlabel("prompt tokens per LLM request (mean over scenarios)")
    a1.set_title("Tokens sent per request")
    over = tok["overhead_per_request"].fillna(0)
    _engine_bars(a2, engines, list(over))
    a2.axvline(0, color="black", lw=0.8)
    a2.axvline(200, color="grey", lw=0.8, ls=":")
    a2.annotate(
        'article: "~200 per round"',
        (200, len(engines) - 0.6),
        xytext=(3, 0),
        textcoords="offset points",
        fontsize=7,
        color="dimgrey",
    )
    for y, v in enumerate(over):
        a2.annotate(
            f"{v:+.0f}",
            (max(v, 0), y),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    a2.set_xlim(min(0, over.min()) * 1.2 - 5, max(over.max() * 1.25, 260))
    a2.set_xlabel("extra prompt tokens per request vs raw (same scenarios)")
    a2.set_title("Token overhead against the raw loop")
    a2.tick_params(labelleft=False)
    return fig


def footprint(fp: pd.DataFrame) -> Figure:
    """Import time, modules loaded and RSS per engine."""
    fp = _require(fp, "footprint measurements", "modules")
    fp = fp.set_index("engine").loc[order_engines(fp["engine"])].reset_index()
    engines = list(fp["engine"])
    fig = _fig(11, 0.9 + 0.45 * len(engines))
    axes = fig.subplots(1, 3, sharey=True)
    for ax, col, label, show in (
        (axes[0], "import_ms", "import time (ms)", fmt.ms),
        (axes[1], "modules", "modules loaded (count)", fmt.count),
        (axes[2], "rss_mb", "resident memory added (MB)", fmt.count),
    ):
        values = pd.to_numeric(fp[col], errors="coerce")
        _engine_bars(ax, engines, list(values.fillna(0)))
        for y, v in enumerate(values):
            ax.annotate(
                show(v, missing="n/a"),
                (0 if pd.isna(v) else v, y),
                xytext=(3, 0),
                textcoords="offset points",
                va="center",
                fontsize=8,
            )
        ax.set_xlabel(label)
        ax.set_xlim(0, max(values.max() if values.notna().any() else 1, 1) * 1.3)
    axes[1].tick_params(labelleft=False)
    axes[2].tick_params(labelleft=False)
    fig.suptitle("Footprint: importing each engine's stack in a fresh interpreter")
    return fig


def ttft(tt: pd.DataFrame) -> Figure:
    """Time to first token per streaming engine (median bar, IQR, p95 tick, the scripted
    floor as a dashed line), and what each engine adds on top of the floor."""
    tt = _require(tt, "time-to-first-token measurements", "median_ms")
    engines = list(tt["engine"])
    fig = _fig(10, 1.2 + 0.5 * len(engines))
    a1, a2 = fig.subplots(1, 2, sharey=True)
    y = np.arange(len(engines))
    _engine_bars(a1, engines, list(tt["median_ms"]))
    lo = (tt["median_ms"] - tt["p25_ms"]).clip(lower=0)
    hi = (tt["p75_ms"] - tt["median_ms"]).clip(lower=0)
    a1.errorbar(tt["median_ms"], y, xerr=[lo, hi], fmt="none", ecolor="black", capsize=3, lw=1)
    a1.plot(
        tt["p95_ms"], y, linestyle="none", marker="|", markersize=12, color="black", label="p95"
    )
    floor = (
        float(tt["floor_ms"].max()) if "floor_ms" in tt and tt["floor_ms"].notna().any() else 0.0
    )
    if floor > 0:
        a1.axvline(floor, color="grey", ls="--", lw=1, label=f"scripted floor ({fmt.ms(floor)})")
    a1.set_xlim(0, float(np.nanmax(tt["p95_ms"].fillna(tt["median_ms"]))) * 1.15)
    a1.set_xlabel("time to first token (ms; bar = median, whisker = IQR)")
    a1.set_title("Time to first token of the final answer")
    handles, labels = a1.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower left", ncol=2, fontsize=7)
    extra = tt["added_ms"].fillna(tt["median_ms"]) if "added_ms" in tt else tt["median_ms"]
    vs_raw = "raw" in set(tt["engine"])
    _engine_bars(a2, engines, list(extra.clip(lower=0)))
    for i, v in enumerate(extra):
        a2.annotate(
            fmt.signed(v),
            (max(v, 0), i),
            xytext=(4, 0),
            textcoords="offset points",
            va="center",
            fontsize=8,
        )
    a2.set_xlim(0, max(float(extra.max()), 0.001) * 1.3)
    a2.set_xlabel(
        "added by the engine: median TTFT − raw loop's (ms)"
        if vs_raw
        else "added by the engine: TTFT − scripted floor (ms, median)"
    )
    a2.set_title("What the engine adds")
    a2.tick_params(labelleft=False)
    return fig


def debuggability(dbg: pd.DataFrame) -> Figure:
    """Recall of the key facts against the bytes of debug output: one panel per engine, its
    modes labelled, every other engine's modes in grey behind for comparison."""
    dbg = _require(dbg, "debuggability scores", "recall")
    pts = analysis.debug_mode_table(dbg).dropna(subset=["recall", "bytes"])
    pts = pts[pts["bytes"] > 0]  # a mode with no output (none/off) has nothing to place
    if pts.empty:
        raise NoData("no debuggability scores with both recall and bytes")
    engines = order_engines(pts["engine"])
    cols = min(4, len(engines))
    rows = -(-len(engines) // cols)
    fig = _fig(3.0 * cols + 0.6, 2.7 * rows + 0.9)
    axes = fig.subplots(rows, cols, squeeze=False, sharex=True, sharey=True)
    lo, hi = pts["bytes"].min() / 2, pts["bytes"].max() * 3
    for k, ax in enumerate(axes.flat):
        if k >= len(engines):
            ax.set_visible(False)
            continue
        engine = engines[k]
        st = style(engine)
        ax.plot(pts["bytes"], pts["recall"], linestyle="none", marker=".", color="#c8c8c8")
        mine = pts[pts["engine"] == engine].sort_values("bytes")
        for n, (_, row) in enumerate(mine.iterrows()):
            ax.plot(
                row["bytes"],
                row["recall"],
                linestyle="none",
                marker=st.marker,
                markersize=8,
                color=st.color,
                markeredgecolor="black",
                markeredgewidth=0.6,
            )
            ax.annotate(
                str(n + 1),
                (row["bytes"], row["recall"]),
                xytext=(5, 4),
                textcoords="offset points",
                fontsize=7,
                fontweight="bold",
            )
        key = "\n".join(
            f"{n + 1} {_label(m, 16)}: {r:.2f}, {_bytes(b)}"
            for n, (m, r, b) in enumerate(
                zip(mine["mode"], mine["recall"], mine["bytes"], strict=True)
            )
        )
        ax.text(
            0.97,
            0.04,
            key,
            transform=ax.transAxes,
            ha="right",
            va="bottom",
            fontsize=7,
            bbox={"facecolor": "white", "edgecolor": "#bbbbbb", "alpha": 0.9, "pad": 2},
        )
        ax.set_title(_label(engine), fontsize=9)
        _plain_log(ax)
        ax.set_xlim(lo, hi)
        ax.set_ylim(-0.05, 1.1)
    for ax in axes[-1]:
        ax.set_xlabel("debug output per run (bytes, log)")
    for ax in axes[:, 0]:
        ax.set_ylabel("recall of key facts (0–1)")
    fig.suptitle(
        "Debuggability: what you learn (recall, mean over scenarios) against what you must "
        "read (bytes, median)"
    )
    return fig


def fault_matrix(fm: pd.DataFrame) -> Figure:
    """Fault scenario x engine: the usual outcome, ✓ when it is what production needs."""
    fm = _require(fm, "fault scenarios", "outcome")
    engines = order_engines(fm["engine"])
    scenarios = sorted(fm["scenario"].unique())
    fig = _fig(2.4 + 1.05 * len(engines), 1.6 + 0.36 * len(scenarios))
    ax = fig.add_subplot()
    cells = fm.set_index(["engine", "scenario"])
    for i, scenario in enumerate(scenarios):
        for j, engine in enumerate(engines):
            if (engine, scenario) in cells.index:
                row = cells.loc[(engine, scenario)]
                outcome, ok = str(row["outcome"]), bool(row["as_expected"])
            else:
                outcome, ok = "not run", None
            color, hatch = OUTCOME_STYLES.get(outcome, ("#FFFFFF", ""))
            ax.add_patch(
                Rectangle((j, i), 1, 1, facecolor=color, hatch=hatch, edgecolor="#555555", lw=0.6)
            )
            mark = "" if ok is None else (" ✓" if ok else " ✗")
            ax.text(
                j + 0.5,
                i + 0.5,
                outcome + mark,
                ha="center",
                va="center",
                fontsize=7,
                bbox={"facecolor": "white", "edgecolor": "none", "alpha": 0.8, "pad": 1},
            )
    ax.set_xlim(0, len(engines))
    ax.set_ylim(len(scenarios), 0)
    ax.set_yticks(np.arange(len(scenarios)) + 0.5, [_label(n) for n in scenarios])
    ax.set_xticks(
        np.arange(len(engines)) + 0.5,
        [_label(e) for e in engines],
        rotation=30,
        ha="left",
        rotation_mode="anchor",
    )
    ax.xaxis.tick_top()
    ax.grid(False)
    ax.tick_params(length=0)
    for side in ("left", "bottom", "top", "right"):
        ax.spines[side].set_visible(False)
    legend = [
        Patch(facecolor=c, hatch=h, edgecolor="#555555", label=o)
        for o, (c, h) in OUTCOME_STYLES.items()
        if o != "not run"
    ]
    fig.legend(handles=legend, loc="outside lower center", ncol=len(legend), fontsize=7)
    fig.suptitle(
        "Fault matrix: usual outcome per fault scenario and engine\n"
        "(✓ = ends the way the scenario says a production agent should)"
    )
    return fig


def load_latency(frame: pd.DataFrame) -> Figure:
    """p50 (solid) and p99 (dashed) latency from the scheduled start against the offered
    rate, per engine; one panel per process count. Hollow markers: not sustained."""
    frame = _require(frame, "load levels", "p50_ms")
    counts = sorted(frame["processes"].unique())
    fig = _fig(4.6 * len(counts) + 1.2, 4.8)
    axes = fig.subplots(1, len(counts), squeeze=False, sharey=True)[0]
    engines = order_engines(frame["engine"])
    target = float(frame["target_ms"].max())
    scripted = float(frame["scripted_ms"].max())
    for ax, processes in zip(axes, counts, strict=True):
        g = frame[frame["processes"] == processes]
        for engine in engines:
            e = g[g["engine"] == engine].sort_values("rate")
            if e.empty:
                continue
            st = style(engine)
            for column, linestyle, label in (
                ("p50_ms", "-", f"{engine} p50"),
                ("p99_ms", "--", f"{engine} p99"),
            ):
                ax.plot(
                    e["rate"], e[column], color=st.color, linestyle=linestyle, lw=1.3,
                    label=label,
                )  # fmt: skip
                for filled in (True, False):
                    part = e[e["sustained"] == filled]
                    ax.plot(
                        part["rate"], part[column], linestyle="none", marker=st.marker,
                        markersize=5, color=st.color, markeredgecolor="black",
                        markeredgewidth=0.5, markerfacecolor=st.color if filled else "white",
                    )  # fmt: skip
        ax.axhline(target, color="#D55E00", lw=0.9, ls=":")
        ax.axhline(scripted, color="grey", lw=0.8, ls="-.")
        _plain_log(ax, "x")
        rates = sorted(g["rate"].unique())
        ax.set_xticks(rates, [f"{r:g}" for r in rates])
        ax.minorticks_off()
        ax.text(
            0.01, target, f" target p95 {fmt.ms(target, seconds_from=1000)}",
            transform=ax.get_yaxis_transform(), va="bottom", fontsize=7, color="#D55E00",
        )  # fmt: skip
        ax.set_xlabel("offered load (runs/s, Poisson arrivals, log)")
        ax.set_title(f"{processes} engine process{'es' if processes > 1 else ''}")
    axes[0].set_ylabel("latency from the scheduled start (ms)")
    handles, labels = axes[0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncol=4, fontsize=7)
    fig.suptitle(
        "Latency against offered load (open loop): solid p50, dashed p99, hollow = rate not "
        "sustained; grey: the mock's scripted latency"
    )
    return fig


def capacity(frame: pd.DataFrame) -> Figure:
    """Per engine and process count: the highest rate sustained within the latency target
    (bar; thin line up to the first rate not sustained), and the cores 100 runs/s need."""
    frame = _require(frame, "capacity measurements", "engine")
    engines = order_engines(frame["engine"])
    counts = sorted(frame["processes"].unique())
    fig = _fig(10, 1.2 + 0.55 * len(engines) * max(1, len(counts)) ** 0.5)
    a1, a2 = fig.subplots(1, 2, sharey=True)
    height = 0.8 / len(counts)
    for i, engine in enumerate(engines):
        st = style(engine)
        for j, processes in enumerate(counts):
            row = frame[(frame["engine"] == engine) & (frame["processes"] == processes)]
            if row.empty:
                continue
            r = row.iloc[0]
            y = i - 0.4 + height * (j + 0.5)
            kw = {
                "height": height * 0.9, "color": st.color, "edgecolor": "#333333",
                "linewidth": 0.6, "hatch": st.hatch, "alpha": 1.0 if j == 0 else 0.55,
            }  # fmt: skip
            rate = r["rate"]
            a1.barh(y, 0 if pd.isna(rate) else rate, **kw)
            if not pd.isna(rate) and not pd.isna(r["above"]):
                a1.plot([rate, r["above"]], [y, y], color="black", lw=0.8)
            text = (
                f"< {r['below_all']:g}" if pd.isna(rate)
                else ("≥ " if r["censored"] else "") + f"{rate:g}"
            )  # fmt: skip
            end = 0 if pd.isna(rate) else rate if pd.isna(r["above"]) else r["above"]
            a1.annotate(
                f"{text}  ({processes} proc)", (end, y),
                xytext=(4, 0), textcoords="offset points", va="center", fontsize=7,
            )  # fmt: skip
            cores = r["cores_100"]
            a2.barh(y, 0 if pd.isna(cores) else cores, **kw)
            if not pd.isna(cores) and not pd.isna(r["cores_low"]):
                a2.errorbar(
                    cores, y, xerr=[[cores - r["cores_low"]], [r["cores_high"] - cores]],
                    fmt="none", ecolor="black", capsize=2, lw=0.8,
                )  # fmt: skip
    a1.set_yticks(range(len(engines)), [_label(e) for e in engines])
    a1.invert_yaxis()
    a1.axvline(100, color="grey", lw=0.8, ls=":")
    a1.set_xscale("symlog", linthresh=10)
    a1.xaxis.set_major_formatter(mpl.ticker.FuncFormatter(lambda v, _: f"{v:,.10g}"))
    a1.set_xlim(
        0,
        max(float(np.nanmax(frame[["rate", "above"]].to_numpy(dtype=float), initial=100)), 100)
        * 2.5,
    )
    a1.set_xlabel("runs/s sustained with p95 within the target (symlog)")
    a1.set_title("Capacity at the latency target")
    a2.axvline(1, color="grey", lw=0.8, ls=":")
    a2.set_xlabel("cores for 100 runs/s (CPU per run under load × 100; 95 % CI)")
    a2.set_title("Cores needed for 100 runs/s")
    a2.tick_params(labelleft=False)
    target = float(frame["target_ms"].max())
    fig.suptitle(
        f"Capacity per engine and process count (p95 ≤ {fmt.ms(target, seconds_from=1000)}; "
        "paler bar: more processes)"
    )
    return fig


# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ChartSpec:
    key: str
    title: str
    caption: str
    draw: Callable[[RunData], Figure]


def _breakdown(d: RunData) -> pd.DataFrame:
    from bench.report.probe import breakdown_frame

    if not d.profile:
        raise NoData("no profiling probe in this run (schedbench probe)")
    return breakdown_frame(list(d.profile))


def _latency(d: RunData) -> Figure:
    return latency_by_scenario(analysis.scenario_stats(d), tuple(d.fault_scenarios))


CHARTS: tuple[ChartSpec, ...] = (
    ChartSpec(
        "latency",
        "Latency per engine per scenario",
        "Wall time per run on every scenario, log scale: marker = median, thick bar = IQR, "
        "thin bar = up to p95. Fault scenarios include their timeouts and retries.",
        _latency,
    ),
    ChartSpec(
        "overhead_per_step",
        "Framework overhead per LLM step",
        "Run time minus the mock's latency and the tools' time, divided by LLM calls; "
        "completed runs of the happy-path scenarios. Whisker = IQR.",
        lambda d: overhead_per_step(analysis.step_overhead(d)),
    ),
    ChartSpec(
        "throughput",
        "Throughput and p95 latency against concurrency",
        "One engine process under increasing concurrency, for each LLM latency profile. "
        "Dotted line: 100 runs/s, the article's threshold for a custom loop.",
        lambda d: throughput(d.throughput),
    ),
    ChartSpec(
        "load_latency",
        "Latency against offered load",
        "The open-loop load phase: runs start at Poisson arrival times whatever the engine's "
        "state, and latency counts from each run's scheduled start, so queueing shows as the "
        "curve bends up. Solid: p50, dashed: p99; hollow markers: the rate was not sustained "
        "(p95 over the target, errors, or an early stop).",
        lambda d: load_latency(load_section.load_frame(d.load_levels)),
    ),
    ChartSpec(
        "capacity",
        "Capacity per engine and process count",
        "The highest offered rate each engine sustained with its p95 within the target (thin "
        "line: up to the first rate it did not), and the cores 100 runs/s need at the CPU per "
        "run measured under load.",
        lambda d: capacity(load_section.capacity_frame(d.load_levels)),
    ),
    ChartSpec(
        "overhead_share",
        "Overhead as a share of end-to-end time",
        "Derived, not measured end to end: each engine's measured overhead per LLM step o, "
        "and share = o ÷ (o + L) for a per-call LLM latency L from 1 ms to 10 s (tools ignored).",
        lambda d: overhead_share(analysis.step_overhead(d)),
    ),
    ChartSpec(
        "tokens",
        "Tokens per request and token overhead vs raw",
        "Prompt tokens each engine sent per LLM request (real tokenizer, on the bodies the "
        "mock received), and the difference from the raw loop on the same scenarios.",
        lambda d: tokens(analysis.token_stats(d)),
    ),
    ChartSpec(
        "footprint",
        "Footprint",
        "Importing each engine's stack in a fresh interpreter: time, modules added to "
        "sys.modules, resident memory.",
        lambda d: footprint(d.footprint),
    ),
    ChartSpec(
        "ttft",
        "Time to first token",
        "Time from the start of a run to the first token of the final answer reaching the caller "
        "through each engine's stream (the run's TTFT phase; without one, the suite's runs of "
        "the scenarios tagged 'ttft' on the zero-latency mock). Right: the engine's median TTFT "
        "minus the raw loop's (else minus the part the mock scripts) — its own interception "
        "latency.",
        lambda d: ttft(analysis.ttft_stats(d)),
    ),
    ChartSpec(
        "debuggability",
        "Debuggability: recall against bytes",
        "Each point is an engine in one debug mode: the share of a run's key facts found in its "
        "debug output, against the size of that output. Up and left is better; modes that print "
        "nothing (off) are left out.",
        lambda d: debuggability(d.debuggability),
    ),
    ChartSpec(
        "package_breakdown",
        "Where a run's time goes, by package",
        "The profiling probe (a separate run, never the timed suite): each engine's sampled "
        "time on the happy-path scenarios, grouped by the package of the running function; "
        "hatched: LangChain's callbacks, tracers and runnable plumbing.",
        lambda d: package_breakdown(_breakdown(d)),
    ),
    ChartSpec(
        "fault_matrix",
        "Fault matrix",
        "The most frequent outcome of each engine on each fault scenario; ✓ when it is the "
        "outcome a production agent should reach (the scenario's base expectation).",
        lambda d: fault_matrix(analysis.fault_matrix(d)),
    ),
)


def save(spec: ChartSpec, data: RunData, out_dir: Path) -> tuple[Path, Path]:
    """Draw one chart in the house style and write ``KEY.png`` and ``KEY.svg`` (raises
    ``NoData`` when the run has nothing for it)."""
    real_dir(out_dir)
    with mpl.rc_context(RC):
        fig = spec.draw(data)
        png, svg = out_dir / f"{spec.key}.png", out_dir / f"{spec.key}.svg"
        for path, kind, metadata in (
            (png, "png", {"Software": None}),
            (svg, "svg", {"Date": None, "Creator": None}),
        ):
            buffer = io.BytesIO()
            fig.savefig(buffer, format=kind, metadata=metadata)
            replace_file(path, buffer.getvalue())  # never through a link in the run folder
    return png, svg


# ---------------------------------------------------------------------------------------------
# the profiling probe (bench.probe): the package chart, listed in CHARTS

# one colour per package group (``bench.engines.packages.GROUPS``), stable across charts; LangChain's
# callback and Runnable layers get the hatched segments, so claim 2's share reads in greyscale
_GROUP_COLORS = dict(
    zip(
        GROUPS,
        (
            "#D55E00",
            "#E69F00",
            "#F0E442",
            "#009E73",
            "#56B4E9",
            "#66C2A5",
            "#1B9E77",
            "#A6D854",
            "#B3B3B3",
            "#0072B2",
            "#7B3294",
            "#000000",
            "#CC79A7",
            "#8DA0CB",
            "#E78AC3",
            "#FC8D62",
            "#FFD92F",
            "#DDDDDD",
            "#999999",
        ),
        strict=True,
    )
)
_GROUP_HATCHES = {
    "langchain_core.callbacks": "xx",
    "langchain_core.tracers": "..",
    "langchain_core.runnables": "//",
}
_MIN_GROUP_SHARE = 0.01  # groups below this in every engine are drawn as "other"


def package_breakdown(shares: pd.DataFrame) -> Figure:
    """Where a run's time goes, by package: one stacked bar per engine.

    ``shares``: one row per engine × group, columns ``engine``, ``group``, ``share`` (0..1,
    the engine's shares summing to 1) — ``bench.report.probe.breakdown_frame``. Engines in
    the registry's order; groups in ``bench.engines.packages.GROUPS`` order.
    """
    shares = _require(shares, "profiling-probe shares", "share")
    engines = order_engines(shares["engine"])
    wide = shares.pivot_table(index="engine", columns="group", values="share", aggfunc="sum")
    wide = wide.reindex(engines).fillna(0.0)
    small = [g for g in wide.columns if wide[g].max() < _MIN_GROUP_SHARE and g != "other"]
    if small:
        wide["other"] = wide.get("other", 0.0) + wide[small].sum(axis=1)
        wide = wide.drop(columns=small)
    order = [g for g in _GROUP_COLORS if g in wide.columns]
    order += [g for g in wide.columns if g not in order]
    fig = _fig(10, 1.6 + 0.42 * len(engines))
    ax = fig.add_subplot()
    y = np.arange(len(engines))
    left = np.zeros(len(engines))
    for i, group in enumerate(order):
        values = wide[group].to_numpy() * 100
        color = _GROUP_COLORS.get(group, mpl.colormaps["tab20"](i % 20))
        ax.barh(
            y,
            values,
            left=left,
            height=0.7,
            color=color,
            hatch=_GROUP_HATCHES.get(group, ""),
            edgecolor="#333333",
            linewidth=0.4,
            label=group,
        )
        for j, v in enumerate(values):
            if v >= 8:
                dark = mpl.colors.rgb_to_hsv(mpl.colors.to_rgb(color))[2] < 0.45
                ax.annotate(
                    f"{v:.0f}",
                    (left[j] + v / 2, y[j]),
                    ha="center",
                    va="center",
                    fontsize=7,
                    color="white" if dark else "black",
                )
        left += values
    ax.set_yticks(y, [_label(e) for e in engines])
    ax.invert_yaxis()
    ax.set_xlim(0, 100)
    ax.set_xlabel("share of a run's time (%, sampled; in-process mock, zero latency)")
    ax.set_title("Where the time goes, by package")
    ax.grid(axis="y", visible=False)
    fig.legend(loc="outside lower center", ncol=min(len(order), 5), fontsize=7)
    return fig
