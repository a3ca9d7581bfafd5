#!/usr/bin/env python3
"""An outside device whose background passes are slow: it waits a second before each page, as a large first page
on a poor network would. The platform's execution limit cuts it off (docs/DEVICE-CONTRACT.md, "Execution limits"):
device.py looks for `expire` at its safe points and ends the pass cut off; with --ignore-expire it never looks, so
the lab side kills it after the grace (SIGKILL, as iOS kills a task whose expiration handler does not finish) and
starts it again. Only its background passes (push, opportunistic, periodic) are slow, so the heal's passes run at
full speed and a run still ends quickly.
"""
import sys
import time

from device import Device, main

SLOW_SEC = 1.0
BACKGROUND = ("push", "opportunistic", "periodic")
IGNORE_EXPIRE = "--ignore-expire" in sys.argv


class Slow(Device):
    def before_page(self, trigger):
        if trigger not in BACKGROUND:
            return
        end = time.monotonic() + SLOW_SEC
        while time.monotonic() < end and not self.expired():
            time.sleep(0.01)

    def expired(self):
        return False if IGNORE_EXPIRE else super().expired()


if __name__ == "__main__":
    main(Slow)
