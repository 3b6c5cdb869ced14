//go:build linux && !amd64 && !arm64

package platform

// auditArch is zero: no filter is defined for this architecture, so a sandbox needing
// one is refused (or, with BestEffort, started without it and reported).
const auditArch = 0

const x32Bit = 0

var archDenied []deniedSyscall

var archInotify []deniedSyscall

var archArgRules []argRule
