"""The web table in a real headless Chromium (Debian's ``chromium``, driven by Playwright with the system
browser): a whole deal played by clicking legal cards, the scores shown equal to the engine's (RULES.md
R8.1), then the game's record opened in the replay viewer and stepped through.

It skips when Playwright or ``/usr/bin/chromium`` is missing, except where ``BARBU_BROWSER_TEST=required``
(set by ``.ci/run``, which installs both): there a missing browser fails the test.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from barbu_env.records import load

CHROMIUM = os.environ.get("BARBU_CHROMIUM", "/usr/bin/chromium")
#: Chromium's flags for a closed network: without the background-networking ones its connections fail here.
CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]  # fmt: skip
REQUIRED = os.environ.get("BARBU_BROWSER_TEST") == "required"


def _missing() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError as e:
        return f"{e.name} is not installed (pip install -e '.[play]')"
    if not (Path(CHROMIUM).is_file() or shutil.which(CHROMIUM)):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    return None


MISSING = _missing()
if MISSING is not None:
    if REQUIRED:
        pytest.fail(f"the browser test is required here (BARBU_BROWSER_TEST=required) but {MISSING}", pytrace=False)
    pytest.skip(f"browser test skipped: {MISSING}", allow_module_level=True)

from playwright.sync_api import Page, sync_playwright  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(records: Path) -> Iterator[str]:
    """barbu-serve's app on a free localhost port, in a thread, for the duration of a test."""
    import uvicorn

    from barbu_env.play.server import create_app

    port = _free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(records), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("barbu-serve did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)


@pytest.fixture
def page() -> Iterator[Page]:
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            pg = browser.new_page(viewport={"width": 1000, "height": 900})
            pg.set_default_timeout(30_000)
            yield pg
        finally:
            browser.close()


def wait_state(page: Page, *states: str) -> str:
    sel = ", ".join(f"body[data-state={s}]" for s in states)
    page.wait_for_selector(sel)
    return page.get_attribute("body", "data-state")


@pytest.mark.slow
def test_play_a_deal_and_replay_it(page: Page, tmp_path: Path) -> None:
    """Declare, double and play a whole deal by clicking; the scores shown are the replayed engine's (R8.1)."""
    for base in serve(tmp_path):
        page.goto(base + "/?delay=0")
        wait_state(page, "setup")
        page.select_option("select[name=seat]", "0")
        page.fill("input[name=seed]", "4")
        for sel in page.query_selector_all("#agent-selects select"):
            sel.select_option("heuristic")
        page.click("#start")
        clicks = 0
        while wait_state(page, "human", "over") == "human":
            buttons = page.query_selector_all("#actions button")  # declaration or doubling choices
            if buttons:
                buttons[0].click()
            else:
                legal = page.query_selector_all("#hand button.legal")
                assert legal, "on move with neither a legal card nor an action button"
                # every enabled card is one the engine allows: the page got the legal list from the server
                assert all(b.is_enabled() for b in legal)
                legal[-1].click()
            clicks += 1
            assert clicks < 200
        shown = {int(e.get_attribute("data-seat")): int(e.get_attribute("data-score"))
                 for e in page.query_selector_all("#result .deal-score")}  # fmt: skip
        records = list(tmp_path.glob("*.json"))
        assert len(records) == 1
        rec = load(records[0])  # replayed through the engine and checked
        assert shown == dict(enumerate(rec.deals[0].scores))
        human = sum(1 for s, _ in rec.deals[0].actions if s == 0)
        assert human == clicks

        page.click("#replay-this")
        page.wait_for_selector("#viewer:not([hidden])")
        assert page.get_attribute("body", "data-frame") == "0"
        # the start of the deal shows every hand: 13 cards a seat
        assert len(page.query_selector_all("#replay-hands .card")) == 52
        n = len(rec.deals[0].actions)
        for k in range(1, 6):
            page.click("#next")
            assert page.get_attribute("body", "data-frame") == str(k)
        page.click("#prev")
        assert page.get_attribute("body", "data-frame") == "4"
        page.click("#next-trick")
        frame = int(page.get_attribute("body", "data-frame"))
        assert 4 < frame <= n
        page.click("#last")
        assert page.get_attribute("body", "data-frame") == str(n)
        totals = {int(e.get_attribute("data-seat")): int(e.get_attribute("data-total"))
                  for e in page.query_selector_all("#replay-scores [data-total]")}  # fmt: skip
        assert totals == dict(enumerate(rec.totals))
        page.click("#first")
        assert page.get_attribute("body", "data-frame") == "0"
