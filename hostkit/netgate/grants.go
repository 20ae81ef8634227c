package netgate

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/snuggen/snuggen/internal/atomicfile"
)

// Grant is a user's "always" for one (installed app, origin). Grants live in
// the host's data directory, keyed by the host's own app key, and never
// travel with an exported app.
type Grant struct {
	App    string    `json:"app"`
	Origin string    `json:"origin"`
	Since  time.Time `json:"since"`
}

// grantsFile is the JSON file the grants persist in.
type grantsFile struct {
	Version  int      `json:"version"`
	Grants   []Grant  `json:"grants"`
	Reviewed []string `json:"reviewed"`
}

// grantStore holds the grants in memory and, when it has a path, writes
// every change to the file atomically (temp file, fsync, rename).
type grantStore struct {
	mu   sync.Mutex
	path string
	data grantsFile
}

func openGrants(path string) (*grantStore, error) {
	s := &grantStore{path: path, data: grantsFile{Version: 1}}
	if path == "" {
		return s, nil
	}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return nil, fmt.Errorf("netgate: read grants: %w", err)
	}
	if err := json.Unmarshal(b, &s.data); err != nil {
		return nil, fmt.Errorf("netgate: %s: %v; restore the file or move it away to start with no grants", path, err)
	}
	if s.data.Version != 1 {
		return nil, fmt.Errorf("netgate: %s: version %d is not 1; move it away to start with no grants", path, s.data.Version)
	}
	return s, nil
}

func (s *grantStore) has(app, origin string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.data.Grants {
		if g.App == app && g.Origin == origin {
			return true
		}
	}
	return false
}

func (s *grantStore) reviewed(app string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.data.Reviewed, app)
}

func (s *grantStore) list(app string) []Grant {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Grant
	for _, g := range s.data.Grants {
		if g.App == app {
			out = append(out, g)
		}
	}
	return out
}

// update applies change to a copy and keeps it only when it was saved, so a
// failed write leaves the grants as they were.
func (s *grantStore) update(change func(d *grantsFile) bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	next := grantsFile{
		Version:  1,
		Grants:   slices.Clone(s.data.Grants),
		Reviewed: slices.Clone(s.data.Reviewed),
	}
	if !change(&next) {
		return nil
	}
	if err := s.save(next); err != nil {
		return err
	}
	s.data = next
	return nil
}

func (s *grantStore) save(d grantsFile) error {
	if s.path == "" {
		return nil
	}
	if d.Grants == nil {
		d.Grants = []Grant{}
	}
	if d.Reviewed == nil {
		d.Reviewed = []string{}
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("netgate: encode grants: %w", err)
	}
	dir := filepath.Dir(s.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("netgate: save grants: %w", err)
	}
	if err := atomicfile.Write(s.path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("netgate: save grants: %w", err)
	}
	return nil
}

func (s *grantStore) add(app, origin string, now time.Time) (bool, error) {
	added := false
	err := s.update(func(d *grantsFile) bool {
		for _, g := range d.Grants {
			if g.App == app && g.Origin == origin {
				return false
			}
		}
		d.Grants = append(d.Grants, Grant{App: app, Origin: origin, Since: now.UTC()})
		added = true
		return true
	})
	return added && err == nil, err
}

func (s *grantStore) remove(app, origin string) (bool, error) {
	removed := false
	err := s.update(func(d *grantsFile) bool {
		d.Grants = slices.DeleteFunc(d.Grants, func(g Grant) bool {
			hit := g.App == app && g.Origin == origin
			removed = removed || hit
			return hit
		})
		return removed
	})
	return removed && err == nil, err
}

func (s *grantStore) markReviewed(app string) error {
	return s.update(func(d *grantsFile) bool {
		if slices.Contains(d.Reviewed, app) {
			return false
		}
		d.Reviewed = append(d.Reviewed, app)
		return true
	})
}

func (s *grantStore) forget(app string) ([]Grant, error) {
	var gone []Grant
	err := s.update(func(d *grantsFile) bool {
		d.Grants = slices.DeleteFunc(d.Grants, func(g Grant) bool {
			if g.App == app {
				gone = append(gone, g)
				return true
			}
			return false
		})
		n := len(d.Reviewed)
		d.Reviewed = slices.DeleteFunc(d.Reviewed, func(a string) bool { return a == app })
		return len(gone) > 0 || n != len(d.Reviewed)
	})
	if err != nil {
		return nil, err
	}
	return gone, nil
}
