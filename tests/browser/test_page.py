"""The try-it page and the embeddable widget in real headless Chromium.

A person's typing (one letter at a time, 90-220 ms apart), the suggestions read after every
letter and compared with what the API itself answers, the keyboard (WAI-ARIA combobox), stale
answers, axe-core, screenshots at desktop and phone widths, and the cross-origin snippet.
"""

from __future__ import annotations

import base64
import json
import random
import re
import time
from urllib.parse import urlencode

import pytest
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

pytestmark = pytest.mark.slow

DESKTOP = (1280, 900)
PHONE = (390, 844)

SHOWN = """
const list = document.querySelector('[role=listbox]');
const input = document.querySelector('[role=combobox]');
const wrap = list.closest('.nla');
return {
  q: list.dataset.q === undefined ? null : list.dataset.q,
  hidden: list.hidden,
  expanded: input.getAttribute('aria-expanded'),
  active: input.getAttribute('aria-activedescendant'),
  note: wrap.querySelector('[role=status]').textContent,
  error: wrap.dataset.error || null,
  options: [...list.querySelectorAll('[role=option]')].map(o => ({
    id: o.id,
    selected: o.getAttribute('aria-selected'),
    lines: [o.querySelector('.nla-line1').textContent, o.querySelector('.nla-line2').textContent],
    bold: [...o.querySelectorAll('.nla-line1, .nla-line2')].map(line =>
      [...line.querySelectorAll('mark')].filter(m => getComputedStyle(m).fontWeight >= 700)
        .map(m => m.textContent)),
  })),
};
"""


def shown(driver) -> dict:
    return driver.execute_script(SHOWN)


def wait(driver, condition, timeout: float = 10.0):
    return WebDriverWait(driver, timeout, poll_frequency=0.02).until(lambda d: condition())


def wait_for_answer(driver, q: str) -> dict:
    """Wait until the list shows the answer to ``q`` (the widget marks it), and return it."""
    state = {}

    def answered() -> bool:
        state.update(shown(driver))
        return state["q"] == q

    wait(driver, answered)
    return state


def marked(hit: dict) -> list[list[str]]:
    """The text of each highlighted span, per line (offsets are code points, as Python's)."""
    return [[line[s:e] for s, e in spans] for line, spans in zip(hit["lines"], hit["highlights"], strict=True)]


def lines(hits: list[dict]) -> list[list[str]]:
    return [hit["lines"][:2] for hit in hits]


def set_viewport(driver, size: tuple[int, int]) -> None:
    width, height = size
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


def open_page(driver, url: str, size: tuple[int, int] = DESKTOP):
    set_viewport(driver, size)
    driver.get(url)
    wait(driver, lambda: driver.execute_script("return document.body.dataset.ready === 'true'"))
    return driver.find_element(By.ID, "address")


def type_like_a_person(element, text: str, rng: random.Random, after_each=None) -> None:
    for i, char in enumerate(text):
        element.send_keys(char)
        if after_each is not None:
            after_each(text[: i + 1])
        time.sleep(rng.uniform(0.09, 0.22))


def full_page_screenshot(driver, path) -> None:
    """The whole page, below the fold too (Chromium's DevTools protocol)."""
    shot = driver.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True})
    path.write_bytes(base64.b64decode(shot["data"]))


def run_axe(driver, axe_source: str) -> list[dict]:
    if not driver.execute_script("return typeof window.axe === 'object'"):
        driver.execute_script(axe_source)
    return driver.execute_async_script(
        """
        const done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ['violations']})
          .then(r => done(r.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
                                                   nodes: v.nodes.map(n => n.target.join(' '))}))))
          .catch(e => done([{id: 'axe-error', help: String(e)}]));
        """
    )


# -- the try-it page --------------------------------------------------------------------------------


def test_page_holds_no_key_and_the_demo_key_is_served_apart(server):
    status, body = server.request("/")
    assert status == 200 and not re.search(rb"nlk_[0-9a-f]{16}_", body)
    status, body = server.request("/demo-key")
    demo = json.loads(body)
    assert status == 200 and demo["key"].startswith("nlk_") and demo["kind"] == "publishable"
    # the demo key serves this server's own pages only
    query = "/v1/address?" + urlencode({"country": "NLD", "q": "kerk"})
    assert server.request(query, {"Authorization": f"Bearer {demo['key']}"})[0] == 403
    same = {"Authorization": f"Bearer {demo['key']}", "Sec-Fetch-Site": "same-origin"}
    assert server.request(query, same)[0] == 200


