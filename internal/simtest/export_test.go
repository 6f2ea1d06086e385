package simtest

// SameRun exposes sameRun to the package's external tests.
var SameRun = sameRun
