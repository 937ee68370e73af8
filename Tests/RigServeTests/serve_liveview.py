#!/usr/bin/env python3
"""The live view on the rig serve page, in Debian's chromium (headless, Selenium).

    serve_liveview.py BASE_URL

The rig's simulated camera has a live view of its test scene (its horizon a yellow line).
Opens the page on a 375x812 phone window and, as a person would:

- painted: waits until the jog pad shows the live view (a frame painted behind the pad,
  the thirds grid over it);
- level: turns the rig to tilt 10 and finds the scene's horizon in the painted frame: the
  page's level line (drawn from the tilt and the lens's field of view) lies on it, within
  LEVEL_PX of the frame's pixels;
- histogram: the page's histogram against one the test computes from the whole painted
  frame (luma, 32 bins): near (the largest gap between their cumulative shares under
  0.05: the page's is sub-sampled, which moves counts between neighbouring bins);
- crop: turns the rig to look 35° down, presses Crop (the pad says the mode) and taps the
  near ground: nothing moves, and the crop shows the frame's own pixels there (100 %);
  its sharpness figure then rises as the lens is focused there (POST /api/focus, as
  turning a focus ring would) and falls when focused elsewhere, the peak kept;
- follows and stop: starts a long move, sees the painted picture change, checks that STOP
  is the element on top where it is drawn (the crop shown), presses it, and sees the rig
  come to rest short of the target while the live view goes on;
- latency: a reader in the page (fetch of /api/liveview, each frame decoded and drawn
  into a canvas) notes when each frame is painted against its stamp (the JPEG comment's
  capture time on CLOCK_MONOTONIC, this machine's clock too): captured → painted p50/p95;
- throttled: the same reader through a link of THROTTLE_BYTES/s (`Proxy`, which pushes
  back on the server as a slow Wi-Fi link does; chromium's own network emulation does
  not): it gets fewer frames than the camera made, and their delay does not grow (after
  WARMUP s, while the link's buffers fill, the least-squares slope of delay against time
  at most GROWTH).

Every wait is bounded (WebDriverWait); prints PASS lines (with the figures), exit 0 on
success.
"""
import statistics
import sys
import time

from selenium.webdriver.common.by import By

from serve_browser import GOTO, LIVE_PIXELS, ON_TOP, PAINTED, STATUS, Proxy, at_rest, fail, phone, steady, tap

# How far the level line may lie from the scene's horizon, in frame pixels.
LEVEL_PX = 2.0
# The throttled link's rate, bytes a second (a frame of the test's scene is about 10 KiB,
# 10 a second), and how long its buffers take to fill.
THROTTLE_BYTES = 48 * 1024
WARMUP = 1.5
# How fast the delay may grow after the warm-up, seconds a second (a frame's age wobbles
# with the link's buffers: a few frames in flight, then the newest).
GROWTH = 0.2

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

# The painted frame at its own size: the horizon's row (yellow pixels, the mean row of
# rows mostly yellow), a luma histogram of 32 bins, and the frame's size.
FRAME = LIVE_PIXELS + """
const bins = new Array(32).fill(0);
let rows = 0, sum = 0;
for (let y = 0; y < h; y++) {
  let yellow = 0;
  for (let x = 0; x < w; x++) {
    const i = 4 * (y * w + x), r = d[i], gr = d[i + 1], b = d[i + 2];
    bins[Math.min(31, Math.floor((0.299 * r + 0.587 * gr + 0.114 * b) / 8))]++;
    if (r > 220 && gr > 160 && gr < 235 && b < 110) yellow++;
  }
  if (yellow > w / 2) { rows++; sum += y + 0.5; }
}
return {w, h, horizon: rows ? sum / rows : null, bins};
"""

# A region of the painted frame (x, y, w, h in frame pixels), as RGBA numbers.
REGION = """
const img = document.getElementById("live");
const c = document.createElement("canvas");
c.width = arguments[2]; c.height = arguments[3];
const g = c.getContext("2d");
g.drawImage(img, arguments[0], arguments[1], arguments[2], arguments[3], 0, 0, arguments[2], arguments[3]);
return Array.from(g.getImageData(0, 0, arguments[2], arguments[3]).data);
"""

# What the page's crop canvas shows, and where from.
CROP = """
const c = document.getElementById("cropview");
if (document.getElementById("croppanel").hidden || !c.width) return null;
return {x: Number(c.dataset.x), y: Number(c.dataset.y), w: c.width, h: c.height,
        pixels: Array.from(c.getContext("2d").getImageData(0, 0, c.width, c.height).data)};
"""

