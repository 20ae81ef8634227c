package netgate

import (
	"context"
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
// the host's data directory (or the host's GrantStore), keyed by the user and
// the host's own app key, and never travel with an exported app.
type Grant struct {
	// User is the signed-in user the grant is for; "" is the one local
	// user of a host without an authenticator.
	User   string    `json:"user,omitempty"`
	App    string    `json:"app"`
	Origin string    `json:"origin"`
	Since  time.Time `json:"since"`
}

// GrantStore keeps grants and import reviews for a Gate, keyed by (user,
// app). The default is the JSON file of WithGrantsFile (or memory); a host
// of many replicas keeps them in a database every replica reads
// (hostkit/cluster). A failed read refuses the request (HOST_ERROR), so a
// store that cannot answer never lets a request through.
type GrantStore interface {
	HasGrant(ctx context.Context, user, app, origin string) (bool, error)
	ListGrants(ctx context.Context, user, app string) ([]Grant, error)
	// AddGrant keeps g; added is false when (user, app, origin) had one.
	AddGrant(ctx context.Context, g Grant) (added bool, err error)
	RemoveGrant(ctx context.Context, user, app, origin string) (removed bool, err error)
	Reviewed(ctx context.Context, user, app string) (bool, error)
	MarkReviewed(ctx context.Context, user, app string) error
	// ForgetApp drops the app's grants and review, returning the grants.
	ForgetApp(ctx context.Context, user, app string) (gone []Grant, err error)
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

// reviewKey is how the file lists a reviewed app: the key alone for the
// one local user (the file's format before users), user NUL key otherwise.
func reviewKey(user, app string) string {
	if user == "" {
		return app
	}
	return user + "\x00" + app
}

func (s *grantStore) HasGrant(_ context.Context, user, app, origin string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, g := range s.data.Grants {
		if g.User == user && g.App == app && g.Origin == origin {
			return true, nil
		}
	}
	return false, nil
}

func (s *grantStore) Reviewed(_ context.Context, user, app string) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Contains(s.data.Reviewed, reviewKey(user, app)), nil
}

func (s *grantStore) ListGrants(_ context.Context, user, app string) ([]Grant, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Grant
	for _, g := range s.data.Grants {
		if g.User == user && g.App == app {
			out = append(out, g)
		}
	}
	return out, nil
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

func (s *grantStore) AddGrant(_ context.Context, gr Grant) (bool, error) {
	added := false
	err := s.update(func(d *grantsFile) bool {
		for _, g := range d.Grants {
			if g.User == gr.User && g.App == gr.App && g.Origin == gr.Origin {
				return false
			}
		}
		gr.Since = gr.Since.UTC()
		d.Grants = append(d.Grants, gr)
		added = true
		return true
	})
	return added && err == nil, err
}

func (s *grantStore) RemoveGrant(_ context.Context, user, app, origin string) (bool, error) {
	removed := false
	err := s.update(func(d *grantsFile) bool {
		d.Grants = slices.DeleteFunc(d.Grants, func(g Grant) bool {
			hit := g.User == user && g.App == app && g.Origin == origin
			removed = removed || hit
			return hit
		})
		return removed
	})
	return removed && err == nil, err
}

func (s *grantStore) MarkReviewed(_ context.Context, user, app string) error {
	k := reviewKey(user, app)
	return s.update(func(d *grantsFile) bool {
		if slices.Contains(d.Reviewed, k) {
			return false
		}
		d.Reviewed = append(d.Reviewed, k)
		return true
	})
}

func (s *grantStore) ForgetApp(_ context.Context, user, app string) ([]Grant, error) {
	var gone []Grant
	k := reviewKey(user, app)
	err := s.update(func(d *grantsFile) bool {
		d.Grants = slices.DeleteFunc(d.Grants, func(g Grant) bool {
			if g.User == user && g.App == app {
				gone = append(gone, g)
				return true
			}
			return false
		})
		n := len(d.Reviewed)
		d.Reviewed = slices.DeleteFunc(d.Reviewed, func(a string) bool { return a == k })
		return len(gone) > 0 || n != len(d.Reviewed)
	})
	if err != nil {
		return nil, err
	}
	return gone, nil
}
