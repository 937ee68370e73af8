#!/bin/sh
# Stage 2: PID 1 in the guest, started by the initramfs after it switched root to
# overlay(host / over 9p read-only, tmpfs). Runs every check_*.sh in CHECKS order, each with
# a time limit, and powers off. Results and logs go to the writable 9p share (hil.out).
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8
arg() { sed -n "s/.*[[:space:]]$1=\([^[:space:]]*\).*/\1/p" /proc/cmdline; }
HIL_DIR=$(arg hil.dir); HIL_OUT=$(arg hil.out); RIG=$(arg hil.rig); HIL_ONLY=$(arg hil.only)
HIL_CHECK_TIMEOUT=$(arg hil.check_timeout); HIL_CHECK_TIMEOUT=${HIL_CHECK_TIMEOUT:-300}
GUEST=$(cd "$(dirname "$0")" && pwd)
export HIL_DIR HIL_OUT RIG GUEST HIL_CHECK_TIMEOUT

K=$(uname -r)
mkdir -p /lib/modules/$K && mount --bind "$HIL_DIR/modules/lib/modules/$K" /lib/modules/$K
# A fresh /run and /tmp for the guest; the host's stay reachable (a CI clone or the rig
# binary may live under the host's /tmp), and every path given to us is remapped.
mkdir -p /.host-tmp /.host-run
mount --bind /tmp /.host-tmp
mount --bind /run /.host-run
mount -t tmpfs tmpfs /run
mount -t tmpfs tmpfs /tmp
remap() { case "$1" in /tmp/*) echo "/.host-tmp/${1#/tmp/}" ;; /run/*) echo "/.host-run/${1#/run/}" ;; *) echo "$1" ;; esac; }
HIL_DIR=$(remap "$HIL_DIR"); HIL_OUT=$(remap "$HIL_OUT"); RIG=$(remap "$RIG"); GUEST=$(remap "$GUEST")
export HIL_DIR HIL_OUT RIG GUEST
mount -t debugfs none /sys/kernel/debug
modprobe configfs 2>/dev/null; mount -t configfs none /sys/kernel/config
mkdir -p /dev/pts /dev/shm; mount -t devpts devpts /dev/pts; mount -t tmpfs tmpfs /dev/shm
mount -t 9p -o trans=virtio,version=9p2000.L,cache=none out "$HIL_OUT" || { echo "HIL: cannot mount the results share"; /bin/busybox poweroff -f; }
hostname hil-guest
mkdir -p "$HIL_OUT/logs"
: > "$HIL_OUT/results.txt"
echo "HIL: guest up at $(cut -d' ' -f1 /proc/uptime)s, kernel $K, rig $RIG"

# The order matters only for speed: the Bluetooth stack is started once and shared.
CHECKS=${HIL_ONLY:-"pca9685 gamepad gpio_sim gpio_buttons gpio_camera bluetooth bui blecontrol"}
for c in $(echo "$CHECKS" | tr ',' ' '); do
  s=$GUEST/check_$c.sh
  if [ ! -f "$s" ]; then echo "FAIL $c: no such check ($s)" >> "$HIL_OUT/results.txt"; continue; fi
  before=$(wc -l < "$HIL_OUT/results.txt")
  echo "HIL: --- $c (uptime $(cut -d' ' -f1 /proc/uptime)s)"
  HIL_CHECK=$c timeout -k 10 "$HIL_CHECK_TIMEOUT" sh "$s" > "$HIL_OUT/logs/$c.log" 2>&1
  rc=$?
  after=$(wc -l < "$HIL_OUT/results.txt")
  if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
    echo "FAIL $c: timed out after ${HIL_CHECK_TIMEOUT}s (logs/$c.log)" >> "$HIL_OUT/results.txt"
  elif [ "$after" = "$before" ]; then
    echo "FAIL $c: the check reported nothing (exit $rc; logs/$c.log)" >> "$HIL_OUT/results.txt"
  fi
  sed -n "$((before + 1)),\$p" "$HIL_OUT/results.txt" | sed 's/^/HIL:   /'
done
sh "$GUEST/lib.sh" stop-bluetooth >/dev/null 2>&1
echo "HIL: checks done at uptime $(cut -d' ' -f1 /proc/uptime)s"
echo done > "$HIL_OUT/done"
sync
/bin/busybox poweroff -f
