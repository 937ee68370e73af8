#!/bin/sh
# gpio-sim (configfs) infrastructure: a simulated gpiochip of 32 lines named like the
# Raspberry Pi's BCM lines, its inputs driven from sysfs (the "buttons"), its outputs read
# back from sysfs (the "LEDs"), through libgpiod 1.6's tools, with edge events.
# gpio_sim_up (below) is what check_gpio_buttons.sh reuses.
. "$GUEST/lib.sh"
. "$GUEST/gpio_sim.sh"

if ! gpio_sim_up; then result gpio-sim FAIL "could not make the gpio-sim chip"; exit 0; fi
note "gpio-sim chip $SIM_CHIP ($SIM_DEV), $(gpioinfo "$SIM_CHIP" | head -1)"
gpioinfo "$SIM_CHIP" | sed -n '1p;12,16p;23p'

# Input (button, pull-up, pressed = low): BCM 13.
sim_pull 13 pull-up;   A=$(gpioget "$SIM_CHIP" 13)
sim_pull 13 pull-down; B=$(gpioget "$SIM_CHIP" 13)
sim_pull 13 pull-up
# Output (LED): BCM 21 driven by gpioset, seen in sysfs.
gpioset --mode=signal "$SIM_CHIP" 21=1 & GP=$!
wait_for 30 sh -c "[ \"\$(cat $SIM_SYS/sim_gpio21/value)\" = 1 ]"; O=$(cat "$SIM_SYS/sim_gpio21/value")
kill $GP; wait $GP 2>/dev/null
# Edge events: gpiomon sees a press (falling) and a release (rising) on BCM 10.
sim_pull 10 pull-up
gpiomon --num-events=2 "$SIM_CHIP" 10 > "$W/mon.txt" 2>&1 & MP=$!
# gpiomon has requested the line once the kernel shows it as used.
wait_for 30 sh -c "gpioinfo $SIM_CHIP | grep -E 'line +10:' | grep -q used"
sim_pull 10 pull-down; sim_pull 10 pull-up
n=0; while [ $n -lt 300 ] && kill -0 $MP 2>/dev/null; do sleep 0.1; n=$((n + 1)); done
kill $MP 2>/dev/null; cat "$W/mon.txt"
E=$(grep -cE 'RISING|FALLING' "$W/mon.txt")
LINES=$(gpioinfo "$SIM_CHIP" | grep -c 'line ')
if [ "$A$B$O" = 101 ] && [ "$E" = 2 ] && [ "$LINES" -ge 32 ]; then
  result gpio-sim PASS "$SIM_CHIP: $LINES lines, input pull up/down read $A/$B, output read back $O, 2 edge events"
else
  result gpio-sim FAIL "lines=$LINES get=$A$B out=$O events=$E (want ≥32, 10, 1, 2)"
fi
exit 0
