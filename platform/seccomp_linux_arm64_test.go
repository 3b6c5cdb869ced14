package platform

// archSCCases is empty on arm64: it has only the *at forms, which scCases try.
var archSCCases []scCase
