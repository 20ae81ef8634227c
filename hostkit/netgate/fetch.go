package netgate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/snuggen/snuggen/frame"
)

// Fetch answers one net-request from app with exactly one net-response, ok
// or error, and leaves one audit entry. The frame is expected to have passed
// frame.Parse; Fetch checks everything that matters again anyway.
func (g *Gate) Fetch(ctx context.Context, app App, req *frame.NetRequest) *frame.NetResponse {
	if req == nil {
		return errorResponse("", fail(frame.CodeHostError, "no request"))
	}
	start := time.Now()
	e := Entry{Time: g.opts.now().UTC(), User: app.User, App: app.Key, Method: req.Method}
	resp, f := g.fetch(ctx, app, req, &e)
	e.DurationMs = time.Since(start).Milliseconds()
	if f != nil {
		// No message is built from a secret; scrub anyway, as the body is.
		f.msg = g.cfg.scrub.scrubString(f.msg)
		resp = errorResponse(req.RequestID, f)
		e.Code = f.code
		e.Decision = DecisionRefused
		if frame.Retryable(f.code) || f.code == frame.CodeNetAuthFailed || f.code == frame.CodeNetSizeExceeded || f.code == frame.CodeCancelled {
			e.Decision = DecisionFailed
		}
	} else {
		e.Decision = DecisionAllowed
		resp.RequestID = req.RequestID
	}
	g.audit.add(e)
	return resp
}

func errorResponse(requestID string, f *failure) *frame.NetResponse {
	msg := f.msg
	if utf8.RuneCountInString(msg) > frame.ErrorMessageMaxLength {
		msg = string([]rune(msg)[:frame.ErrorMessageMaxLength-1]) + "…"
	}
	ferr := frame.NewError(f.code, msg)
	if f.retryAfter > 0 {
		ms := int(f.retryAfter.Milliseconds())
		if ms < 1 {
			ms = 1
		}
		ferr.RetryAfterMs = &ms
	}
	return &frame.NetResponse{RequestID: requestID, OK: false, Error: ferr}
}

func (g *Gate) fetch(ctx context.Context, app App, req *frame.NetRequest, e *Entry) (*frame.NetResponse, *failure) {
	if f := checkMethod(req.Method); f != nil {
		return nil, f
	}
	t, f := parseTarget(req.URL)
	if f != nil {
		return nil, f
	}
	e.Origin, e.Dev = t.origin, g.devTarget(t)
	hdr, f := checkHeaders(req.Headers)
	if f != nil {
		return nil, f
	}
	var body []byte
	if req.Body != nil {
		if req.Method == http.MethodGet || req.Method == http.MethodHead {
			return nil, invalid("a %s request carries no body", req.Method)
		}
		if len(*req.Body) > frame.MaxNetRequestBodyBytes {
			return nil, invalid("the body is %d bytes; the limit is %d", len(*req.Body), frame.MaxNetRequestBodyBytes)
		}
		body = []byte(*req.Body)
	}
	if f := g.ceiling(t); f != nil {
		return nil, f
	}
	release, wait, ok := g.rate.acquire(rateKey(app), g.opts.now())
	if !ok {
		return nil, &failure{code: frame.CodeNetFetchFailed, retryAfter: wait,
			msg: fmt.Sprintf("the app is over its rate ceiling (%d requests a minute, %d in flight); retry later", g.cfg.perMinute, g.cfg.inFlight)}
	}
	defer release()
	conn, f := g.match(t)
	if f != nil {
		return nil, f
	}
	if f := credentialedHeaders(conn, hdr); f != nil {
		return nil, f
	}
	// Ask before resolving: a name the app chose can itself carry data, so
	// nothing, not even a DNS query, leaves the machine for an origin the
	// user has not approved (III §14.3). A numeric host needs no lookup and
	// is judged before the question.
	if f := g.vetLiteral(t); f != nil {
		return nil, f
	}
	e.Grant, f = g.approve(ctx, app, req.Method, t)
	if f != nil {
		return nil, f
	}
	// The user's time to answer the dialog is not the request's: the
	// timeout covers the lookup (vet has its own), then the exchange.
	addrs, f := g.vet(ctx, t.host, t.port)
	if f != nil {
		return nil, f
	}
	ctx, cancel := context.WithTimeout(ctx, g.opts.timeout)
	defer cancel()
	return g.exchange(ctx, app, t, addrs, conn, req.Method, hdr, body, e)
}

func (g *Gate) importedFailure(app App) *failure {
	return fail(frame.CodeNetImportedUnapproved, fmt.Sprintf("%s was imported and has not been reviewed; review it before it may use the network", displayName(app)))
}

