"""The document model renders to exact Markdown and HTML, escaping every string."""

from __future__ import annotations

from pathlib import Path

from bench.report.document import (
    Bullets,
    Cell,
    Code,
    Document,
    Figure,
    Note,
    Paragraph,
    Section,
    Strong,
    Table,
    md_text,
    to_html,
    to_markdown,
)

DOC = Document(
    title="T",
    subtitle="run r",
    sections=(
        Section(
            "One",
            "one",
            (
                Paragraph.of(Strong("Bold. "), "plain ", Code("x|y")),
                Bullets((Paragraph.of("a"), Paragraph.of("b"))),
                Table(("k", "v"), (("a|b", Cell("1", "num")),), caption="cap", numeric=(1,)),
                Note("careful"),
            ),
        ),
    ),
)


def test_markdown_exact() -> None:
    assert to_markdown(DOC) == (
        "# T\n\n*run r*\n\n## Contents\n\n- [One](#one)\n\n## One\n\n"
        "**Bold.** plain `x|y`\n\n- a\n- b\n\n"
        "| k | v |\n|---|---:|\n| a\\|b | 1 |\n\n*cap*\n\n"
        "> **Note:** careful\n"
    )


def test_html_body_exact() -> None:
    html = to_html(DOC)
    body = html[html.index("<h1>") : html.index("</main>")]
    assert body == (
        '<h1>T</h1><p class="subtitle">run r</p>\n'
        '<nav class="toc"><strong>Contents</strong><ul><li><a href="#one">One</a></li></ul></nav>\n'
        '<section id="one">\n<h2>One</h2>\n'
        "<p><strong>Bold. </strong>plain <code>x|y</code></p>\n"
        "<ul><li>a</li><li>b</li></ul>\n"
        '<div class="table-wrap"><table><caption>cap</caption><thead><tr>'
        '<th scope="col">k</th><th class="num" scope="col">v</th></tr></thead>'
        '<tbody><tr><td>a|b</td><td class="num">1</td></tr></tbody></table></div>\n'
        '<div class="note">careful</div>\n</section>\n'
    )


def test_html_is_self_contained(tmp_path: Path) -> None:
    png = tmp_path / "c.png"
    png.write_bytes(b"\x89PNG\r\n\x1a\nfake")
    doc = Document("T", "s", (Section("S", "s", (Figure("c", "Chart", "cap", png, png),)),))
    html = to_html(doc)
    assert 'src="data:image/png;base64,iVBORw0KGgpmYWtl"' in html
    assert "http://" not in html and "https://" not in html
    assert "default-src 'none'" in html  # the page may not load anything from anywhere


def test_collapsed_section_is_a_details_element() -> None:
    doc = Document("T", "s", (Section("S", "s", (Paragraph.of("x"),), collapsed=True),))
    assert "<details><summary><h2>S</h2></summary>\n<p>x</p>\n</details>" in to_html(doc)
    assert "## S\n\nx\n" in to_markdown(doc)


def test_markdown_escapes_only_what_could_become_markup() -> None:
    assert md_text("< 10 % & more") == "< 10 % & more"
    assert md_text("<script>x</script>") == "&lt;script>x&lt;/script>"
    assert md_text("[a](javascript:x) `c` &amp;") == "[a\\](javascript:x) \\`c\\` &amp;amp;"
    assert md_text("two\nlines") == "two lines"