def test_page_shows_the_register_date_the_index_holds(browser, server):
    """The footer says the register's date from /readyz: the sample index is built from the CSV,
    which names none, so the page says so and names the file (an LVBAG index: tests/server
    test_register_date.py)."""
    open_page(browser, server.origin + "/")
    shown_date = browser.find_element(By.ID, "register-date")
    wait(browser, lambda: shown_date.get_attribute("data-ready") == "true")
    assert shown_date.text == "register date not known (built from nl-addresses-sample.csv.zst)"


def test_typing_letter_by_letter_then_choosing_with_the_keyboard(browser, server):
    """After every letter the list is the API's answer to the text typed so far."""
    box = open_page(browser, server.origin + "/")
    assert box.get_attribute("role") == "combobox"
    assert box.get_attribute("aria-autocomplete") == "list"
    assert box.get_attribute("aria-expanded") == "false"
    listbox = browser.find_element(By.ID, box.get_attribute("aria-controls"))
    assert listbox.get_attribute("role") == "listbox"

    typed = "kerkstraat 1"
    seen = {}

    def check(prefix: str) -> None:
        state = wait_for_answer(browser, prefix)
        hits = server.hits(prefix, 5, highlight=True)
        want = lines(hits)
        assert [o["lines"] for o in state["options"]] == want, prefix
        # the matched parts in bold, exactly the API's highlights
        assert [o["bold"] for o in state["options"]] == [marked(hit)[:2] for hit in hits], prefix
        assert state["expanded"] == ("true" if want else "false")
        seen[prefix] = len(want)

    type_like_a_person(box, typed, random.Random(16), after_each=check)
    assert len(seen) == len(typed) and all(seen.values())
    state = shown(browser)
    assert state["note"] == "5 addresses found; use the arrow keys"  # the live region
    timing = browser.find_element(By.ID, "timing").text
    assert re.fullmatch(r"5 addresses in \d+\.\d ms", timing), timing

    box.send_keys(Keys.ARROW_DOWN)
    box.send_keys(Keys.ARROW_DOWN)
    state = shown(browser)
    assert state["active"] == state["options"][1]["id"]
    assert [o["selected"] for o in state["options"]] == ["false", "true", "false", "false", "false"]
    box.send_keys(Keys.ARROW_UP, Keys.ARROW_UP)  # wraps around to the last
    assert shown(browser)["active"] == state["options"][4]["id"]
    box.send_keys(Keys.ARROW_DOWN, Keys.ARROW_DOWN)  # back to the second
    box.send_keys(Keys.ENTER)

    hit = server.hits(typed, 5)[1]
    chosen = browser.find_element(By.ID, "chosen")
    wait(browser, chosen.is_displayed)
    assert box.get_attribute("value") == f"{hit['lines'][0]}, {hit['lines'][1]}"
    state = shown(browser)
    assert state["hidden"] and state["expanded"] == "false" and state["active"] is None
    assert browser.find_element(By.ID, "chosen-lines").text.splitlines() == hit["lines"]
    rows = browser.find_elements(By.CSS_SELECTOR, "#chosen-components tr")
    assert len(rows) == len(hit["components"])
    for row, component in zip(rows, hit["components"], strict=True):
        assert row.find_element(By.TAG_NAME, "code").text == component["type"]
        assert row.find_element(By.TAG_NAME, "td").text == str(component["value"])
    location = hit["location"]
    coords = browser.find_element(By.ID, "chosen-coords").text
    assert coords == f"{location['latitude']:.6f}, {location['longitude']:.6f}"


def test_escape_closes_the_list_then_clears_the_box(browser, server):
    box = open_page(browser, server.origin + "/")
    type_like_a_person(box, "kerk", random.Random(1))
    wait_for_answer(browser, "kerk")
    box.send_keys(Keys.ARROW_DOWN)
    box.send_keys(Keys.ESCAPE)
    state = shown(browser)
    assert state["hidden"] and state["expanded"] == "false" and state["active"] is None
    assert box.get_attribute("value") == "kerk"
    box.send_keys(Keys.ARROW_DOWN)  # opens it again
    assert not shown(browser)["hidden"]
    box.send_keys(Keys.ESCAPE, Keys.ESCAPE)
    assert box.get_attribute("value") == ""
    assert shown(browser)["hidden"]


