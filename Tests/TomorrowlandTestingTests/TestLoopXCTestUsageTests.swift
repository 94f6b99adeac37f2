import Tomorrowland
import TomorrowlandTesting
import XCTest

/// The helpers work in XCTest too: they throw, and a throwing test method fails with the
/// failure's description.
final class TestLoopXCTestUsageTests: XCTestCase {
    func testExpectValueDrivesTheLoopInAnXCTestCase() throws {
        try withTestLoop { loop in
            let promise = Promise<Int, String>(on: .loop(loop)) { resolver in
                _ = loop.schedule(after: .seconds(2)) { resolver.fulfill(with: 9) }
            }
            XCTAssertEqual(try loop.expectValue(of: promise), 9)
            XCTAssertEqual(loop.now, .seconds(2))
        }
    }

    func testAFailedExpectationCarriesItsMessageIntoXCTAssertThrowsError() throws {
        try withTestLoop { loop in
            let promise = Promise<Int, String>(on: .loop(loop)) { resolver in resolver.reject(with: "nope") }
            XCTAssertThrowsError(try loop.expectValue(of: promise)) { error in
                XCTAssertEqual(
                    "\(error)",
                    "Expected the promise to be fulfilled with a value, but it was rejected with \"nope\" at 0.0 seconds"
                )
            }
        }
    }

    func testWithTestLoopFailsAnXCTestCaseForWorkLeftPending() {
        XCTAssertThrowsError(try withTestLoop { loop in _ = loop.schedule(after: .seconds(1)) {} }) { error in
            XCTAssertTrue("\(error)".hasPrefix("TestLoop has pending work: 0 ready item(s) and 1 timer(s)"))
        }
    }
}
