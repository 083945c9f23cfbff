"""Run ``gfun serve`` on a free local port and drive its page in headless Chromium; save screenshots.

Used by the browser test (tests/serve/test_page.py), the load benchmark (benchmarks/bench_serve.py, for
:func:`running_server`) and on its own to take the screenshots of the page::

    python benchmarks/serve_page.py --model /tmp/serve-model-x --text "$(cat de.txt)" --text "$(cat fi.txt)" \\
        --screenshot results/serve-page.png

Needs ``gfun[serve]`` and, for the page, selenium with Debian's ``chromium`` and ``chromium-driver``
(``apt-get install chromium chromium-driver``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

CHROMIUM = ("chromium", "chromium-browser", "google-chrome")
DRIVER = ("chromedriver",)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class ServerURL(str):
    """The base URL of a running server, with the process id of the server (``pid``)."""

    pid: int


@contextlib.contextmanager
def running_server(model: str | Path, *, port: int | None = None, args: tuple[str, ...] = (),
                   timeout: float = 60.0) -> Iterator[str]:
    """``gfun serve --model MODEL`` in a child process (this Python); yields its base URL (a :class:`ServerURL`)
    once ``/health`` answers, and stops it on exit."""
    port = port or free_port()
    cmd = [sys.executable, "-c", "import sys; from gfun.cli.main import main; sys.exit(main())", "-q", "serve",
           "--model", str(model), "--port", str(port), *args]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    url = ServerURL(f"http://127.0.0.1:{port}")
    url.pid = proc.pid
    try:
        deadline = time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"gfun serve exited with status {proc.returncode}: {proc.stdout.read()}")
            try:
                with urllib.request.urlopen(url + "/health", timeout=2) as r:
                    if json.load(r).get("status") == "ok":
                        break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f"gfun serve did not answer on {url} within {timeout:.0f} s")
            time.sleep(0.1)
        yield url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def browser_missing() -> str | None:
    """Why the page cannot be driven here (selenium, Chromium or its driver missing), or ``None``."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install selenium; make test installs it)"
    if not any(shutil.which(name) for name in CHROMIUM):
        return "no Chromium browser (apt-get install chromium chromium-driver)"
    if not any(shutil.which(name) for name in DRIVER):
        return "no chromedriver (apt-get install chromium-driver)"
    return None


@contextlib.contextmanager
def headless_chromium(width: int = 1000, height: int = 1100) -> Iterator[Any]:
    """A selenium WebDriver on headless Chromium (no network beyond what the page asks for)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    binary = next(shutil.which(name) for name in CHROMIUM if shutil.which(name))
    options.binary_location = binary
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu",
                "--disable-extensions", "--no-first-run", f"--window-size={width},{height}"):
        options.add_argument(arg)
    driver_path = next(shutil.which(name) for name in DRIVER if shutil.which(name))
    driver = webdriver.Chrome(service=Service(driver_path), options=options)
    try:
        yield driver
    finally:
        driver.quit()


def label_on_page(driver: Any, url: str, text: str, *, lang: str = "", timeout: float = 20.0) -> dict[str, Any]:
    """Open the page, type ``text`` (choose ``lang`` in the menu, or type it after choosing the menu's last entry,
    "other", when the menu does not list it; ``""`` leaves it to detection), click *Label* and read what the page
    shows: ``summary`` (the model's line), ``language``, ``views``, ``labels`` and ``bars`` (class ->
    probability shown)."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.select import Select
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(driver, timeout)
    driver.get(url + "/")
    wait.until(lambda d: "languages" in d.find_element(By.ID, "model-summary").text)
    box = driver.find_element(By.ID, "text")
    box.clear()
    box.send_keys(text)
    menu = Select(driver.find_element(By.ID, "lang"))
    codes = [opt.get_attribute("value") for opt in menu.options]
    if lang in codes:
        menu.select_by_value(lang)
    else:  # a language outside the menu: its "other" entry, then the code typed (a model serving any language)
        menu.select_by_index(len(codes) - 1)
        other = driver.find_element(By.ID, "lang-other")
        other.clear()
        other.send_keys(lang)
    driver.find_element(By.ID, "submit").click()
    wait.until(lambda d: d.find_element(By.ID, "result").is_displayed()
               or d.find_element(By.ID, "error").is_displayed())
    error = driver.find_element(By.ID, "error")
    if error.is_displayed():
        return {"error": error.text}
    wait.until(ec.visibility_of_element_located((By.ID, "labels")))
    names = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#bars .cls")]
    values = [float(e.text) for e in driver.find_elements(By.CSS_SELECTOR, "#bars .p")]
    return {"summary": driver.find_element(By.ID, "model-summary").text,
            "language": driver.find_element(By.ID, "language").text,
            "views": driver.find_element(By.ID, "views").text,
            "labels": [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#labels li.label")],
            "bars": dict(zip(names, values, strict=True))}


def explanation_on_page(driver: Any, *, timeout: float = 20.0) -> dict[str, Any]:
    """After :func:`label_on_page`: wait for the page's "Why these labels?" panel and read it: per label explained,
    its ``head`` line, each view's ``contributions`` (the exact values the page drew) and its ``words`` (up and down,
    as shown); ``{"error": text}`` when the page could not explain."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    box = driver.find_element(By.ID, "explanation")
    WebDriverWait(driver, timeout).until(lambda d: box.get_attribute("data-state") in ("done", "error"))
    if box.get_attribute("data-state") == "error":
        return {"error": box.text}
    out = {}
    for why in box.find_elements(By.CSS_SELECTOR, ".why"):
        words = {}
        for row in why.find_elements(By.CSS_SELECTOR, ".words"):
            words[row.get_attribute("data-view")] = {
                d: [w.text for w in row.find_elements(By.CSS_SELECTOR, f".{d} .word")] for d in ("up", "down")}
        out[why.get_attribute("data-label")] = {
            "head": why.find_element(By.CSS_SELECTOR, ".why-head").text,
            "contributions": {n.get_attribute("data-view"): float(n.get_attribute("data-value"))
                              for n in why.find_elements(By.CSS_SELECTOR, ".num")},
            "words": words}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", required=True, help="a saved gfun model")
    ap.add_argument("--text", action="append", required=True, help="a text to label (repeatable)")
    ap.add_argument("--screenshot", default=None,
                    help="PNG path; with several texts, one file per text (NAME-1.png, NAME-2.png, ...) and NAME.png "
                    "with them side by side (needs Pillow)")
    args = ap.parse_args(argv)
    why = browser_missing()
    if why:
        sys.stderr.write(f"serve_page: {why}\n")
        return 1
    shots = []
    with running_server(args.model) as url, headless_chromium() as driver:
        for k, text in enumerate(args.text, start=1):
            shown = label_on_page(driver, url, text)
            print(json.dumps(shown, ensure_ascii=False))
            if args.screenshot:
                out = Path(args.screenshot)
                if len(args.text) > 1:
                    out = out.with_name(f"{out.stem}-{k}{out.suffix}")
                out.parent.mkdir(parents=True, exist_ok=True)
                driver.execute_script("window.scrollTo(0, 0)")
                driver.save_screenshot(os.fspath(out))
                shots.append(out)
                print(f"screenshot: {out}")
    if len(shots) > 1:
        from PIL import Image

        images = [Image.open(p) for p in shots]
        side = Image.new("RGB", (sum(im.width for im in images), max(im.height for im in images)), "white")
        x = 0
        for im in images:
            side.paste(im, (x, 0))
            x += im.width
        side.save(args.screenshot)
        print(f"screenshot: {args.screenshot}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
