"""The HTML report answers first: a person who opens it sees the root cause, its anomalous path,
the stop reason and every claim's verdict without scrolling; the evidence follows below, each
piece quoted once, and the whole page is short enough to finish reading."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from conftest import REFERENCE

FOLD = 900  # px: the first screen of a laptop browser window
PAGE = 2000  # px: the whole reference report at 1280 px wide, read to the end


@pytest.fixture(scope="module")
def written(tmp_path_factory, embedder, index_root) -> tuple[object, Path]:
    from investigator.config import Settings
    from investigator.runtime import Investigator

    ws = tmp_path_factory.mktemp("html")
    inv = Investigator(Settings(workspace=ws / "ws", index_root=index_root), embedder=embedder,
                       progress=lambda _m: None)
    result = inv.start(REFERENCE)
    paths = inv.write(result.run_id, ws / "out")
    return result.report, next(p for p in paths if p.name == "report.html")


def test_the_answer_and_the_verdict_table_come_before_any_evidence(written):
    report, html_path = written
    html = html_path.read_text()
    causal = next(c for c in report.claims if c.root_cause is not None)
    rc = causal.root_cause
    answer_at = html.index("id='answer'")
    assert f"Root cause ({causal.verdict}): {rc.entity}" in html[answer_at:answer_at + 2000]
    bridge = " → ".join([causal.path[0].source, *[h.target for h in causal.path]])
    assert bridge in html[answer_at:answer_at + 2000]  # the bridge path, hop by hop, in the answer
    verdicts_at = html.index("id='verdicts'")
    first_quote = html.index("<li id='ev-")
    assert answer_at < verdicts_at < first_quote
    for c in report.claims:  # every claim's verdict is in the table, above the evidence
        row = html.index(f"<code>{c.id}</code>", verdicts_at)
        assert row < first_quote and f"<strong>{c.verdict}</strong>" in html[row:row + 400]


def test_the_markdown_report_opens_with_the_same_answer(written):
    from investigator.report_md import answer, render_markdown

    report, _ = written
    md = render_markdown(report)
    assert md.splitlines()[4].startswith(f"**{answer(report)['line']}**")


def test_a_report_without_a_root_cause_says_why_at_the_top():
    from investigator.report import ClaimView, Report
    from investigator.report_md import answer

    claim = ClaimView(id="cause", kind="causal_chain", statement="s", verdict="insufficient", state="open", rule="r",
                      supporting=(), opposing=(), conflicts=(), path=(), proposed_by=(), scope="subject", history=(),
                      missing=("telemetry of search-engine (no metric, log or trace of it is readable)",))
    r = Report.model_validate({**_minimal(), "claims": [claim.model_dump()]})
    a = answer(r)
    assert a["line"] == ("No root cause established (insufficient): telemetry of search-engine "
                         "(no metric, log or trace of it is readable)")


def _minimal() -> dict:
    from datetime import UTC, datetime

    return {"generated_at": datetime(2026, 12, 1, tzinfo=UTC).isoformat(), "tool_version": "0",
            "case_id": "c", "run_id": "r", "title": "t", "alert": "a", "question": "q", "subject": "s", "window": "w",
            "principal": "p", "retrieval": "basic", "status": "stopped", "stop": None,
            "budgets": {"rounds_used": 1, "rounds_limit": 2, "reads_used": 1, "reads_limit": 2},
            "reads": {"total": 0, "ok": 0, "reused": 0, "denied": [], "failed": [], "not_found": []},
            "claims": [], "evidence": [], "revoked": [], "timeline": []}


def _browser():
    webdriver = pytest.importorskip("selenium.webdriver", reason="selenium is not installed")
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver_bin = shutil.which("chromedriver")
    if not (chromium and driver_bin):
        pytest.skip("headless Chromium needs Debian's chromium and chromium-driver packages")
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=1280,900", "--hide-scrollbars"):
        opts.add_argument(flag)
    from selenium.webdriver.chrome.service import Service

    return webdriver.Chrome(service=Service(driver_bin), options=opts)


@pytest.mark.slow
def test_in_a_real_browser_the_root_cause_and_every_verdict_are_visible_without_scrolling(written, tmp_path):
    report, html_path = written
    driver = _browser()
    try:
        driver.set_window_size(1280, FOLD + 120)  # window chrome; the viewport is measured below
        driver.get(html_path.as_uri())
        viewport = driver.execute_script("return window.innerHeight")
        height = min(viewport, FOLD)
        box = driver.execute_script(
            "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
            "return {top: r.top, bottom: r.bottom};", "answer")
        table = driver.execute_script(
            "const r = document.getElementById('verdicts').getBoundingClientRect(); return {bottom: r.bottom};")
        visible_text = driver.execute_script(
            "const out = []; const w = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);"
            "while (w.nextNode()) { const n = w.currentNode; const rg = document.createRange(); rg.selectNodeContents(n);"
            "  const r = rg.getBoundingClientRect(); if (r.height && r.bottom <= arguments[0]) out.push(n.textContent); }"
            "return out.join(' ');", height)
        shot = tmp_path / "report-first-screen.png"
        driver.save_screenshot(str(shot))
    finally:
        driver.quit()
    causal = next(c for c in report.claims if c.root_cause is not None)
    assert box["bottom"] <= height and table["bottom"] <= height, (box, table, height)
    assert f"Root cause ({causal.verdict}): {causal.root_cause.entity}" in visible_text
    assert " → ".join([causal.path[0].source, *[h.target for h in causal.path]]) in visible_text
    for c in report.claims:
        assert c.id in visible_text and c.verdict in visible_text
    assert "<blockquote>" not in visible_text and report.stop.kind in visible_text
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_in_a_real_browser_the_whole_reference_report_is_at_most_2000_px_tall(written, tmp_path):
    """Folded and deduplicated, not hidden: every claim, every cited evidence id and every round stays on the page."""
    report, html_path = written
    driver = _browser()
    try:
        driver.set_window_size(1280, FOLD)
        driver.get(html_path.as_uri())
        width = driver.execute_script("return document.documentElement.clientWidth")
        height = driver.execute_script("return document.documentElement.scrollHeight")
        text = driver.execute_script("return document.body.innerText")
    finally:
        driver.quit()
    assert width >= 1200, width
    assert height <= PAGE, f"the reference report is {height} px tall at 1280 px (at most {PAGE})"
    for c in report.claims:
        assert c.id in text and all(e in text for e in (*c.supporting, *c.opposing))
    assert f"{report.budgets['rounds_used']}" in text and "stop: evidence_ready" in text


def test_in_a_real_browser_every_name_on_the_bridge_path_fits_its_box_and_the_drawing_fits_the_page(written, tmp_path):
    """A node named by a long host (a cloud VM, a pod) used to run over its neighbours in fixed-width boxes."""
    from investigator.report_html import render_html

    report, _ = written
    causal = next(c for c in report.claims if c.path)
    long_hops = tuple(h.model_copy(update={"target": f"gke-prod-general-pool-3f9a1c2e-x7kd-{i}-{h.target}"})
                      for i, h in enumerate(causal.path))
    long_hops = tuple(h.model_copy(update={"source": long_hops[i - 1].target}) if i else h
                      for i, h in enumerate(long_hops))
    claims = tuple(c.model_copy(update={"path": long_hops}) if c is causal else c for c in report.claims)
    page = tmp_path / "long.html"
    page.write_text(render_html(report.model_copy(update={"claims": claims})))
    driver = _browser()
    try:
        driver.set_window_size(1280, FOLD)
        driver.get(page.as_uri())
        boxes = driver.execute_script(
            "return [...document.querySelectorAll('svg[aria-label=\"bridge path\"] rect')].map(r => {"
            "  const t = r.nextElementSibling.getBoundingClientRect(), b = r.getBoundingClientRect();"
            "  return {name: r.nextElementSibling.textContent, full: (r.querySelector('title') || r.nextElementSibling).textContent,"
            "          fits: t.left >= b.left && t.right <= b.right, right: b.right}; })")
        page_width = driver.execute_script("return document.documentElement.clientWidth")
    finally:
        driver.quit()
    assert len(boxes) == len(long_hops) + 1
    assert all(b["fits"] for b in boxes), boxes
    assert max(b["right"] for b in boxes) <= page_width  # scaled down to the page, not cut off
    assert [b["full"] for b in boxes] == [long_hops[0].source, *[h.target for h in long_hops]]
