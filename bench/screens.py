"""Full-page screenshots of report pages in headless Chromium, and their heights at a given width.

    python bench/screens.py --out DIR PAGE [PAGE ...] [--width 1280]

A PAGE is a file (`out/RUN/report.html`) or a URL (the service's `/runs/RUN` page). Each page is
loaded at the width, measured as `document.documentElement.scrollHeight` (the height a reader
scrolls through), and saved whole as `DIR/<name>.png` with the window stretched to that height.
Needs Debian's `chromium` and `chromium-driver` and the `selenium` of the dev install; prints one
line per page: name, height in px, the PNG's path.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path


def browser():  # type: ignore[no-untyped-def]
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_bin = shutil.which("chromedriver")
    if not (chromium and driver_bin):
        sys.exit("screens: headless Chromium needs Debian's chromium and chromium-driver packages")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars"):
        opts.add_argument(flag)
    return webdriver.Chrome(service=Service(driver_bin), options=opts)


def name_of(page: str) -> str:
    """A file's parent folder and stem (`run_1-report`), or a URL's path (`runs-run_1`)."""
    if "://" in page and not page.startswith("file://"):
        return re.sub(r"[^A-Za-z0-9_.-]+", "-", page.split("://", 1)[1].split("/", 1)[-1]).strip("-") or "index"
    path = Path(page.removeprefix("file://"))
    return f"{path.parent.name}-{path.stem}"


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("pages", nargs="+", help="report.html files or page URLs")
    p.add_argument("--out", required=True, help="folder for the PNGs")
    p.add_argument("--width", type=int, default=1280, help="window width in px")
    args = p.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    driver = browser()
    try:
        for page in args.pages:
            url = page if "://" in page else Path(page).resolve().as_uri()
            driver.set_window_size(args.width, 900)
            driver.get(url)
            height = int(driver.execute_script("return document.documentElement.scrollHeight"))
            driver.set_window_size(args.width, height + 200)  # window chrome; the page itself is `height` tall
            png = out / f"{name_of(page)}.png"
            driver.save_screenshot(str(png))
            print(f"{name_of(page):<40} {height:>6} px  {png}")
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
