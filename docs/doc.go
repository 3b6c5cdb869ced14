// Package docs holds the project's reference documents and the tests that keep them
// true: every numbered rule the repository cites is defined in protocol.md, every link
// into a document names an anchor it has, every Markdown table row is whole, and the Go
// snippets of README.md and these documents compile against the module's API.
//
// It has no code of its own. In the module's layers it is with the programs, whose
// tests may import any package.
package docs
