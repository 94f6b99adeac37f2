import Tomorrowland
import TomorrowlandTestSupport

@testable import TomorrowlandLoop

/// A name resolver that never answers on its own: it keeps each resolution, so a test can see
/// what was asked, check that it was abandoned, and deliver a late answer when it chooses.
final class HeldNameResolver: NameResolver {
    private let held = Locked<[NameResolution]>([])

    /// The resolutions asked for so far, oldest first.
    var resolutions: [NameResolution] { held.withLock { $0 } }

    func resolve(_ resolution: NameResolution) {
        held.withLock { $0.append(resolution) }
    }
}
