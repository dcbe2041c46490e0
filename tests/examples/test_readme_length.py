"""The README fits on a screen or two: what sqsjobs is, the install line, one example and
the two development commands; everything else lives on the site's pages (``docs/``)."""

from __future__ import annotations

from .blocks import README, readme

LONGEST = 120


def test_the_readme_is_short_and_links_into_the_site() -> None:
    text = README.read_text(encoding="utf-8")
    assert len(text.splitlines()) < LONGEST, "move the new section to a page of docs/"
    assert "(docs/index.md)" in text and "(docs/reference/api/index.md)" in text
    python = [
        block for block in readme().blocks if block.page == "README.md" and block.lang == "python"
    ]
    assert len(python) == 1 and not python[0].not_run, "one example, and it runs"
