#!/usr/bin/env python3
"""The phone page as a field safety device, in a real browser (Debian's chromium, headless,
through Selenium, touch emulated on a 375x812 phone):

    serve_field.py BASE_URL

  stop-latch   a finger held on the jog pad, STOP pressed: the rig comes to rest and stays
               there while the finger keeps moving; only a new press after lifting moves it.
  link-lost    the page goes through a proxy that can black-hole the link (Wi-Fi out of
               range: nothing arrives either way, and what was sent arrives later, as TCP
               would deliver it): the page says LINK LOST and greys out all but STOP; the
               jog under way stops (server deadman) and the jogs that arrive late move
               nothing; STOP pressed while lost says it is retrying, then that it arrived.
  foreign      a page from another origin posts to the API (text/plain, JSON, a form): the
               rig does not move and control does not change hands.
  page         labels readable (STOP and Start ≥ 4.5:1), Next on screen on a phone on its side,
               after STOP an offer to resume from the step it stopped at (which works),
               another phone's STOP named on this page,
               poses saved with Enter, replacing one asks first, deleted with ✕.
  bytes        the event stream's bytes over a few seconds at rest, as bytes per hour.

Prints one line per check ("PASS name: …" / "FAIL name: …") and "FIGURE name value unit"
lines; exit 0 when every check passed. Every wait is bounded; the status is read from the
API directly (the server is on loopback, so no token is needed).
"""
import json
import socket
import sys
import threading
import time
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

BASE = sys.argv[1].rstrip("/")
results = []


def check(name, ok, detail):
    results.append(ok)
    print(("PASS " if ok else "FAIL ") + name + ": " + detail, flush=True)


def figure(name, value, unit):
    print(f"FIGURE {name} {value:.3f} {unit}", flush=True)


def status():
    with urllib.request.urlopen(BASE + "/api/status", timeout=5) as r:
        return json.loads(r.read())


def wait_status(predicate, seconds=20):
    """The first status for which predicate holds, polled every 20 ms; None after `seconds`."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s = status()
        if predicate(s):
            return s
        time.sleep(0.02)
    return None


def pan(s):
    return s["pose"]["pan"]


def moving(s):
    return s["state"] not in ("idle", "waiting", "paused", "fault")


def still_for(seconds):
    """Watches the rig for `seconds`: the largest pan change seen (an observation window)."""
    first = pan(status())
    worst = 0.0
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        worst = max(worst, abs(pan(status()) - first))
        time.sleep(0.02)
    return worst


class Proxy:
    """127.0.0.1:port → the server. While black-holed nothing is delivered either way;
    what was sent meanwhile is delivered when the link comes back."""

    def __init__(self, target_port):
        self.target = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.open = threading.Event()
        self.open.set()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.listener.accept()
            server = socket.create_connection(("127.0.0.1", self.target))
            for a, b in ((client, server), (server, client)):
                threading.Thread(target=self.pump, args=(a, b), daemon=True).start()

    def pump(self, source, sink):
        try:
            while True:
                data = source.recv(65536)
                if not data:
                    break
                self.open.wait()
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=375,812"):
        options.add_argument(flag)
    options.add_experimental_option("mobileEmulation", {"deviceMetrics": {"width": 375, "height": 812, "pixelRatio": 2.0, "touch": True}})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(20)
    return driver


def open_page(driver, base):
    driver.get(base + "/")
    WebDriverWait(driver, 30, poll_frequency=0.05).until(lambda d: d.find_element(By.ID, "state").text.lower() == "idle")
    return driver.find_element(By.ID, "pad")


def hold_pad_right(driver, base, name):
    """Opens the page at `base`, puts a finger on the pad and pushes right until pan moves;
    the pad, or None (the check failed) when pan never moved."""
    pad = open_page(driver, base)
    start = pan(status())
    ActionChains(driver).click_and_hold(pad).move_by_offset(70, 0).perform()
    if not wait_status(lambda s: pan(s) > start + 1):
        check(name, False, "holding the pad to the right never moved pan")
        return None
    return pad


def stop_latch(driver):
    pad = hold_pad_right(driver, BASE, "stop-latch")
    if pad is None:
        return
    pressed = time.monotonic()
    driver.execute_script("document.getElementById('stop').click()")
    rest = wait_status(lambda s: not moving(s))
    figure("stop_to_rest_with_pad_held", time.monotonic() - pressed, "s")
    if rest is None:
        check("stop-latch", False, "the rig did not come to rest after STOP")
        return
    # The finger stays down and keeps moving: nothing moves.
    for dx in (10, -20, 15):
        ActionChains(driver).move_by_offset(dx, 0).perform()
    drift = still_for(1.0)
    WebDriverWait(driver, 10).until(lambda d: d.find_element(By.ID, "stopstate").text.startswith("STOP arrived"))
    ActionChains(driver).release().perform()
    # A deliberate new press moves it again.
    ActionChains(driver).click_and_hold(pad).move_by_offset(-70, 0).perform()
    again = wait_status(lambda s: pan(s) < pan(rest) - 1)
    ActionChains(driver).release().perform()
    wait_status(lambda s: not moving(s))
    check("stop-latch", drift < 1e-6 and again is not None,
          f"STOP with the finger held: rest at pan {pan(rest):.2f}, then {drift:.3f}° of drift while the finger kept moving; a new press {'moved it' if again else 'did NOT move it'}")


def link_lost(driver):
    proxy = Proxy(int(BASE.rsplit(":", 1)[1]))
    if hold_pad_right(driver, f"http://127.0.0.1:{proxy.port}", "link-lost") is None:
        return
    proxy.open.clear()
    cut = time.monotonic()
    # The server's deadman brakes the jog whose requests stopped arriving.
    rest = wait_status(lambda s: not moving(s))
    figure("deadman_stop_after_link_cut", time.monotonic() - cut, "s")
    WebDriverWait(driver, 20, poll_frequency=0.05).until(lambda d: "lost" in d.find_element(By.TAG_NAME, "body").get_attribute("class"))
    figure("link_lost_shown_after", time.monotonic() - cut, "s")
    greyed = driver.execute_script("return getComputedStyle(document.getElementById('start')).pointerEvents") == "none"
    stop_usable = driver.execute_script("return getComputedStyle(document.getElementById('stop')).pointerEvents") != "none"
    ActionChains(driver).release().perform()
    driver.execute_script("document.getElementById('stop').click()")
    retrying = WebDriverWait(driver, 20, poll_frequency=0.05).until(
        lambda d: "not confirmed" in d.find_element(By.ID, "stopstate").text or None)
    before = pan(status())
    # The link comes back: the jogs sent during the outage arrive late and move nothing.
    proxy.open.set()
    WebDriverWait(driver, 20, poll_frequency=0.05).until(lambda d: d.find_element(By.ID, "stopstate").text.startswith("STOP arrived"))
    WebDriverWait(driver, 20, poll_frequency=0.05).until(lambda d: "lost" not in d.find_element(By.TAG_NAME, "body").get_attribute("class"))
    drift = still_for(1.0)
    after = pan(status())
    ok = rest is not None and greyed and stop_usable and bool(retrying) and drift < 1e-6 and abs(after - before) < 1e-6
    check("link-lost", ok,
          f"rest after the cut: {rest is not None}; page greyed but STOP usable: {greyed and stop_usable}; STOP said retrying, then arrived; "
          f"pan {before:.2f} → {after:.2f} after the late jogs arrived (drift {drift:.3f}°)")


class Foreign(BaseHTTPRequestHandler):
    page = b""

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Type", "text/html")
        self.end_headers()
        self.wfile.write(Foreign.page)

    def log_message(self, *args):
        pass


def foreign(driver):
    Foreign.page = f"""<!doctype html><html><body><form id="f" method="POST" action="{BASE}/api/goto" enctype="text/plain">
