package cluster

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// A forwarded request is signed, not sent with a bearer secret: HMAC-SHA256
// with the cluster secret over the method, the path, the replica it is for,
// a timestamp, a nonce and the body's SHA-256. The owner refuses a request
// whose signature fails under every secret it holds (rotation), whose
// timestamp is more than maxSkew from its clock, whose nonce it has seen,
// or that names another replica; its answer is signed over the request's
// nonce, so a forwarder takes no answer made for another request or by
// anyone without the secret. The secret itself never reaches PostgreSQL:
// each replica stores a verifier (a hash of it) and refuses to start with a
// secret no other replica uses.

// Headers of a signed forward and its answer.
const (
	hdrTime      = "Snug-Time"
	hdrNonce     = "Snug-Nonce"
	hdrSignature = "Snug-Signature"
)

// maxSkew is how far a forwarded request's timestamp may be from the
// owner's clock: replicas' clocks must agree within it (NTP), and a
// captured request is refused once it is older.
const maxSkew = 10 * time.Second

// MinSecretBytes is the shortest cluster secret Open accepts.
const MinSecretBytes = 32

// errUnsigned is a forwarded request (or answer) without a valid signature.
var errUnsigned = errors.New("not signed by a replica of this cluster")

// signer signs this replica's forwards and answers and checks others'.
type signer struct {
	keys [][]byte // keys[0] signs; every one is accepted
	self string   // this replica's id: a request must be for it
	now  func() time.Time

	mu      sync.Mutex
	seen    map[[16]byte]struct{} // nonces of the current generation
	prev    map[[16]byte]struct{} // and of the one before
	rotated time.Time
}

func newSigner(secrets []string, self string) *signer {
	s := &signer{self: self, now: time.Now, seen: map[[16]byte]struct{}{}}
	for _, k := range secrets {
		s.keys = append(s.keys, []byte(k))
	}
	return s
}

// mac is HMAC-SHA256 under key over fields, each length-prefixed.
func mac(key []byte, fields ...string) []byte {
	m := hmac.New(sha256.New, key)
	for _, f := range fields {
		fmt.Fprintf(m, "%d:%s", len(f), f)
	}
	return m.Sum(nil)
}

func bodyDigest(body []byte) string {
	d := sha256.Sum256(body)
	return hex.EncodeToString(d[:])
}

// sign signs req, a forward of body to replica to, and returns its nonce.
func (s *signer) sign(req *http.Request, to string, body []byte) (string, error) {
	var n [16]byte
	if _, err := rand.Read(n[:]); err != nil {
		return "", fmt.Errorf("nonce: %w", err)
	}
	nonce := hex.EncodeToString(n[:])
	ts := strconv.FormatInt(s.now().UnixMilli(), 10)
	sig := mac(s.keys[0], "snug-forward-v1", req.Method, req.URL.Path, to, ts, nonce, bodyDigest(body))
	req.Header.Set(hdrTime, ts)
	req.Header.Set(hdrNonce, nonce)
	req.Header.Set(hdrSignature, hex.EncodeToString(sig))
	return nonce, nil
}

// verify checks a forwarded request to this replica and records its nonce;
// it returns the nonce for the answer's signature.
func (s *signer) verify(r *http.Request, body []byte) (string, error) {
	ts, nonce := r.Header.Get(hdrTime), r.Header.Get(hdrNonce)
	sig, err := hex.DecodeString(r.Header.Get(hdrSignature))
	if err != nil || len(sig) != sha256.Size {
		return "", errUnsigned
	}
	if !s.signedByAny(sig, "snug-forward-v1", r.Method, r.URL.Path, s.self, ts, nonce, bodyDigest(body)) {
		return "", errUnsigned
	}
	ms, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return "", errUnsigned
	}
	if d := s.now().Sub(time.UnixMilli(ms)); d > maxSkew || d < -maxSkew {
		return "", fmt.Errorf("signed %s from this replica's clock (more than %s): stale or the clocks disagree", d.Round(time.Millisecond), maxSkew)
	}
	var n [16]byte
	if b, err := hex.DecodeString(nonce); err != nil || len(b) != len(n) {
		return "", errUnsigned
	} else {
		copy(n[:], b)
	}
	if !s.remember(n) {
		return "", errors.New("a replayed request (its nonce was seen)")
	}
	return nonce, nil
}