FOCUS = """
const done = arguments[arguments.length - 1];
fetch("/api/focus", {method: "POST", headers: {"Content-Type": "application/json", "X-Rig-Client": "browser"},
  body: JSON.stringify({x: arguments[0], y: arguments[1]})}).then((r) => done(r.status), () => done(0));
"""

# A viewer in the page: reads /api/liveview for arguments[0] seconds, decodes and draws
# each frame into a canvas, and notes when it was painted (the next animation frame, on
# the epoch clock in ms) with the frame's stamp (number, capture time in ms on
# CLOCK_MONOTONIC: the digits split, as they pass 2^53 ns).
READER = """
const seconds = arguments[0], done = arguments[arguments.length - 1];
const canvas = document.createElement("canvas"), g = canvas.getContext("2d");
document.body.appendChild(canvas);
const seen = [], controller = new AbortController(), latin = new TextDecoder("latin1");
const find = (a, b, from) => { outer: for (let i = from; i <= a.length - b.length; i++) { for (let j = 0; j < b.length; j++) if (a[i + j] !== b[j]) continue outer; return i; } return -1; };
const blank = new TextEncoder().encode("\\r\\n\\r\\n");
(async () => {
  const response = await fetch("/api/liveview?reader=" + Date.now(), {signal: controller.signal});
  const reader = response.body.getReader();
  let buffer = new Uint8Array(0);
  setTimeout(() => controller.abort(), seconds * 1000);
  try {
    for (;;) {
      const {value, done: ended} = await reader.read();
      if (ended) break;
      const joined = new Uint8Array(buffer.length + value.length);
      joined.set(buffer); joined.set(value, buffer.length); buffer = joined;
      for (;;) {
        const end = find(buffer, blank, 0);
        if (end < 0) break;
        const head = latin.decode(buffer.subarray(0, end));
        const length = Number((/Content-Length: *(\\d+)/i.exec(head) || [])[1]);
        if (!(length >= 0) || buffer.length < end + 4 + length + 2) break;
        const jpeg = buffer.slice(end + 4, end + 4 + length);
        buffer = buffer.slice(end + 4 + length + 2);
        const stamp = /rig-frame (\\d+) captured-ns (\\d+)/.exec(latin.decode(jpeg.subarray(0, 200)));
        if (!stamp) continue;
        const bitmap = await createImageBitmap(new Blob([jpeg], {type: "image/jpeg"}));
        canvas.width = bitmap.width; canvas.height = bitmap.height;
        g.drawImage(bitmap, 0, 0);
        await new Promise((r) => requestAnimationFrame(r));
        const ns = stamp[2];
        seen.push({number: Number(stamp[1]), captured: Number(ns.slice(0, -6)) + Number(ns.slice(-6)) / 1e6,
                   painted: performance.timeOrigin + performance.now(), bytes: length});
      }
    }
  } catch (e) {}
  canvas.remove();
  done(seen);
})().catch(() => done(seen));
"""


def clock_offset(driver):
    """The page's epoch clock minus CLOCK_MONOTONIC, in ms, and its uncertainty (half the
    bracket of the call)."""
    best = None
    for _ in range(5):
        before = time.monotonic_ns() / 1e6
        page = driver.execute_script("return performance.timeOrigin + performance.now()")
        after = time.monotonic_ns() / 1e6
        if best is None or after - before < best[1]:
            best = (page - (before + after) / 2, after - before)
    return best[0], best[1] / 2


def delays(frames, offset):
    """Captured → painted of each frame, ms."""
    return [f["painted"] - offset - f["captured"] for f in frames]


def percentile(values, fraction):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(fraction * len(ordered)))]


def rest_at(driver, wait, pose):
    if driver.execute_async_script(GOTO, pose) != 202:
        raise AssertionError(f"the move to {pose} was refused")
    wait.until(lambda d: (lambda s: s and all(abs(s["pose"][k] - v) < 0.01 for k, v in pose.items()))(at_rest(d)))


