// The pending-promise report as a process started with TOMORROWLAND_PENDING_PROMISES sees it: the
// variable is read once, before main, so only a process of its own can show it. Makes 10 root
// promises on the main thread and keeps them pending, then prints, one line each:
//   "on true|false"        PendingPromiseTracking.isOn
//   "interval N"           PendingPromiseTracking.samplingInterval
//   "pending N"            how many of the 10 the report lists
//   "site FILE:LINE"       the first one's site, when one is listed
//   "summary N"            PendingPromiseTracking.summary()'s count, taken after the report
//   "pending count N"      PendingPromiseTracking.pendingCount
//   "oldest age ok true|false"  the summary's oldest age is nil when none is listed, else at
//                          least the age the report (taken before it) gave the first one
// Then `stop()` (which the variable outlives) and "on after stop true|false".

import Tomorrowland

let line = #line + 1
let kept = (0..<10).map { _ in Promise<Int, NoError>.makeWithResolver() }
let report = PendingPromiseTracking.report()
print("on \(PendingPromiseTracking.isOn)")
print("interval \(PendingPromiseTracking.samplingInterval)")
print("pending \(report.promises.count)")
if let first = report.promises.first { print("site \(first.site)") }
print("expected site \(#fileID):\(line)")
let summary = PendingPromiseTracking.summary()
print("summary \(summary.count)")
print("pending count \(PendingPromiseTracking.pendingCount)")
let oldestAgeOK =
    report.promises.first.map { first in summary.oldestAge.map { $0 >= first.age } ?? false }
    ?? (summary.oldestAge == nil)
print("oldest age ok \(oldestAgeOK)")
PendingPromiseTracking.stop()
print("on after stop \(PendingPromiseTracking.isOn)")
for (_, resolver) in kept { resolver.fulfill(with: 0) }
