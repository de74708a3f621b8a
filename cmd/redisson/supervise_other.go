//go:build !linux

package main

// becomeSubreaper does nothing where there is no subreaper: init reaps the command's leftovers.
func becomeSubreaper() {}
