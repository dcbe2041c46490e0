"""The documentation site as a reader sees it: built from the repository, served, and
opened in headless Chromium (``tests/dashboard/browser.py``).

The build is the strict one ``python3 dev.py docs`` runs; the browser then reads three
kinds of page (the home page, a how-to guide, an API page): each has its title, its
navigation, every picture loaded, and the API page the docstrings of ``JobQueue``.
``SQSJOBS_SITE_SHOTS=DIR`` keeps a screenshot of each page there.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from starlette.staticfiles import StaticFiles

from tests.dashboard.browser import chromium, require_browser, served

from .blocks import ROOT

pytestmark = pytest.mark.slow

PAGES = {
    "home": ("", "sqsjobs"),
    "how-to": ("how-to/workers-lambda/", "Workers on Lambda"),
    "api": ("reference/api/producers/", "Producers"),
}
COMMANDS = "reference/cli/index.html"
_BROKEN_IMAGES = (
    "return [...document.images].filter(i => !i.complete || !i.naturalWidth).map(i => i.src)"
)


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("site")
    mkdocs = Path(sys.executable).with_name("mkdocs")
    env = os.environ | {"NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run(
        [mkdocs, "build", "--strict", "--site-dir", where],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    return where


def test_the_command_reference_documents_every_command_and_no_sentinel(site: Path) -> None:
    """mkdocs-click renders every command; click 8.3's ``UNSET`` never reaches a cell."""
    from sqsjobs.cli import main

    page = (site / COMMANDS).read_text(encoding="utf-8")
    assert "Sentinel" not in page
    for command in main.list_commands(None):  # type: ignore[arg-type]
        assert f'<h3 id="{command}"' in page, command


def test_the_built_site_shows_its_pages_in_a_browser(site: Path) -> None:
    require_browser()
    shots = os.environ.get("SQSJOBS_SITE_SHOTS")
    with served(StaticFiles(directory=site, html=True)) as base, chromium(1280, 1000) as browser:
        for name, (path, title) in PAGES.items():
            browser.get(f"{base}/{path}")
            assert browser.title.startswith(title), (name, browser.title)
            tabs = browser.find_elements("css selector", ".md-tabs__link")
            assert [tab.text for tab in tabs][:3] == ["Home", "Tutorial", "How-to guides"]
            assert browser.execute_script(_BROKEN_IMAGES) == [], name
            if shots:
                browser.save_screenshot(str(Path(shots) / f"{name}.png"))
        headings = browser.find_elements("css selector", "h3[id='sqsjobs.JobQueue.enqueue']")
        assert headings, "the API page lost JobQueue.enqueue"
        assert "idempotency_key" in browser.page_source
