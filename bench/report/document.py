"""The report as data (sections of blocks), and its two renderers: Markdown and HTML.

Both files are written from the same ``Document``, so they cannot drift apart. Every string
in a block is plain text: the renderers escape it for their format (``html.escape`` for
HTML; for Markdown, whatever could start markup: tags, entities, brackets of links and link
reference definitions, code spans, table pipes, and a heading, quote or list marker where a
block starts). Control characters are shown as their escapes (``bench.results.escape``) in both.
Nothing is ever passed through as markup, so text from scenario files, tools or final
answers cannot inject anything.
"""

from __future__ import annotations

import base64
import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from bench.results.escape import visible


@dataclass(frozen=True)
class Strong:
    text: str


@dataclass(frozen=True)
class Code:
    text: str


Span = str | Strong | Code


@dataclass(frozen=True)
class Paragraph:
    spans: tuple[Span, ...]

    @classmethod
    def of(cls, *spans: Span) -> Paragraph:
        return cls(tuple(spans))


@dataclass(frozen=True)
class Bullets:
    items: tuple[Paragraph, ...]


@dataclass(frozen=True)
class Cell:
    """A table cell with a CSS class (``verdict-supported``, ``num``, ...) for the HTML."""

    text: str
    css: str = ""


@dataclass(frozen=True)
class Table:
    columns: tuple[str, ...]
    rows: tuple[tuple[str | Cell, ...], ...]
    caption: str = ""
    css: str = ""  # HTML class of the table (tests find the matrix and ledger by it)
    numeric: tuple[int, ...] = ()  # right-aligned columns


@dataclass(frozen=True)
class Figure:
    key: str
    title: str
    caption: str
    png: Path
    svg: Path


@dataclass(frozen=True)
class Note:
    """A boxed remark: a skipped chart, a caveat."""

    text: str


@dataclass(frozen=True)
class Excerpt:
    """Verbatim text shown as it was printed (a debug output), with where it comes from."""

    text: str
    caption: str = ""


Block = Paragraph | Bullets | Table | Figure | Note | Excerpt


@dataclass(frozen=True)
class Section:
    title: str
    anchor: str
    blocks: tuple[Block, ...]
    subsections: tuple[Section, ...] = ()
    collapsed: bool = False  # HTML: folded into a <details> (Markdown shows it all)


@dataclass(frozen=True)
class Document:
    title: str
    subtitle: str
    sections: tuple[Section, ...]
    footer: str = ""
    lang: str = "en"
    meta: dict[str, str] = field(default_factory=dict)


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or "section"


# ---------------------------------------------------------------------------------------------
# Markdown

# Only what could start markup is escaped, so "< 10 %" stays readable in the raw file:
# "<" before a letter, "/", "!" or "?" (a tag, comment or declaration), "&" before an entity,
# "](" and "][" (the middle of a link or image), "`" (a code span) and the backslash itself
# (so that no text can escape the markup around it).
_MD_UNSAFE = re.compile(r"<(?=[A-Za-z/!?])|&(?=#|[A-Za-z][A-Za-z0-9]*;)|\](?=[(\[])|[`\\]")
_MD_ESCAPES = {"<": "&lt;", "&": "&amp;", "]": "\\]", "`": "\\`", "\\": "\\\\"}
# what makes a block of its own when a paragraph or list item starts with it: a heading,
# quote, list item, code fence, thematic break or table row, an ordered-list number, and
# "[x]: url" — a link reference definition, which would turn every "[x]" of the document
# into a link (with none defined, a bracketed text stays text)
_MD_BLOCK_START = re.compile(r"([#>+*_~|=\[-])|\d{1,9}([.)])")


def md_text(text: str) -> str:
    """Escape untrusted text for Markdown (see ``_MD_UNSAFE``); newlines flattened."""
    out = _MD_UNSAFE.sub(lambda m: _MD_ESCAPES[m.group(0)[0]], visible(text))
    return re.sub(r"[\r\n]+", " ", out)


def _md_block_start(text: str) -> str:
    """Escaped ``text`` that starts a block: leading blanks dropped (four would make a code
    block), a leading marker escaped (``\\# not a heading``, ``1\\. not a list``)."""
    text = text.lstrip(" \t")
    match = _MD_BLOCK_START.match(text)
    if match is None:
        return text
    cut = match.start(1) if match.group(1) else match.start(2)
    return text[:cut] + "\\" + text[cut:]


def _md_cell(text: str) -> str:
    return md_text(text).replace("|", "\\|")


def _md_spans(spans: Sequence[Span]) -> str:
    out = []
    for span in spans:
        if isinstance(span, Strong):
            text = span.text.strip()
            gap = " " if span.text != span.text.rstrip() else ""
            out.append(f"**{md_text(text)}**{gap}" if text else gap)
        elif isinstance(span, Code):
            body = re.sub(r"[\r\n]+", " ", visible(span.text).replace("`", "'"))
            out.append(f"`{body}`")
        else:
            out.append(md_text(span) if out else _md_block_start(md_text(span)))
    return "".join(out)


