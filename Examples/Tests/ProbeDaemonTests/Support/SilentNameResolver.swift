import Tomorrowland
import TomorrowlandLoop
import TomorrowlandTestSupport

/// A name resolver whose DNS server never answers: it keeps each resolution and never completes
/// it, so only the connect's timeout or a cancel ends the attempt.
final class SilentNameResolver: NameResolver {
    private let held = Recorder<NameResolution>()

    /// The resolutions asked for so far.
    var resolutions: [NameResolution] { held.values }

    func resolve(_ resolution: NameResolution) {
        held.record(resolution)
    }
}
