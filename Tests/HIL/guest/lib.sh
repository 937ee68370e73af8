# Sourced by every check_*.sh in the guest (POSIX sh). Also `sh lib.sh stop-bluetooth`.
# Environment from init.sh: RIG (the rig binary built on the host), GUEST (this directory),
# HIL_OUT (the writable results share), HIL_CHECK (the check's name).
PY=/usr/bin/python3          # the real path: a pyenv-style shim costs seconds under TCG
W=/tmp/hil-${HIL_CHECK:-x}; mkdir -p "$W"
export XDG_STATE_HOME=$W/state  # the PCA9685 driver's pose file: per check, never /var/lib/rig

up() { cut -d' ' -f1 /proc/uptime; }
note() { echo "[$(up)] $*"; }

# result NAME PASS|FAIL|SKIP "detail": one line per sub-check in results.txt.
result() {
  echo "$2 $1: $3" >> "$HIL_OUT/results.txt"
  note "RESULT $2 $1: $3"
}

# wait_for SECONDS COMMAND...: poll until COMMAND succeeds, for at most SECONDS of uptime
# (a deadline, not a count: under TCG starting each poll's process takes a while).
wait_for() {
  _end=$(awk -v s="$1" '{printf "%d", $1 + s + 1}' /proc/uptime); shift
  while :; do
    "$@" >/dev/null 2>&1 && return 0
    [ "$(cut -d. -f1 /proc/uptime)" -lt "$_end" ] || return 1
    sleep 0.1
  done
}

# Keep a copy of an artifact with the logs.
keep() { for f in "$@"; do [ -f "$f" ] && cp "$f" "$HIL_OUT/logs/${HIL_CHECK}-$(basename "$f")"; done; return 0; }

# --- features that other branches are adding -------------------------------------------
rig_has_trigger() { "$RIG" play --help 2>&1 | grep -Eq "(^|[^a-z])$1([^a-z]|$)"; }
rig_has_command() { "$RIG" --help 2>&1 | grep -Eq "^ +$1( |$)"; }  # listed under SUBCOMMANDS

# --- the Bluetooth stack: btvirt (two linked LE controllers), system D-Bus, bluetoothd --
# Started once per boot and shared by the Bluetooth checks; `bt_up` is idempotent.
BT_STATE=/run/hil-bt
bt_up() {
  if [ -f $BT_STATE/up ]; then return 0; fi
  mkdir -p $BT_STATE /run/dbus /var/lib/bluetooth
  modprobe bluetooth && modprobe hci_vhci || { note "modprobe bluetooth/hci_vhci failed"; return 1; }
  if [ ! -S /run/dbus/system_bus_socket ]; then
    dbus-daemon --system --fork --print-pid > $BT_STATE/dbus.pid || { note "dbus-daemon failed"; return 1; }
  fi
  # The kernel initialises each new controller with HCI Reset and gives up after 2 s; under
  # TCG on a busy host btvirt sometimes answers later ("hci0: Opcode 0x0c03 failed: -110")
  # and that controller never reaches the management interface. Then start btvirt again.
  _ok=0
  for _try in 1 2 3 4; do
    btvirt -l2 > $BT_STATE/btvirt.log 2>&1 &
    echo $! > $BT_STATE/btvirt.pid
    if wait_for 30 sh -c 'test -e /sys/class/bluetooth/hci0 && test -e /sys/class/bluetooth/hci1' &&
       wait_for 30 sh -c '[ "$(timeout 20 btmgmt info 2>/dev/null | grep -c "Primary controller")" -ge 2 ]'; then
      _ok=1; break
    fi
    note "btvirt try $_try: the controllers did not both initialise; restarting btvirt"
    timeout 20 btmgmt info; dmesg | grep -i 'bluetooth: hci' | tail -4
    kill "$(cat $BT_STATE/btvirt.pid)"; wait "$(cat $BT_STATE/btvirt.pid)" 2>/dev/null
    wait_for 30 sh -c '! test -e /sys/class/bluetooth/hci0 && ! test -e /sys/class/bluetooth/hci1'
  done
  [ $_ok = 1 ] || { note "btvirt: no two working controllers after 4 tries"; cat $BT_STATE/btvirt.log; return 1; }
  /usr/libexec/bluetooth/bluetoothd -n -E > $BT_STATE/bluetoothd.log 2>&1 &
  echo $! > $BT_STATE/bluetoothd.pid
  # bluetoothd owns org.bluez and has set up both adapters (Adapter1 answers on each).
  wait_for 90 sh -c '[ -n "$(busctl --system get-property org.bluez /org/bluez/hci0 org.bluez.Adapter1 Address)" ] &&
                     [ -n "$(busctl --system get-property org.bluez /org/bluez/hci1 org.bluez.Adapter1 Address)" ]' || {
    note "bluetoothd did not set up hci0 and hci1"; busctl --system tree org.bluez; tail -30 $BT_STATE/bluetoothd.log
    btmgmt info; ls -l /sys/class/bluetooth/; dmesg | grep -iE 'blue|hci' | tail -20; return 1; }
  for a in hci0 hci1; do
    busctl --system set-property org.bluez /org/bluez/$a org.bluez.Adapter1 Powered b true || true
  done
  touch $BT_STATE/up
  note "bluetooth up: $(ls /sys/class/bluetooth | tr '\n' ' ')"
}
bt_address() { busctl --system get-property org.bluez "/org/bluez/$1" org.bluez.Adapter1 Address | awk '{print $2}' | tr -d '"'; }
bt_logs() { for f in bluetoothd btvirt; do echo "--- $f.log (tail)"; tail -${1:-40} $BT_STATE/$f.log 2>/dev/null; done; }
# bt_nudge hciN: switch the advertising set of the peripheral on hciN off and on again (raw
# HCI LE Set Extended Advertising Enable, handle 1: bluetoothd's first instance). btvirt
# reports a set only when it is enabled or a scan starts, and the kernel drops a report
# that comes before its discovery is under way: this is the radio's next advertising event
# for a central that is already scanning. See docs/hil.md ("Discovery against btvirt").
bt_nudge() {
  for _en in 00 01; do timeout 20 hcitool -i "$1" cmd 0x08 0x0039 $_en 01 01 00 00 00 >/dev/null 2>&1; done
  return 0
}
bt_down() {
  for p in bluetoothd btvirt dbus; do [ -f $BT_STATE/$p.pid ] && kill "$(cat $BT_STATE/$p.pid)" 2>/dev/null; done
  rm -f $BT_STATE/up
}

if [ "${1:-}" = stop-bluetooth ]; then bt_down; fi
if [ "${1:-}" = nudge ]; then bt_nudge "$2"; fi
