#!/usr/bin/env bash
# Prepares the hardware-in-the-loop VM on Debian 12: host packages, the Debian kernel of
# bookworm's default ABI, the out-of-tree gpio-sim module (Debian does not build it), a
# pruned module tree and a small initramfs that mounts the host's root read-only over
# virtio-9p with a tmpfs overlay. Everything lands in $HIL_CACHE/$KV and is reused while
# its stamp (kernel version + a hash of this script) matches.
#
#   Tests/HIL/setup-vm.sh            prints the cache directory on its last line
#
# Called by Tests/HIL/run; usable alone. Needs root (or sudo) for apt-get.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$HERE/../.." && pwd)
HIL_CACHE=${HIL_CACHE:-$ROOT/.build-hil}
SRCV=6.1
export DEBIAN_FRONTEND=noninteractive

log() { echo "hil-setup: $*" >&2; }
as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# Packages: qemu and the userland the checks run inside the guest (the guest's root is the
# host's), gcc/make/headers only to build gpio-sim. python3-dbus/python3-gi: the BlueZ checks.
packages=(qemu-system-x86 busybox-static cpio kmod bluez bluez-test-tools i2c-tools gpiod dbus
          python3 python3-dbus python3-gi gcc make xz-utils)

apt_updated=0
apt_update() { [ $apt_updated -eq 1 ] && return 0; log "apt-get update"; as_root apt-get update -qq; apt_updated=1; }

# The kernel ABI bookworm's linux-image-amd64 depends on now, e.g. 6.1.0-56-amd64.
kernel_abi() {
  apt-cache depends linux-image-amd64 2>/dev/null | awk '/Depends: linux-image-[0-9]/{sub("linux-image-","",$2); print $2; exit}'
}
KV=${HIL_KERNEL:-$(kernel_abi || true)}
if [ -z "$KV" ]; then apt_update; KV=$(kernel_abi || true); fi
[ -n "$KV" ] || { log "cannot find bookworm's default kernel (apt-cache depends linux-image-amd64)"; exit 1; }
packages+=("linux-headers-$KV")

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  apt_update
  log "installing ${missing[*]}"
  as_root apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

C=$HIL_CACHE/$KV
STAMP="$KV $(cat "$0" | sha256sum | cut -c1-16)"
if [ -f "$C/stamp" ] && [ "$(cat "$C/stamp")" = "$STAMP" ] && [ -f "$C/vmlinuz" ] && [ -f "$C/initrd.img" ]; then
  log "cached: $C"
  echo "$C"
  exit 0
fi

log "building the VM for kernel $KV in $C"
rm -rf "$C"; mkdir -p "$C/dl"
W=$(mktemp -d "$HIL_CACHE/work.XXXXXX"); trap 'rm -rf "$W"' EXIT
(
  cd "$C/dl"
  apt-get download "linux-image-$KV" "linux-source-$SRCV" 2>/dev/null || { apt_update; apt-get download "linux-image-$KV" "linux-source-$SRCV"; }
)
dpkg -x "$C"/dl/linux-image-"${KV}"_*.deb "$W/kroot"
cp "$W/kroot/boot/vmlinuz-$KV" "$C/vmlinuz"

# gpio-sim and irq_sim as out-of-tree modules (CONFIG_GPIO_SIM and CONFIG_IRQ_SIM are off in
# Debian's kernel). irq_sim is built in elsewhere only; it needs a license tag and one call
# that is not exported (handle_simple_irq(irq_to_desc()) → generic_handle_irq()).
mkdir "$W/gpiomod"
dpkg-deb --fsys-tarfile "$C"/dl/linux-source-"${SRCV}"_*.deb | tar -xO "./usr/src/linux-source-$SRCV.tar.xz" | \
  tar -xJ -C "$W/gpiomod" --strip-components=3 --wildcards \
    '*/drivers/gpio/gpio-sim.c' '*/drivers/gpio/gpiolib.h' '*/kernel/irq/irq_sim.c'
