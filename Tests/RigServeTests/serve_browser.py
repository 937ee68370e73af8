#!/usr/bin/env python3
"""A real browser on the rig serve page: Debian's chromium, headless, through Selenium.

    serve_browser.py BASE_URL PROGRAM SCREENSHOT.png

Opens the page on a 375x812 window, picks PROGRAM, presses Start, waits until the step
counter shows step 2 and then step 3, presses STOP and waits until the page shows the
rig idle at its park pose (pan 0, tilt 0). Saves a screenshot while the program runs.
Every wait is bounded (WebDriverWait); exit code 0 on success.

Also the browser tests' shared set-up (imported by serve_liveview.py and serve_aim.py):
`phone()` opens chromium as a phone, and the page's own calls they make through it.
"""
import socket
import sys
import threading
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


# GET /api/status through the page's origin (an async script: the status, or None).
STATUS = """
const done = arguments[arguments.length - 1];
fetch("/api/status").then((r) => r.json()).then(done, () => done(null));
"""

# POST /api/goto {pose: arguments[0]} as the page would: the HTTP status (0: no answer).
GOTO = """
const done = arguments[arguments.length - 1];
fetch("/api/goto", {method: "POST", headers: {"Content-Type": "application/json", "X-Rig-Client": "browser"},
  body: JSON.stringify({pose: arguments[0]})}).then((r) => done(r.status), () => done(0));
"""

# Whether arguments[0] is the element on top where it is drawn (its centre).
ON_TOP = """
const r = arguments[0].getBoundingClientRect();
const e = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
return e === arguments[0] || arguments[0].contains(e);
"""

# Where the live-view frame is painted on the page (object-fit: contain in the pad): client pixels.
PAINTED = """
const img = document.getElementById("live"), r = img.getBoundingClientRect();
const scale = Math.min(r.width / img.naturalWidth, r.height / img.naturalHeight);
const pw = img.naturalWidth * scale, ph = img.naturalHeight * scale;
return {left: r.left + (r.width - pw) / 2, top: r.top + (r.height - ph) / 2, width: pw, height: ph};
"""

# The start of a script that reads the painted live-view frame at its own size (drawn into
# a canvas: same origin): `img`, its width `w` and height `h`, and its RGBA pixels `d`
# (returns null while none is painted).
LIVE_PIXELS = """
const img = document.getElementById("live");
if (!img || img.hidden || !img.naturalWidth) return null;
const w = img.naturalWidth, h = img.naturalHeight;
const c = document.createElement("canvas");
c.width = w; c.height = h;
const g = c.getContext("2d");
g.drawImage(img, 0, 0);
const d = g.getImageData(0, 0, w, h).data;
"""


def phone(base, scale_factor=False, script_seconds=10):
    """Debian's chromium, headless, as a 375x812 phone with touch (device pixel ratio 2),
    with bounded page loads and scripts; `driver.base` is the server's URL. Returns the
    driver and a WebDriverWait of 30 s."""
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    flags = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=375,812"]
    if scale_factor:
        flags.append("--force-device-scale-factor=2")
    for flag in flags:
        options.add_argument(flag)
    options.add_experimental_option("mobileEmulation", {
        "deviceMetrics": {"width": 375, "height": 812, "pixelRatio": 2.0, "touch": True}})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(20)
    driver.set_script_timeout(script_seconds)
    driver.base = base
    return driver, WebDriverWait(driver, 30, poll_frequency=0.05)


