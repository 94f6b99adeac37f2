import ProbeCore
import Testing

@Suite("ProbeEndpoint")
struct ProbeEndpointTests {
    @Test func parsesHostAndPort() {
        #expect(ProbeEndpoint(parsing: "127.0.0.1:80") == ProbeEndpoint(host: "127.0.0.1", port: 80))
        #expect(ProbeEndpoint(parsing: "localhost:6379") == ProbeEndpoint(host: "localhost", port: 6379))
    }

    @Test func parsesIPv6WithOrWithoutBrackets() {
        #expect(ProbeEndpoint(parsing: "[::1]:8080") == ProbeEndpoint(host: "::1", port: 8080))
        #expect(ProbeEndpoint(parsing: "::1:8080") == ProbeEndpoint(host: "::1", port: 8080))
        #expect(ProbeEndpoint(host: "::1", port: 8080).description == "[::1]:8080")
        #expect(ProbeEndpoint(host: "10.0.0.1", port: 1).description == "10.0.0.1:1")
    }

    @Test func rejectsMissingOrInvalidPorts() {
        #expect(ProbeEndpoint(parsing: "localhost") == nil)
        #expect(ProbeEndpoint(parsing: "localhost:") == nil)
        #expect(ProbeEndpoint(parsing: "localhost:0") == nil)
        #expect(ProbeEndpoint(parsing: "localhost:65536") == nil)
        #expect(ProbeEndpoint(parsing: ":80") == nil)
        #expect(ProbeEndpoint(parsing: "[::1:80") == nil)
    }
}