def _cell_text(cell: str | Cell) -> str:
    return cell.text if isinstance(cell, Cell) else str(cell)


def _md_block(block: Block, base: Path | None) -> str:
    match block:
        case Paragraph(spans):
            return _md_spans(spans)
        case Bullets(items):
            return "\n".join(f"- {_md_spans(item.spans)}" for item in items)
        case Table(columns, rows, caption, _, numeric):
            head = "| " + " | ".join(_md_cell(c) for c in columns) + " |"
            rule = (
                "|" + "|".join("---:" if i in numeric else "---" for i in range(len(columns))) + "|"
            )
            body = ["| " + " | ".join(_md_cell(_cell_text(c)) for c in row) + " |" for row in rows]
            text = "\n".join([head, rule, *body])
            return f"{text}\n\n*{md_text(caption)}*" if caption else text
        case Figure(_key, title, caption, png, svg):
            png_ref = _rel(png, base)
            svg_ref = _rel(svg, base)
            return f"![{md_text(title)}]({png_ref})\n\n*{md_text(caption)}* ([SVG]({svg_ref}))"
        case Note(text):
            return f"> **Note:** {md_text(text)}"
        case Excerpt(text, caption):
            plain = visible(text)
            fence = "`" * max(3, max((len(m) for m in re.findall(r"`+", plain)), default=0) + 1)
            shown = f"{fence}text\n{plain}\n{fence}"
            return f"{shown}\n\n*{md_text(caption)}*" if caption else shown
    raise TypeError(f"unknown block {block!r}")


