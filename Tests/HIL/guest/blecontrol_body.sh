# The body of check_blecontrol.sh (sourced after bt_up): `rig scan` and `rig play` with a
# blecontrol output, as the central on hci1 through the real bluetoothd, against a board
# emulator on hci0 (blecontrol_board.py: FFE0/FFE1, decodes every write like the firmware).
# See docs/hil.md (blecontrol) and docs/blecontrol.md.
fails=""
fail() { fails="$fails; $*"; note "FAIL: $*"; }
BOARD_NAME=HILBLECTL
BUDGET=300   # linkBytesPerSecond: below what 2 servos changing every tick at 50 Hz ask (500 B/s)
BLOG=$W/board.log
# A clean slate: the checks before this one (bluetooth, bui) leave hci0 and hci1 knowing,
# and maybe still connected to, each other; a connected board does not advertise, and a
# known device's cached properties may hide the new advertisement. RemoveDevice on both
# sides disconnects and forgets.
for a in hci0 hci1; do
  for d in $(busctl --system tree org.bluez --list 2>/dev/null | grep -E "^/org/bluez/$a/dev_[0-9A-F_]+$"); do
    note "removing $d (Connected: $(busctl --system get-property org.bluez "$d" org.bluez.Device1 Connected 2>/dev/null))"
    busctl --system call org.bluez /org/bluez/$a org.bluez.Adapter1 RemoveDevice o "$d" || true
  done
done
wait_for 30 sh -c '! busctl --system tree org.bluez --list | grep -qE "^/org/bluez/hci[01]/dev_"' ||
  note "devices still known: $(busctl --system tree org.bluez --list | grep dev_ | tr '\n' ' ')"
: > "$BLOG"
$PY "$GUEST/blecontrol_board.py" /org/bluez/hci0 $BOARD_NAME "$BLOG" --reply-unknown-once --seconds 380 \
  > "$W/board.out" 2>&1 & BP=$!
finish() {
  kill $BP 2>/dev/null; wait $BP 2>/dev/null
  keep "$BLOG" "$W/board.out" "$W/scan.out" "$W/play.out" "$W/trace.csv" "$W/rig.json" "$W/move.json"
}
if ! wait_for 60 grep -q '"ready"' "$BLOG"; then
  fail "the board emulator did not register on hci0: $(tail -3 "$W/board.out" | tr '\n' ' ')"
  finish; result blecontrol FAIL "${fails#; }"; exit 0
fi
note "board ready on hci0 ($(bt_address hci0))"

# rig scan on the other adapter lists it (bounded tries: discovery under TCG is slow, and
# after the bui check hci1 took up to 3 scans of 8 s to see the new advertisement). Once
# the rig's discovery runs, the board's advertising set is nudged (`bt_nudge`: btvirt
# reports a set only when it or a scan starts, and the kernel drops a report that comes
# before its discovery is under way).
ADDR=""
for try in 1 2 3 4 5 6 7 8 9 10; do
  timeout 60 "$RIG" scan --adapter hci1 --seconds 8 > "$W/scan.out" 2>&1 & SCP=$!
  wait_for 20 sh -c '[ "$(busctl --system get-property org.bluez /org/bluez/hci1 org.bluez.Adapter1 Discovering)" = "b true" ]' &&
    bt_nudge hci0
  wait $SCP; src=$?
  note "rig scan try $try (exit $src): $(tr '\n' '|' < "$W/scan.out")"
  ADDR=$(awk -v n=$BOARD_NAME '$2 == n { print $1; exit }' "$W/scan.out")
  [ -n "$ADDR" ] && break
done
if [ -z "$ADDR" ]; then
  busctl --system tree org.bluez --list; bt_logs 30
  fail "rig scan --adapter hci1 did not list $BOARD_NAME: $(tr '\n' ' ' < "$W/scan.out")"
  finish; result blecontrol FAIL "${fails#; }"; exit 0
fi
[ $src = 0 ] || fail "rig scan exit $src"

