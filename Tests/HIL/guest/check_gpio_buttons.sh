#!/bin/sh
# PLACEHOLDER until the GPIO buttons (`--trigger gpio`) are merged. Turns on by itself when
# `rig play --help` lists a gpio trigger. See docs/hil.md ("Checks waiting for features")
# for what it must assert; the gpio-sim chip it needs is made by gpio_sim_up (gpio_sim.sh),
# verified by check_gpio_sim.sh.
. "$GUEST/lib.sh"
if ! rig_has_trigger gpio; then
  result gpio-buttons SKIP "feature not merged yet (rig play --help lists no gpio trigger)"
  exit 0
fi
. "$GUEST/gpio_sim.sh"
gpio_sim_up || { result gpio-buttons FAIL "could not make the gpio-sim chip"; exit 0; }
. "$GUEST/gpio_buttons_body.sh"
