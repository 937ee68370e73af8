#!/usr/bin/env python3
"""The leader's page shows its group: Debian's chromium, headless, through Selenium.

    serve_group.py BASE_URL GROUP RIG…

Opens the page of a `rig serve --group` leader as a phone and waits until its group card
says the group's name and a line for each RIG (the leader's marked "(this rig)"), each with
its state and the step it shoots next. Prints the card's lines; exit code 0 on success.
Every wait is bounded.
"""
import sys

from selenium.webdriver.common.by import By

from serve_browser import phone, too_wide


def main():
    base, group, rigs = sys.argv[1], sys.argv[2], sys.argv[3:]
    driver, wait = phone(base)
    try:
        driver.get(base + "/")
        card = lambda d: d.find_element(By.ID, "group").text.split("\n")
        def complete(d):
            lines = card(d)
            return lines and lines[0].startswith(f"group {group}: ") and all(
                any(line.startswith(rig + ": ") or line.startswith(rig + " (this rig): ") for line in lines[1:]) for rig in rigs)
        wait.until(complete)
        for line in card(driver):
            print("group card:", line)
        # The card must not push the page wider than the phone.
        wide = too_wide(driver)
        if wide:
            print(wide, file=sys.stderr)
            return 1
        return 0
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
