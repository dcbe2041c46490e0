"""The command reference shows an option without a default as mkdocs-click always did.

click 8.3 marks such an option's default with its ``UNSET`` sentinel where it used to
say ``None``, and mkdocs-click 0.9 prints that object as it is: ``Sentinel.UNSET`` in
165 cells of the reference (mkdocs/mkdocs-click#95 fixes it upstream and is not
released). This hook writes those cells as mkdocs-click writes a ``None`` default.
"""

from __future__ import annotations

from typing import Any

UNSET_CELL = "<td><code>Sentinel.UNSET</code></td>"
NONE_CELL = "<td>None</td>"


def on_page_content(html: str, **kwargs: Any) -> str:  # a MkDocs hook: each page's HTML
    return html.replace(UNSET_CELL, NONE_CELL)
