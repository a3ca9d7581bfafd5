#!/usr/bin/env python3
"""A SyncLab device written outside the lab, from docs/PROTOCOL.md and docs/DEVICE-CONTRACT.md alone.

The lab keeps the platform (iOS/Android/web scheduling, the broker's hints, the user's taps) and tells this
program, one JSON line at a time on stdin, when to save an edit and when to run a pass. This program owns the rest:
its CURVE connection to the server, its SQLite file (the schema the lab's checks read), its outbox with
idempotency keys made once, and the pass: send a bounded batch, then pull pages from the durable cursor.

Run by the lab: devices: [{ id: "p1", platform: "android", program: ["python3", "examples/python-device/device.py"] }]
"""
import argparse
import ctypes
import json
import os
import random
import select
import signal
import sqlite3
import sys
import time

import zmq

SCHEMA = """
CREATE TABLE IF NOT EXISTS ops(
    key TEXT PRIMARY KEY, local_seq INTEGER NOT NULL UNIQUE, draft TEXT NOT NULL, action TEXT NOT NULL,
    base INTEGER NOT NULL, title TEXT, body TEXT, status TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0,
    next_attempt_sim REAL NOT NULL DEFAULT 0, last_error TEXT, result_seq INTEGER, saved_wall INTEGER NOT NULL,
    completed_wall INTEGER);
CREATE TABLE IF NOT EXISTS drafts(id TEXT PRIMARY KEY, title TEXT, body TEXT, version INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS shadow(id TEXT PRIMARY KEY, title TEXT, body TEXT, version INTEGER NOT NULL,
    deleted INTEGER NOT NULL DEFAULT 0);
CREATE TABLE IF NOT EXISTS state(key TEXT PRIMARY KEY, value);
CREATE TABLE IF NOT EXISTS opens(sim REAL NOT NULL, data_age_sec REAL);
"""
SETTLED = ("completed", "needsAttention")
BACKOFF_BASE_SEC, BACKOFF_CAP_SEC = 30.0, 3600.0


def die_with_the_lab():
    """Ask the kernel for SIGKILL when the lab side dies (kill -9 of the device kills this program too)."""
    parent = os.environ.get("SYNCLAB_PARENT_PID")
    if not parent:
        return
    try:
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):
        pass
    if os.getppid() != int(parent):
        sys.exit(3)


def frames(kind, body):
    return [f"SL1 {kind}".encode(), json.dumps(body, separators=(",", ":"), sort_keys=True).encode()]


