"""Text from scenario files reaches the console, report.md and report.html as text."""

from __future__ import annotations

import re
from pathlib import Path

from markdown_it import MarkdownIt

from bench.report.document import Bullets, Document, Paragraph, Section, Table, to_html, to_markdown
from bench.results.escape import visible
from tests.hostile.conftest import good, invalid, schedbench

ESC = "\x1b"
TAGS = (
    '[markup, "[/oops]", "[link=https://evil.example]click[/link]", '
    '"\\e[31mred\\e[0m", "\\u202eevil"]'
)


def test_scenarios_list_prints_tags_as_typed_with_controls_visible(folder):
    (folder / "tagged.yaml").write_text(good("tagged") + f"tags: {TAGS}\n")
    done = schedbench("scenarios", "list", "--scenario-dir", str(folder))
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    assert ESC not in done.stdout and "\u202e" not in done.stdout
    row = next(line for line in done.stdout.splitlines() if "tagged" in line)
    assert re.sub(r"\s+", " ", row).strip() == (
        "│ tagged │ markup, [/oops], [link=https://evil.example]click[/link], "
        "\\x1b[31mred\\x1b[0m, \\u202eevil │ 1 │ 2 │"
    )


def test_validate_errors_show_control_characters_escaped(folder):
    text = good("ansi").replace(
        "  - content: It is", '  - tool_calls: [{name: "\\e[2J\\rwiped"}]\n  - content: It is'
    )
    (folder / "ansi.yaml").write_text(text)
    invalid(
        schedbench("scenarios", "validate", "--scenario-dir", str(folder)),
        [
            f"{folder}/ansi.yaml: script[1].tool_calls[0].name: tool '\\x1b[2J\\x0dwiped' "
            "is not defined",
            "0 valid, 1 invalid (1 files)",
        ],
    )


def test_visible_escapes_controls_and_keeps_text():
    assert visible("a\tb\nc") == "a\tb\nc"
    assert visible("\x1b[2J\r\x00\x7f\x9b\u202e\u2066\u2028é ü 中") == (
        "\\x1b[2J\\x0d\\x00\\x7f\\x9b\\u202e\\u2066\\u2028é ü 中"
    )


HOSTILE = (
    "# Owned heading",
    "[x]: https://evil.example/steal",
    "> quoted",
    "1. listed",
    "    indented code",
    "<script>alert(1)</script> [click](https://evil.example) ![i](https://evil.example/i.png)",
    f"{ESC}[31mred{ESC}[0m \u202eevil",
    "[x] and [y][x] and back\\slash **",
)


def _render(markdown: str) -> str:
    return MarkdownIt("commonmark").enable("table").render(markdown)


def test_markdown_and_html_carry_hostile_text_as_text():
    blocks = [Paragraph.of(text) for text in HOSTILE]
    blocks.append(Bullets(tuple(Paragraph.of(text) for text in HOSTILE)))
    blocks.append(Table(("text",), tuple((text,) for text in HOSTILE)))
    doc = Document("T", "s", (Section("S", "s", tuple(blocks)),))
    markdown = to_markdown(doc)
    rendered = _render(markdown)
    assert [h for h in re.findall(r"<h\d>(.*?)</h\d>", rendered)] == ["T", "Contents", "S"]
    assert "evil.example" not in "".join(re.findall(r'(?:href|src)="([^"]*)"', rendered))
    for tag in ("<script", "<blockquote", "<ol", "<pre", "<img"):
        assert tag not in rendered
    assert ESC not in markdown and "\u202e" not in markdown
    # every hostile text is still there, as text, in the rendered page
    assert "# Owned heading" in rendered
    assert "[x]: https://evil.example/steal" in rendered
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in rendered
    assert "\\x1b[31mred\\x1b[0m \\u202eevil" in rendered
    assert "[x] and [y][x] and back\\slash **" in rendered
    html = to_html(doc)
    assert ESC not in html and "\u202e" not in html and "<script" not in html
    assert "\\x1b[31mred\\x1b[0m \\u202eevil" in html


HOSTILE_SCENARIO = """\
name: {name}
description: "{description}"
user: Answer.
script:
  - content: "{answer}"
expect:
  status: completed
"""


def test_a_report_of_hostile_scenarios_injects_nothing(folder, tmp_path):
    files = {
        "heading": ("# Owned heading", "fine"),
        "definition": ("[x]: https://evil.example/steal", "see [x] and [x][x]"),
        "controls": ("\\e[2Jcleared", "\\e[31mred\\e[0m <img src=x onerror=alert(1)>"),
    }
    for name, (description, answer) in files.items():
        (folder / f"{name}.yaml").write_text(
            HOSTILE_SCENARIO.format(name=name, description=description, answer=answer)
        )
    out = tmp_path / "run"
    done = schedbench(
        "run", "--scenario-dir", str(folder), "--engines", "raw", "--repeat", "2",
        "--rounds", "1", "--no-throughput", "--no-footprint", "--no-ttft", "--out", str(out),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    done = schedbench("report", str(out))
    assert done.returncode == 0, done.stderr
    markdown = (out / "report.md").read_text(encoding="utf-8")
    html = (out / "report.html").read_text(encoding="utf-8")
    rendered = _render(markdown)
    assert "Owned heading" not in "".join(re.findall(r"<h\d>(.*?)</h\d>", rendered))
    assert "# Owned heading" in rendered  # shown as text
    assert "evil.example" not in "".join(re.findall(r'(?:href|src)="([^"]*)"', rendered))
    assert "[x]: https://evil.example/steal" in rendered
    assert ESC not in markdown + html
    assert "\\x1b[2Jcleared" in rendered and "\\x1b[2Jcleared" in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in rendered  # the answer, as text
    assert "<img src=x" not in rendered and "<img src=x" not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    assert Path(out / "report.md").stat().st_size > 0


def test_a_run_folder_whose_name_looks_like_markup_is_printed_as_typed(tmp_path):
    out = tmp_path / "run[/oops][link=https://evil.example]"
    done = schedbench(
        "run", "--engines", "raw", "--scenarios", "single_tool", "--repeat", "1", "--rounds", "1",
        "--no-throughput", "--no-footprint", "--no-ttft", "--no-load", "--out", str(out),
    )  # fmt: skip
    assert "Traceback" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert "1 timed runs in " in done.stdout
    assert f"→ {out} (meta.json" in " ".join(done.stdout.split())
