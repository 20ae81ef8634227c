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
// Ask, then resolve. A host name an app chooses can itself carry data
// (https://<data>.attacker.example/), so no name is looked up before the
// user approved its origin: the URL's syntax, the scheme, the deny list by
// name, loopback names, a numeric host in a blocked range, the connection
// match and the credentialed-header rules are judged first, then the
// confirm gate, then the lookup. A cross-origin redirect hop is asked about
// before its name is looked up too. Check, the operator's dry run, does
// resolve without asking; it is not for URLs an app chose.
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
// scrub could not read. Every content coding the answer is labelled with is
// undone by the gate (gzip, deflate as zlib or raw, stacked up to three);
// any other (br, zstd, …) is refused, never passed on encoded. On a chain
// that carried a credential, compressed data at the start of the body (a
// gzip, zlib or raw deflate stream the app could inflate itself) is
// inflated and searched; an answer that holds a secret there, or inflates
// past 8 MiB, is refused.
//
// The scrub. Response headers pass frame.ResponseHeaderAllowed only; every
// configured secret is replaced by [REDACTED] in the header values and the
// body, a header name holding one is dropped, and a body cut at the cap
// never ends with the start of one. The scrub (scrub.go) reads the answer
// the ways an app could (case, NFKC and whitespace folded; JSON, JS, HTML
// and percent escapes decoded, in rounds) and looks for the secret, its hex,
// and its base64 and base32 at every byte offset. What it cannot promise
// against an upstream that transforms the secret on purpose is written in
// docs/security.md. On a credentialed request the app may not send Range or
// If-Range (pieces would pass the scrub one at a time) or the override,
// rewrite and forwarding headers servers route by (NET_INVALID_REQUEST).
// Secrets come from the operator's config (env var or file), never from a
// frame, and never appear in a message, a log or the audit.
//
// Scoped credentials. A connection with a urlPrefix is matched on the path
// as sent. On its origin, a path servers read in another way (an encoded
// slash or backslash, a ;parameter, //, an encoded control byte, overlong
// UTF-8, a character NFKC folds to '/' or '.', a dot segment once decoded,
// at any depth of percent-encoding) is NET_INVALID_REQUEST, so the
// credential cannot be routed out of its scope.
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
