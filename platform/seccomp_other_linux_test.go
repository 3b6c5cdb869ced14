//go:build linux && !amd64 && !arm64

package platform

// archSCCases is empty: no filter is defined for this architecture.
var archSCCases []scCase
