#!/usr/bin/env python3
"""Pairing a phone end to end: the real rig serve binary and Debian's chromium (Selenium).

    serve_pairing.py RIG_BINARY RIG_FILE WORKDIR

Starts `rig serve --token-file …` (so the page needs the token or a paired phone) with its
state in WORKDIR, and checks, printing PASS NAME: … for each:
  needs-pairing  the page without a cookie says "Needs pairing", not LINK LOST (also 3 s on)
  paired         opening the printed /pair?code=… URL pairs the browser and shows the rig
  cookie         the cookie is HttpOnly, SameSite=Strict, Path=/, about a year long
  code-once      the same URL again does not pair a fresh browser (the code is spent)
  restart        the server stops and starts again: the page is still paired
  list           rig serve --list-paired names the browser
  revoked        rig serve --revoke all: the open page says "Needs pairing" without a reload
  typed-code     a code from rig serve --pair, typed into the page, pairs it again
Every wait is bounded; exit code 0 on success.
"""
import os
import re
import signal
import subprocess
import sys
import time

from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.common.exceptions import WebDriverException
from selenium.webdriver.support.ui import WebDriverWait


class Server:
    def __init__(self, binary, rig, workdir, port=0):
        self.env = dict(os.environ, XDG_STATE_HOME=os.path.join(workdir, "state"))
        self.binary, self.workdir = binary, workdir
        self.log = open(os.path.join(workdir, "serve.log"), "ab")
        args = [binary, "serve", "--rig", rig, "--listen", f"127.0.0.1:{port}", "--no-realtime", "--output", "sim",
                "--token-file", os.path.join(workdir, "token")]
        self.out_path = os.path.join(workdir, f"serve-{time.time_ns()}.out")
        self.out = open(self.out_path, "wb")
        self.process = subprocess.Popen(args, stdout=self.out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=self.env)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            text = self.output()
            match = re.search(r"http://127\.0\.0\.1:(\d+)/pair\?code=([0-9A-Z]{8})", text)
            if match:
                self.port, self.code = int(match.group(1)), match.group(2)
                self.base = f"http://127.0.0.1:{self.port}"
                return
            if self.process.poll() is not None:
                raise RuntimeError("rig serve exited early:\n" + text)
            time.sleep(0.05)
        raise RuntimeError("rig serve printed no pairing URL:\n" + self.output())

    def output(self):
        with open(self.out_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def stop(self):
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def command(self, *args):
        result = subprocess.run([self.binary, "serve", *args], env=self.env, capture_output=True, text=True, timeout=30)
        return result.returncode, result.stdout + result.stderr


def browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=375,812"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)
    driver.set_page_load_timeout(20)
    return driver


def visible(driver, element_id):
    return driver.find_element(By.ID, element_id).is_displayed()


def shows_pairing(driver):
    return visible(driver, "pairing") and "needs pairing" in driver.find_element(By.ID, "pairing").text.lower()


def shows_rig(driver):
    return (not visible(driver, "pairing") and driver.find_element(By.ID, "state").text.lower() == "idle"
            and not visible(driver, "link"))


def main():
    binary, rig, workdir = sys.argv[1], sys.argv[2], sys.argv[3]
    server = Server(binary, rig, workdir)
    driver = browser()
    other = None
    wait = WebDriverWait(driver, 20, poll_frequency=0.05, ignored_exceptions=[WebDriverException])
    try:
        driver.get(server.base + "/")
        wait.until(shows_pairing)
        time.sleep(3)  # longer than LINK LOST's 1.2 s and the stream's 3 s reconnect
        assert shows_pairing(driver) and not visible(driver, "link"), "LINK LOST instead of needs pairing"
        assert not visible(driver, "stop"), "the controls show on an unpaired page"
        print("PASS needs-pairing: the page says it needs pairing, not LINK LOST, 3 s on")

        pair_url = f"{server.base}/pair?code={server.code}"
        driver.get(pair_url)
        wait.until(lambda d: d.execute_script("return location.pathname") == "/" and shows_rig(d))
        print("PASS paired: the pairing URL paired the browser and the page shows the rig")

        cookies = {c["name"]: c for c in driver.get_cookies()}
        cookie = cookies.get("rig_paired")
        assert cookie, f"no rig_paired cookie: {cookies}"
        assert cookie["httpOnly"] and cookie.get("sameSite") == "Strict" and cookie["path"] == "/", cookie
        days = (cookie["expiry"] - time.time()) / 86400
        assert 360 < days < 370, f"the cookie lives {days:.0f} days"
        assert driver.execute_script("return document.cookie").find("rig_paired") < 0, "the page's script can read the cookie"
        print(f"PASS cookie: HttpOnly, SameSite=Strict, Path=/, {days:.0f} days, unreadable by the page")

        other = browser()
        other.get(pair_url)
        WebDriverWait(other, 20, poll_frequency=0.05, ignored_exceptions=[WebDriverException]).until(
            lambda d: shows_pairing(d) and "wrong, used or expired" in d.find_element(By.ID, "pairmsg").text)
        print("PASS code-once: the spent code does not pair another browser:", other.find_element(By.ID, "pairmsg").text[:60])

        port = server.port
        server.stop()
        assert server.process.returncode == 0, server.output()
        server = Server(binary, rig, workdir, port=port)
        driver.refresh()
        wait.until(shows_rig)
        time.sleep(1.5)
        assert shows_rig(driver)
        print("PASS restart: after the server restarted the page is still paired")

        status, listing = server.command("--list-paired")
        assert status == 0 and cookie and "Linux Chrome" in listing, listing
        print("PASS list:", listing.strip().splitlines()[0])

        status, revoked = server.command("--revoke", "all")
        assert status == 0 and "revoked" in revoked, revoked
        started = time.monotonic()
        wait.until(shows_pairing)
        print(f"PASS revoked: the open page says it needs pairing {time.monotonic() - started:.2f} s after rig serve --revoke all")
        driver.refresh()
        wait.until(shows_pairing)
        status, _ = server.command("--list-paired")

        status, made = server.command("--pair", "--listen", f"127.0.0.1:{server.port}")
        match = re.search(r"code ([0-9A-Z]{4}-[0-9A-Z]{4})", made)
        assert status == 0 and match, made
        field = driver.find_element(By.ID, "paircode")
        field.send_keys(match.group(1).lower())
        driver.find_element(By.ID, "pairbutton").click()
        wait.until(shows_rig)
        print("PASS typed-code: a code from rig serve --pair, typed in, paired the page again")
        return 0
    finally:
        driver.quit()
        if other:
            other.quit()
        server.stop()


if __name__ == "__main__":
    sys.exit(main())
