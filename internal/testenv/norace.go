//go:build !race

package testenv

// RaceEnabled reports whether the test binary was built with -race.
const RaceEnabled = false
