import Foundation
import LabKit
import ZeroMQ

extension Skeleton {
    /// One process of the skeleton. Each role passes the message on and does nothing else; from the warm-up edit on
    /// it counts its CPU, and at the quit edit it writes that CPU (µs) and, a receiver, the ms each measured page took
    /// since its edit, to `FOLDER/ROLE.out`, and ends.
    final class Node {
        let role: String, folder: String
        let context: Context
        var cpuStart: Double?
        var latencies: [Double] = []

        init(role: String, folder: String) throws {
            self.role = role
            self.folder = folder
            context = try Context()
        }

        func endpoint(_ name: String) -> String { "ipc://\(folder)/\(name).sock" }

        func run() throws {
            switch role {
            case "server": try server()
            case "broker": try broker()
            case "d0": try sender()
            default: try receiver()
            }
        }

        /// Counts CPU from the first warm-up message.
        func seen(_ phase: Phase) {
            if phase == .warm && cpuStart == nil { cpuStart = Floors.processCPUMicros() }
        }

        func finish() throws {
            let cpu = Floors.processCPUMicros() - (cpuStart ?? 0)
            let text = ([cpu] + latencies).map { String(format: "%.4f", $0) }.joined(separator: " ")
            try text.write(toFile: "\(folder)/\(role).out", atomically: true, encoding: .utf8)
        }

        func ready() {
            _ = FileManager.default.createFile(atPath: "\(folder)/ready-\(role)", contents: nil)
        }

        func server() throws {
            let devices = try Socket(context, .router, lingerMs: 1_000)
            try devices.bind(endpoint("server"))
            let notices = try Socket(context, .push, lingerMs: 1_000)
            try notices.connect(endpoint("notices"))
            while let frames = try devices.receive() {
                guard frames.count == 2, let (kind, phase, nanos) = Skeleton.parse(frames[1]) else { continue }
                seen(phase)
                if kind == .push {
                    _ = try devices.send([frames[0], Skeleton.message(.pushAnswer, phase, nanos)])
                    _ = try notices.send([Skeleton.message(.notice, phase, nanos)])
                    if phase == .quit { return try finish() }
                } else if kind == .pull {
                    _ = try devices.send([frames[0], Skeleton.message(.page, phase, nanos)])
                }
            }
        }

        func broker() throws {
            let notices = try Socket(context, .pull)
            try notices.bind(endpoint("notices"))
            let devices = try Socket(context, .router, lingerMs: 1_000)
            try devices.bind(endpoint("broker"))
            var registered: [Frame] = []
            var poller = Poller([notices, devices])
            while true {
                for index in try poller.poll(timeoutMs: -1) {
                    if index == 1 {
                        while let frames = try devices.receive(dontWait: true), frames.count == 2 {
                            registered.append(frames[0])
                            _ = try devices.send([frames[0], Skeleton.message(.registered, .warm, 0)])
                        }
                        continue
                    }
                    while let frames = try notices.receive(dontWait: true) {
                        guard let (_, phase, nanos) = Skeleton.parse(frames[0]) else { continue }
                        seen(phase)
                        let hint = Skeleton.message(.hint, phase, nanos)
                        for device in registered { _ = try devices.send([device, hint]) }
                        if phase == .quit { return try finish() }
                    }
                }
            }
        }

        func serverLink() throws -> Socket {
            let server = try Socket(context, .dealer, lingerMs: 1_000)
            try server.setRoutingID(Array(role.utf8))
            try server.connect(endpoint("server"))
            return server
        }

        /// d0: the launcher's edits in, each answered and pushed.
        func sender() throws {
            let control = try Socket(context, .router, lingerMs: 1_000)
            try control.bind(endpoint("control"))
            let server = try serverLink()
            ready()
            var poller = Poller([control, server])
            while true {
                for index in try poller.poll(timeoutMs: -1) {
                    if index == 1 {
                        while try server.receive(dontWait: true) != nil {}
                        continue
                    }
                    while let frames = try control.receive(dontWait: true) {
                        guard frames.count == 2, let (_, phase, nanos) = Skeleton.parse(frames[1]) else { continue }
                        seen(phase)
                        _ = try control.send([frames[0], Skeleton.message(.answer, phase, nanos)])
                        _ = try server.send([Skeleton.message(.push, phase, nanos)])
                        if phase == .quit { return try finish() }
                    }
                }
            }
        }

        /// A receiver: each hint pulled, each measured page timed from its edit.
        func receiver() throws {
            let server = try serverLink()
            let broker = try Socket(context, .dealer)
            try broker.setRoutingID(Array(role.utf8))
            try broker.connect(endpoint("broker"))
            _ = try broker.send([Skeleton.message(.register, .warm, 0)])
            _ = try broker.receive()
            ready()
            var poller = Poller([broker, server])
            while true {
                for index in try poller.poll(timeoutMs: -1) {
                    let socket = index == 0 ? broker : server
                    while let frames = try socket.receive(dontWait: true) {
                        guard let (kind, phase, nanos) = Skeleton.parse(frames[0]) else { continue }
                        seen(phase)
                        if kind == .hint {
                            if phase == .quit { return try finish() }
                            _ = try server.send([Skeleton.message(.pull, phase, nanos)])
                        } else if kind == .page && phase == .measured {
                            latencies.append(Double(SimClock.monotonicNanos() - nanos) / 1e6)
                        }
                    }
                }
            }
        }
    }
}