def main():
    driver, wait = phone(sys.argv[1])
    try:
        driver.get(driver.base + "/")
        wait.until(lambda d: "live" in d.find_element(By.ID, "pad").get_attribute("class").split())
        first = wait.until(lambda d: d.execute_script(FINGERPRINT))
        if driver.find_element(By.ID, "thirds").get_attribute("hidden") is not None:
            return fail("the thirds grid is hidden")
        print("PASS painted: the pad shows a live-view frame with the thirds grid")

        # The level line on the scene's horizon.
        rest_at(driver, wait, {"pan": 0, "tilt": 10})
        frame = steady(driver, lambda d: d.execute_script(FRAME), unlike=None)
        if frame["horizon"] is None:
            return fail(f"no horizon found in the frame at tilt 10: {frame}")
        level = driver.find_element(By.ID, "level")
        wait.until(lambda d: level.get_attribute("hidden") is None)
        painted = driver.execute_script(PAINTED)
        box = driver.execute_script("const r = arguments[0].getBoundingClientRect(); return {y: r.top + r.height / 2};", level)
        at = (box["y"] - painted["top"]) / painted["height"] * frame["h"]
        if abs(at - frame["horizon"]) > LEVEL_PX:
            return fail(f"the level line is at row {at:.1f} of the frame, the horizon at {frame['horizon']:.1f}")
        print(f"PASS level: the level line at row {at:.1f}, the scene's horizon at {frame['horizon']:.1f} "
              f"of {frame['h']} (tilt 10)")

        # The histogram of the frame shown.
        hist = driver.find_element(By.ID, "hist")
        bins = wait.until(lambda d: hist.get_attribute("data-bins"))
        page = [float(v) for v in bins.split(",")]
        ours = frame["bins"]
        gap, below_page, below_ours = 0.0, 0.0, 0.0
        for a, b in zip(page, ours):
            below_page += a / sum(page)
            below_ours += b / sum(ours)
            gap = max(gap, abs(below_page - below_ours))
        if len(page) != 32 or gap > 0.05:
            return fail(f"the page's histogram {page} is not the frame's {ours} (cumulative gap {gap:.3f})")
        print(f"PASS histogram: the page's histogram is the frame's (largest cumulative gap {gap:.3f})")

        # Crop: a mode the pad says; a tap shows the frame's own pixels there, and nothing moves.
        rest_at(driver, wait, {"pan": 0, "tilt": -35})
        steady(driver, lambda d: d.execute_script(FINGERPRINT))
        driver.execute_script("arguments[0].scrollIntoView({block: 'center'})", driver.find_element(By.ID, "pad"))
        driver.find_element(By.ID, "crop").click()
        mode = driver.find_element(By.ID, "padmode").text
        if "crop" not in mode.lower():
            return fail(f"the pad does not say the crop mode: {mode!r}")
        painted = driver.execute_script(PAINTED)
        tap(driver, painted["left"] + 0.5 * painted["width"], painted["top"] + 0.85 * painted["height"])
        crop = wait.until(lambda d: d.execute_script(CROP))
        region = driver.execute_script(REGION, crop["x"], crop["y"], crop["w"], crop["h"])
        off = sum(abs(a - b) for a, b in zip(crop["pixels"], region)) / len(region)
        if off > 4:
            return fail(f"the crop is not the frame's pixels at ({crop['x']}, {crop['y']}): mean difference {off:.1f}")
        status = at_rest(driver)
        if not status or abs(status["pose"]["tilt"] + 35) > 0.01 or abs(status["pose"]["pan"]) > 0.01:
            return fail(f"a tap in crop mode moved the rig: {status and status['pose']}")
        print(f"PASS crop: the pad says {mode!r}; a tap shows a {crop['w']}x{crop['h']} crop of the frame's own "
              f"pixels (mean difference {off:.2f}), nothing moved")

        # The sharpness figure follows the focus: up when focused there, down elsewhere, the peak kept.
        sharp = lambda d: float(d.find_element(By.ID, "sharp").get_attribute("data-value") or "nan")
        soft = steady(driver, sharp)
        if driver.execute_async_script(FOCUS, 0.5, 0.85) != 200:
            return fail("the focus on the near ground was refused")
        sharpest = wait.until(lambda d: (lambda v: v if v > 1.5 * soft else None)(sharp(d)))
        sharpest = steady(driver, sharp)
        if driver.execute_async_script(FOCUS, 0.5, 0.02) != 200:
            return fail("the focus on the far ground was refused")
        wait.until(lambda d: sharp(d) < 0.8 * sharpest)
        peak = float(driver.find_element(By.ID, "sharp").get_attribute("data-peak"))
        if abs(peak - sharpest) > 0.01 * sharpest:
            return fail(f"the peak {peak} is not the sharpest seen {sharpest}")
        print(f"PASS sharpness: {soft:.0f} soft → {sharpest:.0f} focused there → {sharp(driver):.0f} focused far; "
              f"the peak {peak:.0f} kept")

        # A long move: the picture follows; STOP on top (the crop shown) stops it.
        before = driver.execute_script(FINGERPRINT)
        if driver.execute_async_script(GOTO, {"pan": 80}) != 202:
            return fail("the move was refused")
        wait.until(lambda d: (d.execute_script(FINGERPRINT) or before) != before)
        print("PASS follows: the painted frame changes as the rig pans")
        stop = driver.find_element(By.ID, "stop")
        if driver.find_element(By.ID, "croppanel").get_attribute("hidden") is not None:
            return fail("the crop went away")
        if not driver.execute_script(ON_TOP, stop):
            return fail("STOP is covered where it is drawn")
        stop.click()
        status = wait.until(at_rest)
        pan = status["pose"]["pan"]
        if pan >= 79:
            return fail(f"STOP did not stop the move short of its target (pan {pan})")
        print(f"PASS stop: STOP on top with the crop shown, the rig rests at pan {pan:.1f} short of 80")
        # The live view goes on after STOP: a new frame is painted.
        wait.until(lambda d: (d.execute_script(FINGERPRINT) or before) != before)
        live = driver.execute_async_script(STATUS)["camera"]["liveView"]
        if live["state"] not in ("on", "paused") or live["viewers"] < 1:
            return fail(f"the live view is {live}")
        print("PASS after-stop: the live view still plays (frame painted)")

        # Captured → painted, then the same through a slow link.
        offset, error = clock_offset(driver)
        quick = driver.execute_async_script(READER, 1)
        if len(quick) < 5:
            return fail(f"the page's reader painted {len(quick)} frames in 1 s")
        quick_delay = delays(quick, offset)
        print(f"PASS latency: captured → painted p50 {percentile(quick_delay, 0.5):.1f} ms, p95 "
              f"{percentile(quick_delay, 0.95):.1f} ms over {len(quick)} frames (clock offset ± {error:.1f} ms); "
              f"frames of {statistics.mean(f['bytes'] for f in quick) / 1024:.1f} KiB")
        # The reader alone on the slow link (a page of the server's without a live view of its own).
        proxy = Proxy(int(driver.base.rsplit(":", 1)[1]))
        driver.get(f"http://127.0.0.1:{proxy.port}/api/status")
        proxy.rate = THROTTLE_BYTES
        driver.set_script_timeout(30)
        seconds = 4.5
        slow = driver.execute_async_script(READER, seconds)
        proxy.rate = None
        if len(slow) < 6:
            return fail(f"the slow reader painted {len(slow)} frames in {seconds} s")
        made = slow[-1]["number"] - slow[0]["number"] + 1
        slow_delay = delays(slow, offset)
        began = slow[0]["painted"]
        settled = [(f["painted"] - began, d) for f, d in zip(slow, slow_delay) if f["painted"] - began >= WARMUP * 1000]
        if len(settled) < 4:
            return fail(f"too few frames after the warm-up: {[round(v) for v in slow_delay]} ms")
        # How fast the delay grows: the least-squares slope of delay against time (a queue
        # the server kept would grow it by 1 - the link's share of the frames: 0.5 s a second here).
        mt = statistics.mean(t for t, _ in settled)
        md = statistics.mean(d for _, d in settled)
        slope = sum((t - mt) * (d - md) for t, d in settled) / sum((t - mt) ** 2 for t, _ in settled)
        if len(slow) >= made:
            return fail(f"the slow reader got every frame ({len(slow)} of {made}): no newest-frame rule seen; "
                        f"delays {[round(v) for v in slow_delay]} ms")
        if slope > GROWTH:
            return fail(f"the delay grew {slope:.2f} s a second through a slow link: {[round(v) for v in slow_delay]} ms")
        print(f"PASS throttled: through {THROTTLE_BYTES // 1024} KiB/s the reader got {len(slow)} of {made} frames in "
              f"{seconds} s; captured → painted p50 {percentile(slow_delay, 0.5):.0f} ms, p95 "
              f"{percentile(slow_delay, 0.95):.0f} ms; after {WARMUP:g} s its delay grew {slope:+.3f} s a second "
              f"(limit {GROWTH}): {[round(v) for v in slow_delay]} ms")
        return 0
    finally:
        driver.quit()


if __name__ == "__main__":
    sys.exit(main())
