#!/usr/bin/env python3
"""The live view on the rig serve page, in Debian's chromium (headless, Selenium).

    serve_liveview.py BASE_URL

The rig's simulated camera has a live view. Opens the page on a 375x812 phone window and
waits until the jog pad shows it (a frame painted behind the pad, the thirds grid over
it). Starts a long move, sees the painted picture change as the rig pans (a new frame,
drawn where the rig points), checks that STOP is the element on top where it is drawn,
presses it, and sees the rig come to rest short of the target while the live view goes
on. Every wait is bounded (WebDriverWait); prints PASS lines, exit 0 on success.
"""
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait

# The painted frame, reduced to a fingerprint (drawn into a canvas: same origin).
FINGERPRINT = """
const img = document.getElementById("live");
if (!img || img.hidden || !img.naturalWidth) return null;
const c = document.createElement("canvas");
c.width = 32; c.height = 24;
const g = c.getContext("2d");
g.drawImage(img, 0, 0, 32, 24);
return Array.from(g.getImageData(0, 0, 32, 24).data).join(",");
"""

STATUS = """
const done = arguments[arguments.length - 1];
fetch("/api/status").then((r) => r.json()).then(done, () => done(null));
"""

GOTO = """
const done = arguments[arguments.length - 1];
fetch("/api/goto", {method: "POST", headers: {"Content-Type": "application/json", "X-Rig-Client": "browser"},
  body: JSON.stringify({pose: {pan: 80}})}).then((r) => done(r.status), () => done(0));
"""


def main():
    base = sys.argv[1]
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=375,812"):
        options.add_argument(flag)
    options.add_experimental_option("mobileEmulation", {
        "deviceMetrics": {"width": 375, "height": 812, "pixelRatio": 2.0, "touch": True}})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(20)
    driver.set_script_timeout(10)
    wait = WebDriverWait(driver, 30, poll_frequency=0.05)
    try:
        driver.get(base + "/")
        wait.until(lambda d: "live" in d.find_element(By.ID, "pad").get_attribute("class").split())
        first = wait.until(lambda d: d.execute_script(FINGERPRINT))
        if driver.find_element(By.ID, "thirds").get_attribute("hidden") is not None:
            print("the thirds grid is hidden", file=sys.stderr)
            return 1
        print("PASS painted: the pad shows a live-view frame with the thirds grid")

        if driver.execute_async_script(GOTO) != 202:
            print("the move was refused", file=sys.stderr)
            return 1
        wait.until(lambda d: (d.execute_script(FINGERPRINT) or first) != first)
        print("PASS follows: the painted frame changes as the rig pans")

        stop = driver.find_element(By.ID, "stop")
        on_top = driver.execute_script("""
            const r = arguments[0].getBoundingClientRect();
            const e = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
            return e === arguments[0] || arguments[0].contains(e);""", stop)
        if not on_top:
            print("STOP is covered where it is drawn", file=sys.stderr)
            return 1
        stop.click()
        status = wait.until(lambda d: (lambda s: s if s and s["state"] == "idle" else None)(d.execute_async_script(STATUS)))
        pan = status["pose"]["pan"]
        if pan >= 79:
            print(f"STOP did not stop the move short of its target (pan {pan})", file=sys.stderr)
            return 1
        print(f"PASS stop: STOP on top, the rig rests at pan {pan:.1f} short of 80")
        # The live view goes on after STOP: a new frame is painted.
        after = wait.until(lambda d: d.execute_script(FINGERPRINT))
        live = status["camera"]["liveView"]
        if live["state"] not in ("on", "paused") or live["viewers"] < 1:
            print(f"the live view is {live}", file=sys.stderr)
            return 1
        print("PASS after-stop: the live view still plays", "(frame painted)" if after else "")
        return 0
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
