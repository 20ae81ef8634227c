package cluster

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// A write through one replica is read through another (forwarded to the
// owner); when the owner closes, the other takes the database over,
// restored from object storage, with the write in it.
func TestForwardAndHandOver(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	a := openCluster(t, pg, s3.url("hand"), 2*time.Second)
	b := openCluster(t, pg, s3.url("hand"), 2*time.Second)
	mustExec(t, a, "alice", "todo", "CREATE TABLE t(x)")
	mustExec(t, a, "alice", "todo", "INSERT INTO t VALUES (1), (2)")
	if r := mustExec(t, b, "alice", "todo", "SELECT sum(x) FROM t"); one(r) != "3" {
		t.Fatalf("through b: %v", r.Rows)
	}
	b.mu.Lock()
	_, bOwns := b.owned[dbKey{"alice", "todo"}]
	b.mu.Unlock()
	if bOwns {
		t.Fatal("b took the database while a owned it")
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	mustExec(t, b, "alice", "todo", "INSERT INTO t VALUES (3)")
	if r := mustExec(t, b, "alice", "todo", "SELECT count(*) FROM t"); one(r) != "3" {
		t.Fatalf("after the hand-over: %v", r.Rows)
	}
	t.Logf("objects: %v", s3.keys(t, "hand/"))
}

// Open checks both services before anything is served and says which one
// failed and what to do; nothing exits the process.
func TestOpenNamesWhatFails(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	sec := []string{testSecret}
	dead := "postgres://snug@127.0.0.1:1/none?sslmode=disable&connect_timeout=2"
	for _, tc := range []struct {
		name    string
		cfg     Config
		mention []string
	}{
		{"no postgres", Config{ObjectStore: s3.url("x"), DataDir: t.TempDir(), Secrets: sec}, []string{"--postgres"}},
		{"no object store", Config{Postgres: pg, DataDir: t.TempDir(), Secrets: sec}, []string{"--object-store"}},
		{"postgres down", Config{Postgres: dead, ObjectStore: s3.url("x"), DataDir: t.TempDir(), Secrets: sec}, []string{"PostgreSQL at 127.0.0.1:1/none", "is it running"}},
		{"postgres password kept out", Config{Postgres: "postgres://snug:hunter2@127.0.0.1:1/none?connect_timeout=2", ObjectStore: s3.url("x"), DataDir: t.TempDir(), Secrets: sec}, []string{"PostgreSQL"}},
		{"not s3", Config{Postgres: pg, ObjectStore: "gs://bucket/p", DataDir: t.TempDir(), Secrets: sec}, []string{"scheme must be s3"}},
		{"no bucket", Config{Postgres: pg, ObjectStore: "s3:///p", DataDir: t.TempDir(), Secrets: sec}, []string{"names no bucket"}},
		{"missing bucket", Config{Postgres: pg, ObjectStore: strings.Replace(s3.url("x"), "s3://snug/", "s3://nosuch/", 1), DataDir: t.TempDir(), Secrets: sec}, []string{"object store s3://nosuch/x", "check the bucket exists"}},
		{"object store down", Config{Postgres: pg, ObjectStore: "s3://snug/x?endpoint=http://127.0.0.1:1&region=us-east-1", DataDir: t.TempDir(), Secrets: sec}, []string{"object store s3://snug/x", "endpoint"}},
		{"no secret", Config{Postgres: pg, ObjectStore: s3.url("x"), DataDir: t.TempDir()}, []string{"--cluster-secret-file"}},
		{"short secret", Config{Postgres: pg, ObjectStore: s3.url("x"), DataDir: t.TempDir(), Secrets: []string{"hunter2"}}, []string{"at least 32"}},
		{"short lease", Config{Postgres: pg, ObjectStore: s3.url("x"), DataDir: t.TempDir(), LeaseTTL: time.Millisecond, Secrets: sec}, []string{"LeaseTTL"}},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		began := time.Now()
		c, err := Open(ctx, tc.cfg)
		cancel()
		t.Logf("%s: %s: %v", tc.name, time.Since(began).Round(time.Millisecond), err)
		if err == nil {
			c.Close(context.Background())
			t.Errorf("%s: Open succeeded", tc.name)
			continue
		}
		for _, m := range tc.mention {
			if !strings.Contains(err.Error(), m) {
				t.Errorf("%s: %q does not say %q", tc.name, err, m)
			}
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: the error shows the password: %v", tc.name, err)
		}
	}
}

// ltxUnder lists the LTX files under dir.
func ltxUnder(dir string) []string {
	var list []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".ltx") {
			list = append(list, p)
		}
		return nil
	})
	return list
}