<input name='{{"pose":{{"pan":30,"x":"' value='"}}}}'></form><script>
const api = "{BASE}/api/goto";
Promise.allSettled([
  fetch(api, {{method: "POST", mode: "no-cors", headers: {{"Content-Type": "text/plain"}}, body: '{{"pose": {{"pan": 30}}}}'}}),
  fetch(api, {{method: "POST", headers: {{"Content-Type": "application/json"}}, body: '{{"pose": {{"pan": 30}}}}'}}),
  fetch("{BASE}/api/jog", {{method: "POST", mode: "no-cors", body: '{{"velocity": {{"pan": 1}}}}'}}),
]).then(() => {{ document.title = "sent"; }});
</script></body></html>""".encode()
    server = ThreadingHTTPServer(("127.0.0.2", 0), Foreign)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    other = f"http://127.0.0.2:{server.server_address[1]}"
    quiet = wait_status(lambda s: not moving(s))
    before, holder = pan(quiet), quiet["controller"]
    driver.get(other + "/")
    WebDriverWait(driver, 20, poll_frequency=0.05).until(lambda d: d.title == "sent")
    driver.execute_script("document.getElementById('f').submit()")
    WebDriverWait(driver, 20, poll_frequency=0.05).until(lambda d: not d.current_url.startswith(other))
    drift = still_for(1.0)
    s = status()
    server.shutdown()
    check("foreign", abs(pan(s) - before) < 1e-6 and s["controller"] == holder and drift < 1e-6,
          f"after three fetches and a form post from {other}: pan {before:.2f} → {pan(s):.2f}, controller {holder} → {s['controller']}")


def contrast(fg, bg):
    """WCAG contrast ratio of two "rgb(r, g, b)" colours."""
    def lum(text):
        r, g, b = [int(v) / 255 for v in text[text.index("(") + 1:text.index(")")].split(",")[:3]]
        f = lambda c: c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4
        return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b)
    a, b = sorted((lum(fg), lum(bg)), reverse=True)
    return (a + 0.05) / (b + 0.05)


def page(driver):
    problems = []
    open_page(driver, BASE)
    style = lambda id, prop: driver.execute_script(f"return getComputedStyle(document.getElementById('{id}')).{prop}")
    for id in ("stop", "start"):
        ratio = contrast(style(id, "color"), style(id, "backgroundColor"))
        figure(f"{id}_label_contrast", ratio, ":1")
        if ratio < 4.5:
            problems.append(f"{id} label contrast {ratio:.2f}:1 < 4.5")
    # A phone on its side: Next is on screen, above the dock.
    driver.set_window_size(812, 375)
    driver.execute_script("window.scrollTo(0, 0)")
    next_box = driver.execute_script("const r = document.getElementById('next').getBoundingClientRect(); return [r.top, r.bottom]")
    dock_top = driver.execute_script("return document.getElementById('dock').getBoundingClientRect().top")
    if not (0 <= next_box[0] and next_box[1] <= dock_top):
        problems.append(f"landscape: Next at {next_box}, the dock from {dock_top}")
    driver.set_window_size(375, 812)
    wait = WebDriverWait(driver, 30, poll_frequency=0.05)
    # Start, Next to step 2, STOP: the page offers to resume from step 2, and that plays it.
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#programs input[value="wait.json"]'))
    # The list is redrawn as programs load: pick the radio as it is now, by script.
    wait.until(lambda d: d.execute_script(
        "const r = document.querySelector('#programs input[value=\"wait.json\"]'); if (r && !r.checked) r.click(); return !!r && r.checked"))
    wait.until(lambda d: d.find_element(By.ID, "start").is_enabled())
    driver.find_element(By.ID, "start").click()
    wait.until(lambda d: d.find_element(By.ID, "stepline").text.startswith("step 1 /") and d.find_element(By.ID, "next").is_enabled())
    driver.find_element(By.ID, "next").click()
    wait.until(lambda d: d.find_element(By.ID, "stepline").text.startswith("step 2 /") and d.find_element(By.ID, "next").is_enabled())
    driver.execute_script("document.getElementById('stop').click()")
    wait.until(lambda d: d.find_element(By.ID, "resume").is_displayed())
    offer = driver.find_element(By.ID, "resume").text
    if offer != "Resume wait.json from step 2":
        problems.append(f"after STOP the page offers {offer!r}")
    wait_status(lambda s: s["program"] is None and not moving(s))
    driver.find_element(By.ID, "resume").click()
    resumed = wait_status(lambda s: s["program"] == "wait.json" and s["step"] == 2 and s["state"] == "waiting")
    if resumed is None:
        problems.append("resume did not play wait.json from step 2")
    # Another phone's STOP: this page says who stopped it, and where.
    stop_request = urllib.request.Request(BASE + "/api/stop", data=b"{}", method="POST",
                                          headers={"Content-Type": "application/json", "X-Rig-Client": "other phone"})
    urllib.request.urlopen(stop_request, timeout=5).read()
    wait_status(lambda s: s["program"] is None and not moving(s))
    told = WebDriverWait(driver, 20, poll_frequency=0.05).until(lambda d: "STOPPED by other phone" in d.find_element(By.ID, "toast").text or None)
    if not told:
        problems.append("the page did not say another phone stopped its run")
    # Poses: Enter saves; a name in use asks before replacing; ✕ deletes (after asking).
    driver.execute_script("window.asked = []; window.confirm = (q) => { window.asked.push(q); return true; }")
    name = driver.find_element(By.ID, "posename")
    name.send_keys("door\n")
    wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#poses button[data-pose="door"]'))
    name.send_keys("door\n")
    wait.until(lambda d: len(d.execute_script("return window.asked")) == 1)
    # The list is redrawn after each save: press ✕ as it is now, by script.
    wait.until(lambda d: d.execute_script(
        "const b = document.querySelector('#poses button[data-delete=\"door\"]'); if (b) b.click(); return !!b"))
    wait.until(lambda d: not d.find_elements(By.CSS_SELECTOR, '#poses button[data-pose="door"]'))
    asked = driver.execute_script("return window.asked")
    if len(asked) != 2 or "Replace" not in asked[0] or "Delete" not in asked[1]:
        problems.append(f"confirmations: {asked}")
    check("page", not problems, "; ".join(problems) or "labels ≥ 4.5:1, Next on screen on its side, resume from step 2 offered and played, another phone's STOP named, poses: Enter saves, replacing asks, ✕ deletes")


def stream_bytes(seconds=5.0):
    with socket.create_connection(("127.0.0.1", int(BASE.rsplit(":", 1)[1]))) as sock:
        sock.sendall(b"GET /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        sock.settimeout(0.5)
        total = 0
        begin = time.monotonic()
        while time.monotonic() - begin < seconds:
            try:
                data = sock.recv(65536)
            except socket.timeout:
                continue
            if not data:
                break
            total += len(data)
    figure("event_stream_bytes_per_hour_at_rest", total / seconds * 3600, "B")
    check("bytes", total > 0, f"{total} B in {seconds:.0f} s at rest (heartbeats and the first status)")


def main():
    driver = browser()
    try:
        for scenario in (stop_latch, link_lost, foreign, page):
            try:
                scenario(driver)
            except Exception as error:  # a bounded wait that ran out, a lost browser
                check(scenario.__name__.replace("_", "-"), False, f"{type(error).__name__}: {error}")
    finally:
        driver.quit()
    stream_bytes()
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