func displayName(app App) string {
	if app.Name != "" {
		return fmt.Sprintf("%q", app.Name)
	}
	return fmt.Sprintf("app %q", app.Key)
}

// approve is the confirm gate: an existing grant, or the user's answer.
func (g *Gate) approve(ctx context.Context, app App, method string, t *target) (string, *failure) {
	if app.Imported && !g.reviewed(ctx, app) {
		return "", g.importedFailure(app)
	}
	has, err := g.grants.HasGrant(ctx, app.User, app.Key, t.origin)
	if err != nil {
		return "", fail(frame.CodeHostError, fmt.Sprintf("the grants could not be read: %v", err))
	}
	if has {
		return "granted", nil
	}
	c := app.Confirmer
	if c == nil {
		c = g.opts.confirmer
	}
	if c == nil {
		return "", fail(frame.CodeNetNotApproved, fmt.Sprintf("%s has no grant for %s and there is no one to ask", displayName(app), t.origin))
	}
	d, err := c.ConfirmNet(ctx, ConfirmRequest{AppKey: app.Key, AppName: app.Name, Method: method, URL: t.String(), Origin: t.origin})
	if err != nil {
		if ctx.Err() != nil {
			return "", ctxFailure(ctx, g.opts.timeout)
		}
		return "", fail(frame.CodeNetNotApproved, fmt.Sprintf("could not ask the user about %s: %v", t.origin, err))
	}
	switch d {
	case Once, Session:
		return string(d), nil
	case Always:
		added, err := g.grants.AddGrant(ctx, Grant{User: app.User, App: app.Key, Origin: t.origin, Since: g.opts.now()})
		if err != nil {
			return "", fail(frame.CodeHostError, fmt.Sprintf("the grant for %s could not be saved: %v", t.origin, err))
		}
		if added {
			g.announce(app.User, app.Key, t.origin, StateConnected)
		}
		return string(Always), nil
	case Deny:
		return "", fail(frame.CodeNetConfirmDenied, fmt.Sprintf("the user declined %s %s", method, t.origin))
	}
	return "", fail(frame.CodeNetNotApproved, fmt.Sprintf("the confirm dialog gave no answer (%q)", d))
}

func ctxFailure(ctx context.Context, timeout time.Duration) *failure {
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fail(frame.CodeNetFetchFailed, fmt.Sprintf("the request timed out (limit %s)", timeout))
	}
	return fail(frame.CodeCancelled, "the request was cancelled")
}

// exchange sends the request and follows redirects itself, hop by hop.
func (g *Gate) exchange(ctx context.Context, app App, t *target, addrs []netip.Addr, conn *connection,
	method string, hdr map[string]string, body []byte, e *Entry) (*frame.NetResponse, *failure) {
	carried := false
	for hop := 0; ; hop++ {
		hreq, f := newHopRequest(ctx, t, addrs, method, hdr, body)
		if f != nil {
			return nil, f
		}
		if conn != nil {
			hreq.Header.Set(conn.header, conn.value)
			e.Connection = conn.name
			carried = true
		}
		resp, err := g.client.Do(hreq)
		if err != nil {
			return nil, g.transportFailure(ctx, err)
		}
		if conn != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			discard(resp)
			e.Status = resp.StatusCode
			return nil, fail(frame.CodeNetAuthFailed, fmt.Sprintf("%s answered %d to the credential of connection %q; the operator must renew it", t.origin, resp.StatusCode, conn.name))
		}
		loc := resp.Header.Get("Location")
		if !isRedirect(resp.StatusCode) || loc == "" {
			e.Status = resp.StatusCode
			out, f := g.answer(ctx, resp, method, carried)
			if out != nil {
				e.Bytes = bodyBytes(out)
			}
			return out, f
		}
		discard(resp)
		if hop == MaxRedirects {
			return nil, fail(frame.CodeNetRedirectBlocked, fmt.Sprintf("more than %d redirects", MaxRedirects))
		}
		next, nextAddrs, f := g.hop(ctx, app, method, t, loc, carried, hop+1)
		if f != nil {
			return nil, f
		}
		e.Redirects = hop + 1
		cross := next.origin != t.origin
		method, hdr, body = redirected(resp.StatusCode, cross, method, hdr, body)
		conn = nil
		if !cross {
			// The same origin may be served by a narrower connection.
			if conn, f = g.match(next); f != nil {
				return nil, redirectBlocked(hop+1, next, f)
			}
			if f := credentialedHeaders(conn, hdr); f != nil {
				return nil, redirectBlocked(hop+1, next, f)
			}
		}
		t, addrs = next, nextAddrs
	}
}