sed -i 's/handle_simple_irq(irq_to_desc(irqnum));/generic_handle_irq(irqnum);/; 1a #include <linux/module.h>' "$W/gpiomod/irq_sim.c"
echo 'MODULE_LICENSE("GPL");' >> "$W/gpiomod/irq_sim.c"
printf 'obj-m += irq_sim_oot.o gpio-sim.o\nirq_sim_oot-y := irq_sim.o\n' > "$W/gpiomod/Makefile"
make -s -C "/usr/src/linux-headers-$KV" M="$W/gpiomod" modules >&2
mkdir -p "$W/kroot/lib/modules/$KV/extra"
cp "$W"/gpiomod/*.ko "$W/kroot/lib/modules/$KV/extra/"

# Pruned module tree: the subsystems the checks touch (bluetooth loads crypto modules at run time).
M=$C/modules/lib/modules/$KV
mkdir -p "$M/kernel"
for d in crypto arch/x86/crypto lib net/bluetooth net/rfkill net/9p drivers/bluetooth drivers/i2c drivers/input \
         drivers/gpio drivers/virtio fs/9p fs/netfs fs/fscache fs/overlayfs fs/configfs; do
  [ -d "$W/kroot/lib/modules/$KV/kernel/$d" ] || continue
  mkdir -p "$M/kernel/$(dirname "$d")"
  cp -r "$W/kroot/lib/modules/$KV/kernel/$d" "$M/kernel/$d"
done
cp -r "$W/kroot/lib/modules/$KV/extra" "$M/"
cp "$W"/kroot/lib/modules/"$KV"/modules.{order,builtin,builtin.modinfo} "$M/"
depmod -b "$C/modules" "$KV"
depmod -b "$W/kroot" "$KV"

# Initramfs: static busybox + the modules that mount the host's root over virtio-9p + overlay,
# then switch_root into it and run the stage-2 script named on the kernel command line.
I=$W/initrd
mkdir -p "$I"/{bin,proc,sys,dev,newroot,lower,rw,lib/modules}
cp /bin/busybox "$I/bin/"
for m in netfs fscache 9pnet 9p virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci 9pnet_virtio overlay; do
  f=$(modprobe -d "$W/kroot" -S "$KV" --show-depends "$m" | awk '$1 == "insmod" {print $2}' | tail -1)
  [ -n "$f" ] || continue     # built in
  cp "$f" "$I/lib/modules/"; basename "$f" >> "$I/lib/modules/order"
done
cat > "$I/init" <<'EOI'
#!/bin/busybox sh
B=/bin/busybox
$B mount -t proc proc /proc; $B mount -t sysfs sys /sys; $B mount -t devtmpfs dev /dev
for m in $($B cat /lib/modules/order); do $B insmod /lib/modules/$m || echo "hil-init: insmod $m failed"; done
$B mount -t 9p -o trans=virtio,version=9p2000.L,ro,cache=loose,msize=512000 hostroot /lower || { echo "hil-init: 9p mount failed"; $B poweroff -f; }
$B mount -t tmpfs -o size=2g tmpfs /rw; $B mkdir -p /rw/upper /rw/work
$B mount -t overlay overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work /newroot || { echo "hil-init: overlay failed"; $B poweroff -f; }
for d in proc sys dev; do $B mount --move /$d /newroot/$d; done
S2=$($B sed -n 's/.*hil.stage2=\([^ ]*\).*/\1/p' /newroot/proc/cmdline)
exec $B switch_root /newroot /bin/sh "$S2"
EOI
chmod +x "$I/init"
(cd "$I" && find . | cpio -o -H newc 2>/dev/null | gzip -1) > "$C/initrd.img"
rm -rf "$C/dl"          # the .debs are not needed any more (≈ 200 MB)
echo "$STAMP" > "$C/stamp"
log "ready: $(du -sh "$C" | cut -f1) in $C"
echo "$C"
