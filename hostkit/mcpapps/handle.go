package mcpapps

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// A handle is what binds an MCP Apps view to one installed app: the open
// tool mints it, the host hands it to the view in the tool result's _meta
// (never in the HTML, which hosts may cache and share between calls), and
// the view presents it on every app-only call. It is
//
//	base64url(payload) "." base64url(HMAC-SHA256(secret, handleDomain || payload))
//
// with payload {"a": app key, "i": instanceId, "t": issued, unix seconds,
// "u": the user's tag}. The server trusts nothing else a call carries about
// who is calling: the storage namespace, the net grants and the agent's
// per-instance budget all come from the verified payload and the caller's
// authenticated user, the payload's app must be the app of the tool called,
// and its user tag must be that of the user the call authenticated as (a
// keyed hash of the user, so that the view never learns who its user is;
// empty for the one user of a server without an authenticator).

const (
	handleDomain = "snuggen mcp handle v1\x00"
	userDomain   = "snuggen mcp user v1\x00"
)

type handlePayload struct {
	App      string `json:"a"`
	Instance string `json:"i"`
	Issued   int64  `json:"t"`
	User     string `json:"u,omitempty"`
}

// errHandle is every handle refusal's answer: one message whatever failed,
// so a caller learns nothing about which part of a forgery was wrong.
var errHandle = errors.New("invalid or expired Snug handle: open the app again")

type signer struct {
	key    []byte
	maxAge time.Duration
	now    func() time.Time
}

func (s *signer) mint(app, user string) (string, handlePayload, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return "", handlePayload{}, fmt.Errorf("mcpapps: mint instanceId: %w", err)
	}
	p := handlePayload{App: app, Instance: base64.RawURLEncoding.EncodeToString(id[:]), Issued: s.now().Unix(), User: s.userTag(user)}
	raw, err := json.Marshal(p)
	if err != nil {
		return "", handlePayload{}, err
	}
	body := base64.RawURLEncoding.EncodeToString(raw)
	return body + "." + base64.RawURLEncoding.EncodeToString(s.mac(body)), p, nil
}

func (s *signer) mac(body string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(handleDomain))
	m.Write([]byte(body))
	return m.Sum(nil)
}

// userTag names user in a handle: a keyed hash, so that the handle, which
// the view reads, does not carry the user's name; "" for the one local user.
func (s *signer) userTag(user string) string {
	if user == "" {
		return ""
	}
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(userDomain))
	m.Write([]byte(user))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil)[:16])
}

// verify returns the payload of a handle this server signed, not older than
// maxAge, or errHandle.
func (s *signer) verify(h string) (handlePayload, error) {
	body, sig, ok := strings.Cut(h, ".")
	if !ok || len(h) > 512 {
		return handlePayload{}, errHandle
	}
	got, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil || !hmac.Equal(got, s.mac(body)) {
		return handlePayload{}, errHandle
	}
	raw, err := base64.RawURLEncoding.DecodeString(body)
	if err != nil {
		return handlePayload{}, errHandle
	}
	var p handlePayload
	if err := json.Unmarshal(raw, &p); err != nil || p.App == "" || p.Instance == "" {
		return handlePayload{}, errHandle
	}
	if age := s.now().Sub(time.Unix(p.Issued, 0)); s.maxAge > 0 && (age > s.maxAge || age < -time.Minute) {
		return handlePayload{}, errHandle
	}
	return p, nil
}
