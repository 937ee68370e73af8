#!/usr/bin/env bash
# Takes every figure in docs/performance.md, with the machine and its load, into one log.
# Usage: Benchmarks/figures.sh [LOGFILE]   (from the package root; about 45 minutes)
set -euo pipefail
cd "$(dirname "$0")/.."
log=${1:-/dev/stdout}
machine() {
    echo "## $(date -u +%Y-%m-%dT%H:%M:%SZ) $(uptime | sed 's/.*load/load/')"
    vmstat 1 2 | tail -1 | awk '{print "## vmstat: us " $13 " sy " $14 " id " $15 " st " $17}'
}
{
    echo "## nproc $(nproc), kernel $(uname -r) ($(uname -v)), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
    echo "## $(dmesg 2>/dev/null | grep -m1 'Dynamic Preempt' | sed 's/^\[[^]]*\] //' || true)"
    swift build -c release 2>&1 | tail -1
    for load in 2 0; do
        machine
        echo "\$ rig bench loop --rate 200 --seconds 60 --load $load --compare python"
        .build/release/rig bench loop --rate 200 --seconds 60 --load "$load" --compare python
        .build/release/rig bench loop --rate 200 --seconds 60 --load "$load" --compare python --json
    done
    for load in 0 2; do
        machine
        echo "\$ rig bench loop --rate 200 --seconds 20 --load $load --compare floor --pairs 5"
        .build/release/rig bench loop --rate 200 --seconds 20 --load "$load" --compare floor --pairs 5 --json
    done
    machine
    echo "\$ rig bench startup --runs 20"
    .build/release/rig bench startup --runs 20 --json
    for program in "" rigs/move-pca9685.json rigs/move.json rigs/pano.json rigs/timelapse.json; do
        echo "\$ rig bench pca9685 $program"
        .build/release/rig bench pca9685 $program
    done
    echo "\$ rig bench moves rigs/pano.json"
    .build/release/rig bench moves rigs/pano.json --json
    echo "\$ rig bench blecontrol Benchmarks/programs/blecontrol-8ch.json"
    .build/release/rig bench blecontrol Benchmarks/programs/blecontrol-8ch.json
    python3 Benchmarks/programs/make_large.py keyframes 1000000 > /tmp/rig-keyframes-1m.json
    python3 Benchmarks/programs/make_large.py panorama > /tmp/rig-panorama-10k.json
    machine
    echo "\$ rig check /tmp/rig-keyframes-1m.json; rig plan /tmp/rig-panorama-10k.json"
    /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB max RSS" .build/release/rig check /tmp/rig-keyframes-1m.json 2>&1 | tail -1
    /usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB max RSS" .build/release/rig plan /tmp/rig-panorama-10k.json 2>&1 >/dev/null | tail -1
    echo "\$ time rig check Benchmarks/programs/timelapse-10000.json"
    for _ in 1 2 3; do /usr/bin/time -f "%e s wall, %U s user" .build/release/rig check Benchmarks/programs/timelapse-10000.json > /dev/null; done 2>&1
    machine
    echo "\$ scripts/virtual-camera rig bench camera --pairs 5 --shots 12"
    scripts/virtual-camera .build/release/rig bench camera --pairs 5 --shots 12 || echo "(no virtual camera: scripts/setup --test)"
    echo "\$ rig bench ramp; rig bench ramp --seed 2"
    .build/release/rig bench ramp --json
    .build/release/rig bench ramp --seed 2 --json
    machine
    echo "\$ rig bench serve --clients 1,50,200 --seconds 8"
    .build/release/rig bench serve --clients 1,50,200 --seconds 8
    echo "\$ rig bench settle; rig bench calibrate (deadband 0.4, 0, 1)"
    .build/release/rig bench settle --json
    for deadband in 0.4 0 1; do .build/release/rig bench calibrate --deadband "$deadband" --json; done
    machine
    echo "\$ rig bench liveview"
    .build/release/rig bench liveview --json
    machine
    echo "\$ rig bench group --rigs 4; rig bench group --rigs 4 --link lossy"
    .build/release/rig bench group --rigs 4 --json
    .build/release/rig bench group --rigs 4 --link lossy --json
    machine
    echo "\$ (cd Benchmarks && swift package benchmark)"
    (cd Benchmarks && swift package benchmark --no-progress --format markdown --path stdout 2>&1 | grep -v '^\[')
    echo "\$ (cd Benchmarks && swift package benchmark thresholds check)"
    status=0; (cd Benchmarks && swift package benchmark thresholds check --no-progress > /tmp/rig-thresholds.log 2>&1) || status=$?
    tail -1 /tmp/rig-thresholds.log; echo "exit status $status"
    machine
} > "$log" 2>&1
