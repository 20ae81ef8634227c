package mcpapps

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/snuggen/snuggen/hostkit/broker"
	"github.com/snuggen/snuggen/hostkit/netgate"
)

// The net confirm dialog, the MCP way. A Snug host asks the user in its own
// dialog before an app first reaches an origin; an MCP server has no dialog
// of its own. It asks with a form elicitation when the client takes one
// (elicitation/create on the calling session); otherwise the request is
// NET_NOT_APPROVED and its answer carries the URL of a grant page that this
// server serves (snuggen mcp --http), which the MCP runtime opens with
// ui/open-link: the user reads the app's name and the origin there and
// allows it, in a top-level page of this server's origin that no app can
// script, and the app's next try passes.

// grantTTL is how long a grant page's link stays good.
const grantTTL = 10 * time.Minute

type pendingGrant struct {
	user, app, name, method, url, origin string
	expires                              time.Time
}

type grants struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[string]*pendingGrant
}

func newGrants(now func() time.Time) *grants {
	return &grants{now: now, m: map[string]*pendingGrant{}}
}

func (g *grants) add(p *pendingGrant) string {
	var b [18]byte
	_, _ = rand.Read(b[:])
	tok := base64.RawURLEncoding.EncodeToString(b[:])
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.now()
	for k, v := range g.m {
		if now.After(v.expires) {
			delete(g.m, k)
		}
	}
	if len(g.m) >= 1000 {
		return ""
	}
	p.expires = now.Add(grantTTL)
	g.m[tok] = p
	return tok
}

func (g *grants) get(tok string, take bool) *pendingGrant {
	g.mu.Lock()
	defer g.mu.Unlock()
	p := g.m[tok]
	if p == nil || g.now().After(p.expires) {
		delete(g.m, tok)
		return nil
	}
	if take {
		delete(g.m, tok)
	}
	return p
}

// errNoOneToAsk is the gate's "could not ask" without a grant page.
var errNoOneToAsk = errors.New("this MCP host takes no elicitation and the server has no grant page (run snuggen mcp --http)")

