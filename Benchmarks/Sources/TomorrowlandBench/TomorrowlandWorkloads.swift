/// Tomorrowland's side: not available until the core and the EventLoop land.
enum TomorrowlandWorkloads {
    static func make() -> LibraryUnderTest? { nil }
}
