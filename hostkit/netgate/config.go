package netgate

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"strings"
	"time"

	"github.com/snuggen/snuggen/frame"
)

// Config is the operator's net configuration, usually read from a JSON file
// by LoadConfig:
//
//	{
//	  "connections": [
//	    {"name": "github", "origin": "https://api.github.com",
//	     "header": "Authorization", "valueFormat": "Bearer {secret}",
//	     "secretEnv": "GITHUB_TOKEN"}
//	  ],
//	  "deny": ["tracker.example", "*.ads.example", "203.0.113.0/24"],
//	  "devHttpHosts": ["dev.local.example"],
//	  "rate": {"perMinute": 60, "inFlight": 4}
//	}
//
// Secrets come from an environment variable or a file named here; a frame
// can never carry one, and none is ever logged.
type Config struct {
	Connections []Connection `json:"connections,omitempty"`
	// Deny lists hosts the host never contacts (NET_HOST_BLOCKED): an exact
	// host ("tracker.example"), every subdomain of a host
	// ("*.ads.example"), or an address prefix ("203.0.113.0/24") matched
	// against resolved addresses.
	Deny []string `json:"deny,omitempty"`
	// DevHTTPHosts are hosts that may be reached over plain http, for
	// development. The SSRF ceiling still applies to them.
	DevHTTPHosts []string `json:"devHttpHosts,omitempty"`
	Rate         Rate     `json:"rate,omitzero"`

	// file is where the config came from, for error messages.
	file string
	// lines maps a connection's index to its line in file; keyLines maps
	// the other top-level keys to theirs.
	lines    map[int]int
	keyLines map[string]int
}

// Rate is the per-app ceiling. Zero fields take the defaults.
type Rate struct {
	PerMinute int `json:"perMinute,omitempty"` // default 60
	InFlight  int `json:"inFlight,omitempty"`  // default 4
}

// Defaults of the per-app rate ceiling (host-obligations III §14.2).
const (
	DefaultPerMinute = frame.NetRatePerMinute
	DefaultInFlight  = frame.NetMaxInFlight
	// DefaultTimeout bounds one request, every redirect hop and the body read.
	DefaultTimeout = frame.NetTimeoutMs * time.Millisecond
	// MaxRedirects is the number of redirect hops followed.
	MaxRedirects = frame.MaxRedirectHops
)

// Connection is one operator-configured credential: requests whose URL
// matches Origin (or URLPrefix) get Header set to the secret, formatted by
// ValueFormat, once the app holds a grant for that origin.
type Connection struct {
	Name string `json:"name"`
	// Origin is "https://host[:port]"; URLPrefix narrows the match to a path
	// ("https://api.example.com/v1/"). Exactly one of the two is set.
	Origin    string `json:"origin,omitempty"`
	URLPrefix string `json:"urlPrefix,omitempty"`
	Header    string `json:"header"`
	// ValueFormat is the header value with "{secret}" where the secret goes;
	// default "{secret}".
	ValueFormat string `json:"valueFormat,omitempty"`
	SecretEnv   string `json:"secretEnv,omitempty"`
	SecretFile  string `json:"secretFile,omitempty"`
}

// MinSecretLength is the shortest secret accepted: a shorter one could not be
// scrubbed from answers without mangling ordinary text.
const MinSecretLength = 8

// LoadConfig reads a JSON config file. Its errors name the file, the line
// and the fix: "net.json:7:5: connection "github": secretEnv GITHUB_TOKEN is
// not set; export it or name a secretFile".
func LoadConfig(path string) (Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("netgate: read config: %w", err)
	}
	return ParseConfig(path, data)
}

