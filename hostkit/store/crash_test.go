package store

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// crashDirEnv, when set, makes TestCrashSafety the child: it writes to the
// store in that directory and acknowledges each write on stdout until the
// parent kills it.
const crashDirEnv = "SNUG_STORE_CRASH_CHILD_DIR"

func crashChild(dir string) {
	s, err := Open(dir, Options{})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	if _, err := s.Exec(bg, "app", "CREATE TABLE IF NOT EXISTS acked(i INTEGER PRIMARY KEY, pad TEXT)", nil); err != nil {
		fmt.Println("error", err)
		os.Exit(2)
	}
	for i := 0; ; i++ {
		// Padding makes the WAL pass checkpoints while the parent watches.
		if _, err := s.Exec(bg, "app", "INSERT INTO acked VALUES (?, hex(randomblob(2000)))", []any{i}); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		if err := s.KVSet(bg, "app", "k"+strconv.Itoa(i), json.RawMessage(strconv.Itoa(i))); err != nil {
			fmt.Println("error", err)
			os.Exit(2)
		}
		fmt.Printf("ack %d\n", i) // stdout is unbuffered: the parent sees it now
	}
}

// TestCrashSafety kills (SIGKILL) a process in the middle of its writes and
// checks that every write it acknowledged is there after reopening.
func TestCrashSafety(t *testing.T) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(dir)
		return
	}
	dir := t.TempDir()
	for round, acks := range []int{40, 700} {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashSafety$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		last := -1
		sc := bufio.NewScanner(out)
		deadline := time.AfterFunc(30*time.Second, func() { _ = cmd.Process.Kill() })
		for sc.Scan() {
			line := sc.Text()
			if strings.HasPrefix(line, "error") {
				t.Fatalf("child: %s", line)
			}
			if n, ok := strings.CutPrefix(line, "ack "); ok {
				last, _ = strconv.Atoi(n)
				if last+1 >= acks {
					break
				}
			}
		}
		deadline.Stop()
		if err := cmd.Process.Kill(); err != nil { // SIGKILL, mid-write
			t.Fatal(err)
		}
		_ = cmd.Wait()
		if last+1 < acks {
			t.Fatalf("round %d: child acknowledged only %d writes", round, last+1)
		}

		s, err := Open(dir, Options{})
		if err != nil {
			t.Fatal(err)
		}
		r, err := s.Exec(bg, "app", "SELECT count(*), coalesce(max(i), -1) FROM acked WHERE i <= ?", []any{last})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := rowsJSON(t, r), fmt.Sprintf("[[%d,%d]]", last+1, last); got != want {
			t.Fatalf("round %d: acknowledged rows after kill -9: %s, want %s", round, got, want)
		}
		for _, i := range []int{0, last / 2, last} {
			v, found, err := s.KVGet(bg, "app", "k"+strconv.Itoa(i))
			if err != nil || !found || string(v) != strconv.Itoa(i) {
				t.Fatalf("round %d: kv k%d after kill -9: %s %v %v", round, i, v, found, err)
			}
		}
		if r := mustExec(t, s, "app", "PRAGMA integrity_check"); rowsJSON(t, r) != `[["ok"]]` {
			t.Fatalf("integrity after kill -9: %s", rowsJSON(t, r))
		}
		// Start the next round from an empty table.
		mustExec(t, s, "app", "DELETE FROM acked")
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		t.Logf("round %d: %d acknowledged writes survived kill -9", round, last+1)
	}
}

// TestImportAfterCrash imports into a database whose host was killed with
// committed pages still in the WAL: the import is the first call after the
// restart, and the WAL must not be replayed onto the imported file.
func TestImportAfterCrash(t *testing.T) {
	if os.Getenv(crashDirEnv) != "" {
		t.Skip("child of TestCrashSafety")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashSafety$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	for n := 0; n < 300 && sc.Scan(); {
		if strings.HasPrefix(sc.Text(), "ack ") {
			n++
		}
	}
	_ = cmd.Process.Kill()
	_ = cmd.Wait()
	info, err := os.Stat(filepath.Join(dir, "app.db-wal"))
	if err != nil || info.Size() == 0 {
		t.Fatalf("no WAL left by the killed process: %v", err)
	}

	src, _ := newStore(t, Options{})
	seed(t, src, "x")
	data, err := src.Export(bg, "x")
	if err != nil {
		t.Fatal(err)
	}
	s := openStore(t, dir, Options{})
	if _, err := s.Import(bg, "app", data); err != nil {
		t.Fatal(err)
	}
	unchanged(t, s, "app")
	if _, err := s.Exec(bg, "app", "SELECT * FROM acked", nil); err == nil {
		t.Fatal("the old table survived the import")
	}
	if r := mustExec(t, s, "app", "PRAGMA integrity_check"); rowsJSON(t, r) != `[["ok"]]` {
		t.Fatal(rowsJSON(t, r))
	}
}
