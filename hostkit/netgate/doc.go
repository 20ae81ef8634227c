// Package netgate is the governed network: the only code in hostkit that
// makes outbound HTTP requests. It turns an app's snug:net-request into a
// real request from the host's machine and its answer into a
// snug:net-response, enforcing host-obligations III §14: the ceiling, the
// confirm gate, the injection, the scrub and the record. Its limit: it
// governs requests it is handed; the sandbox (CSP, iframe flags) is what
// keeps an app from reaching the network any other way.
//
// # Design notes
//
// One parse. The URL is read once by parseTarget, which canonicalizes every
// spelling of an address (decimal, octal, hex and short IPv4 such as 127.1,
// percent-escapes and full-width forms in the host, a trailing dot, IDN via
// UTS #46) and refuses what has no single reading (userinfo, backslashes,
// zone ids, ports outside 1–65535, which url.Parse accepts). The request is
// built from that parse, so no later parser can see another host.
//
// Explicit tables. Classify judges an address against prefix tables (see
// addr.go), not against netip predicates, which call 0/8, 198.18/15, 240/4
// and 2001:db8::/32 global. IPv6 forms of IPv4 (mapped, NAT64, 6to4) are
// judged by the IPv4 address they carry; Unmap comes before Contains.
//
// Dial what was vetted. A name is resolved once per hop; if any answer is
// blocked the request is refused (a mixed public/private answer is an
// attack, not a fallback). The vetted addresses travel in the request's
// context to the transport's DialContext, which dials them by address, never
// by name, so a second DNS answer cannot swap them (rebinding). The
// net.Dialer's Control hook checks the socket's address once more. Numeric
// hosts never reach a resolver. Transport.Proxy is nil: no proxy from the
// environment.
//
// Redirects by hand. http.Client forwards custom headers across origins and
// keeps Authorization on an https→http hop, so CheckRedirect returns
// http.ErrUseLastResponse and the gate follows at most MaxRedirects hops
// itself, each one through the whole ceiling again. A chain that carried an
// injected credential never leaves its origin (NET_REDIRECT_BLOCKED); a
// cross-origin hop keeps only a few harmless app headers and needs its own
// grant.
//
// Compression. An app-supplied Accept-Encoding is dropped: it would turn off
// the transport's transparent gunzip and hand back compressed bytes the
// scrub could not read. A gzip body is decoded; any other encoding is
// refused.
//
// The scrub. Response headers pass frame.ResponseHeaderAllowed only; every
// configured secret (and its URL, JSON and base64 spellings) is replaced by
// [REDACTED] in the headers and the body, and a body cut at the cap never
// ends with the start of a secret. Secrets come from the operator's config
// (env var or file), never from a frame, and never appear in a message, a
// log or the audit.
//
// Decisions the spec leaves open, taken here: the 30 s limit starts after
// the user has answered the confirm dialog (a person's time to decide is not
// the request's); the request body limit counts UTF-8 bytes; the rate
// ceiling refuses at once rather than queueing (retryAfterMs says when:
// the sliding minute's next free slot, or 250 ms for the in-flight limit);
// a cross-origin redirect hop never gets a connection's credential; header
// names the host owns (Host, Connection, Content-Length, Transfer-Encoding,
// Proxy-*, …) are NET_INVALID_REQUEST; localhost and *.localhost are
// loopback by definition and never resolved. Grants live in the host's data
// directory, keyed by the host's app key, and never travel with an app;
// Forget drops them when an app is removed or installed again by import.
//
// Concurrency. A Gate is safe for concurrent use. Fetch owns no goroutine
// past its return; the transport's idle connections end with Close.
package netgate
