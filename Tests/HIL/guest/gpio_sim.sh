# Sourced: makes (once per boot) a gpio-sim chip "hil" with 32 lines, line n named GPIOn
# (the Raspberry Pi's BCM numbering: buttons on 13 and 10, LEDs on 21 and 7 as in Cascable's
# proof of concept). Sets SIM_CHIP (gpiochipN), SIM_DEV, SIM_SYS (the sysfs directory whose
# sim_gpioN/pull drives an input and sim_gpioN/value shows an output).
gpio_sim_up() {
  _c=/sys/kernel/config/gpio-sim/hil
  if [ ! -d "$_c" ]; then
    modprobe gpio-sim || { note "modprobe gpio-sim failed"; return 1; }
    # configfs is a module in Debian's kernel: mounted only once gpio-sim pulled it in.
    grep -q ' /sys/kernel/config ' /proc/mounts || mount -t configfs none /sys/kernel/config || return 1
    mkdir "$_c" "$_c/bank0" || return 1
    echo 32 > "$_c/bank0/num_lines"
    echo hil-gpio > "$_c/bank0/label"
    _i=0
    while [ $_i -lt 32 ]; do mkdir "$_c/bank0/line$_i"; echo "GPIO$_i" > "$_c/bank0/line$_i/name"; _i=$((_i + 1)); done
    echo 1 > "$_c/live" || return 1
  fi
  SIM_CHIP=$(cat "$_c/bank0/chip_name"); SIM_DEV=$(cat "$_c/dev_name")
  SIM_SYS=/sys/devices/platform/$SIM_DEV/$SIM_CHIP
  wait_for 10 test -e "/dev/$SIM_CHIP" || return 1
  export SIM_CHIP SIM_DEV SIM_SYS
}
sim_pull() { echo "$2" > "$SIM_SYS/sim_gpio$1/pull"; }
