// Command snuggen is the Go toolchain for Snug: it generates the protocol's
// frame code, packages micro-apps into one HTML file, and serves them in a
// local host. See the README for the commands.
package main

import (
	"os"

	"github.com/snuggen/snuggen/internal/cli"
)

func main() { os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }
