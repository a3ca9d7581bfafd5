import Foundation
import Testing
import ZeroMQ

@Suite("ZMQError")
struct ZMQErrorTests {
    @Test("binding a malformed endpoint names it", arguments: ["bogus://nowhere", "tcp://127.0.0.1", "tcp://:x:y"])
    func badEndpoint(endpoint: String) throws {
        let context = try Context()
        let socket = try Socket(context, .router)
        let error = try #require(throws: ZMQError.self) { try socket.bind(endpoint) }
        #expect(error.endpoint == endpoint)
        #expect(error.operation == "bind")
        #expect(error.description.contains(endpoint))
        #expect(error.description.contains(error.message))
        #expect(!error.message.isEmpty)
        #expect(!error.isTerminated)
        // A failed bind does not leave the socket claiming that endpoint.
        #expect(socket.endpoint == nil)
    }

    @Test("binding an endpoint another socket holds is EADDRINUSE, naming it")
    func takenEndpoint() throws {
        let context = try Context()
        let first = try Socket(context, .router)
        try first.bind("tcp://127.0.0.1:*")
        let taken = first.lastEndpoint
        let second = try Socket(context, .router)
        let error = try #require(throws: ZMQError.self) { try second.bind(taken) }
        #expect(error.code == EADDRINUSE)
        #expect(error.description == "zmq bind \(taken): \(error.message) (errno \(EADDRINUSE))")
        #expect(error.message == String(cString: strerror(EADDRINUSE)))

        let inproc = "inproc://taken-\(UUID().uuidString)"
        try first.bind(inproc)
        let inprocError = try #require(throws: ZMQError.self) { try second.bind(inproc) }
        #expect(inprocError.code == EADDRINUSE)
        #expect(inprocError.description.contains(inproc))
    }
}