// TestStagingDefaultsToMemory: by default a replica stages its uploads in a
// private directory on /dev/shm when that is a memory file system with
// room (mode 0700, an unpredictable name, its process id inside, gone at
// Close), beside its databases otherwise; StageBeside keeps them beside.
func TestStagingDefaultsToMemory(t *testing.T) {
	s3 := startS3(t)
	memory := isMemoryFS(memoryStagingRoot, MinMemoryStaging)
	t.Logf("/dev/shm is a memory file system with %d bytes free: %v", MinMemoryStaging, memory)
	for _, tc := range []struct {
		staging  string
		inMemory bool
	}{{"", memory}, {StageBeside, false}} {
		a := openClusterWith(t, Config{Postgres: freshDB(t), ObjectStore: s3.url("default-" + tc.staging), LeaseTTL: 2 * time.Second, Secrets: []string{testSecret}, StagingDir: tc.staging})
		mustExec(t, a, "alice", "todo", "CREATE TABLE t(x)")
		mustExec(t, a, "alice", "todo", "INSERT INTO t VALUES (1)")
		beside := ltxUnder(a.dbDir)
		if !tc.inMemory {
			if a.stageDir != "" || len(beside) == 0 {
				t.Fatalf("StagingDir %q: staged in %q, %d LTX files beside the databases", tc.staging, a.stageDir, len(beside))
			}
			continue
		}
		if filepath.Dir(a.stageDir) != memoryStagingRoot || !strings.HasPrefix(filepath.Base(a.stageDir), stagingPattern) {
			t.Fatalf("default staging in %q", a.stageDir)
		}
		if fi, err := os.Lstat(a.stageDir); err != nil || fi.Mode().Perm() != 0o700 || !fi.IsDir() {
			t.Fatalf("the staging directory: %v %v", fi, err)
		}
		if pid, err := os.ReadFile(filepath.Join(a.stageDir, stagingOwnerFile)); err != nil || string(pid) != strconv.Itoa(os.Getpid()) {
			t.Fatalf("the staging directory's owner: %q %v", pid, err)
		}
		if staged := ltxUnder(a.stageDir); len(staged) == 0 || len(beside) != 0 {
			t.Fatalf("LTX files in memory: %v; beside the databases: %v", staged, beside)
		}
		if err := a.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(a.stageDir); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("the staging directory after Close: %v", err)
		}
	}
}

// A replica whose /dev/shm has too little room stages beside its
// databases, and says so with the fix: a container's /dev/shm is often 64
// MiB, and without a word every acknowledgement would just wait for the
// disk.
func TestStagingSaysWhenItStagesOnDisk(t *testing.T) {
	var mu sync.Mutex
	var logs []string
	c, err := Open(context.Background(), Config{Postgres: freshDB(t), ObjectStore: startS3(t).url("small"), LeaseTTL: 2 * time.Second,
		Secrets: []string{testSecret}, DataDir: t.TempDir(), minMemoryStaging: 1 << 62,
		Logf: func(format string, args ...any) {
			mu.Lock()
			logs = append(logs, fmt.Sprintf(format, args...))
			mu.Unlock()
		}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close(context.Background()) })
	if c.stageDir != "" {
		t.Fatalf("staged in %q, want beside the databases", c.stageDir)
	}
	mu.Lock()
	said := strings.Join(logs, "\n")
	mu.Unlock()
	for _, want := range []string{"beside the databases", "waits for the disk", memoryStagingRoot, "--shm-size", "--cluster-staging"} {
		if !strings.Contains(said, want) {
			t.Errorf("the log does not say %q: %s", want, said)
		}
	}
}

