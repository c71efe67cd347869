package vfs

// ExpandBraces is expandBraces, for the fuzz tests' reference matcher.
var ExpandBraces = expandBraces
