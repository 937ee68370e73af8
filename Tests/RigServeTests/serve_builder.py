#!/usr/bin/env python3
"""The page's builder in a real browser: Debian's chromium, headless, through Selenium.

    serve_builder.py BASE_URL

Jogs the rig with the pad to one corner and then the opposite one, marks them, picks a
lens and saves a panorama (pano-built.json); turns the zenith shot on and off on the way
(the test rig's tilt cannot look straight up: the page says so). Then jogs to two poses,
adds them as a timelapse's keys, sets the second key's frame and the interval, and saves
tl-built.json, picks it and waits for its preflight card (its time and end). Prints, as the last line, JSON of what the page showed: the corners and
keys it marked (the values the files must hold) and the panorama's summary. Every wait is
bounded (WebDriverWait, generous for a loaded machine); exit code 0 on success.
"""
import json
import re
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import Select, WebDriverWait

from serve_browser import too_wide


def pose_of(text):
    """'pan -23.45 · tilt 10.12' → {'pan': -23.45, 'tilt': 10.12} (the page's 2 decimals)."""
    return {name: float(value) for name, value in re.findall(r"(\w+) (-?\d+\.\d\d)", text)}


def main():
    base = sys.argv[1]
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=375,812"):
        options.add_argument(flag)
    options.add_experimental_option("mobileEmulation", {
        "deviceMetrics": {"width": 375, "height": 812, "pixelRatio": 2.0, "touch": True}})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(30)
    wait = WebDriverWait(driver, 45, poll_frequency=0.05)
    text = lambda id: driver.find_element(By.ID, id).text
    axis = lambda name: float(text("ax-" + name))
    shown = {}
    try:
        driver.get(base + "/")
        wait.until(lambda d: text("state").lower() == "idle")
        pad = driver.find_element(By.ID, "pad")

        def jog(dx, dy, until):
            """A finger on the pad pushed by (dx, dy) px until `until()` holds, then lifted;
            returns when the rig is idle again."""
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", pad)
            ActionChains(driver).click_and_hold(pad).move_by_offset(dx, dy).perform()
            try:
                wait.until(lambda d: until())
            finally:
                ActionChains(driver).release().perform()
            wait.until(lambda d: text("state").lower() == "idle")

        def click(id):
            element = driver.find_element(By.ID, id)
            driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", element)
            element.click()

        def save(typed, file):
            """Types the name, presses Save and waits until the page says the file is saved."""
            name = driver.find_element(By.ID, "bname")
            name.clear()
            name.send_keys(typed)
            click("bsave")
            wait.until(lambda d: text("bsummary").startswith("saved " + file))

        # A panorama from two corners.
        Select(driver.find_element(By.ID, "bkind")).select_by_value("panorama")
        jog(-80, 60, lambda: axis("pan") < -25 and axis("tilt") < -8)
        click("bcornera")
        wait.until(lambda d: "pan" in text("bcornera-at"))
        jog(80, -60, lambda: axis("pan") > 20 and axis("tilt") > 8)
        click("bcornerb")
        wait.until(lambda d: "pan" in text("bcornerb-at"))
        Select(driver.find_element(By.ID, "bsensor")).select_by_value("aps-c")
        focal = driver.find_element(By.ID, "bfocal")
        focal.clear()
        focal.send_keys("18")
        # The zenith shot: this rig's tilt stops at 45°, and the page says so.
        click("bzenith")
        wait.until(lambda d: "soft limit 45" in text("bsummary"))
        print("zenith refused:", text("bsummary"))
        click("bzenith")
        wait.until(lambda d: re.search(r"\d+ rows × \d+ columns · \d+ shots", text("bsummary")) and "feasible" in text("bsummary"))
        shown["panorama"] = {
            "corner1": pose_of(text("bcornera-at")), "corner2": pose_of(text("bcornerb-at")), "summary": text("bsummary")}
        print("panorama:", shown["panorama"]["summary"])
        save("pano-built.json", "pano-built.json")
        # The new file is listed with the others.
        wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, '#programs input[value="pano-built.json"]'))

        # A timelapse from two poses.
        Select(driver.find_element(By.ID, "bkind")).select_by_value("timelapse")
        jog(-70, 0, lambda: axis("pan") < -40)
        click("baddkey")
        jog(80, -50, lambda: axis("pan") > 30 and axis("tilt") > 15)
        click("baddkey")
        keys = lambda: driver.find_elements(By.CSS_SELECTOR, "#bkeylist li")
        wait.until(lambda d: len(keys()) == 2)
        second = driver.find_element(By.CSS_SELECTOR, '#bkeylist input[data-key="1"]')
        second.clear()
        second.send_keys("59")
        interval = driver.find_element(By.ID, "binterval")
        interval.clear()
        interval.send_keys("3")
        wait.until(lambda d: text("bsummary").startswith("60 frames") and "feasible" in text("bsummary"))
        shown["timelapse"] = {"keys": [pose_of(li.text) for li in keys()], "summary": text("bsummary")}
        print("timelapse:", shown["timelapse"]["summary"])
        save("tl-built", "tl-built.json")
        # Picked, the saved program says what it needs before it starts (GET /api/preflight):
        # its frames, how long it takes and when it ends on the phone's clock.
        radio = wait.until(lambda d: d.find_element(By.CSS_SELECTOR, '#programs input[value="tl-built.json"]'))
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", radio)
        radio.click()
        wait.until(lambda d: "ends about" in text("pfhead"))
        findings = [e.text for e in driver.find_elements(By.CSS_SELECTOR, "#pflist .verdict")]
        shown["preflight"] = {"head": text("pfhead"), "findings": findings}
        print("preflight:", shown["preflight"])
        if not any(f.startswith("✓ takes about") for f in findings) or not any("nothing is shot" in f for f in findings):
            print(f"the preflight card lacks its time or its camera line: {findings}", file=sys.stderr)
            return 1
        # The page must still fit a 375-px phone.
        wide = too_wide(driver)
        if wide:
            print(wide, file=sys.stderr)
            return 1
        print(json.dumps(shown))
        return 0
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