// TestStagingSweepsWhatDeadReplicasLeft: a new private staging directory
// first removes those of this user's processes that no longer run (a
// replica killed before its Close), and nothing else: not a live
// process's, not one without an owner file, not a symlink or what it
// points to, not another name.
func TestStagingSweepsWhatDeadReplicasLeft(t *testing.T) {
	root, elsewhere := t.TempDir(), t.TempDir()
	done := exec.Command("true")
	if err := done.Run(); err != nil {
		t.Fatal(err)
	}
	dead := strconv.Itoa(done.Process.Pid)
	mk := func(dir, pid string) string {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		if pid != "" {
			if err := os.WriteFile(filepath.Join(dir, stagingOwnerFile), []byte(pid), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		return dir
	}
	gone := mk(filepath.Join(root, stagingPattern+"dead"), dead)
	kept := []string{
		mk(filepath.Join(root, stagingPattern+"live"), strconv.Itoa(os.Getppid())),
		mk(filepath.Join(root, stagingPattern+"nopid"), ""),
		mk(filepath.Join(root, "other"), dead),
		mk(filepath.Join(elsewhere, "target"), dead),
	}
	link := filepath.Join(root, stagingPattern+"link")
	if err := os.Symlink(kept[3], link); err != nil {
		t.Fatal(err)
	}
	dir, err := privateStaging(root)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(gone); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a dead process's staging directory stayed: %v", err)
	}
	for _, k := range append(kept, link, dir) {
		if _, err := os.Lstat(k); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	if _, err := os.Stat(filepath.Join(kept[3], stagingOwnerFile)); err != nil {
		t.Errorf("the symlink's target was touched: %v", err)
	}
}

// With StagingDir, Litestream stages its uploads there (a directory of the
// replica's own, gone at Close) and nothing beside the databases; the
// writes are uploaded all the same: another replica restores them.
func TestStagingDirHoldsUploads(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	stage := t.TempDir()
	a := openClusterWith(t, Config{Postgres: pg, ObjectStore: s3.url("stage"), LeaseTTL: 2 * time.Second, Secrets: []string{testSecret}, StagingDir: stage})
	mustExec(t, a, "alice", "todo", "CREATE TABLE t(x)")
	mustExec(t, a, "alice", "todo", "INSERT INTO t VALUES (1), (2)")
	staged, beside := ltxUnder(filepath.Join(stage, "replica-"+a.id)), ltxUnder(a.dbDir)
	if len(staged) == 0 || len(beside) != 0 {
		t.Fatalf("LTX files staged under StagingDir: %v; beside the databases: %v", staged, beside)
	}
	if err := a.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(stage, "replica-"+a.id)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("the staging directory after Close: %v", err)
	}
	b := openCluster(t, pg, s3.url("stage"), 2*time.Second)
	if r := mustExec(t, b, "alice", "todo", "SELECT sum(x) FROM t"); one(r) != "3" {
		t.Fatalf("restored by another replica: %v", r.Rows)
	}
}

// Level 1 merges the level-0 files (one per round) every few seconds, so a
// takeover restores a few seconds of them rather than up to 30 s: writes
// spread over a few seconds are in a level-1 object within 5 s and the
// merge's own time.
func TestLevelOneMergesEveryFewSeconds(t *testing.T) {
	if got := compactionLevels(); got[1].Interval != 5*time.Second || got.Validate() != nil {
		t.Fatalf("levels %v: level 1 every %s (%v)", got, got[1].Interval, got.Validate())
	}
	pg, s3 := freshDB(t), startS3(t)
	c := openCluster(t, pg, s3.url("merge"), 10*time.Second)
	mustExec(t, c, "alice", "todo", "CREATE TABLE t(x)")
	for i := range 10 {
		mustExec(t, c, "alice", "todo", "INSERT INTO t VALUES (?)", i)
		time.Sleep(50 * time.Millisecond)
	}
	deadline := time.Now().Add(5*time.Second + 10*time.Second) // the interval, and a slow machine's merge
	for {
		for _, k := range s3.keys(t, "merge/") {
			if strings.Contains(k, "/0001/") {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("no level-1 object 15 s after the writes: %v", s3.keys(t, "merge/"))
		}
		time.Sleep(100 * time.Millisecond) // polling the bucket
	}
}
