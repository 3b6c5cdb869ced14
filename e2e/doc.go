// Package e2e proves, with real processes, what a host built on adapterkit can rely on
// when it runs adapters it did not write: adapters that break every rule of the protocol
// (cmd/rogue, cmd/misbehave), load and faults together (the soak test), and bad input
// from the host's own side. Its tests build the helper adapters under e2e/cmd once per
// test binary and run them through lifecycle and registry exactly as a host would.
//
// It has no code of its own: the tests are the package. In the module's layers it is
// with the programs, which may import any package; its bench directory is a module of
// its own.
package e2e