def test_limit_selector_asks_again_with_the_new_limit(browser, server):
    box = open_page(browser, server.origin + "/")
    type_like_a_person(box, "hoofdstr", random.Random(2))
    assert len(wait_for_answer(browser, "hoofdstr")["options"]) == 5
    Select(browser.find_element(By.ID, "limit")).select_by_visible_text("3")
    wait(browser, lambda: len(shown(browser)["options"]) == 3)
    assert [o["lines"] for o in shown(browser)["options"]] == lines(server.hits("hoofdstr", 3))
    Select(browser.find_element(By.ID, "limit")).select_by_visible_text("10")
    wait(browser, lambda: len(shown(browser)["options"]) == 10)
    assert [o["lines"] for o in shown(browser)["options"]] == lines(server.hits("hoofdstr", 10))


@pytest.mark.parametrize("abort", [True, False], ids=["with-abort", "without-abort"])
def test_slow_answer_to_an_earlier_prefix_never_replaces_a_newer_one(browser, server, proxy, abort):
    """The proxy holds back the answer to 'ker' 1.5 s; 'kerk' is typed meanwhile.

    Without AbortController (deleted before the page runs) the late answer does reach the page:
    the sequence check alone must drop it.
    """
    earlier, newer = "ker", "kerk"
    assert lines(server.hits(earlier)) != lines(server.hits(newer))  # else the test shows nothing
    script = None
    if not abort:
        script = browser.execute_cdp_cmd(
            "Page.addScriptToEvaluateOnNewDocument", {"source": "delete window.AbortController;"}
        )["identifier"]
    try:
        box = open_page(browser, proxy.origin + "/")
        assert browser.execute_script("return typeof AbortController") == ("function" if abort else "undefined")
        proxy.held.clear()
        proxy.slow = {earlier}
        box.send_keys("ke")
        wait_for_answer(browser, "ke")
        box.send_keys("r")
        time.sleep(0.15)
        box.send_keys("k")
        state = wait_for_answer(browser, newer)
        assert [o["lines"] for o in state["options"]] == lines(server.hits(newer))
        time.sleep(proxy.delay + 0.7)  # the held answer has come (or was given up) by now
        assert proxy.held == [earlier]
        state = shown(browser)
        assert state["q"] == newer
        assert [o["lines"] for o in state["options"]] == lines(server.hits(newer))
        if not abort:
            # the stale answer did arrive, after the newer one, and was dropped
            ends = browser.execute_script(
                """
                const end = q => performance.getEntriesByType('resource')
                  .filter(e => e.name.includes('/v1/address?') && new URL(e.name).searchParams.get('q') === q)
                  .map(e => e.responseEnd);
                return [end(arguments[0]), end(arguments[1])];
                """,
                earlier,
                newer,
            )
            assert len(ends[0]) == 1 and len(ends[1]) == 1 and ends[0][0] > ends[1][0], ends
    finally:
        proxy.slow = set()
        if script is not None:
            browser.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", {"identifier": script})


def test_page_with_a_pasted_key(browser, server):
    """A publishable key that lists this server works on the page; one for a shop does not."""
    box = open_page(browser, server.origin + "/")
    browser.find_element(By.CSS_SELECTOR, "#key-box summary").click()
    key = browser.find_element(By.ID, "key")
    key.send_keys(server.own)
    assert browser.find_element(By.ID, "key-state").text == "your key"
    assert key.get_attribute("value") == server.own, (key.get_attribute("value"), server.own)
    type_like_a_person(box, "kerk", random.Random(3))
    assert [o["lines"] for o in wait_for_answer(browser, "kerk")["options"]] == lines(server.hits("kerk"))
    key.clear()
    key.send_keys(server.publishable)  # lists the shop's origin, not this server's
    box.send_keys("s")
    wait(browser, lambda: shown(browser)["error"] == "origin_not_allowed")
    assert "403 origin_not_allowed" in browser.find_element(By.ID, "timing").text
    key.clear()
    browser.execute_script("sessionStorage.clear()")


# -- the other questions: postcode and number, a location, an area (issue 39) ----------------------


def asked(server, path: str, **params) -> dict:
    """The API's answer to ``path`` with ``params``, asked directly with the secret key."""
    status, body = server.request(f"{path}?{urlencode({'country': 'NLD', **params})}",
                                  {"Authorization": f"Bearer {server.secret}"})
    assert status == 200, body
    return json.loads(body)


