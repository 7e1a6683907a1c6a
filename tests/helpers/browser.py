"""Headless Debian chromium driven by selenium (chromium-driver), network off: what the
browser tests open the commands' pages with.

selenium rather than the DevTools protocol by hand: it starts and stops chromedriver,
gives the console log (goog:loggingPrefs) and the screenshot in one call each, and the
driver is Debian's (no selenium-manager download: the paths are given)."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"


def missing() -> str | None:
    """Why the browser tests cannot run here, or None."""
    for path in (CHROMIUM, CHROMEDRIVER):
        if not os.access(path, os.X_OK):
            return f"{path} missing (apt-get install chromium chromium-driver)"
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium missing (pip install -e '.[test]')"
    return None


def driver(width: int = 1200, height: int = 900):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                f"--window-size={width},{height}",
                # the network off: no name resolves, and no proxy to fall back on
                "--host-resolver-rules=MAP * ~NOTFOUND", "--no-proxy-server",
                "--disable-background-networking", "--disable-component-update"):
        opts.add_argument(arg)
    # chromium keeps its profile and singleton socket under TMPDIR
    # (/tmp/org.chromium.Chromium.*) and leaves them there: a directory of our own instead,
    # removed when the driver quits
    work = tempfile.mkdtemp(prefix="innoflush-chromium-")
    opts.add_argument(f"--user-data-dir={work}/profile")
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    service = Service(executable_path=CHROMEDRIVER, env={**os.environ, "TMPDIR": work})
    try:
        drv = webdriver.Chrome(service=service, options=opts)
    except BaseException:
        shutil.rmtree(work, ignore_errors=True)
        raise
    quit_driver = drv.quit

    def quit_and_clean() -> None:
        try:
            quit_driver()
        finally:
            shutil.rmtree(work, ignore_errors=True)

    drv.quit = quit_and_clean
    # and offline as far as the page is concerned (DevTools), on top of the resolver
    drv.execute_cdp_cmd("Network.enable", {})
    drv.execute_cdp_cmd("Network.emulateNetworkConditions", {
        "offline": True, "latency": 0, "downloadThroughput": 0, "uploadThroughput": 0})
    return drv


def full_page_png(drv, path: Path, width: int | None = None,
                  max_height: int = 12000) -> None:
    """A screenshot of the whole page (up to max_height px), by DevTools: a window resized
    to the page's height leaves the part past the viewport black."""
    import base64

    size = drv.execute_script("return [document.documentElement.scrollWidth, "
                              "document.documentElement.scrollHeight]")
    shot = drv.execute_cdp_cmd("Page.captureScreenshot", {
        "format": "png", "captureBeyondViewport": True,
        "clip": {"x": 0, "y": 0, "width": width or size[0],
                 "height": min(size[1], max_height), "scale": 1}})
    path.write_bytes(base64.b64decode(shot["data"]))


def open_page(drv, page: Path, screenshot: Path) -> dict:
    """Open a page, screenshot its whole height, and read back what the tests check:
    {charts: {name: (data-series, series ids counted in the SVG, svg elements)},
    console: [severe/warning log entries], failed: resources that failed to load}."""
    drv.get(page.resolve().as_uri())
    full_page_png(drv, screenshot)
    charts = drv.execute_script("""
        const out = {};
        for (const f of document.querySelectorAll('figure.chart')) {
          const ids = new Set();
          for (const el of f.querySelectorAll('svg [id^="series-"]'))
            ids.add(el.id.replace(/^series-(\\d+).*$/, '$1'));
          const svg = f.querySelector('svg');
          const box = svg ? svg.getBoundingClientRect() : {width: 0, height: 0};
          out[f.dataset.chart] = {declared: parseInt(f.dataset.series), found: ids.size,
                                  svgs: f.querySelectorAll('svg').length,
                                  width: box.width, height: box.height};
        }
        return out;""")
    failed = drv.execute_script(
        "return performance.getEntriesByType('resource').map(e => e.name)")
    console = [e for e in drv.get_log("browser") if e.get("level") in ("SEVERE", "WARNING")]
    return {"charts": charts, "console": console, "failed": failed}


def not_blank(png: Path) -> tuple[int, float]:
    """(distinct colours, share of non-white pixels) of a screenshot."""
    from PIL import Image

    img = Image.open(png).convert("RGB")
    img.thumbnail((600, 6000))
    colours = img.getcolors(maxcolors=1 << 20) or []
    pixels = img.width * img.height
    white = sum(n for n, c in colours if min(c) >= 250)
    return len(colours), 1 - white / pixels
