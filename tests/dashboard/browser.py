"""A dashboard on a real loopback port and a headless Chromium to look at it.

The server is uvicorn in a thread (no signal handlers off the main thread), bound first
to a free 127.0.0.1 port. The browser is Debian's ``chromium`` driven by its
``chromedriver`` through Selenium, never a browser build downloaded at run time.
Without them the browser tests skip, except where ``CI_REQUIRE_BROWSER=1`` says the
machine must have them (CI installs both): there they fail, loudly.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn
from selenium.webdriver.remote.webdriver import WebDriver

CHROMIUM = Path("/usr/bin/chromium")
CHROMEDRIVER = Path(shutil.which("chromedriver") or "/usr/bin/chromedriver")
REQUIRED = "CI_REQUIRE_BROWSER"


def require_browser() -> None:
    """Skip (or, where the browser is required, fail) without Chromium and its driver."""
    missing = [str(path) for path in (CHROMIUM, CHROMEDRIVER) if not path.exists()]
    if not missing:
        return
    reason = f"{' and '.join(missing)} missing: apt-get install chromium chromium-driver"
    if os.environ.get(REQUIRED) == "1":
        pytest.fail(f"{REQUIRED}=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@contextmanager
def served(app: Any) -> Iterator[str]:
    """Serve ``app`` on a free loopback port for the block; yields its base URL."""
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise AssertionError("the dashboard's server did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        server.should_exit = True
        thread.join(10)
        listener.close()


@contextmanager
def chromium(width: int = 1360, height: int = 900) -> Iterator[WebDriver]:
    """A headless Chromium session (a Selenium ``WebDriver``), quit after the block."""
    from selenium import webdriver

    options = webdriver.ChromeOptions()
    options.binary_location = str(CHROMIUM)
    for argument in (
        "--headless=new",
        "--no-sandbox",
        "--disable-dev-shm-usage",
        "--disable-gpu",
        f"--window-size={width},{height}",
        "--force-device-scale-factor=1",
        "--lang=en-US",
    ):
        options.add_argument(argument)
    service = webdriver.ChromeService(executable_path=str(CHROMEDRIVER))
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


def wait_for(condition: Any, what: str, timeout: float = 15.0) -> Any:
    """Poll ``condition()`` until it returns something true; that value."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.05)