def test_postcode_and_number_fill_in_street_and_place_and_offer_the_additions(browser, server, axe_source):
    """The Dutch checkout: 9745 CC and 1 fill in the Kerkstraat in Groningen; the letters and
    additions there are a labelled <select>, chosen with the keyboard."""
    open_page(browser, server.origin + "/")
    postcode, number = browser.find_element(By.ID, "pc"), browser.find_element(By.ID, "nr")
    rng = random.Random(39)
    type_like_a_person(postcode, "9745 cc", rng)
    type_like_a_person(number, "1", rng)
    street, place = browser.find_element(By.ID, "pc-street"), browser.find_element(By.ID, "pc-place")
    wait(browser, lambda: street.get_attribute("value") == "Kerkstraat")
    assert place.get_attribute("value") == "Groningen"
    want = [hit["lines"][0] for hit in asked(server, "/v1/address/postcode", postcode="9745CC", number=1)["hits"]]
    assert want == ["Kerkstraat 1", "Kerkstraat 1-1", "Kerkstraat 1-2", "Kerkstraat 1-3", "Kerkstraat 1a"]
    select = browser.find_element(By.CSS_SELECTOR, ".nla-pc select")
    assert [o.text for o in Select(select).options] == want
    label = browser.find_element(By.CSS_SELECTOR, f"label[for='{select.get_attribute('id')}']")
    assert label.text == "House letter and addition"
    note = browser.find_element(By.ID, number.get_attribute("aria-describedby"))
    assert note.get_attribute("role") == "status"
    assert note.text == "5 addresses here: 9745 CC Groningen; choose the letter or addition"
    assert run_axe(browser, axe_source) == []

    select.send_keys(Keys.ARROW_DOWN)   # the keyboard, as any <select>: the next one
    wait(browser, lambda: note.text == "Chosen: Kerkstraat 1-1, 9745 CC Groningen")
    wait(browser, browser.find_element(By.ID, "chosen").is_displayed)
    assert browser.find_element(By.ID, "chosen-lines").text.splitlines()[0] == "Kerkstraat 1-1"

    number.send_keys(Keys.BACKSPACE, "9", "9", "9", "9", "9")   # no such number there
    wait(browser, lambda: note.text == "No address with this postcode and number")
    assert not select.is_displayed()

    # beyond the register's highest house number (the server's rule, filled into widget.js) the
    # form is not complete: nothing is asked, the note is cleared
    number.send_keys("9")
    wait(browser, lambda: note.text == "")
    assert not select.is_displayed()
    number.send_keys(*[Keys.BACKSPACE] * 6, "1")
    postcode.send_keys(Keys.BACKSPACE)   # "9745 c": not a whole postcode
    wait(browser, lambda: note.text == "")
    postcode.send_keys("C")
    wait(browser, lambda: note.text == "5 addresses here: 9745 CC Groningen; choose the letter or addition")


def test_the_addresses_at_a_location_nearest_first(browser, server):
    open_page(browser, server.origin + "/")
    for name, value in (("near-lat", "53.2207"), ("near-lon", "6.5607")):
        field = browser.find_element(By.ID, name)
        field.clear()
        field.send_keys(value)
    browser.find_element(By.ID, "near-go").click()
    note = browser.find_element(By.ID, "near-note")
    wait(browser, lambda: note.text == "5 addresses, nearest first")
    hits = asked(server, "/v1/address/reverse", lat="53.2207", lon="6.5607", limit=5)["hits"]
    shown_items = [li.text for li in browser.find_elements(By.CSS_SELECTOR, "#near-list li")]
    assert shown_items == [f"{h['lines'][0]}, {h['lines'][1]} ({h['distance']:.1f} m)" for h in hits]
    assert all(item.startswith("Noorderhaven") for item in shown_items)


def test_autocomplete_kept_inside_a_municipality(browser, server):
    box = open_page(browser, server.origin + "/")
    area = browser.find_element(By.ID, "area")
    area.send_keys("sudwest-fryslan")
    type_like_a_person(box, "kerkstraat 1", random.Random(5))
    state = wait_for_answer(browser, "kerkstraat 1")
    want = asked(server, "/v1/address", q="kerkstraat 1", limit=5, municipality="sudwest-fryslan",
                 highlight="true")["hits"]
    assert [o["lines"] for o in state["options"]] == lines(want)
    assert all(line[1].split(" ", 2)[2] != "Groningen" for line in lines(want))