// ParseConfig reads a config from data; name is the file name used in errors.
func ParseConfig(name string, data []byte) (Config, error) {
	cfg := Config{file: name, lines: map[int]int{}, keyLines: map[string]int{}}
	at := func(off int64, format string, args ...any) error {
		line, col := lineCol(data, off)
		return fmt.Errorf("%s:%d:%d: %s", name, line, col, fmt.Sprintf(format, args...))
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	tok, err := dec.Token()
	if err != nil {
		return Config{}, jsonError(name, data, dec, err)
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return Config{}, at(0, "the config must be a JSON object like {\"connections\": [...]}")
	}
	for dec.More() {
		keyOff := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return Config{}, jsonError(name, data, dec, err)
		}
		key, _ := tok.(string)
		cfg.keyLines[key], _ = lineCol(data, skipSpace(data, keyOff))
		switch key {
		case "connections":
			if err := expectDelim(dec, '['); err != nil {
				return Config{}, at(keyOff, "\"connections\" must be an array of objects")
			}
			for dec.More() {
				off := dec.InputOffset()
				var c Connection
				if err := dec.Decode(&c); err != nil {
					return Config{}, decodeError(name, data, off, "connection", err)
				}
				cfg.lines[len(cfg.Connections)], _ = lineCol(data, skipSpace(data, off))
				cfg.Connections = append(cfg.Connections, c)
			}
			if _, err := dec.Token(); err != nil {
				return Config{}, jsonError(name, data, dec, err)
			}
		case "deny":
			if err := dec.Decode(&cfg.Deny); err != nil {
				return Config{}, decodeError(name, data, keyOff, "\"deny\" (an array of host names, *.suffix or CIDR prefixes)", err)
			}
		case "devHttpHosts":
			if err := dec.Decode(&cfg.DevHTTPHosts); err != nil {
				return Config{}, decodeError(name, data, keyOff, "\"devHttpHosts\" (an array of host names)", err)
			}
		case "rate":
			if err := dec.Decode(&cfg.Rate); err != nil {
				return Config{}, decodeError(name, data, keyOff, "\"rate\" ({\"perMinute\": 60, \"inFlight\": 4})", err)
			}
		default:
			return Config{}, at(skipSpace(data, keyOff), "unknown key %q; the keys are connections, deny, devHttpHosts and rate", key)
		}
	}
	if _, err := dec.Token(); err != nil {
		return Config{}, jsonError(name, data, dec, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Config{}, at(dec.InputOffset(), "extra data after the config object; remove it")
	}
	if _, err := cfg.compile(nil); err != nil {
		return Config{}, err
	}
	return cfg, nil
}

func expectDelim(dec *json.Decoder, want json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if d, ok := tok.(json.Delim); !ok || d != want {
		return fmt.Errorf("want %q", want)
	}
	return nil
}

func skipSpace(data []byte, off int64) int64 {
	for off < int64(len(data)) && strings.IndexByte(" \t\r\n,:", data[off]) >= 0 {
		off++
	}
	return off
}

func lineCol(data []byte, off int64) (int, int) {
	if off > int64(len(data)) {
		off = int64(len(data))
	}
	line, col := 1, 1
	for _, c := range data[:off] {
		if c == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
}

func jsonError(name string, data []byte, dec *json.Decoder, err error) error {
	var se *json.SyntaxError
	off := dec.InputOffset()
	if errors.As(err, &se) {
		off = se.Offset
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		off = int64(len(data))
		err = errors.New("unexpected end of file")
	}
	line, col := lineCol(data, off)
	return fmt.Errorf("%s:%d:%d: invalid JSON: %v; fix the syntax", name, line, col, err)
}

func decodeError(name string, data []byte, off int64, what string, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	line, col := lineCol(data, skipSpace(data, off))
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		if i := bytes.Index(data[off:], []byte(f)); i >= 0 {
			line, col = lineCol(data, off+int64(i))
		}
		msg = "unknown field " + f + " (fields: name, origin, urlPrefix, header, valueFormat, secretEnv, secretFile)"
	}
	return fmt.Errorf("%s:%d:%d: %s: %s", name, line, col, what, msg)
}

// where names a connection's place in the config file for error messages.
func (c *Config) where(i int) string {
	if c.file == "" {
		return fmt.Sprintf("config: connections[%d]", i)
	}
	if line, ok := c.lines[i]; ok {
		return fmt.Sprintf("%s:%d", c.file, line)
	}
	return fmt.Sprintf("%s: connections[%d]", c.file, i)
}

// compiled is a Config checked and turned into matchers.
type compiled struct {
	conns     []*connection
	denyHosts map[string]bool
	denySufx  []string // ".ads.example"
	denyNets  []netip.Prefix
	devHTTP   map[string]bool
	perMinute int
	inFlight  int
	// scrub finds every connection's secret in what goes back to the app.
	scrub *scrubber
}

// connection is a Connection with its secret loaded.
type connection struct {
	name   string
	origin string
	path   string // "" for an origin match; an escaped path prefix otherwise
	header string
	value  string // the full header value
	secret string
}

// compile checks the config. dev reports a development service on
// loopback (WithDevLoopback), the one kind of origin a connection may reach
// over http; nil defers that check for loopback origins to New, whose
// options name the services.
func (c *Config) compile(dev func(*target) bool) (*compiled, error) {
	out := &compiled{denyHosts: map[string]bool{}, devHTTP: map[string]bool{}}
	names := map[string]bool{}
	var secrets []string
	for i, cc := range c.Connections {
		where := c.where(i)
		if cc.Name == "" {
			return nil, fmt.Errorf("%s: a connection needs a \"name\"", where)
		}
		if names[cc.Name] {
			return nil, fmt.Errorf("%s: connection %q: the name is used twice; give each connection its own name", where, cc.Name)
		}
		names[cc.Name] = true
		conn, err := cc.compile(where, dev)
		if err != nil {
			return nil, err
		}
		out.conns = append(out.conns, conn)
		secrets = append(secrets, conn.secret)
	}
	out.scrub = newScrubber(secrets)
	for _, d := range c.Deny {
		if err := out.deny(d); err != nil {
			return nil, fmt.Errorf("%s: deny entry %q: %s; write a host, *.host or a CIDR prefix", c.at("deny"), d, err)
		}
	}
	for _, d := range c.DevHTTPHosts {
		h, _, f := canonicalHost(d)
		if f != nil {
			return nil, fmt.Errorf("%s: devHttpHosts entry %q: %s; write a bare host name", c.at("devHttpHosts"), d, f.msg)
		}
		out.devHTTP[h] = true
	}
	out.perMinute, out.inFlight = c.Rate.PerMinute, c.Rate.InFlight
	if out.perMinute < 0 || out.inFlight < 0 {
		return nil, fmt.Errorf("%s: rate: perMinute and inFlight must be positive (0 takes the default %d and %d)", c.at("rate"), DefaultPerMinute, DefaultInFlight)
	}
	if out.perMinute == 0 {
		out.perMinute = DefaultPerMinute
	}
	if out.inFlight == 0 {
		out.inFlight = DefaultInFlight
	}
	return out, nil
}

// compile checks the connection at where (its name already checked): its
// origin or URL prefix, its header and the value it carries.
func (cc Connection) compile(where string, dev func(*target) bool) (*connection, error) {
	if (cc.Origin == "") == (cc.URLPrefix == "") {
		return nil, fmt.Errorf("%s: connection %q: set exactly one of \"origin\" (https://host) or \"urlPrefix\" (https://host/path/)", where, cc.Name)
	}
	raw := cc.Origin + cc.URLPrefix
	t, f := parseTarget(raw)
	if f != nil {
		return nil, fmt.Errorf("%s: connection %q: %q: %s", where, cc.Name, raw, f.msg)
	}
	if f := plainHTTPConnection(t, dev); f != "" {
		return nil, fmt.Errorf("%s: connection %q: %q: %s", where, cc.Name, raw, f)
	}
	conn := &connection{name: cc.Name, origin: t.origin}
	if cc.URLPrefix != "" {
		conn.path = t.url.EscapedPath()
		if why := ambiguousPath(conn.path); why != "" {
			return nil, fmt.Errorf("%s: connection %q: urlPrefix %q holds %s, which servers read in more than one way; write the prefix plainly", where, cc.Name, raw, why)
		}
	} else if p := t.url.EscapedPath(); p != "/" || t.url.RawQuery != "" {
		return nil, fmt.Errorf("%s: connection %q: origin %q has a path; use \"urlPrefix\" for a path match", where, cc.Name, raw)
	}
	if cc.Header == "" || !validHeaderName(cc.Header) {
		return nil, fmt.Errorf("%s: connection %q: \"header\" must be an HTTP header name such as Authorization", where, cc.Name)
	}
	conn.header = cc.Header
	secret, err := cc.secret(where)
	if err != nil {
		return nil, err
	}
	format := cc.ValueFormat
	if format == "" {
		format = "{secret}"
	}
	if !strings.Contains(format, "{secret}") {
		return nil, fmt.Errorf("%s: connection %q: valueFormat %q has no {secret}", where, cc.Name, format)
	}
	conn.secret = secret
	conn.value = strings.ReplaceAll(format, "{secret}", secret)
	if !validHeaderValue(conn.value) {
		return nil, fmt.Errorf("%s: connection %q: the secret or valueFormat holds a character no header value may hold (CR, LF or NUL)", where, cc.Name)
	}
	return conn, nil
}

// secret reads the connection's secret from its variable or file, and
// refuses one too short or too plain to scrub from answers.
func (cc Connection) secret(where string) (string, error) {
	if (cc.SecretEnv == "") == (cc.SecretFile == "") {
		return "", fmt.Errorf("%s: connection %q: set exactly one of \"secretEnv\" or \"secretFile\"", where, cc.Name)
	}
	var secret string
	if cc.SecretEnv != "" {
		secret = os.Getenv(cc.SecretEnv)
		if secret == "" {
			return "", fmt.Errorf("%s: connection %q: secretEnv %s is not set; export it or name a secretFile", where, cc.Name, cc.SecretEnv)
		}
	} else {
		b, err := os.ReadFile(cc.SecretFile)
		if err != nil {
			return "", fmt.Errorf("%s: connection %q: secretFile: %v; create the file or fix the path", where, cc.Name, err)
		}
		secret = strings.TrimRight(string(b), "\r\n")
	}
	if len(secret) < MinSecretLength {
		return "", fmt.Errorf("%s: connection %q: the secret is shorter than %d bytes; a secret that short cannot be scrubbed from answers", where, cc.Name, MinSecretLength)
	}
	if foldedLen(secret) < MinSecretLength {
		return "", fmt.Errorf("%s: connection %q: the secret has fewer than %d characters besides spaces and '+'; a secret that plain cannot be scrubbed from answers", where, cc.Name, MinSecretLength)
	}
	return secret, nil
}

// deny adds the deny entry d: an address, a CIDR prefix, a host or
// *.host (the host's subdomains).
func (out *compiled) deny(d string) error {
	if p, err := netip.ParsePrefix(d); err == nil {
		out.denyNets = append(out.denyNets, p.Masked())
		return nil
	}
	if a, err := netip.ParseAddr(d); err == nil {
		out.denyNets = append(out.denyNets, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
		return nil
	}
	wild := strings.HasPrefix(d, "*.")
	h, _, f := canonicalHost(strings.TrimPrefix(d, "*."))
	if f != nil {
		return errors.New(f.msg)
	}
	if wild {
		out.denySufx = append(out.denySufx, "."+h)
	} else {
		out.denyHosts[h] = true
	}
	return nil
}

// plainHTTPConnection says why a connection to t may not be made, "" when
// it may: a credential goes over https, or over http to a development
// service on loopback (dev, when known).
func plainHTTPConnection(t *target, dev func(*target) bool) string {
	if t.scheme == "https" {
		return ""
	}
	loopback := t.host == "localhost" || t.addr.IsValid() && t.addr.Unmap().IsLoopback()
	switch {
	case loopback && (dev == nil || dev(t)):
		return ""
	case loopback:
		return fmt.Sprintf("a credential only goes over https, or over http to a development service on this machine: run snuggen serve --dev-loopback %s", joinHostPort(t.host, t.port))
	}
	return "a credential only goes over https"
}

// at names the line of a top-level key for error messages.
func (c *Config) at(key string) string {
	if c.file == "" {
		return "config"
	}
	if line, ok := c.keyLines[key]; ok {
		return fmt.Sprintf("%s:%d", c.file, line)
	}
	return c.file
}