class Proxy:
    """127.0.0.1:port → the server, a link the tests control. While black-holed (`open`
    cleared) nothing is delivered either way; what was sent meanwhile is delivered when the
    link comes back. With `rate` (bytes a second, None: as fast as loopback) what comes from
    the server shares a link of that rate, in chunks of 4 KiB, with small buffers (16 KiB
    each way into and out of the proxy), so a slow link pushes back on the server as a weak
    Wi-Fi link does (chromium's own network emulation does not: it reads the socket at full
    speed and holds the bytes back itself, so the server never sees a slow viewer)."""

    CHUNK = 4096
    BUFFER = 16 * 1024

    def __init__(self, target_port):
        self.target = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.open = threading.Event()
        self.open.set()
        self.rate = None
        self.link = threading.Lock()
        self.free_at = 0.0
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.listener.accept()
            client.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, self.BUFFER)
            server = socket.socket()
            server.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, self.BUFFER)
            server.connect(("127.0.0.1", self.target))
            for a, b, down in ((client, server, False), (server, client, True)):
                threading.Thread(target=self.pump, args=(a, b, down), daemon=True).start()

    def pump(self, source, sink, down):
        try:
            while True:
                data = source.recv(self.CHUNK if down and self.rate else 65536)
                if not data:
                    break
                self.open.wait()
                if down and self.rate:
                    # Its turn on the link, then the time the chunk takes on it.
                    with self.link:
                        done = max(time.monotonic(), self.free_at) + len(data) / self.rate
                        self.free_at = done
                    time.sleep(max(0.0, done - time.monotonic()))
                sink.sendall(data)
        except OSError:
            pass
        for s in (source, sink):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass


def too_wide(driver):
    """The page must fit a 375-px phone: a message when something makes it wider, else None."""
    width = driver.execute_script("return document.documentElement.scrollWidth")
    return f"the page is {width} px wide on a 375 px screen" if width > 375 else None


def fail(text):
    print(text, file=sys.stderr)
    return 1


def at_rest(driver):
    """The status once the rig is idle, else None."""
    status = driver.execute_async_script(STATUS)
    return status if status and status["state"] == "idle" else None


def tap(driver, x, y):
    """A finger's tap at client pixel (x, y)."""
    finger = PointerInput(interaction.POINTER_TOUCH, "finger")
    actions = ActionBuilder(driver, mouse=finger)
    actions.pointer_action.move_to_location(round(x), round(y)).pointer_down().pause(0.05).pointer_up()
    actions.perform()


def steady(driver, read, unlike=None, seconds=30):
    """`read(driver)` once the painted frame has settled: the same twice, 0.5 s apart (at rest
    the camera sends the same picture; a busy machine may paint a frame late), and not
    `unlike` (what was painted before a move)."""
    deadline = time.monotonic() + seconds
    last = None
    while time.monotonic() < deadline:
        value = read(driver)
        if value is not None and value == last and value != unlike:
            return value
        last = value
        time.sleep(0.5)
    raise TimeoutError(f"the painted frame did not settle in {seconds} s (last: {last})")


def main():
    base, program, screenshot = sys.argv[1], sys.argv[2], sys.argv[3]
    driver, wait = phone(base, scale_factor=True)
    try:
        driver.get(base + "/")
        radio = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, f'#programs input[value="{program}"]'))
        wait.until(lambda d: d.find_element(By.ID, "state").text.lower() == "idle")
        radio.click()
        start = driver.find_element(By.ID, "start")
        wait.until(lambda d: start.is_enabled())
        start.click()
        step = lambda d: d.find_element(By.ID, "stepline").text
        wait.until(lambda d: step(d).startswith("step 2 /"))
        print("page shows", step(driver))
        wait.until(lambda d: step(d).startswith("step 3 /"))
        print("page shows", step(driver))
        driver.save_screenshot(screenshot)
        driver.find_element(By.ID, "stop").click()
        pose = lambda d: (d.find_element(By.ID, "ax-pan").text, d.find_element(By.ID, "ax-tilt").text)
        wait.until(lambda d: d.find_element(By.ID, "state").text.lower() == "idle" and pose(d) == ("0.00", "0.00"))
        print("page shows the rig idle at", pose(driver))
        wide = too_wide(driver)
        if wide:
            print(wide, file=sys.stderr)
            return 1
        return 0
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
