#!/usr/bin/env python3
"""A deliberately broken outside device: it trusts the push. It sends its edits but never pulls from its cursor,
as if the hint had brought the data (docs/LESSONS.md, "Push is a hint"). Nothing it saved is lost, but what the
others wrote never reaches it: the run fails convergence, open-reaches-head and quiesce-settles, as that lesson
predicts. Everything else is device.py's.
"""
from device import Device, main


class NoPull(Device):
    def pull(self, pass_id, trigger):
        return 0, "completed", False  # the bug: "the push told me", so no page is asked for


if __name__ == "__main__":
    main(NoPull)
