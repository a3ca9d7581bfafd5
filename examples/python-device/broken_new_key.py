#!/usr/bin/env python3
"""A deliberately broken outside device: it mints a new idempotency key for every resend (`KEY~ATTEMPT`), the
offline-SDK bug of docs/LESSONS.md's "Idempotency keys are reused on every resend". After a lost reply the server
cannot tell the resend from a new edit and applies it again: the run fails exactly-once, as that lesson predicts.
Everything else is device.py's.
"""
from device import Device, main


class NewKeyPerAttempt(Device):
    def wire_key(self, key, attempt):
        return key if attempt == 1 else f"{key}~{attempt}"  # the bug: the resend is a new op to the server

    def op_key(self, wire_key):
        return wire_key.split("~")[0]


if __name__ == "__main__":
    main(NewKeyPerAttempt)
