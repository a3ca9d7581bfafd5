#!/usr/bin/env python3
"""A hostile outside device, to show that the lab ends a run cleanly, naming what the program did
(docs/DEVICE-CONTRACT.md, "When a program breaks the contract"). --misbehave picks how:

  crash-on-start  exits with status 7 before it says ready
  never-ready     says nothing, reads nothing, never exits
  garbage         answers like device.py, then writes a line that is not JSON when the first pass comes
  bad-event       writes an op.saved event without its key when the first edit comes
  silent          says ready, then never answers a request
  bad-protocol    keeps the contract but speaks PROTOCOL.md wrongly: every pull carries a field "colour"; the
                  server refuses them (no contract break: the checks judge what its database ends with, and the
                  report's notes name the refusals)
"""
import sys
import time

from device import Device, main, say

mode = sys.argv[sys.argv.index("--misbehave") + 1] if "--misbehave" in sys.argv else "garbage"
if mode == "crash-on-start":
    sys.exit(7)
if mode == "never-ready":
    while True:
        time.sleep(60)


class Hostile(Device):
    def call(self, kind, body):
        if mode == "bad-protocol" and kind == "pull":
            body = dict(body, colour="blue")
        return super().call(kind, body)

    def run_pass(self, msg):
        if mode == "garbage":
            sys.stdout.write("<html>this is not a JSON line</html>\n")
            sys.stdout.flush()
        if mode == "silent":
            while True:
                time.sleep(60)
        return super().run_pass(msg)

    def edit(self, msg):
        if mode == "bad-event":
            say({"type": "event", "event": "op.saved", "fields": {"draft": msg["draft"]}})
        if mode == "silent":
            while True:
                time.sleep(60)
        return super().edit(msg)


if __name__ == "__main__":
    main(Hostile)
