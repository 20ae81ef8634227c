package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

const notesDoc = `<!doctype html><title>Notes</title><p>notes</p>`

// install installs the notes app on every cluster (forwards are answered
// for installed apps only).
func install(t *testing.T, cs ...*Cluster) {
	t.Helper()
	for _, c := range cs {
		if err := c.Install(context.Background(), map[string][]byte{"notes": []byte(notesDoc)}); err != nil {
			t.Fatal(err)
		}
	}
}

// postTo sends body to c's internal listener with the headers of h (and
// the signature sig made, if any) and returns the status and answer.
func postTo(t *testing.T, c *Cluster, body []byte, sig func(*http.Request)) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, c.InternalURL()+forwardPath, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if sig != nil {
		sig(req)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	return res.StatusCode, res.Header, out
}

// Forwarded requests are signed: a request that is not signed under the
// cluster secret, is signed for another body or another replica, is stale,
// from the future or a replay is refused (401) and reaches nothing; a
// fresh one signed by a replica is answered, its answer signed for it. The
// secret is nowhere in PostgreSQL, only its verifier.
func TestForwardedRequestsAreSignedAndFresh(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	a := openCluster(t, pg, s3.url("sign"), 2*time.Second)
	b := openCluster(t, pg, s3.url("sign"), 2*time.Second)
	install(t, a, b)
	mustExec(t, a, "alice", "notes", "CREATE TABLE notes(text)")
	mustExec(t, a, "alice", "notes", "INSERT INTO notes VALUES ('alice''s secret')")
	if r := mustExec(t, b, "alice", "notes", "SELECT text FROM notes"); one(r) != "alice's secret" {
		t.Fatalf("forwarded through b: %v", r.Rows)
	}
	body, _ := json.Marshal(forwarded{User: "alice", App: "notes", Epoch: 1, Frame: json.RawMessage(`{"v":1,"type":"snug:db-request","requestId":"x","instanceId":"y","op":"exec","sql":"SELECT text FROM notes"}`)})
	other, _ := json.Marshal(forwarded{User: "alice", App: "notes", Epoch: 1, Frame: json.RawMessage(`{"v":1,"type":"snug:db-request","requestId":"x","instanceId":"y","op":"exec","sql":"DELETE FROM notes"}`)})

	// A fresh request signed by b for a is answered, and the answer is
	// signed for it.
	var signed http.Header
	var nonce string
	code, h, out := postTo(t, a, body, func(r *http.Request) {
		var err error
		if nonce, err = b.signer.sign(r, a.ID(), body); err != nil {
			t.Fatal(err)
		}
		signed = r.Header.Clone()
	})
	if code != http.StatusOK || !strings.Contains(string(out), "alice's secret") {
		t.Fatalf("a signed forward: HTTP %d %s", code, out)
	}
	if err := b.signer.checkAnswer(h, nonce, out); err != nil {
		t.Errorf("the owner's answer: %v", err)
	}
	if err := b.signer.checkAnswer(h, "another-nonce", out); err == nil {
		t.Error("the answer's signature holds for another request")
	}

	stranger := newSigner([]string{"a-secret-of-another-cluster-0123456789"}, "")
	skewed := func(d time.Duration) *signer {
		s := newSigner([]string{testSecret}, "")
		s.now = func() time.Time { return time.Now().Add(d) }
		return s
	}
	for _, tc := range []struct {
		name string
		body []byte
		sig  func(*http.Request)
	}{
		{"no signature", body, nil},
		{"the old bearer secret", body, func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+testSecret) }},
		{"replayed", body, func(r *http.Request) { r.Header = signed.Clone() }},
		{"another body under the signature", other, func(r *http.Request) { r.Header = signed.Clone() }},
		{"bad signature", body, func(r *http.Request) {
			b.signer.sign(r, a.ID(), body)
			s := []byte(r.Header.Get(hdrSignature))
			s[0] ^= 1
			r.Header.Set(hdrSignature, string(s))
		}},
		{"another secret", body, func(r *http.Request) { stranger.sign(r, a.ID(), body) }},
		{"for another replica", body, func(r *http.Request) { b.signer.sign(r, b.ID(), body) }},
		{"stale", body, func(r *http.Request) { skewed(-time.Minute).sign(r, a.ID(), body) }},
		{"from the future", body, func(r *http.Request) { skewed(time.Minute).sign(r, a.ID(), body) }},
	} {
		code, _, out := postTo(t, a, tc.body, tc.sig)
		if code != http.StatusUnauthorized || strings.Contains(string(out), "secret'") {
			t.Errorf("%s: HTTP %d %s, want 401", tc.name, code, out)
		}
	}
	if r := mustExec(t, a, "alice", "notes", "SELECT count(*) FROM notes"); one(r) != "1" {
		t.Errorf("after the refused requests alice has %v notes, want 1", r.Rows)
	}

	// A forwarder takes no unsigned answer.
	fake := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"v":1,"type":"snug:db-response","requestId":"x","ok":true,"streaming":false,"data":{"columns":["text"],"rows":[["forged"]]}}`))
	}))
	defer fake.Close()
	ran := false
	if resp, err := b.post(context.Background(), leaseRow{owner: "fake", ownerURL: fake.URL}, body, func() { ran = true }); err == nil || ran {
		t.Errorf("b took an unsigned answer: %+v (ran %v)", resp, ran)
	}
	// Nor an unsigned notice that the request ran, which would hand its
	// lane on before the owner ran it (order.go).
	forged := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(ranPrefix + strings.Repeat("00", 32) + "\n"))
	}))
	defer forged.Close()
	if resp, err := b.post(context.Background(), leaseRow{owner: "fake", ownerURL: forged.URL}, body, func() { ran = true }); err == nil || ran {
		t.Errorf("b took an unsigned notice: %+v (ran %v)", resp, ran)
	}

	// PostgreSQL holds the secret's verifier, never the secret.
	conn, err := pgx.Connect(context.Background(), pg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var dump string
	if err := conn.QueryRow(context.Background(), `SELECT coalesce((SELECT string_agg(name || value, ',') FROM snug_cluster), '') ||
		(SELECT string_agg(verifier, ',') FROM snug_cluster_keys)`).Scan(&dump); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(dump, testSecret) || dump != verifier(testSecret) {
		t.Errorf("PostgreSQL holds %q, want only the verifier %q", dump, verifier(testSecret))
	}
}

// The cluster secret rotates without a stop: replicas list the new secret
// after the old one, then before it, then alone, restarted one at a time,
// and forwards work both ways at every step; a replica with a secret no
// other uses does not start, and a retired secret is refused.
func TestClusterSecretRotation(t *testing.T) {
	pg, s3 := freshDB(t), startS3(t)
	const oldS, newS = "old-cluster-secret-0123456789abcdef-0", "new-cluster-secret-0123456789abcdef-1"
	open := func(secrets ...string) *Cluster {
		c := openClusterWith(t, Config{Postgres: pg, ObjectStore: s3.url("rot"), LeaseTTL: 2 * time.Second, Secrets: secrets})
		install(t, c)
		return c
	}
	user := 0
	crossCheck := func(step string, owner, reader *Cluster) {
		t.Helper()
		user++
		u := string(rune('a' + user))
		mustExec(t, owner, u, "notes", "CREATE TABLE notes(text)")
		mustExec(t, owner, u, "notes", "INSERT INTO notes VALUES (?)", step)
		if r := mustExec(t, reader, u, "notes", "SELECT text FROM notes"); one(r) != step {
			t.Fatalf("%s: read through the other replica: %v", step, r.Rows)
		}
	}
	a := open(oldS)
	b := open(oldS, newS) // phase 1: the new secret accepted, the old signs
	crossCheck("phase 1, b forwards to a", a, b)
	crossCheck("phase 1, a forwards to b", b, a)

	if _, err := Open(context.Background(), Config{Postgres: pg, ObjectStore: s3.url("rot"), DataDir: t.TempDir(),
		Secrets: []string{"a-wrong-secret-0123456789abcdef-0123"}}); err == nil || !strings.Contains(err.Error(), "--cluster-secret-file") {
		t.Fatalf("a replica with a secret no other uses: %v", err)
	}

	a.Close(context.Background())
	a = open(newS, oldS) // phase 2: the new one signs, the old still accepted
	crossCheck("phase 2, b (old) forwards to a (new)", a, b)
	crossCheck("phase 2, a (new) forwards to b", b, a)

	b.Close(context.Background())
	b = open(newS) // phase 3: the old secret retired
	crossCheck("phase 3, b forwards to a", a, b)
	crossCheck("phase 3, a forwards to b", b, a)

	body, _ := json.Marshal(forwarded{User: "b", App: "notes", Frame: json.RawMessage(`{"v":1,"type":"snug:db-request","requestId":"x","instanceId":"y","op":"exec","sql":"SELECT 1"}`)})
	retired := newSigner([]string{oldS}, "")
	if code, _, out := postTo(t, b, body, func(r *http.Request) { retired.sign(r, b.ID(), body) }); code != http.StatusUnauthorized {
		t.Errorf("a request signed with the retired secret: HTTP %d %s", code, out)
	}
}
