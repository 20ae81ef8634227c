package cli

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// watchInputs is the one file watcher of build --watch and serve --watch:
// every interval it takes each set of paths from sets (the files the
// packager read for one build, pack.Result.Inputs, with the folders they
// are in so a new file is seen) and calls changed(i) for each set whose
// fingerprint differs from the one it had at the last call, until ctx
// ends. The first call of sets is the baseline. Polling keeps snuggen free
// of a file-notification dependency; a change is seen within an interval.
func watchInputs(ctx context.Context, interval time.Duration, sets func() [][]string, changed func(i int)) {
	var last []string
	for _, s := range sets() {
		last = append(last, fingerprint(s))
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for i, s := range sets() {
			now := fingerprint(s)
			for len(last) <= i {
				last = append(last, "")
			}
			if now == last[i] {
				continue
			}
			changed(i)
			// What the rebuild read is the set to watch from now on.
			last[i] = fingerprint(sets()[i])
		}
	}
}

// inputSet is what watchInputs polls for one build: the input page, every
// file the build read and the folders they are in, sorted and once each.
func inputSet(page string, inputs []string) []string {
	set := map[string]bool{page: true, filepath.Dir(page): true}
	for _, p := range inputs {
		set[p] = true
		set[filepath.Dir(p)] = true
	}
	l := make([]string, 0, len(set))
	for p := range set {
		l = append(l, p)
	}
	sort.Strings(l)
	return l
}

// fingerprint is the size and modification time of each path, one line
// each ("-" for a path that is gone). A folder's time changes when a file
// is added to it or removed.
func fingerprint(paths []string) string {
	var b strings.Builder
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil {
			fmt.Fprintf(&b, "%s:-\n", p)
			continue
		}
		fmt.Fprintf(&b, "%s:%d:%d\n", p, fi.Size(), fi.ModTime().UnixNano())
	}
	return b.String()
}
