"""`sqlive --web` in a real browser: Debian's Chromium, driven by Selenium.

Another process (the sqlite3 shell, Python's sqlite3, at their defaults)
writes the database; the page must follow with no polling and no reload.

Run: SQLIVE_BIN=/path/to/sqlive PYTHONDONTWRITEBYTECODE=1 \
       python3 -m pytest -q Tests/WebClients/python
(`swift test` runs it too: WebPageTests.swift.) Screenshots go to
SQLIVE_SCREENSHOTS (default: .build/web-screenshots).
"""

import contextlib
import http.client
import json
import os
import pathlib
import signal
import sqlite3
import statistics
import subprocess
import time
import urllib.parse

import pytest
from selenium import webdriver
from selenium.common.exceptions import NoSuchElementException, StaleElementReferenceException
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import WebDriverWait

SQLIVE = os.environ.get("SQLIVE_BIN", "sqlive")
SCREENSHOTS = pathlib.Path(os.environ.get("SQLIVE_SCREENSHOTS", ".build/web-screenshots"))
TIMEOUT = 30


def make_database(path: pathlib.Path, journal_mode: str = "delete") -> None:
    db = sqlite3.connect(path)
    db.execute(f"PRAGMA journal_mode = {journal_mode}")
    with db:
        db.executescript(
            """
            CREATE TABLE games(id INTEGER PRIMARY KEY, title TEXT NOT NULL);
            CREATE TABLE players(id INTEGER PRIMARY KEY, gameID INT REFERENCES games(id), name TEXT NOT NULL, score INT);
            INSERT INTO games(title) VALUES ('Go'), ('Chess');
            INSERT INTO players(gameID, name, score) VALUES (1, 'Ann', 12), (1, 'Bob', 7), (2, 'Cy', 30);
            """
        )
    db.close()


class Served:
    def __init__(self, process, url):
        self.process = process
        self.url = url
        parsed = urllib.parse.urlparse(url)
        self.host, self.port = parsed.hostname, parsed.port
        self.token = urllib.parse.parse_qs(parsed.query)["token"][0]


@contextlib.contextmanager
def serve_web(database: pathlib.Path, *args: str, address: str = "0"):
    process = subprocess.Popen(
        [SQLIVE, "--web", address, str(database), *args], stdout=subprocess.PIPE, text=True,
        env={**os.environ, "SQLIVE_QUIET": "1"})
    try:
        url = process.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "/?token=" in url, url
        yield Served(process, url)
        process.send_signal(signal.SIGTERM)
        assert process.wait(timeout=TIMEOUT) == 0
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


@pytest.fixture(scope="module")
def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,800",
                     "--disable-background-networking", "--disable-component-update", "--no-first-run"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"performance": "ALL"})
    service = webdriver.ChromeService(executable_path="/usr/bin/chromedriver")
    driver = webdriver.Chrome(options=options, service=service)
    driver.set_page_load_timeout(TIMEOUT)
    yield driver
    driver.quit()


def wait(driver, predicate, timeout=TIMEOUT):
    # A live grid is redrawn whole at each change: an element found an
    # instant before may be gone when it is read (ask again).
    return WebDriverWait(
        driver, timeout, poll_frequency=0.05, ignored_exceptions=[StaleElementReferenceException, NoSuchElementException]
    ).until(lambda d: predicate(d))


def live(driver, name):
    return driver.find_element(By.CSS_SELECTOR, f"[data-sqlive=live][data-name='{name}']")


def grid_rows(element):
    return [[td.text for td in row.find_elements(By.TAG_NAME, "td")] for row in element.find_elements(By.CSS_SELECTOR, "tbody tr")]


def type_sql(driver, sql):
    editor = driver.find_element(By.CSS_SELECTOR, "[data-sqlive=editor]")
    editor.clear()
    editor.send_keys(sql)
    return editor


def screenshot(driver, name):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(SCREENSHOTS / f"{name}.png"))


def requested_urls(driver):
    urls = []
    for entry in driver.get_log("performance"):
        message = json.loads(entry["message"])["message"]
        if message["method"] in ("Network.requestWillBeSent", "Network.webSocketCreated"):
            urls.append(message["params"].get("request", {}).get("url") or message["params"].get("url"))
    return urls