// remember records nonce and reports whether it is new. Nonces are kept in
// two generations of 2×maxSkew each, so one is remembered for at least as
// long as its timestamp is accepted.
func (s *signer) remember(n [16]byte) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now := s.now(); now.Sub(s.rotated) >= 2*maxSkew {
		s.prev, s.seen, s.rotated = s.seen, map[[16]byte]struct{}{}, now
	}
	if _, ok := s.seen[n]; ok {
		return false
	}
	if _, ok := s.prev[n]; ok {
		return false
	}
	s.seen[n] = struct{}{}
	return true
}

// signAnswer signs the owner's answer to the request of nonce.
func (s *signer) signAnswer(h http.Header, nonce string, body []byte) {
	h.Set(hdrSignature, hex.EncodeToString(mac(s.keys[0], "snug-answer-v1", nonce, bodyDigest(body))))
}

// ranLine is the owner's notice, ahead of its answer to the request of
// nonce, that the request ran (forward in route.go): one line.
func (s *signer) ranLine(nonce string) string {
	return ranPrefix + hex.EncodeToString(mac(s.keys[0], "snug-ran-v1", nonce)) + "\n"
}

// ranPrefix begins the ran notice; an answer begins with '{'.
const ranPrefix = "ran "

// checkRan checks the owner's notice that the request of nonce ran.
func (s *signer) checkRan(nonce, line string) error {
	sig, err := hex.DecodeString(strings.TrimSuffix(strings.TrimPrefix(line, ranPrefix), "\n"))
	if err != nil || !strings.HasPrefix(line, ranPrefix) {
		return errUnsigned
	}
	if !s.signedByAny(sig, "snug-ran-v1", nonce) {
		return errUnsigned
	}
	return nil
}

// checkAnswer checks the owner's answer to the request of nonce.
func (s *signer) checkAnswer(h http.Header, nonce string, body []byte) error {
	sig, err := hex.DecodeString(h.Get(hdrSignature))
	if err != nil {
		return errUnsigned
	}
	if !s.signedByAny(sig, "snug-answer-v1", nonce, bodyDigest(body)) {
		return errUnsigned
	}
	return nil
}

// signedByAny reports whether sig is the MAC of fields under any of the
// secrets (each is tried, whichever matches).
func (s *signer) signedByAny(sig []byte, fields ...string) bool {
	ok := false
	for _, k := range s.keys {
		ok = hmac.Equal(sig, mac(k, fields...)) || ok
	}
	return ok
}

// verifier is what PostgreSQL keeps of a secret: its SHA-256, under a
// label of its own (a secret is at least MinSecretBytes of randomness, so
// a fast hash does not help guessing it).
func verifier(secret string) string {
	d := sha256.Sum256([]byte("snug-cluster-verifier-v1\x00" + secret))
	return hex.EncodeToString(d[:])
}

// keysLock is the advisory lock key replicas take to check and record
// their secrets' verifiers one at a time.
const keysLock = migrateLock + 1

// checkSecrets refuses secrets none of which the cluster's other replicas
// use (their verifiers in snug_cluster_keys), then records these ones'.
// The first replica of a cluster records its own.
func checkSecrets(ctx context.Context, pool *pgxpool.Pool, secrets []string) error {
	tx, err := pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("check the cluster secret: %v", redact(err))
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", int64(keysLock)); err != nil {
		return fmt.Errorf("check the cluster secret: %v", redact(err))
	}
	rows, err := tx.Query(ctx, `SELECT verifier FROM snug_cluster_keys`)
	if err != nil {
		return fmt.Errorf("check the cluster secret: %v", redact(err))
	}
	var known []string
	for rows.Next() {
		var v string
		if err := rows.Scan(&v); err != nil {
			return fmt.Errorf("check the cluster secret: %v", redact(err))
		}
		known = append(known, v)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("check the cluster secret: %v", redact(err))
	}
	mine := make([]string, len(secrets))
	for i, s := range secrets {
		mine[i] = verifier(s)
	}
	if len(known) > 0 && !slices.ContainsFunc(mine, func(v string) bool { return slices.Contains(known, v) }) {
		return errors.New("the cluster secret is none the other replicas use: give every replica the same --cluster-secret-file (to rotate, list the new secret and the old one)")
	}
	for _, v := range mine {
		if _, err := tx.Exec(ctx, `INSERT INTO snug_cluster_keys(verifier, seen_at) VALUES ($1, now())
			ON CONFLICT (verifier) DO UPDATE SET seen_at = now()`, v); err != nil {
			return fmt.Errorf("record the cluster secret's verifier: %v", redact(err))
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("record the cluster secret's verifier: %v", redact(err))
	}
	return nil
}
