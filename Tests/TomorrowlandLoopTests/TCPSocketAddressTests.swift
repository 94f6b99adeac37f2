import Glibc
import Testing

@testable import TomorrowlandLoop

@Suite("TCPSocketAddress")
struct TCPSocketAddressTests {
    @Test(arguments: [
        ("127.0.0.1", "127.0.0.1:80"), ("::1", "[::1]:80"), ("[::1]", "[::1]:80"), ("fe80::1%lo", "[fe80::1]:80"),
    ])
    func ipLiteralsAreParsedWithoutAResolver(host: String, expected: String) throws {
        let addresses = try #require(TCPSocketAddress.literal(host: host, port: 80))
        #expect(addresses.map(\.description) == [expected])
    }

    @Test(arguments: ["localhost", "example.com", "x.invalid", "127.0.0.1.example", "[localhost]"])
    func namesAreNotLiterals(host: String) {
        #expect(TCPSocketAddress.literal(host: host, port: 80) == nil)
    }

    @Test func anEmptyHostIsEveryLocalAddressWithoutAResolver() throws {
        let addresses = try #require(TCPSocketAddress.literal(host: "", port: 80))
        #expect(!addresses.isEmpty)
    }

    @Test func aResolverBuildsAddressesFromLiteralsWithThePublicInitializer() throws {
        let v4 = try #require(TCPSocketAddress(ipAddress: "10.1.2.3", port: 6379))
        #expect(v4.family == AF_INET)
        #expect(v4.port == 6379)
        #expect(v4.description == "10.1.2.3:6379")
        let v6 = try #require(TCPSocketAddress(ipAddress: "[::1]", port: 443))
        #expect(v6.family == AF_INET6)
        #expect("\(v6)" == "[::1]:443")
        // Names and "every address" are not literals a resolver could answer with.
        #expect(TCPSocketAddress(ipAddress: "localhost", port: 80) == nil)
        #expect(TCPSocketAddress(ipAddress: "", port: 80) == nil)
        #expect(TCPSocketAddress(ipAddress: "*", port: 80) == nil)
    }
}