cat > "$W/rig.json" <<EOF
{
  "name": "hil-blecontrol",
  "loopRateHz": 50,
  "output": { "type": "blecontrol", "adapter": "hci1", "address": "$ADDR",
              "linkBytesPerSecond": $BUDGET, "maxWriteBytes": 20, "connectTimeoutSeconds": 90 },
  "axes": [
    { "name": "pan", "kind": "servo", "channel": 0, "pulseUs": [1000, 2000], "angleDeg": [-90, 90],
      "home": -40, "park": 0, "softLimits": [-85, 85], "maxVelocity": 90, "maxAcceleration": 180, "idle": "release" },
    { "name": "tilt", "kind": "servo", "channel": 3, "pulseUs": [1000, 2000], "angleDeg": [-90, 90],
      "home": 10, "park": 0, "softLimits": [-45, 60], "maxVelocity": 60, "maxAcceleration": 120, "idle": "release" }
  ]
}
EOF
cat > "$W/move.json" <<EOF
{
  "rig": "rig.json",
  "kind": "keyframes",
  "keyframes": {
    "pan":  [ { "t": 0, "value": -40 }, { "t": 3, "value": 37.3 } ],
    "tilt": [ { "t": 0, "value": 10 }, { "t": 3, "value": -22.7 } ]
  }
}
EOF
timeout 300 "$RIG" play "$W/move.json" --trace "$W/trace.csv" --no-realtime > "$W/play.out" 2>&1; rc=$?
echo "--- rig play (exit $rc):"; tail -40 "$W/play.out"
[ $rc = 0 ] || fail "rig play exit $rc"

# AcquireWrite: the board cannot tell (bluetoothd turns both paths into ATT Write Commands,
# delivered to it as WriteValue type "command"); the rig's log says which path it streams on.
grep -q "streaming to .* over an AcquireWrite socket" "$W/play.out" ||
  fail "the rig did not log streaming over an AcquireWrite socket: $(grep -o 'streaming to .*' "$W/play.out")"
# The board's FF 01 07 (unknown command) is logged as a warning; the rig goes on (exit 0).
grep -q "rejected command .*0x7.* as unknown" "$W/play.out" ||
  fail "the rig did not log the board's FF 01 07 reply"

kill $BP 2>/dev/null; wait $BP 2>/dev/null
$PY - "$BLOG" "$W/trace.csv" $BUDGET <<'EOF' || fail "board log: see above"
import csv, json, sys
ev = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
budget = float(sys.argv[3])
bad = []
viol = [e["what"] for e in ev if e["event"] == "violation"]
if viol: bad.append(f"violations: {viol[:5]}")
writes = [e for e in ev if e["event"] == "write"]
cmds = [e for e in ev if e["event"] == "command"]
if not writes: bad.append("no writes")
# INIT first and alone in its write (with response).
if writes and (writes[0]["bytes"][:2] != [0, 0] or len(writes[0]["bytes"]) != 2):
    bad.append(f"first write {writes[0]['bytes']}, want INIT alone [0, 0]")
if [c["name"] for c in cmds].count("INIT") != 1: bad.append("INIT not exactly once")
for w in writes:
    b = w["bytes"]
    if len(b) > 20: bad.append(f"write of {len(b)} bytes")
    i = 0
    while i < len(b):
        if i + 1 >= len(b) or i + 2 + b[i + 1] > len(b):
            bad.append(f"partial command in {b}"); break
        if b[i] == 0 and len(b) != 2: bad.append(f"INIT not alone: {b}")
        i += 2 + b[i + 1]
# Enables before values, per used channel; values in range.
enabled = {}
last = {}
lcd = 0
safe_at = None
for k, c in enumerate(cmds):
    if c["name"] == "ANALOG_OUT_EN":
        if c["enable"] == 1:
            enabled[c["channel"]] = True
        else:
            safe_at = k if safe_at is None else safe_at
    elif c["name"] == "SERVO_VAL":
        if safe_at is not None: bad.append(f"SERVO_VAL after the safe state: {c}")
        if not enabled.get(c["channel"]): bad.append(f"SERVO_VAL on channel {c['channel']} before its enable")
        if not (c["channel"] < 8 and 0 <= c["value"] <= 1000): bad.append(f"bad SERVO_VAL {c}")
        last[c["channel"]] = c["value"]
    elif c["name"] in ("LCD_TEXT", "LCD_CLEAR"):
        lcd += 1  # the session's progress on the board's LCD (no step sync here)
    elif c["name"] != "INIT":
        bad.append(f"unexpected command {c}")
