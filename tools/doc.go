// Package tools pins the development tools that make runs (staticcheck, gotestsum) with tool
// directives in a module of its own, so that the library's go.mod lists only what the library needs.
// Run one with: go tool -modfile=tools/go.mod <name>.
package tools
