#!/usr/bin/env python3
"""A real browser on the rig serve page: Debian's chromium, headless, through Selenium.

    serve_browser.py BASE_URL PROGRAM SCREENSHOT.png

Opens the page on a 375x812 window, picks PROGRAM, presses Start, waits until the step
counter shows step 2 and then step 3, presses STOP and waits until the page shows the
rig idle at its park pose (pan 0, tilt 0). Saves a screenshot while the program runs.
Every wait is bounded (WebDriverWait); exit code 0 on success.
"""
import sys

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.support.ui import WebDriverWait


def main():
    base, program, screenshot = sys.argv[1], sys.argv[2], sys.argv[3]
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 "--window-size=375,812", "--force-device-scale-factor=2"):
        options.add_argument(flag)
    options.add_experimental_option("mobileEmulation", {
        "deviceMetrics": {"width": 375, "height": 812, "pixelRatio": 2.0, "touch": True}})
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(20)
    wait = WebDriverWait(driver, 30, poll_frequency=0.05)
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
        # The page must fit a 375-px phone: nothing wider than the window.
        width = driver.execute_script("return document.documentElement.scrollWidth")
        if width > 375:
            print(f"the page is {width} px wide on a 375 px screen", file=sys.stderr)
            return 1
        return 0
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
