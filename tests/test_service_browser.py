"""What a person sees: headless Chromium opens the runs page and a report page of a real `serve`.

Needs Debian's chromium and chromium-driver (the Makefile's test target installs them when apt-get
is there); skipped, saying so, when they are missing.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import httpx
import pytest

from servicekit import settings_file, webhook

pytestmark = pytest.mark.slow
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")


@pytest.fixture
def browser():
    if not (CHROMIUM and DRIVER):
        pytest.skip("headless Chromium not installed (Debian packages chromium and chromium-driver)")
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    profile = tempfile.mkdtemp(prefix="inv-chromium-")
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
                 "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 f"--user-data-dir={profile}", "--window-size=1300,1000"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=opts)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


@pytest.fixture
def served(tmp_path):
    """`investigator serve` with its defaults: SQLite store and queue, one in-process worker."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    log = open(tmp_path / "serve.log", "w")  # noqa: SIM115
    proc = subprocess.Popen([sys.executable, "-m", "investigator.cli", "serve", "--config",
                             str(settings_file(tmp_path)), "--port", str(port)],
                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    url = f"http://127.0.0.1:{port}"
    try:
        t0 = time.monotonic()
        while time.monotonic() - t0 < 120:
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.3)
        yield url
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(60)
        log.close()


def test_a_person_sees_the_runs_and_a_report_with_its_verdicts_and_root_cause(served, browser, tmp_path):
    from selenium.webdriver.common.by import By

    run_id = httpx.post(f"{served}/api/alerts", json=webhook(), timeout=60).json()["alerts"][0]["run_id"]
    t0 = time.monotonic()
    while httpx.get(f"{served}/api/runs/{run_id}").json()["state"] not in ("done", "failed"):
        assert time.monotonic() - t0 < 300, "the in-process worker did not finish the investigation"
        time.sleep(1)

    browser.get(served + "/")
    page = browser.find_element(By.TAG_NAME, "body").text
    assert "Investigations" in page and "1 alert(s): 1 investigated" in page
    row = browser.find_element(By.ID, "runs").find_elements(By.TAG_NAME, "tr")[1].text
    assert run_id in row and "ProfileApiLatencyHigh" in row and "done" in row
    assert "causal_attribution: confirmed" in row and "service=profile-api" in row
    browser.save_screenshot(str(tmp_path / "runs.png"))

    browser.find_element(By.LINK_TEXT, run_id).click()
    assert browser.current_url.endswith(f"/runs/{run_id}")
    page = browser.find_element(By.TAG_NAME, "body").text
    # the same report page as report.html: the answer first, then every claim's verdict
    answer = browser.find_element(By.ID, "answer").text
    assert answer.startswith("Root cause (confirmed): search-indexer — noisy neighbour"), answer
    verdicts = {r.find_elements(By.TAG_NAME, "td")[0].text: r.find_elements(By.TAG_NAME, "td")[1].text
                for r in browser.find_element(By.ID, "verdicts").find_elements(By.TAG_NAME, "tr")[1:]}
    assert verdicts["causal_attribution"] == "confirmed", verdicts
    assert set(verdicts.values()) <= {"confirmed", "inferred", "insufficient", "refuted"}
    assert "Why did ProfileApiLatencyHigh fire for prod/profile-api" in page and "Timeline" in page
    assert f"Run {run_id}: done" in browser.find_element(By.ID, "service").text
    browser.save_screenshot(str(tmp_path / "report.png"))
    assert Path(tmp_path / "report.png").stat().st_size > 10_000

    # the full report it links to is the page `investigator run` writes, without the service's bar
    browser.find_element(By.ID, "full-report").click()
    assert browser.current_url.endswith(f"/runs/{run_id}/report.html")
    assert browser.find_element(By.ID, "answer").text == answer
    assert not browser.find_elements(By.ID, "service")
    from investigator.report import Report
    from investigator.report_html import render_html

    shown = Report.model_validate_json(httpx.get(f"{served}/api/runs/{run_id}/report").text)
    assert httpx.get(f"{served}/runs/{run_id}/report.html").text == render_html(shown)
