#!/usr/bin/env python3
"""Sets the kernel's NTP synchronisation state (adjtimex ADJ_STATUS), for rig doctor's clock
check in the throwaway VM: `ntp_status.py sync` clears STA_UNSYNC (and sets a small maximum
error), `ntp_status.py unsync` sets it. Prints adjtimex's return state."""
import ctypes, sys

class Timex(ctypes.Structure):
    _fields_ = [("modes", ctypes.c_uint), ("offset", ctypes.c_long), ("freq", ctypes.c_long),
                ("maxerror", ctypes.c_long), ("esterror", ctypes.c_long), ("status", ctypes.c_int),
                ("constant", ctypes.c_long), ("precision", ctypes.c_long), ("tolerance", ctypes.c_long),
                ("tv_sec", ctypes.c_long), ("tv_usec", ctypes.c_long), ("tick", ctypes.c_long),
                ("ppsfreq", ctypes.c_long), ("jitter", ctypes.c_long), ("shift", ctypes.c_int),
                ("stabil", ctypes.c_long), ("jitcnt", ctypes.c_long), ("calcnt", ctypes.c_long),
                ("errcnt", ctypes.c_long), ("stbcnt", ctypes.c_long), ("tai", ctypes.c_int),
                ("pad", ctypes.c_int * 11)]

ADJ_MAXERROR, ADJ_ESTERROR, ADJ_STATUS, STA_UNSYNC = 0x0004, 0x0008, 0x0010, 0x0040
libc = ctypes.CDLL(None, use_errno=True)
tx = Timex()
tx.modes = ADJ_STATUS | ADJ_MAXERROR | ADJ_ESTERROR
tx.status = 0 if sys.argv[1] == "sync" else STA_UNSYNC
tx.maxerror, tx.esterror = 1000, 100
state = libc.adjtimex(ctypes.byref(tx))
if state < 0:
    sys.exit(f"adjtimex: errno {ctypes.get_errno()}")
print("adjtimex state", state, "status", hex(tx.status))