class Device:
    def __init__(self, args):
        self.args = args
        self.token = args.token or open(args.token_file).read().split("\n")[0]
        self.db = sqlite3.connect(args.db, isolation_level=None)
        self.db.execute("PRAGMA journal_mode=WAL")
        self.db.executescript(SCHEMA)
        if self.state("install") is None:
            self.put_state("install", "%08x" % random.SystemRandom().getrandbits(32))
            self.put_state("cursor", 0)
        self.install = self.state("install")
        self.context = zmq.Context()
        self.server = None
        self.session = False
        self.online = True
        self.req = 0
        self.head = int(self.state("head") or 0)
        self.lab = None  # the lab side's lines (main sets it): a pass looks there for `expire`
        self.pass_id, self.expiring = None, False

    # -- durable state ------------------------------------------------------------------------------------------
    def state(self, key):
        row = self.db.execute("SELECT value FROM state WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def put_state(self, key, value):
        self.db.execute("INSERT OR REPLACE INTO state(key, value) VALUES (?, ?)", (key, value))

    @property
    def cursor(self):
        return int(self.state("cursor") or 0)

    def pending(self):
        return self.db.execute("SELECT COUNT(*) FROM ops WHERE status NOT IN (?, ?)", SETTLED).fetchone()[0]

    def now_sim(self):
        return (time.time() * 1e6 - self.args.epoch) / 1e6 * self.args.time_scale

    def rebuild(self, draft, seen=None):
        """The replica of one draft: the server's state (shadow, the changes up to `seen`: the cursor, or the end of
        the page being applied) with every unsettled op of it replayed on top, and every acknowledged one whose
        change is above `seen`: without those the user's own write vanishes until its page comes (read your
        writes)."""
        seen = self.cursor if seen is None else seen
        row = self.db.execute("SELECT title, body, version, deleted FROM shadow WHERE id = ?", (draft,)).fetchone()
        title, body, version, deleted = row if row else (None, None, 0, 1)
        exists = row is not None
        for action, t, b in self.db.execute(
                "SELECT action, title, body FROM ops WHERE draft = ? AND (status NOT IN (?, ?) "
                "OR (status = 'completed' AND result_seq > ?)) ORDER BY local_seq",
                (draft,) + SETTLED + (seen,)):
            version += 1  # one version per op replayed on the shadow, as the lab's ledger counts (monotonic reads)
            if action == "delete":
                deleted = 1
            else:  # a field the op leaves out keeps its value; an edit of a deleted draft brings it back
                title = t if t is not None else title
                body = b if b is not None else body
                deleted, exists = 0, True
        if not exists:
            self.db.execute("DELETE FROM drafts WHERE id = ?", (draft,))
        else:
            self.db.execute("INSERT OR REPLACE INTO drafts(id, title, body, version, deleted) VALUES (?,?,?,?,?)",
                            (draft, title, body, version, deleted))

    # -- the lab's requests -------------------------------------------------------------------------------------
    def edit(self, msg):
        """Intent first: the op (its key made here, once) and the replica commit together before the answer."""
        self.db.execute("BEGIN IMMEDIATE")
        seq = self.db.execute("SELECT COALESCE(MAX(local_seq), 0) + 1 FROM ops").fetchone()[0]
        key = f"{self.args.id}-{self.install}-{seq}"
        row = self.db.execute("SELECT title, body, deleted, version FROM drafts WHERE id = ?",
                              (msg["draft"],)).fetchone()
        base = 0 if msg["action"] == "create" or row is None else row[3]
        # What the user read of the draft as the edit began: the lab's read-your-writes and monotonic-reads judge it.
        saw = None if row is None else {"title": row[0], "body": row[1], "deleted": bool(row[2]), "version": row[3]}
        self.db.execute("INSERT INTO ops(key, local_seq, draft, action, base, title, body, status, saved_wall) "
                        "VALUES (?,?,?,?,?,?,?, 'savedOnDevice', ?)",
                        (key, seq, msg["draft"], msg["action"], base, msg.get("title"), msg.get("body"),
                         int(time.time() * 1e6)))
        self.rebuild(msg["draft"])
        self.db.execute("COMMIT")
        event("op.saved", key=key, draft=msg["draft"], action=msg["action"], account=self.args.account, base=base)
        return {"key": key, "saw": saw}

    def network(self, msg):
        self.online = msg["online"]
        if not self.online:
            self.disconnect()  # what was in flight has an unknown outcome: those ops stay confirmationDelayed
        return {}

    def status(self, _msg):
        return {"cursor": self.cursor, "head": max(self.head, self.cursor), "pending": self.pending()}

    # -- the server connection ----------------------------------------------------------------------------------
    def connect(self):
        s = self.context.socket(zmq.DEALER)
        s.setsockopt(zmq.LINGER, 0)
        s.setsockopt(zmq.MAXMSGSIZE, 4 << 20)
        if self.args.key_file:
            secret = open(self.args.key_file).read().strip().encode()
            s.curve_secretkey = secret
            s.curve_publickey = zmq.curve_public(secret)
            s.curve_serverkey = open(self.args.server_key_file).read().strip().encode()
        s.connect(self.args.server)
        self.server, self.session = s, False

    def disconnect(self):
        if self.server is not None:
            self.server.close(0)
        self.server, self.session = None, False

    def call(self, kind, body):
        """One request and its reply (matched by req; late replies of earlier requests are dropped)."""
        if self.server is None:
            self.connect()
        if kind != "hello":
            self.req += 1
            body = dict(body, req=self.req)
        self.server.send_multipart(frames(kind, body))
        deadline = time.monotonic() + self.args.reply_timeout_ms / 1000
        while (left := deadline - time.monotonic()) > 0:
            if not self.server.poll(int(left * 1000) + 1):
                break
            header, payload = self.server.recv_multipart()[-2:]
            reply_kind, reply = header.decode().split(" ", 1)[1], json.loads(payload)
            if kind == "hello" and reply_kind in ("welcome", "error") and "req" not in reply:
                return reply_kind, reply
            if reply.get("req") == body.get("req"):
                return reply_kind, reply
        self.disconnect()  # a timeout: the next request says hello on a fresh connection
        return None, None

    def ensure_session(self):
        if self.session:
            return True
        kind, reply = self.call("hello", {"device": self.args.id, "account": self.args.account,
                                          "token": self.token, "platform": self.args.platform})
        if kind == "welcome":
            self.session = True
            self.head = max(self.head, reply["head"])
        elif kind == "error":
            event("hello.refused", code=reply["code"], message=reply["message"])
        return self.session

    def request(self, kind, body):
        """A request in a session; a server that forgot us (restarted) gets one hello again."""
        for _ in range(2):
            if not self.ensure_session():
                return None, None
            kind_, reply = self.call(kind, body)
            if kind_ == "error" and reply["code"] == "notAuthenticated":
                self.session = False
                continue
            return kind_, reply
        return None, None

    # -- the pass -----------------------------------------------------------------------------------------------
    def wire_key(self, key, attempt):
        return key  # the same key on every resend: the server answers duplicate to a resend of an applied op

    def claim(self, force):
        """A bounded batch in save order; a draft's later op waits while an earlier one of it is not eligible."""
        now, batch, blocked = self.now_sim(), [], set()
        for row in self.db.execute("SELECT key, draft, action, base, title, body, attempts, next_attempt_sim FROM ops "
                                   "WHERE status NOT IN (?, ?) ORDER BY local_seq", SETTLED).fetchall():
            if row[1] in blocked:
                continue
            if len(batch) >= self.args.batch or (row[7] > now and not force):
                blocked.add(row[1])
                continue
            batch.append(row)
        return batch

    def push(self, pass_id, force):
        batch = self.claim(force)
        if not batch:
            return 0, "completed", False
        ops, by_wire = [], {}
        self.db.execute("BEGIN IMMEDIATE")
        for key, draft, action, base, title, body, attempts, _ in batch:
            # Marked before it leaves: killed now, it is resent (same key) on the next life.
            self.db.execute("UPDATE ops SET status = 'confirmationDelayed', attempts = attempts + 1 WHERE key = ?",
                            (key,))
            wire = self.wire_key(key, attempts + 1)
            by_wire[wire] = (key, draft, attempts + 1)
            op = {"key": wire, "draft": draft, "action": action, "base": base}
            if title is not None:
                op["title"] = title
            if body is not None:
                op["body"] = body
            ops.append(op)
        self.db.execute("COMMIT")
        for op in ops:
            event("op.sent", key=op["key"], attempt=by_wire[op["key"]][2], **{"pass": pass_id})
        kind, reply = self.request("push", {"ops": ops})
        if kind != "pushResult":
            return len(ops), "timeout" if kind is None else "error", False
        self.db.execute("BEGIN IMMEDIATE")
        for result in reply["results"]:
            if result["key"] not in by_wire:
                continue
            key, draft, attempt = by_wire[result["key"]]
            outcome = result["outcome"]
            if outcome in ("applied", "duplicate"):
                self.db.execute("UPDATE ops SET status = 'completed', result_seq = ?, completed_wall = ? "
                                "WHERE key = ? AND status NOT IN (?, ?)",
                                (result["seq"], int(time.time() * 1e6), key) + SETTLED)
            elif outcome == "rejected" or attempt >= self.args.max_attempts:
                reason = result.get("reason", "")
                if outcome == "retryLater":
                    reason = f"gave up after {attempt} attempts: {reason}"
                self.db.execute("UPDATE ops SET status = 'needsAttention', last_error = ?, completed_wall = ? "
                                "WHERE key = ?", (reason, int(time.time() * 1e6), key))
                self.rebuild(draft)
            else:
                wait = min(BACKOFF_BASE_SEC * 2 ** (attempt - 1), BACKOFF_CAP_SEC)
                self.db.execute("UPDATE ops SET status = 'waitingToSend', next_attempt_sim = ?, last_error = ? "
                                "WHERE key = ?", (self.now_sim() + wait, result.get("reason"), key))
            event("op.result", key=key, outcome=outcome)
        self.db.execute("COMMIT")
        return len(ops), "completed", len(ops) >= self.args.batch

    def pull(self, pass_id, trigger):
        """Pages from the durable cursor; each page, its replica rows and the cursor commit in ONE transaction."""
        pulled = 0
        for _ in range(self.args.max_pages):
            self.before_page(trigger)
            if self.expired():  # a safe point: every page before this one is committed with its cursor
                return pulled, "cutOff", True
            cursor = self.cursor
            kind, page = self.request("pull", {"cursor": cursor, "limit": self.args.page_limit,
                                               "account": self.args.account})
            if kind != "page":
                return pulled, "timeout" if kind is None else "error", False
            self.head = max(self.head, page["head"])
            self.db.execute("BEGIN IMMEDIATE")
            applied, touched = [], set()
            for change in page["changes"]:
                if change["seq"] != cursor + len(applied) + 1:
                    break  # never pass a gap
                # The shadow replays the server's changes (docs/DEVICE-CONTRACT.md, "State"): a delete keeps the
                # draft's last title and body beside its tombstone.
                if change["action"] == "delete":
                    self.db.execute("INSERT INTO shadow(id, version, deleted) VALUES (?, ?, 1) ON CONFLICT(id) DO "
                                    "UPDATE SET version = excluded.version, deleted = 1",
                                    (change["draft"], change["version"]))
                else:  # an update keeps a field its change leaves out; a create sets the whole draft
                    keep = "coalesce(excluded.%s, shadow.%s)" if change["action"] == "update" else "excluded.%s%.0s"
                    self.db.execute("INSERT INTO shadow(id, title, body, version, deleted) VALUES (?, ?, ?, ?, 0) "
                                    "ON CONFLICT(id) DO UPDATE SET title = " + keep % ("title", "title") +
                                    ", body = " + keep % ("body", "body") + ", version = excluded.version, deleted = 0",
                                    (change["draft"], change.get("title"), change.get("body"), change["version"]))
                # Our own op, whose reply was lost: the pull settles it.
                if change["origin"] == self.args.id:
                    self.db.execute("UPDATE ops SET status = 'completed', result_seq = ?, completed_wall = ? "
                                    "WHERE key = ? AND status NOT IN (?, ?)",
                                    (change["seq"], int(time.time() * 1e6), self.op_key(change["key"])) + SETTLED)
                applied.append(change)
                touched.add(change["draft"])
            to = cursor + len(applied)
            for draft in touched:
                self.rebuild(draft, seen=to)
            self.put_state("cursor", to)
            self.put_state("head", self.head)
            self.db.execute("COMMIT")
            for change in applied:
                event("change.applied", seq=change["seq"], key=change["key"], origin=change["origin"],
                      draft=change["draft"], trigger=trigger, **{"pass": pass_id})
            if to != cursor:
                event("cursor.moved", to=to, **{"from": cursor, "pass": pass_id})
            pulled += len(applied)
            if len(applied) < len(page["changes"]) or to >= page["head"]:
                return pulled, "completed", False
        return pulled, "completed", True

    def op_key(self, wire_key):
        return wire_key

    def before_page(self, trigger):
        """Nothing here; a slow example device waits (slow_device.py)."""

    def expired(self):
        """Whether the lab said `expire` for the running pass (the platform's execution time ran out: iOS's
        expirationHandler). Asked at safe points only, between committed steps; the pass then ends at once and its
        reply is the answer (docs/DEVICE-CONTRACT.md, "Execution limits")."""
        if not self.expiring and self.lab is not None:
            self.expiring = self.lab.expired(self.pass_id)
        return self.expiring

    def run_pass(self, msg):
        self.pass_id, self.expiring = msg["pass"], False
        if not self.online:
            return {"sent": 0, "pulled": 0, "outcome": "offline", **self.status(msg)}
        if self.expired():
            return {"sent": 0, "pulled": 0, "outcome": "cutOff", "more": True, **self.status(msg)}
        sent, outcome, more_ops = self.push(msg["pass"], msg.get("force", False))
        pulled, more_pages = 0, False
        if outcome == "completed" and self.expired():  # a safe point: the batch's outcomes are committed
            outcome, more_ops = "cutOff", True
        if outcome == "completed":
            pulled, outcome, more_pages = self.pull(msg["pass"], msg["trigger"])
        return {"sent": sent, "pulled": pulled, "outcome": outcome, "more": more_ops or more_pages, **self.status(msg)}


class Lab:
    """The lab side's lines on standard input, read from the descriptor (not Python's buffered sys.stdin), so that a
    pass can look for `expire` between its steps without blocking; every other request waits its turn."""

    def __init__(self):
        self.buffer, self.queued, self.closed = b"", [], False

    def fill(self, block):
        if self.closed or (not block and not select.select([0], [], [], 0)[0]):
            return False
        data = os.read(0, 65536)
        if not data:
            self.closed = True
            return False
        self.buffer += data
        *lines, self.buffer = self.buffer.split(b"\n")
        self.queued += [json.loads(line) for line in lines if line.strip()]
        return True

    def next(self):
        while not self.queued and not self.closed:
            self.fill(block=True)
        return self.queued.pop(0) if self.queued else None

    def expired(self, pass_id):
        while self.fill(block=False):
            pass
        for msg in self.queued:
            if msg.get("type") == "expire" and msg.get("pass") == pass_id:
                self.queued.remove(msg)
                return True
        return False


def event(name, **fields):
    say({"type": "event", "event": name, "fields": fields})


def say(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def arguments():
    p = argparse.ArgumentParser()
    for name in ("id", "account", "token", "token-file", "platform", "db", "server", "key-file", "server-key-file"):
        p.add_argument("--" + name)
    p.add_argument("--epoch", type=int, default=int(time.time() * 1e6))
    p.add_argument("--time-scale", type=float, default=1.0)
    for name, default in (("batch", 50), ("page-limit", 200), ("max-pages", 5), ("reply-timeout-ms", 1000),
                          ("max-attempts", 10), ("seed", 1)):
        p.add_argument("--" + name, type=int, default=default)
    return p.parse_known_args()[0]


def main(device_class=Device):
    die_with_the_lab()
    device = device_class(arguments())
    say({"type": "ready", **device.status({})})
    handlers = {"edit": device.edit, "pass": device.run_pass, "network": device.network, "status": device.status}
    device.lab = lab = Lab()
    while (msg := lab.next()) is not None:
        if msg["type"] == "stop":
            break
        if msg["type"] == "expire":
            continue  # its pass ended before it came: the pass's reply is the answer, expire has none
        say({"type": "reply", "req": msg["req"], "ok": True, **handlers[msg["type"]](msg)})


if __name__ == "__main__":
    main()
