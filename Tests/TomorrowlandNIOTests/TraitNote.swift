// The suites of TomorrowlandNIO; they compile with the package trait `NIO` only.
