// The suites of TomorrowlandServiceLifecycle; they compile with the package trait `ServiceLifecycle` only.