def test_a_watched_aggregate_follows_another_process(tmp_path, browser):
    database = tmp_path / "games.sqlite"
    make_database(database)
    with serve_web(database) as served:
        browser.get_log("performance")  # drop what came before
        browser.get(served.url)
        wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-sqlive=status]").text == "live")
        assert "games.sqlite" in browser.find_element(By.CSS_SELECTOR, "[data-sqlive=database]").text
        # The schema, from the database.
        wait(browser, lambda d: d.find_elements(By.CSS_SELECTOR, "[data-sqlive=schema] details[data-table=players]"))

        # A count: a line over time. A grouped result: bars.
        type_sql(browser, "SELECT count(*) AS n FROM players")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=watch-name]").send_keys("n")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=watch]").click()
        wait(browser, lambda d: grid_rows(live(d, "n")) == [["3"]])
        type_sql(browser, "SELECT games.title, count(players.id) AS players FROM games LEFT JOIN players ON players.gameID = games.id GROUP BY games.id ORDER BY games.title")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=watch-name]").send_keys("per_game")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=watch]").click()
        wait(browser, lambda d: grid_rows(live(d, "per_game")) == [["Chess", "1"], ["Go", "2"]])
        wait(browser, lambda d: live(d, "per_game").find_element(By.CSS_SELECTOR, "[data-sqlive=chart]").get_attribute("data-kind") == "bars")

        # The sqlite3 shell at its defaults writes: grid and chart follow.
        subprocess.run(["sqlite3", str(database), "INSERT INTO players(gameID, name, score) VALUES (2, 'Di', 1)"],
                       check=True, timeout=TIMEOUT)
        wait(browser, lambda d: grid_rows(live(d, "n")) == [["4"]])
        wait(browser, lambda d: grid_rows(live(d, "per_game")) == [["Chess", "2"], ["Go", "2"]])
        wait(browser, lambda d: live(d, "n").find_element(By.CSS_SELECTOR, "[data-sqlive=chart]").get_attribute("data-kind") == "line")
        wait(browser, lambda d: live(d, "n").find_element(By.CSS_SELECTOR, "[data-sqlive=chart]").get_attribute("data-points") == "2")
        wait(browser, lambda d: "version 2" in live(d, "n").find_element(By.CSS_SELECTOR, "[data-sqlive=version]").text)
        wait(browser, lambda d: live(d, "n").find_elements(By.CSS_SELECTOR, "td.changed"))
        # Python's sqlite3, no busy timeout.
        db = sqlite3.connect(database, timeout=0)
        with db:
            db.execute("DELETE FROM players WHERE name = 'Bob'")
        db.close()
        wait(browser, lambda d: grid_rows(live(d, "n")) == [["3"]])
        screenshot(browser, "live")

        # Pause, resume, remove.
        wait(browser, lambda d: live(d, "n").find_element(By.XPATH, ".//button[text()='Pause']").click() or True)
        wait(browser, lambda d: live(d, "n").find_elements(By.XPATH, ".//button[text()='Resume']"))
        wait(browser, lambda d: live(d, "n").find_element(By.XPATH, ".//button[text()='Resume']").click() or True)
        wait(browser, lambda d: live(d, "per_game").find_element(By.XPATH, ".//button[text()='Remove']").click() or True)
        wait(browser, lambda d: not d.find_elements(By.CSS_SELECTOR, "[data-sqlive=live][data-name='per_game']"))

        # Not one request left the machine.
        urls = requested_urls(browser)
        assert urls, "no request was logged"
        for url in urls:
            host = urllib.parse.urlparse(url).hostname
            assert url.startswith("data:") or host == "127.0.0.1", url


