// Command printversion prints what 'evalctl --version' prints, from the
// same function (runstore.Version), in a binary small enough that
// TestVersionIsTheCommit can build it with -trimpath (which recompiles every
// package it links, the standard library included) in seconds rather than
// the minutes a -trimpath build of the whole of evalctl takes.
package main

import (
	"fmt"

	"github.com/evalctl/evalctl/results/runstore"
)

func main() { fmt.Println("evalctl", runstore.Version()) }
