// Package layers holds the module's import-graph test: the layers of the module, lowest
// first, stated once, and the imports the design rules out between parts (the "never"
// arrows of the architecture). The test reads the graph with `go list` for Linux,
// Windows and macOS and fails on a package that imports a package of a higher layer, or
// that depends, directly or not, on a part it must never reach. It has no code of its
// own; `make test` runs it with the other tests.
package layers
