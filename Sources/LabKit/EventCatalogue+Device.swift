extension EventType {
    /// The events only the device writes.
    static let deviceEvents: [EventType] = [
        appReinstalled,
        appBackground,
        appClosed,
        appForceQuit,
        appForeground,
        beaconSent,
        brokerError,
        brokerRegistered,
        bucketDeferred,
        budgetRecovered,
        budgetShrunk,
        changeApplied,
        cursorCommittedBeforePage,
        cursorMoved,
        dozeEnter,
        dozeExit,
        dozeMaintenance,
        engagementSet,
        guarantee,
        hintIgnored,
        hintMalformed,
        hintReceived,
        iosScheduleLost,
        iosTaskNoHandler,
        iosTaskNotCompleted,
        iosWindowExpired,
        leaseReclaimed,
        leaseStranded,
        ledgerError,
        messageUnexpected,
        netOffline,
        netOnline,
        opConfirmed,
        opKeyRenewed,
        opResult,
        outboxNewestFirst,
        replicaOwnWriteHidden,
        opSaved,
        opSent,
        pageGap,
        pageLost,
        pagesDiscarded,
        passEnd,
        passKilled,
        passQueuedStarting,
        passSkippedPull,
        passStart,
        passesDropped,
        powerPlugged,
        powerUnplugged,
        programExited,
        programExpire,
        programFailed,
        programKilled,
        programStarted,
        queueLost,
        refreshSet,
        replyMalformed,
        replyStale,
        scheduleCancelled,
        scheduleNotPermitted,
        scheduleSkipped,
        scheduleStopped,
        scheduleSubmitted,
        scheduleUnavailable,
        serverError,
        trigger,
        triggerRefused,
        unloadTaskAbandoned,
        windowGranted,
    ]

    public static let appReinstalled = EventType(
        "app.reinstalled", [.device], "lost:i keys:a oldInstall install",
        "the app was deleted and installed again: its database made anew, unsent ops gone")
    public static let appBackground = EventType(
        "app.background", [.device], "by from",
        "the app went to the background")
    public static let appClosed = EventType(
        "app.closed", [.device], "by from",
        "the app stopped running (web: the tab closed)")
    public static let appForceQuit = EventType("app.forceQuit", [.device], "by from", "the user swiped the app away")
    public static let appForeground = EventType(
        "app.foreground", [.device], "by from",
        "the app came to the foreground")
    public static let beaconSent = EventType(
        "beacon.sent", [.device], "ops:i req:i",
        "a web page being hidden sent its unsent ops with sendBeacon")
    public static let brokerError = EventType(
        "broker.error", [.device], "code message",
        "the broker answered the device with an error")
    public static let brokerRegistered = EventType(
        "broker.registered", [.device], "",
        "the broker confirmed the device's registration")
    public static let budgetRecovered = EventType(
        "budget.recovered", [.device], "from:n to:n trigger",
        "the platform model gave back part of a budget it had cut (iOS, after a task that ended well)")
    public static let budgetShrunk = EventType(
        "budget.shrunk", [.device], "from:n to:n trigger reason?",
        "the platform model cut the app's background budget")
    public static let bucketDeferred = EventType(
        "bucket.deferred", [.device], "bucket reason dueSim:n untilSim:n",
        "an Android app's standby bucket (not doze) held a due job until untilSim")
    public static let changeApplied = EventType(
        "change.applied", [.device], "seq:i key origin draft pass:i trigger",
        "the device applied a change of a pulled page")
    public static let cursorCommittedBeforePage = EventType(
        "cursor.committedBeforePage", [.device], "from:i to:i pass:i reason",
        "design switch: the cursor moved before its page was applied")
    public static let cursorMoved = EventType(
        "cursor.moved", [.device], "from:i to:i pass:i",
        "the device's durable cursor moved")
    public static let dozeEnter = EventType(
        "doze.enter", [.device], "nextMaintenanceSim:n",
        "an Android device entered doze")
    public static let dozeExit = EventType("doze.exit", [.device], "reason", "an Android device left doze")
    public static let dozeMaintenance = EventType(
        "doze.maintenance", [.device], "untilSim:n",
        "a doze maintenance window opened")
    public static let engagementSet = EventType(
        "engagement.set", [.device], "opensPerDay:n",
        "the user's habits changed (opens per day)")
    public static let guarantee = EventType(
        "guarantee", [.device],
        "kind minimumSec:n? typicalSec:n? observedMedianGapSec:n? triggers:a? reason? requestedSec:n",
        "what the platform scheduler can promise, measured")
    public static let hintIgnored = EventType(
        "hint.ignored", [.device], "hint reason",
        "the device received a hint and did not act on it")
    public static let hintMalformed = EventType(
        "hint.malformed", [.device], "reason keys:a",
        "the device received a hint it could not read")
    public static let hintReceived = EventType(
        "hint.received", [.device], "hint head:i keys:a",
        "the device received a hint")
    public static let iosScheduleLost = EventType(
        "ios.schedule.lost", [.device], "pass:i? reason",
        "an iOS background task request was lost")
    public static let iosTaskNoHandler = EventType(
        "ios.task.noHandler", [.device], "identifier reason",
        "design switch: iOS launched the app for its background task and found no handler registered")
    public static let iosTaskNotCompleted = EventType(
        "ios.task.notCompleted", [.device], "identifier cutOff:b reason",
        "design switch: an iOS background task ended without setTaskCompleted; the system expired it")
    public static let iosWindowExpired = EventType(
        "ios.window.expired", [.device], "pass:i trigger handled:b inFlight:i chargedSec:n reason:*",
        "an iOS background window ran out during a pass")
    public static let leaseReclaimed = EventType(
        "lease.reclaimed", [.device], "count:i pass:i",
        "a pass took back ops whose leases expired")
    public static let leaseStranded = EventType(
        "lease.stranded", [.device], "count:i pass:i reason",
        "ops left leased by a pass that was cut off")
    public static let ledgerError = EventType("ledger.error", [.device], "message", "the device's ledger failed")
    public static let messageUnexpected = EventType(
        "message.unexpected", [.device], "from type",
        "a device received a message of a type it does not expect there")
    public static let netOffline = EventType("net.offline", [.device], "", "the device lost its network")
    public static let netOnline = EventType("net.online", [.device], "", "the device regained its network")
    public static let opConfirmed = EventType(
        "op.confirmed", [.device], "key via pass:i",
        "an op of unknown outcome was settled by its own change in a pull")
    public static let opKeyRenewed = EventType(
        "op.keyRenewed", [.device], "key to attempt:i reason",
        "design switch: a resend went out with a new idempotency key")
    public static let opResult = EventType(
        "op.result", [.device], "key outcome seq:i? reason?",
        "the device recorded an op's outcome")
    public static let outboxNewestFirst = EventType(
        "outbox.newestFirst", [.device], "pass:i keys:a reason",
        "design switch outboxOrder newestFirst: a pass's batch goes out newest op first")
    public static let replicaOwnWriteHidden = EventType(
        "replica.ownWriteHidden", [.device], "draft keys:a cursor:i reason",
        "design switch ownWrites untilPulled: a rebuild left the user's acknowledged edits out of the replica")
    public static let opSaved = EventType(
        "op.saved", [.device], "key draft action account base:i",
        "the device saved a user's edit as an op in its ledger")
    public static let opSent = EventType(
        "op.sent", [.device], "key? attempt:i? pass:i? via?",
        "the device sent an op to the server")
    public static let pageGap = EventType(
        "page.gap", [.device], "expected:i got:i pass:i",
        "a pulled page skipped a seq")
    public static let pageLost = EventType(
        "page.lost", [.device], "pass:i from:i to:i seqs:a reason",
        "design switch: a page the cursor passed was never applied")
    public static let pagesDiscarded = EventType(
        "pages.discarded", [.device], "pass:i pages:i from:i to:i reason",
        "design switch: a pass cut off before its one commit dropped the pages it had pulled")
    public static let passEnd = EventType(
        "pass.end", [.device], "pass:i trigger sent:i pulled:i cursor:i cutOff:b", open: true,
        "a pass ended")
    public static let passKilled = EventType("pass.killed", [.device], "pass:i reason", "a pass was cut off")
    public static let passQueuedStarting = EventType(
        "pass.queuedStarting", [.device], "trigger stillQueued:i",
        "a queued pass started (coalesce: false)")
    public static let passSkippedPull = EventType(
        "pass.skippedPull", [.device], "pass:i trigger reason cursor:i head:i",
        "design switch: a pass did not pull")
    public static let passStart = EventType("pass.start", [.device], "pass:i trigger", open: true, "a pass started")
    public static let passesDropped = EventType(
        "passes.dropped", [.device], "count:i triggers:a reason",
        "the app's process went with passes waiting to run")
    public static let powerPlugged = EventType("power.plugged", [.device], "", "the device was plugged in")
    public static let powerUnplugged = EventType("power.unplugged", [.device], "", "the device was unplugged")
    public static let programExited = EventType(
        "program.exited", [.device], "status",
        "an outside device's program ended (docs/DEVICE-CONTRACT.md)")
    public static let programExpire = EventType(
        "program.expire", [.device], "pass:i trigger limitSec:n graceSec:n",
        "an outside program's pass ran out of its platform's execution time: the lab side sent it expire")
    public static let programFailed = EventType(
        "program.failed", [.device], "reason",
        "an outside device's program broke the device contract: what it did")
    public static let programKilled = EventType(
        "program.killed", [.device], "pid:i reason pass:i?",
        "the lab side killed its outside program (SIGKILL), as the OS kills an app, and starts it again")
    public static let programStarted = EventType(
        "program.started", [.device], "pid:i argv:a",
        "the lab side of an outside device started its program")
    public static let queueLost = EventType(
        "queue.lost", [.device], "count:i keys:a reason",
        "design switch: unsent ops kept in memory were lost with the process")
    public static let refreshSet = EventType(
        "refresh.set", [.device], "on:b reason?",
        "background refresh was switched on or off (iOS)")
    public static let replyMalformed = EventType(
        "reply.malformed", [.device], "from reason",
        "a reply the device could not read")
    public static let replyStale = EventType(
        "reply.stale", [.device], "req:i type",
        "a reply after its timeout, ignored")
    public static let scheduleCancelled = EventType(
        "schedule.cancelled", [.device], "reason",
        "the platform cancelled the app's scheduled work")
    public static let scheduleNotPermitted = EventType(
        "schedule.notPermitted", [.device], "api identifier reason",
        "design switch: the platform refused the request's task identifier (not in Info.plist)")
    public static let scheduleSkipped = EventType(
        "schedule.skipped", [.device], "reason",
        "design switch: the app asked for no background task (iOS taskKind none: silent pushes only)")
    public static let scheduleStopped = EventType(
        "schedule.stopped", [.device], "reason",
        "the platform stopped the app's scheduled work (force stop)")
    public static let scheduleSubmitted = EventType(
        "schedule.submitted", [.device],
        "api? intervalSec:n? requestedSec:n? nextRunSim:n? note? reason? windowsPerDay:n? earliestBeginSim:n? "
            + "nextWindowSim:n?",
        "the app asked the platform to schedule work")
    public static let scheduleUnavailable = EventType(
        "schedule.unavailable", [.device], "api reason",
        "the platform's scheduling API was unavailable")
    public static let serverError = EventType(
        "server.error", [.device], "req:* code message",
        "the server answered the device with an error")
    public static let trigger = EventType(
        "trigger", [.device], "trigger coalesced:b continuation:b? queued:i? waiting?",
        "a reason to run a pass arrived")
    public static let triggerRefused = EventType(
        "trigger.refused", [.device], "trigger reason followUp:b?",
        "a trigger that did not start a pass, and why")
    public static let unloadTaskAbandoned = EventType(
        "unload.taskAbandoned", [.device], "reason",
        "a web page unloaded with a pass running")
    public static let windowGranted = EventType(
        "window.granted", [.device], "untilSim:n budgetFactor:n taskKind",
        "the platform granted a background window")
}