// newHopRequest builds one hop's request to t, pinned to addrs, with the
// app's headers (and a User-Agent when it set none).
func newHopRequest(ctx context.Context, t *target, addrs []netip.Addr, method string, hdr map[string]string, body []byte) (*http.Request, *failure) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	// Built from the one parse: no string goes through url.Parse again.
	hreq, err := http.NewRequestWithContext(withPins(ctx, t, addrs), method, "", rd)
	if err != nil {
		return nil, invalid("the request cannot be built: %v", err)
	}
	hreq.URL, hreq.Host = t.url, t.url.Host
	for k, v := range hdr {
		hreq.Header.Set(k, v)
	}
	if hreq.Header.Get("User-Agent") == "" {
		hreq.Header.Set("User-Agent", "snuggen-netgate/1")
	}
	return hreq, nil
}

// redirected is the method, headers and body a redirect with status
// carries on to its next hop: 301 and 302 turn a POST into a GET, 303
// anything but HEAD; without a body Content-Type goes, and across origins
// every header but the crossOriginSafe ones.
func redirected(status int, cross bool, method string, hdr map[string]string, body []byte) (string, map[string]string, []byte) {
	switch status {
	case http.StatusMovedPermanently, http.StatusFound:
		if method == http.MethodPost {
			method, body = http.MethodGet, nil
		}
	case http.StatusSeeOther:
		if method != http.MethodHead {
			method, body = http.MethodGet, nil
		}
	}
	if body == nil || cross {
		kept := make(map[string]string, len(hdr))
		for k, v := range hdr {
			lower := strings.ToLower(k)
			if body == nil && lower == "content-type" {
				continue
			}
			if cross && !slices.Contains(crossOriginSafe, lower) {
				continue
			}
			kept[k] = v
		}
		hdr = kept
	}
	return method, hdr, body
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

func redirectBlocked(n int, next *target, f *failure) *failure {
	where := "a redirect"
	if next != nil {
		where = "redirect to " + next.origin
	}
	return fail(frame.CodeNetRedirectBlocked, fmt.Sprintf("hop %d, %s: %s (%s)", n, where, f.msg, f.code))
}

// hop checks one redirect target the way the first URL was checked, plus the
// credential rule: a chain that carried an injected credential never leaves
// its origin.
func (g *Gate) hop(ctx context.Context, app App, method string, cur *target, loc string, carried bool, n int) (*target, []netip.Addr, *failure) {
	for i := 0; i < len(loc); i++ {
		if loc[i] < 0x20 || loc[i] == 0x7f || loc[i] == '\\' {
			return nil, nil, redirectBlocked(n, nil, invalid("the Location holds a control character or backslash"))
		}
	}
	ref, err := url.Parse(loc)
	if err != nil {
		return nil, nil, redirectBlocked(n, nil, invalid("the Location does not parse"))
	}
	next, f := parseTarget(cur.url.ResolveReference(ref).String())
	if f != nil {
		return nil, nil, redirectBlocked(n, nil, f)
	}
	if f := g.ceiling(next); f != nil {
		return nil, nil, redirectBlocked(n, next, f)
	}
	cross := next.origin != cur.origin
	if cross && carried {
		return nil, nil, fail(frame.CodeNetRedirectBlocked, fmt.Sprintf("hop %d leaves %s for %s on a request that carried a credential", n, cur.origin, next.origin))
	}
	if f := g.vetLiteral(next); f != nil {
		return nil, nil, redirectBlocked(n, next, f)
	}
	// A new origin is asked about before its name is looked up, as the
	// first one was.
	if cross {
		if _, f := g.approve(ctx, app, method, next); f != nil {
			if ctx.Err() != nil {
				return nil, nil, f
			}
			return nil, nil, redirectBlocked(n, next, f)
		}
	}
	addrs, f := g.vet(ctx, next.host, next.port)
	if f != nil {
		if f.code == frame.CodeNetFetchFailed || f.code == frame.CodeCancelled {
			return nil, nil, f
		}
		return nil, nil, redirectBlocked(n, next, f)
	}
	return next, addrs, nil
}

// discard drains a little of a body we do not forward (so the connection can
// be reused) and closes it.
func discard(resp *http.Response) {
	_, _ = io.CopyN(io.Discard, resp.Body, 64<<10)
	resp.Body.Close()
}

func (g *Gate) transportFailure(ctx context.Context, err error) *failure {
	var f *failure
	if errors.As(err, &f) {
		return f
	}
	if ctx.Err() != nil {
		return ctxFailure(ctx, g.opts.timeout)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return fail(frame.CodeNetFetchFailed, fmt.Sprintf("the request failed: %v", err))
}
