"""Make the README's screenshots from the real programs: ``python docs/make_screenshots.py`` (from the repository root).

- ``docs/barbu-play.png``: ``barbu-play`` runs in tmux, a few moves are typed with ``send-keys``, the pane is
  captured with its colours (``capture-pane -e``) and drawn as an image by rich's HTML export and Chromium;
- ``docs/barbu-serve.png``: ``barbu-serve``'s app in headless Chromium after some moves of a match.

Needs tmux, Debian's ``chromium`` and the ``play`` extra (rich, uvicorn, Playwright).
"""

from __future__ import annotations

import io
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from playwright.sync_api import sync_playwright
from rich.console import Console
from rich.style import Style
from rich.terminal_theme import MONOKAI
from rich.text import Span, Text

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from test_play_browser import CHROMIUM, CHROMIUM_ARGS, serve  # noqa: E402

TERMINAL_KEYS = ["3", "2", "1", "1", "2", "h", "KD"]  # declare no_queens, double, play, ask a hint, play K♦


def capture_terminal() -> str:
    """The tmux pane of barbu-play after :data:`TERMINAL_KEYS`, with its ANSI colours."""
    cmd = (f"cd {ROOT} && {sys.executable} -m barbu_env.play.terminal --mode match --seed 4 "
           "--agents heuristic heuristic pimc:samples=8 --hint pimc:samples=8 --no-save; sleep 60")  # fmt: skip
    subprocess.run(["tmux", "new-session", "-d", "-s", "barbu-shot", "-x", "100", "-y", "30", cmd], check=True)
    try:
        time.sleep(4)
        for key in TERMINAL_KEYS:
            subprocess.run(["tmux", "send-keys", "-t", "barbu-shot", key, "Enter"], check=True)
            time.sleep(4)
        return subprocess.run(["tmux", "capture-pane", "-t", "barbu-shot", "-e", "-p"], check=True,
                              capture_output=True, text=True).stdout.rstrip("\n")  # fmt: skip
    finally:
        subprocess.run(["tmux", "kill-session", "-t", "barbu-shot"], check=False)


def terminal_html(ansi: str) -> str:
    """The captured pane as an HTML page (colours and bold kept; tmux's default background left to the theme)."""
    text = Text.from_ansi(ansi)
    styles = [s.style if isinstance(s.style, Style) else Style.parse(s.style) for s in text.spans]
    text.spans = [Span(s.start, s.end, Style(color=st.color, bold=st.bold)) for s, st in zip(text.spans, styles)]
    console = Console(record=True, width=100, file=io.StringIO(), force_terminal=True, color_system="truecolor")
    console.print(text)
    html = console.export_html(theme=MONOKAI, inline_styles=True)
    box = '<body style="margin:0"><div id="shot" style="display:inline-block;padding:10px;background:#272822">'
    return html.replace("<body>", box).replace("</body>", "</div></body>")


def main() -> None:
    html = Path(tempfile.mkdtemp()) / "terminal.html"
    html.write_text(terminal_html(capture_terminal()))
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        page = browser.new_page(viewport={"width": 960, "height": 600})
        page.goto(html.as_uri())
        page.locator("#shot").screenshot(path=str(ROOT / "docs" / "barbu-play.png"))
        page = browser.new_page(viewport={"width": 960, "height": 700})
        for base in serve(Path(tempfile.mkdtemp())):
            page.goto(base + "/?delay=0")
            page.wait_for_selector("body[data-state=setup]")
            page.select_option("select[name=mode]", "match")
            page.fill("input[name=seed]", "4")
            page.click("#start")
            for _ in range(20):  # the first deal and a few moves of the second
                page.wait_for_selector("body[data-state=human]")
                buttons = page.query_selector_all("#actions button")
                (buttons[0] if buttons else page.query_selector_all("#hand button.legal")[-1]).click()
            page.wait_for_selector("body[data-state=human]")
            page.screenshot(path=str(ROOT / "docs" / "barbu-serve.png"), full_page=True)
        browser.close()


if __name__ == "__main__":
    main()