if sorted(enabled) != [0, 3]: bad.append(f"enabled channels {sorted(enabled)}, want [0, 3]")
# Safe state: both axes idle "release" -> ANALOG_OUT_EN ch 0 for both, and nothing after.
disabled = sorted(c["channel"] for c in cmds if c["name"] == "ANALOG_OUT_EN" and c["enable"] == 0)
if disabled != [0, 3]: bad.append(f"disabled channels {disabled}, want [0, 3]")
if safe_at is not None and any(c["name"] != "ANALOG_OUT_EN" or c["enable"] != 0 for c in cmds[safe_at:]):
    bad.append(f"something other than disables after the safe state: {cmds[safe_at:]}")
# The final pose arrived: the last SERVO_VAL per channel = the trace's last pulse - 1000
# (the trace holds what was handed to the link; SERVO_VAL = round(pulse - 1000)).
tr = {}
for r in csv.DictReader(open(sys.argv[2])):
    if r["pulse_us"] not in ("", "nan"): tr[int(r["channel"])] = (float(r["pulse_us"]), float(r["position_deg"]))
for ch in (0, 3):
    if ch not in tr: bad.append(f"no trace rows for channel {ch}"); continue
    want = round(tr[ch][0] - 1000)
    if last.get(ch) != want:
        bad.append(f"channel {ch}: last SERVO_VAL {last.get(ch)}, want {want} (trace {tr[ch]})")
# The move's end pose arrived too (then the rig parks both axes at 0 deg = 500, the
# trace's last rows): pan 37.3 deg -> 707, tilt -22.7 deg -> 374.
end = {0: round(37.3 / 180 * 1000 + 500), 3: round(-22.7 / 180 * 1000 + 500)}
for ch, v in end.items():
    if not any(c["name"] == "SERVO_VAL" and c["channel"] == ch and c["value"] == v for c in cmds):
        bad.append(f"channel {ch}: the move's end value {v} never arrived")
for ch in (0, 3):
    if last.get(ch) != 500: bad.append(f"channel {ch}: last SERVO_VAL {last.get(ch)}, want the park pose 500")
# Budget: value writes (after the enables, before the safe state), over their span on the
# board's clock: at most span x budget + one write (the token bucket's burst) + one write
# (receive timestamps jitter). Coalescing shows as fewer value bytes than asked for.
vw = [w for w in writes if w["bytes"] and w["bytes"][0] in (2, 3)]
vbytes = sum(len(w["bytes"]) for w in vw)
span = vw[-1]["t"] - vw[0]["t"] if vw else 0
limit = span * budget + 2 * 20
if vbytes > limit: bad.append(f"{vbytes} value bytes in {span:.2f} s > {limit:.0f} ({budget:.0f} B/s)")
if lcd == 0: bad.append("no LCD_TEXT: the board's LCD should show the run's progress")
nvals = sum(1 for c in cmds if c["name"] == "SERVO_VAL")
print(f"writes {len(writes)}, SERVO_VAL {nvals}, value bytes {vbytes} in {span:.2f} s "
      f"({vbytes / span if span else 0:.0f} B/s, limit {limit:.0f}), via {sorted(set(w['via'] for w in vw))}, "
      f"last {last}, trace {tr}")
for b in bad: print("BAD:", b)
sys.exit(1 if bad else 0)
EOF
finish
if [ -z "$fails" ]; then
  result blecontrol PASS "rig scan on hci1 lists $BOARD_NAME $ADDR; rig play (blecontrol on hci1, ch 0 and 3, $BUDGET B/s) exit 0; INIT first and alone, enables before values, writes <= 20 B of whole commands, values 0..1000, the move's end pose then the park pose arrived (last = trace), within budget, AcquireWrite (rig log), FF 01 07 logged, progress on the LCD, only disables after the safe state"
else
  result blecontrol FAIL "${fails#; }"
fi
exit 0
