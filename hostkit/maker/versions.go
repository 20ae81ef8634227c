package maker

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/snuggen/snuggen/internal/atomicfile"
)

// Page is the file an app folder's source lives in.
const Page = "app.html"

// VersionsDir is the folder inside an app's folder that keeps its earlier
// versions, 1.html, 2.html, … (a dot folder: no command takes it for an
// app).
const VersionsDir = ".versions"

// Version is one kept version of an app.
type Version struct {
	N    int
	Path string
	Time time.Time
}

// Versions lists the versions kept in dir, oldest first.
func Versions(dir string) ([]Version, error) {
	entries, err := os.ReadDir(filepath.Join(dir, VersionsDir))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("versions of %s: %w", dir, err)
	}
	var out []Version
	for _, e := range entries {
		n, err := strconv.Atoi(strings.TrimSuffix(e.Name(), ".html"))
		if err != nil || n <= 0 || !strings.HasSuffix(e.Name(), ".html") || !e.Type().IsRegular() {
			continue
		}
		v := Version{N: n, Path: filepath.Join(dir, VersionsDir, e.Name())}
		if fi, err := e.Info(); err == nil {
			v.Time = fi.ModTime()
		}
		out = append(out, v)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].N < out[j].N })
	return out, nil
}

// Install writes src as dir's app page. A page already there is kept first
// as the next version (its number returned; 0 when there was none), so a
// new version never loses the one it replaces. The app's database is keyed
// by the folder's name, which does not change, so it survives. The page is
// replaced atomically: a reader sees the old page or the new.
func Install(dir string, src []byte) (kept int, err error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, fmt.Errorf("install into %s: %w", dir, err)
	}
	page := filepath.Join(dir, Page)
	old, err := os.ReadFile(page)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return 0, fmt.Errorf("install into %s: %w", dir, err)
	default:
		if kept, err = keep(dir, old); err != nil {
			return 0, err
		}
	}
	if err := atomicfile.Write(page, src, 0o644); err != nil {
		return kept, fmt.Errorf("install into %s: %w", dir, err)
	}
	return kept, nil
}

// keep stores old as dir's next version.
func keep(dir string, old []byte) (int, error) {
	vs, err := Versions(dir)
	if err != nil {
		return 0, err
	}
	n := 1
	if len(vs) > 0 {
		n = vs[len(vs)-1].N + 1
	}
	if err := os.MkdirAll(filepath.Join(dir, VersionsDir), 0o755); err != nil {
		return 0, fmt.Errorf("keep the version of %s: %w", dir, err)
	}
	if err := atomicfile.Write(filepath.Join(dir, VersionsDir, strconv.Itoa(n)+".html"), old, 0o644); err != nil {
		return 0, fmt.Errorf("keep the version of %s: %w", dir, err)
	}
	return n, nil
}

// Restore makes version n dir's app page again; the page it replaces is
// kept as a version too, so a restore is undone by another.
func Restore(dir string, n int) (kept int, err error) {
	src, err := os.ReadFile(filepath.Join(dir, VersionsDir, strconv.Itoa(n)+".html"))
	if err != nil {
		vs, _ := Versions(dir)
		nums := make([]string, len(vs))
		for i, v := range vs {
			nums[i] = strconv.Itoa(v.N)
		}
		if len(nums) == 0 {
			return 0, fmt.Errorf("%s keeps no earlier versions", dir)
		}
		return 0, fmt.Errorf("%s has no version %d; it keeps %s", dir, n, strings.Join(nums, ", "))
	}
	return Install(dir, src)
}