def _rel(path: Path, base: Path | None) -> str:
    if base is None:
        return path.as_posix()
    try:
        return path.resolve().relative_to(base.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def to_markdown(doc: Document, base: Path | None = None) -> str:
    """The document as GitHub-flavoured Markdown; image links relative to ``base``."""
    parts = [f"# {md_text(doc.title)}", "", f"*{md_text(doc.subtitle)}*", ""]
    parts.append("## Contents")
    parts.append("")
    for s in doc.sections:
        parts.append(f"- [{md_text(s.title)}](#{s.anchor})")
    parts.append("")

    def emit(section: Section, level: int) -> None:
        parts.append(f"{'#' * level} {md_text(section.title)}")
        parts.append("")
        for block in section.blocks:
            parts.append(_md_block(block, base))
            parts.append("")
        for sub in section.subsections:
            emit(sub, level + 1)

    for s in doc.sections:
        emit(s, 2)
    if doc.footer:
        parts.extend(["---", "", _md_block_start(md_text(doc.footer)), ""])
    return "\n".join(parts).rstrip() + "\n"


# ---------------------------------------------------------------------------------------------
# HTML

CSS = """
:root { --fg:#1d1d1f; --muted:#5f6368; --line:#d9d9de; --bg:#ffffff; --soft:#f5f5f7; }
* { box-sizing: border-box; }
body { margin: 0; background: var(--bg); color: var(--fg);
  font: 15px/1.55 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial,
  sans-serif; }
main { max-width: 1080px; margin: 0 auto; padding: 24px 28px 64px; }
h1 { font-size: 1.9em; margin: 0.4em 0 0.1em; }
h2 { font-size: 1.4em; margin-top: 2em; border-bottom: 1px solid var(--line);
  padding-bottom: 0.2em; }
h3 { font-size: 1.15em; margin-top: 1.6em; }
.subtitle { color: var(--muted); margin-top: 0; }
nav.toc { background: var(--soft); border-radius: 8px; padding: 10px 18px; }
nav.toc ul { margin: 0.3em 0; padding-left: 1.2em; columns: 2; }
table { border-collapse: collapse; margin: 0.8em 0; width: 100%; font-size: 0.9em; }
th, td { border: 1px solid var(--line); padding: 5px 8px; text-align: left;
  vertical-align: top; }
th { background: var(--soft); }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
td.num { white-space: nowrap; }
caption { caption-side: bottom; color: var(--muted); font-size: 0.9em; text-align: left;
  padding-top: 4px; }
.table-wrap { overflow-x: auto; }
figure { margin: 1.4em 0; }
figure img { max-width: 100%; height: auto; border: 1px solid var(--line);
  border-radius: 4px; }
figcaption { color: var(--muted); font-size: 0.9em; }
.note { border-left: 4px solid #E69F00; background: #fff8e6; padding: 8px 12px;
  margin: 1em 0; }
code { background: var(--soft); padding: 0 3px; border-radius: 3px; font-size: 0.92em; }
td.verdict-supported { background: #e3f4ea; font-weight: 600; }
td.verdict-refuted { background: #fde7e3; font-weight: 600; }
td.verdict-partly { background: #fff4d6; font-weight: 600; }
figure.excerpt pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 0.8em; max-height: 24em; }
td.verdict-unsettled { background: #ececf6; font-weight: 600; font-style: italic; }
td.verdict-not-measured, td.not-measured { color: var(--muted); font-style: italic; }
td.stars { white-space: nowrap; }
details > summary { cursor: pointer; }
details > summary > h3, details > summary > h4 { display: inline; }
footer { color: var(--muted); font-size: 0.85em; margin-top: 3em; }
@media print { nav.toc { display: none; } figure { break-inside: avoid; } }
"""


def _h(text: str) -> str:
    return html.escape(visible(text), quote=True)


def _html_spans(spans: Sequence[Span]) -> str:
    out = []
    for span in spans:
        if isinstance(span, Strong):
            out.append(f"<strong>{_h(span.text)}</strong>")
        elif isinstance(span, Code):
            out.append(f"<code>{_h(span.text)}</code>")
        else:
            out.append(_h(span))
    return "".join(out)


def _css_class(name: str) -> str:
    return re.sub(r"[^a-z0-9_ -]", "", name.lower())


def _html_block(block: Block) -> str:
    match block:
        case Paragraph(spans):
            return f"<p>{_html_spans(spans)}</p>"
        case Bullets(items):
            lis = "".join(f"<li>{_html_spans(i.spans)}</li>" for i in items)
            return f"<ul>{lis}</ul>"
        case Table(columns, rows, caption, css, numeric):
            num = ' class="num"'
            ths = "".join(
                f'<th{num if i in numeric else ""} scope="col">{_h(c)}</th>'
                for i, c in enumerate(columns)
            )
            trs = []
            for row in rows:
                tds = []
                for i, cell in enumerate(row):
                    classes = []
                    if i in numeric:
                        classes.append("num")
                    if isinstance(cell, Cell) and cell.css:
                        classes.append(_css_class(cell.css))
                    classes = list(dict.fromkeys(classes))
                    cls = f' class="{" ".join(classes)}"' if classes else ""
                    tds.append(f"<td{cls}>{_h(_cell_text(cell))}</td>")
                trs.append(f"<tr>{''.join(tds)}</tr>")
            cap = f"<caption>{_h(caption)}</caption>" if caption else ""
            cls = f' class="{_css_class(css)}"' if css else ""
            return (
                f'<div class="table-wrap"><table{cls}>{cap}<thead><tr>{ths}</tr></thead>'
                f"<tbody>{''.join(trs)}</tbody></table></div>"
            )
        case Figure(key, title, caption, png, _svg):
            data = base64.b64encode(png.read_bytes()).decode("ascii")
            return (
                f'<figure id="chart-{_css_class(key)}" class="chart">'
                f'<img src="data:image/png;base64,{data}" alt="{_h(title)}">'
                f"<figcaption><strong>{_h(title)}.</strong> {_h(caption)}</figcaption></figure>"
            )
        case Note(text):
            return f'<div class="note">{_h(text)}</div>'
        case Excerpt(text, caption):
            body = html.escape(visible(text))
            cap = f"<figcaption>{_h(caption)}</figcaption>" if caption else ""
            return f'<figure class="excerpt"><pre>{body}</pre>{cap}</figure>'
    raise TypeError(f"unknown block {block!r}")


def to_html(doc: Document) -> str:
    """The document as one self-contained HTML page: inline CSS, charts as data: URIs."""
    out = [
        "<!DOCTYPE html>",
        f'<html lang="{_h(doc.lang)}"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        # no network at all: inline styles and data: images only
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; '
        "img-src data:; style-src 'unsafe-inline'\">",
        f"<title>{_h(doc.title)}</title>",
    ]
    for name, value in doc.meta.items():
        out.append(f'<meta name="{_h(name)}" content="{_h(value)}">')
    out.append(f"<style>{CSS}</style></head><body><main>")
    out.append(f'<h1>{_h(doc.title)}</h1><p class="subtitle">{_h(doc.subtitle)}</p>')
    toc = "".join(f'<li><a href="#{_h(s.anchor)}">{_h(s.title)}</a></li>' for s in doc.sections)
    out.append(f'<nav class="toc"><strong>Contents</strong><ul>{toc}</ul></nav>')

    def emit(section: Section, level: int) -> None:
        out.append(f'<section id="{_h(section.anchor)}">')
        heading = f"<h{level}>{_h(section.title)}</h{level}>"
        if section.collapsed:
            out.append(f"<details><summary>{heading}</summary>")
        else:
            out.append(heading)
        out.extend(_html_block(b) for b in section.blocks)
        for sub in section.subsections:
            emit(sub, min(level + 1, 6))
        if section.collapsed:
            out.append("</details>")
        out.append("</section>")

    for s in doc.sections:
        emit(s, 2)
    if doc.footer:
        out.append(f"<footer>{_h(doc.footer)}</footer>")
    out.append("</main></body></html>")
    return "\n".join(out) + "\n"