// ConfirmNet implements netgate.Confirmer for the server's apps.
func (s *Server) ConfirmNet(ctx context.Context, req netgate.ConfirmRequest) (netgate.Decision, error) {
	call, _ := broker.CallFrom(ctx)
	s.mu.Lock()
	inst := s.instances[instanceKey(call.User, call.InstanceID)]
	s.mu.Unlock()
	if inst == nil {
		return "", errNoOneToAsk
	}
	if ss := inst.clientSession(); ss != nil && elicits(ss) {
		res, err := ss.Elicit(ctx, &mcp.ElicitParams{
			Mode:    "form",
			Message: fmt.Sprintf("%s wants to reach %s (%s %s). Allow it?", req.AppName, req.Origin, req.Method, req.URL),
			RequestedSchema: map[string]any{
				"type": "object",
				"properties": map[string]any{"decision": map[string]any{
					"type": "string", "title": "Allow " + req.Origin,
					"enum":      []string{string(netgate.Once), string(netgate.Always), string(netgate.Deny)},
					"enumNames": []string{"Allow once", "Always allow", "Deny"},
				}},
				"required": []string{"decision"},
			},
		})
		if err == nil {
			if res.Action != "accept" {
				return netgate.Deny, nil
			}
			switch d, _ := res.Content["decision"].(string); netgate.Decision(d) {
			case netgate.Once, netgate.Always:
				return netgate.Decision(d), nil
			}
			return netgate.Deny, nil
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		s.logf("mcpapps: elicitation for %s failed, falling back to the grant page: %v", req.AppKey, err)
	}
	if s.opts.GrantBase == "" {
		return "", errNoOneToAsk
	}
	tok := s.grants.add(&pendingGrant{user: call.User, app: req.AppKey, name: req.AppName, method: req.Method, url: req.URL, origin: req.Origin})
	if tok == "" {
		return "", errors.New("too many grant pages are open; try again later")
	}
	page := s.opts.GrantBase + "/snug/grant/" + tok
	inst.putGrant(call.RequestID, page)
	return "", fmt.Errorf("allow it on the page just opened (%s), then try again", page)
}

// elicits reports whether the client said it takes form elicitations.
func elicits(ss *mcp.ServerSession) bool {
	p := ss.InitializeParams()
	return p != nil && p.Capabilities != nil && p.Capabilities.Elicitation != nil
}

// grantHTML writes the grant page: the pending grant (name, origin,
// method, url) or, when done is set, the answer. Every value is escaped as
// element text, as html/template escapes it there (the page used
// html/template; TestGrantPageEscapesAsHTMLTemplate holds the bytes equal),
// without linking html/template's package init into every snuggen process.
func grantHTML(w io.Writer, done, name, origin, method, rawURL string) {
	esc := func(s string) string { return strings.ReplaceAll(html.EscapeString(s), "\x00", "\uFFFD") }
	var b strings.Builder
	b.WriteString(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Allow network access?</title>
<meta name="viewport" content="width=device-width">
<style>body{font:16px system-ui,sans-serif;max-width:36em;margin:3em auto;padding:0 1em}code{word-break:break-all}button{font:inherit;padding:.4em 1em;margin-right:.5em}</style>
</head><body>
`)
	if done != "" {
		b.WriteString("<h1>" + esc(done) + "</h1><p>Go back to the conversation and try again.</p>\n")
	} else {
		b.WriteString(`<h1>Allow network access?</h1>
<p><b>` + esc(name) + `</b> wants to reach <b>` + esc(origin) + `</b>.</p>
<p>Its request: <code>` + esc(method) + ` ` + esc(rawURL) + `</code></p>
<p>Allowing lets this app reach ` + esc(origin) + ` from now on (you can revoke it in the grants file). Denying changes nothing.</p>
<form method="post"><button name="decision" value="always">Always allow</button><button name="decision" value="deny">Deny</button></form>
`)
	}
	b.WriteString("</body></html>")
	_, _ = io.WriteString(w, b.String())
}

// grantPage shows a pending grant and records the user's answer, for the
// user whose request asked (the browser the host opens carries no bearer
// token: the page's token is the credential). Only a form posted from this
// very page counts (the Origin header is the server's own), so neither an
// app nor another site can grant by itself.
func (s *Server) grantPage(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "same-origin") // no-referrer would make the form's Origin "null"
	h.Set("Cache-Control", "no-store")
	tok := r.PathValue("token")
	switch r.Method {
	case http.MethodGet:
		p := s.grants.get(tok, false)
		if p == nil {
			http.Error(w, "This link has expired or was used. Ask the app again.", http.StatusNotFound)
			return
		}
		grantHTML(w, "", p.name, p.origin, p.method, p.url)
	case http.MethodPost:
		if !s.sameOrigin(r) {
			http.Error(w, "forbidden: the answer must come from this page", http.StatusForbidden)
			return
		}
		p := s.grants.get(tok, true)
		if p == nil {
			http.Error(w, "This link has expired or was used. Ask the app again.", http.StatusNotFound)
			return
		}
		done := "Denied: nothing changed."
		if r.PostFormValue("decision") == "always" {
			if err := s.opts.Net.GrantFor(p.user, p.app, p.origin); err != nil {
				http.Error(w, "the grant could not be saved: "+err.Error(), http.StatusInternalServerError)
				return
			}
			done = "Allowed: " + p.name + " may reach " + p.origin + "."
		}
		grantHTML(w, done, "", "", "", "")
	default:
		w.Header().Set("Allow", "GET, POST")
		http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
	}
}

func (s *Server) sameOrigin(r *http.Request) bool {
	base, err := url.Parse(s.opts.GrantBase)
	if err != nil {
		return false
	}
	return r.Header.Get("Origin") == base.Scheme+"://"+base.Host
}
