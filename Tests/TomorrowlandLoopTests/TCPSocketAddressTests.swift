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
}
