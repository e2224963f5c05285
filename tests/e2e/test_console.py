"""The console in headless Chromium (Debian `chromium` + `chromium-driver`, driven by Selenium)
against `agent-memory up`: seed memories, open the timeline, run a recall and read its scores,
forget one and see it marked, follow a topic's versions and the recall log. Screenshots go to
`test-artifacts/console/`."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from agent_memory import MemoryClient
from tests.e2e.conftest import RunningMirror

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "console"
pytestmark = pytest.mark.skipif(not (CHROMIUM and DRIVER),
                                reason="needs Debian chromium + chromium-driver (.ci/run installs them)")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    opts = webdriver.ChromeOptions()
    opts.binary_location = str(CHROMIUM)
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1440,900",
                "--lang=en-US", "--disable-gpu"):
        opts.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=str(DRIVER)), options=opts)
    driver.set_page_load_timeout(30)
    yield driver
    driver.quit()


def shot(browser: Any, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(ARTIFACTS / f"{name}.png"))


def test_console_timeline_recall_forget_versions_and_log(mirror: RunningMirror, browser: Any) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    key = (mirror.data_dir / "api_key").read_text().strip()
    user = "console-demo"
    with MemoryClient(mirror.url, key) as c:
        [peanuts] = c.remember(user, "我对花生过敏", importance=0.9, ttl_days=400, metadata={"kind": "health"})
        c.remember(user, "I work at Acme", topic_id="employer")
        [globex] = c.remember(user, "I now work at Globex", topic_id="employer")
        [coffee] = c.remember(user, "I take my coffee black", memory_type="preference", agent_id="barista")
        c.remember("someone-else", "unrelated")
    from selenium.common.exceptions import StaleElementReferenceException

    # generous: the suite runs on 2 loaded cores; a view re-rendered between finding an element and
    # reading it is a reason to look again, not a failure
    wait = WebDriverWait(browser, 60, ignored_exceptions=(StaleElementReferenceException,))

    def text_of(css: str) -> str:
        return str(wait.until(ec.visibility_of_element_located((By.CSS_SELECTOR, css))).text)

    browser.get(f"{mirror.url}/console")  # redirects to console/index.html
    assert browser.current_url.endswith("/console/index.html")
    wait.until(lambda b: "enter a valid API key" in b.find_element(By.ID, "status").text)  # set after a 403
    browser.find_element(By.ID, "api-key").send_keys(key)
    browser.find_element(By.CSS_SELECTOR, "#key-form button").click()
    wait.until(lambda b: user in b.find_element(By.ID, "users").text)
    shot(browser, "1-users")

    browser.find_element(By.LINK_TEXT, user).click()
    wait.until(lambda b: "我对花生过敏" in b.find_element(By.ID, "timeline").text)
    rows = {r.get_attribute("data-id"): r.text for r in browser.find_elements(By.CSS_SELECTOR, "#timeline tr[data-id]")}
    assert set(rows) >= {peanuts, globex, coffee} and len(rows) == 4
    assert "superseded" in next(t for t in rows.values() if "Acme" in t)
    assert "active" in rows[globex] and "preference" in rows[coffee]
    assert "agent:barista" in rows[coffee] and "shared" in rows[globex]  # each memory's scope
    expires = (datetime.now(UTC) + timedelta(days=400)).date().isoformat()
    assert expires in rows[peanuts] and "never" in rows[globex]  # and when it expires
    shot(browser, "2-timeline")

    def apply_filters(text: str) -> list[str | None]:
        box = browser.find_element(By.ID, "filters")
        box.clear()
        box.send_keys(text)
        browser.find_element(By.CSS_SELECTOR, "#filter-form button").click()
        wait.until(lambda b: ("(filtered)" in b.find_element(By.TAG_NAME, "h1").text) == bool(text))
        return [r.get_attribute("data-id") for r in browser.find_elements(By.CSS_SELECTOR, "#timeline tr[data-id]")]

    assert apply_filters('{"metadata": {"kind": "health"}}') == [peanuts]  # a metadata filter on the timeline
    shot(browser, "2b-filtered")
    assert len(apply_filters("")) == 4

    query = browser.find_element(By.ID, "recall-query")
    query.send_keys("点餐时要注意什么")
    query.submit()
    wait.until(lambda b: "我对花生过敏" in b.find_element(By.CSS_SELECTOR, "#recall-results table").text)
    first = browser.find_elements(By.CSS_SELECTOR, "#recall-results table tr")[1]
    assert "我对花生过敏" in first.text and float(first.find_element(By.CSS_SELECTOR, ".score").text) > 0
    assert "Long-term memories" in text_of("#recall-context")
    assert "gate: answer" in text_of("#recall-gate")  # the recall gate's decision and score
    shot(browser, "3-recall")

    browser.find_element(By.CSS_SELECTOR, f'tr[data-id="{coffee}"] button.forget').click()
    wait.until(lambda b: "deleted" in b.find_element(By.CSS_SELECTOR, f'tr[data-id="{coffee}"]').text)
    assert "forgotten" in text_of("#status")
    with MemoryClient(mirror.url, key) as c:
        assert c.get(coffee, user_id=user)["record"]["deleted_at"] is not None
    shot(browser, "4-forgotten")

    browser.find_element(By.CSS_SELECTOR, f'tr[data-id="{globex}"] td.content a').click()
    versions = text_of("#versions")
    assert "I work at Acme" in versions and "I now work at Globex" in versions
    assert '"storage_key"' in text_of("#record") and "I now work at Globex" in text_of("#original")
    shot(browser, "5-memory")

    with MemoryClient(mirror.url, key) as c:  # a version the change model found (no topic given)
        c.remember(user, "I drive a 2014 Honda Civic")
        [tesla] = c.remember(user, "sold the Civic last week, I drive a Tesla Model 3 now")
        change = c.get(tesla, user_id=user)["original"]["provenance"]["change"]
    assert change["decision"] == "new_version" and change["score"] >= change["threshold"]
    browser.get(f"{mirror.url}/console/index.html#/u/{user}")
    wait.until(lambda b: b.find_elements(By.CSS_SELECTOR, f'tr[data-id="{tesla}"] td.content a'))
    browser.find_element(By.CSS_SELECTOR, f'tr[data-id="{tesla}"] td.content a').click()
    judged = text_of("#judgement")  # the decision, who made it, its score and the cut it passed
    assert f"change: new_version of {change['memory_id']} (change model, score {change['score']:.2f} >= " \
           f"{change['threshold']:.2f})" in judged
    shot(browser, "5b-change")

    browser.find_element(By.ID, "undo-change").click()  # the caller overrules the change model
    wait.until(lambda b: "corrected: unrelated" in b.find_element(By.ID, "status").text)
    wait.until(lambda b: "corrected by the caller" in b.find_element(By.ID, "judgement").text)
    assert f"the change model had said new_version of {change['memory_id']}" in text_of("#judgement")
    assert not browser.find_elements(By.ID, "undo-change")
    assert not browser.execute_script(  # no stray "null" where the button was
        "return [...document.getElementById('view').childNodes].some(n => n.nodeType === 3)")
    with MemoryClient(mirror.url, key) as c:
        assert c.get(change["memory_id"], user_id=user)["record"]["is_active"]
        assert c.get(tesla, user_id=user)["record"]["topic_id"] is None
    shot(browser, "5c-change-undone")

    browser.get(f"{mirror.url}/console/index.html#/u/{user}/recalls")
    log = text_of("details.recall summary")
    assert "点餐时要注意什么" in log
    browser.find_element(By.CSS_SELECTOR, "details.recall summary").click()
    assert "chosen" in text_of("details.recall table")
    assert "personal" in text_of("details.recall .gate")
    shot(browser, "6-recall-log")

    browser.get(f"{mirror.url}/console/index.html#/u/{user}")
    wait.until(ec.element_to_be_clickable((By.ID, "erase"))).click()
    browser.switch_to.alert.accept()
    wait.until(lambda b: "erased console-demo" in b.find_element(By.ID, "status").text)
    with MemoryClient(mirror.url, key) as c:
        assert [u["user_id"] for u in c.users()] == ["someone-else"]


def test_console_files_are_served_without_a_key_but_data_is_not(mirror: RunningMirror) -> None:
    import httpx

    page = httpx.get(f"{mirror.url}/console/index.html")
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert httpx.get(f"{mirror.url}/console/app.js").headers["content-type"].startswith("text/javascript")
    assert httpx.get(f"{mirror.url}/console/..%2Fservice.py").status_code == 404
    assert httpx.get(f"{mirror.url}/console/nope.js").status_code == 404
    assert httpx.get(f"{mirror.url}/v1/users").status_code == 403
    assert "cdn" not in page.text.lower() and "http" not in page.text.split("<body>")[1]  # nothing external