# -- accessibility and looks -----------------------------------------------------------------------


@pytest.mark.parametrize("size", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_axe_finds_no_violations_and_screenshots(browser, server, axe_source, artifacts, size):
    """axe-core on the empty page, with the list open, and with an address chosen; screenshots."""
    name = "desktop" if size == DESKTOP else "phone"
    box = open_page(browser, server.origin + "/", size)
    assert run_axe(browser, axe_source) == []
    browser.save_screenshot(str(artifacts / f"{name}-1-empty.png"))

    type_like_a_person(box, "kerkstr 1 gron", random.Random(4))
    wait_for_answer(browser, "kerkstr 1 gron")
    box.send_keys(Keys.ARROW_DOWN)
    assert run_axe(browser, axe_source) == []
    browser.save_screenshot(str(artifacts / f"{name}-2-suggestions.png"))
    if size == DESKTOP:  # the manual's picture (docs/try-it.png is one such, committed once)
        region = browser.execute_script(
            """
            const top = document.querySelector('.top').getBoundingClientRect();
            const list = document.querySelector('[role=listbox]').getBoundingClientRect();
            return {x: top.left - 24, y: 0, width: top.width + 48, height: list.bottom + 24, scale: 1};
            """
        )
        shot = browser.execute_cdp_cmd("Page.captureScreenshot", {"format": "png", "clip": region})
        (artifacts / "docs-try-it.png").write_bytes(base64.b64decode(shot["data"]))

    box.send_keys(Keys.ENTER)
    wait(browser, browser.find_element(By.ID, "chosen").is_displayed)
    assert run_axe(browser, axe_source) == []
    full_page_screenshot(browser, artifacts / f"{name}-3-chosen.png")
    # nothing wider than the screen
    assert browser.execute_script("return document.documentElement.scrollWidth <= window.innerWidth")
    for step in ("1-empty", "2-suggestions", "3-chosen"):
        assert (artifacts / f"{name}-{step}.png").stat().st_size > 10_000


# -- another origin: the embed snippet -------------------------------------------------------------


def open_snippet(driver, pages, origin: int, name: str, key: str):
    """Open the manual's snippet with ``key`` on the ``origin``-th other origin; return its input."""
    pages.keys[name] = key
    set_viewport(driver, DESKTOP)
    driver.get(f"{pages.origins[origin]}/{name}")
    box = driver.find_element(By.ID, "address")
    wait(driver, lambda: box.get_attribute("role") == "combobox")
    return box


def test_snippet_on_another_origin_with_its_publishable_key(browser, server, pages):
    box = open_snippet(browser, pages, 0, "allowed", server.publishable)
    type_like_a_person(box, "kerkstraat 1", random.Random(5))
    state = wait_for_answer(browser, "kerkstraat 1")
    hits = server.hits("kerkstraat 1")
    assert [o["lines"] for o in state["options"]] == lines(hits)
    box.send_keys(Keys.ARROW_DOWN, Keys.ENTER)
    assert box.get_attribute("value") == f"{hits[0]['lines'][0]}, {hits[0]['lines'][1]}"
    components = {c["type"]: c["value"] for c in hits[0]["components"]}
    form = {
        field.get_attribute("name"): field.get_attribute("value")
        for field in browser.find_elements(By.CSS_SELECTOR, "input[type=hidden]")
    }
    assert form == {"postcode": components["NLD_POSTAL_CODE"]}
    # Enter chose the address and did not submit the form
    assert browser.current_url == pages.origins[0] + "/allowed"
    assert browser.execute_script("return document.activeElement.id") == "address"


def test_key_for_another_origin_is_refused_in_the_browser(browser, server, pages):
    """The page's origin is one some key allows, but not this key: a 403 the page can read."""
    open_snippet(browser, pages, 0, "refused", server.elsewhere).send_keys("kerk")
    wait(browser, lambda: shown(browser)["error"] == "origin_not_allowed")
    state = shown(browser)
    assert state["hidden"] and state["options"] == []
    assert state["note"].startswith("403 origin_not_allowed")


def test_origin_no_key_allows_fails_its_preflight_in_the_browser(browser, server, pages):
    """No key lists the second origin: the preflight is refused, the browser blocks the request."""
    open_snippet(browser, pages, 1, "unlisted", server.publishable).send_keys("kerk")
    wait(browser, lambda: shown(browser)["error"] == "unreachable")
    assert shown(browser)["options"] == []