def test_diagnostics_run_explain_and_read_only(tmp_path, browser):
    database = tmp_path / "games.sqlite"
    make_database(database, journal_mode="wal")
    with serve_web(database) as served:
        browser.get(served.url)
        wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-sqlive=status]").text == "live")
        # A typo: SQLite's own diagnostic, as it is typed.
        type_sql(browser, "SELECT name FROM playrs")
        wait(browser, lambda d: "no such table: playrs" in d.find_element(By.CSS_SELECTOR, "[data-sqlive=diagnostics]").text)
        # Run, with Ctrl-Enter: a grid.
        editor = type_sql(browser, "SELECT name, score FROM players ORDER BY score DESC")
        wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-sqlive=diagnostics]").text == "")
        editor.send_keys(Keys.CONTROL, Keys.ENTER)
        result = browser.find_element(By.CSS_SELECTOR, "[data-sqlive=result]")
        wait(browser, lambda d: grid_rows(result) == [["Cy", "30"], ["Ann", "12"], ["Bob", "7"]])
        # Big results are paged, never all in the DOM.
        type_sql(browser, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 5000) SELECT x FROM c")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=run]").click()
        wait(browser, lambda d: "5000 rows" in result.text)
        assert len(result.find_elements(By.CSS_SELECTOR, "tbody tr")) == 100
        # EXPLAIN QUERY PLAN as a tree, with the index advice.
        type_sql(browser, "SELECT * FROM players WHERE score > 10 ORDER BY name")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=explain]").click()
        plan = browser.find_element(By.CSS_SELECTOR, "[data-sqlive=plan]")
        wait(browser, lambda d: "SCAN players" in plan.text)
        # A write is refused: the page is read-only.
        type_sql(browser, "INSERT INTO players(gameID, name, score) VALUES (1, 'Mallory', 99)")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=run]").click()
        wait(browser, lambda d: "readonly" in result.text or "read-only" in result.text)
        assert sqlite3.connect(database).execute("SELECT count(*) FROM players WHERE name = 'Mallory'").fetchone() == (0,)
        # Completion from the live schema.
        editor = type_sql(browser, "SELECT * FROM pla")
        editor.send_keys(Keys.CONTROL, " ")
        wait(browser, lambda d: "players" in d.find_element(By.CSS_SELECTOR, ".completions").text)
        editor.send_keys(Keys.ENTER)
        wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-sqlive=editor]").get_attribute("value") == "SELECT * FROM players")
        screenshot(browser, "editor")
        # Readable on a phone's width.
        browser.set_window_size(390, 844)
        screenshot(browser, "phone")
        browser.set_window_size(1280, 800)


def test_refusals(tmp_path):
    database = tmp_path / "games.sqlite"
    make_database(database)
    with serve_web(database) as served:
        def get(path, headers=None):
            connection = http.client.HTTPConnection(served.host, served.port, timeout=TIMEOUT)
            connection.request("GET", path, headers=headers or {})
            response = connection.getresponse()
            body = response.read().decode()
            connection.close()
            return response.status, body
        assert get(f"/?token={served.token}")[0] == 200
        assert get("/")[0] == 401
        assert get("/?token=" + "0" * 64)[0] == 401
        assert get(f"/?token={served.token}", {"Host": f"rebound.example:{served.port}"})[0] == 421
        assert get(f"/?token={served.token}", {"Origin": "http://evil.example"})[0] == 403
        # The WebSocket: no token, a foreign origin: not upgraded.
        upgrade = {"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13",
                   "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Origin": f"http://127.0.0.1:{served.port}"}
        # (Declined upgrades are answered 400 by the WebSocket upgrader; the
        # same request without Upgrade says why.)
        assert get("/rpc", upgrade)[0] == 400
        assert get(f"/rpc?token={served.token}", {**upgrade, "Origin": "http://evil.example"})[0] == 400
        assert get("/rpc", {"Origin": f"http://127.0.0.1:{served.port}"})[0] == 401
        assert get(f"/rpc?token={served.token}", {"Origin": "http://evil.example"})[0] == 403
        assert get(f"/rpc?token={served.token}", {"Origin": f"http://127.0.0.1:{served.port}"})[0] == 426
        assert get(f"/rpc?token={served.token}", upgrade)[0] == 101


def test_a_dropped_connection_reconnects_and_registers_again(tmp_path, browser):
    database = tmp_path / "games.sqlite"
    make_database(database, journal_mode="wal")
    token_file = tmp_path / "token"
    token_file.write_text("a-token-the-page-keeps-0123456789")
    with serve_web(database, "--token-file", str(token_file)) as first:
        browser.get(first.url)
        wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-sqlive=status]").text == "live")
        type_sql(browser, "SELECT count(*) FROM players")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=watch-name]").send_keys("n")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=watch]").click()
        wait(browser, lambda d: grid_rows(live(d, "n")) == [["3"]])
        port = first.port
    # The server is gone: the page says so, then a new one on the same port.
    wait(browser, lambda d: "reconnecting" in d.find_element(By.CSS_SELECTOR, "[data-sqlive=status]").text)
    subprocess.run(["sqlite3", str(database), "INSERT INTO players(gameID, name, score) VALUES (2, 'Di', 1)"], check=True)
    with serve_web(database, "--token-file", str(token_file), address=str(port)):
        wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-sqlive=status]").text == "reconnected")
        wait(browser, lambda d: grid_rows(live(d, "n")) == [["4"]])
        subprocess.run(["sqlite3", str(database), "DELETE FROM players"], check=True)
        wait(browser, lambda d: grid_rows(live(d, "n")) == [["0"]])


def test_commit_to_grid_latency(tmp_path, browser):
    """External commit → the grid's DOM updated, p50/p99 (docs/benchmarks.md).
    Asserts nothing about speed; prints the figures."""
    database = tmp_path / "games.sqlite"
    make_database(database, journal_mode="wal")
    with serve_web(database) as served:
        browser.get(served.url)
        wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-sqlive=status]").text == "live")
        type_sql(browser, "SELECT max(score) FROM players")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=watch-name]").send_keys("top")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=watch]").click()
        wait(browser, lambda d: grid_rows(live(d, "top")) == [["30"]])
        # The page notes when each value first shows in the DOM (its clock is this machine's).
        browser.execute_script("""
            window.seen = {};
            new MutationObserver(() => {
              const cell = document.querySelector("[data-sqlive=live][data-name='top'] tbody td");
              if (cell && !(cell.textContent in window.seen)) window.seen[cell.textContent] = Date.now();
            }).observe(document.querySelector("[data-sqlive=lives]"), {subtree: true, childList: true, characterData: true});
        """)
        db = sqlite3.connect(database, timeout=0)
        latencies = []
        for i in range(60):
            value = 1000 + i
            with db:
                db.execute("UPDATE players SET score = ? WHERE name = 'Cy'", (value,))
            committed = time.time() * 1000
            wait(browser, lambda d: d.execute_script(f"return window.seen['{value}']") is not None)
            latencies.append(browser.execute_script(f"return window.seen['{value}']") - committed)
            time.sleep(0.05)
        db.close()
        latencies.sort()
        p50 = statistics.median(latencies)
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        print(f"\nweb page: external commit -> grid DOM updated: p50 {p50:.1f} ms, p99 {p99:.1f} ms ({len(latencies)} commits)")


def test_the_repl_serves_its_session_as_the_page(tmp_path, browser):
    """`.web` in a REPL session: the page shows the session's live queries,
    what the page watches joins them, and `.web off` stops it."""
    database = tmp_path / "games.sqlite"
    make_database(database, journal_mode="wal")
    repl = subprocess.Popen([SQLIVE, str(database)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "SQLIVE_QUIET": "1"})
    try:
        repl.stdin.write(".web 0\n.watch top SELECT max(score) FROM players\n")
        repl.stdin.flush()
        url = repl.stdout.readline().strip()
        assert url.startswith("http://127.0.0.1:") and "token=" in url, url
        browser.get(url)
        wait(browser, lambda d: d.find_element(By.CSS_SELECTOR, "[data-sqlive=status]").text == "live")
        # The session's live query, on the page, with its rows.
        wait(browser, lambda d: grid_rows(live(d, "top")) == [["30"]])
        # The page watches: the session lists it.
        type_sql(browser, "SELECT count(*) FROM players")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=watch-name]").send_keys("n")
        browser.find_element(By.CSS_SELECTOR, "[data-sqlive=watch]").click()
        wait(browser, lambda d: grid_rows(live(d, "n")) == [["3"]])
        # Another process writes: both follow.
        subprocess.run(["sqlite3", str(database), "UPDATE players SET score = 99 WHERE name = 'Ann'"], check=True)
        wait(browser, lambda d: grid_rows(live(d, "top")) == [["99"]])
        repl.stdin.write(".mode list\n.headers off\n.watches\n.web off\nSELECT 'done';\n")
        repl.stdin.flush()
        seen = []
        deadline = time.monotonic() + TIMEOUT
        while "done" not in seen and time.monotonic() < deadline:
            seen.append(repl.stdout.readline().strip())
        assert any(line.startswith("n|") for line in seen), seen
        assert any(line.startswith("top|") for line in seen), seen
        wait(browser, lambda d: "reconnecting" in d.find_element(By.CSS_SELECTOR, "[data-sqlive=status]").text)
        repl.stdin.write(".quit\n")
        repl.stdin.flush()
        assert repl.wait(timeout=TIMEOUT) == 0
    finally:
        if repl.poll() is None:
            repl.kill()
            repl.wait()
