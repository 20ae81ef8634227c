package netgate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadConfig(t *testing.T) {
	t.Setenv("NETGATE_CFG_TOKEN", "cfg-token-abcdef")
	dir := t.TempDir()
	write := func(name, body string) string {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(body), 0o600)
		return p
	}
	good := write("good.json", `{
  "connections": [
    {"name": "gh", "origin": "https://API.GitHub.com.", "header": "Authorization",
     "valueFormat": "Bearer {secret}", "secretEnv": "NETGATE_CFG_TOKEN"}
  ],
  "deny": ["tracker.example", "*.ads.example", "203.0.113.0/24"],
  "devHttpHosts": ["dev.example"],
  "rate": {"perMinute": 30, "inFlight": 2}
}`)
	cfg, err := LoadConfig(good)
	if err != nil {
		t.Fatal(err)
	}
	g, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if c := g.cfg.conns[0]; c.origin != "https://api.github.com" || c.value != "Bearer cfg-token-abcdef" {
		t.Fatalf("connection %+v", c)
	}
	if g.cfg.perMinute != 30 || g.cfg.inFlight != 2 || !g.Capabilities().Auth {
		t.Fatalf("compiled %+v", g.cfg)
	}
	if names := g.Connections(); len(names) != 1 || names[0] != "gh" {
		t.Fatalf("connections %v", names)
	}

	for _, c := range []struct{ name, body, want string }{
		{"syntax.json", "{\n  \"deny\": [\"a\",]\n}", "syntax.json:2:"},
		{"unknown.json", "{\n  \"conections\": []\n}", `unknown.json:2:3: unknown key "conections"`},
		{"field.json", "{\"connections\": [\n {\"name\": \"x\",\n  \"orgin\": \"https://a.example\"}]}", `field.json:3:3: connection: unknown field "orgin"`},
		{"noenv.json", "{\"connections\": [\n\n {\"name\": \"x\", \"origin\": \"https://a.example\", \"header\": \"X-K\", \"secretEnv\": \"NETGATE_UNSET_VAR\"}]}", "noenv.json:3: connection \"x\": secretEnv NETGATE_UNSET_VAR is not set; export it or name a secretFile"},
		{"both.json", `{"connections": [{"name": "x", "origin": "https://a.example", "urlPrefix": "https://a.example/v1", "header": "X-K", "secretEnv": "NETGATE_CFG_TOKEN"}]}`, "set exactly one of \"origin\""},
		{"http.json", `{"connections": [{"name": "x", "origin": "http://a.example", "header": "X-K", "secretEnv": "NETGATE_CFG_TOKEN"}]}`, "only goes over https"},
		{"short.json", `{"connections": [{"name": "x", "origin": "https://a.example", "header": "X-K", "secretFile": "` + write("short", "abc\n") + `"}]}`, "shorter than 8"},
		{"nofile.json", `{"connections": [{"name": "x", "origin": "https://a.example", "header": "X-K", "secretFile": "/nonexistent/secret"}]}`, "secretFile"},
		{"dup.json", `{"connections": [{"name": "x", "origin": "https://a.example", "header": "X-K", "secretEnv": "NETGATE_CFG_TOKEN"}, {"name": "x", "origin": "https://b.example", "header": "X-K", "secretEnv": "NETGATE_CFG_TOKEN"}]}`, "used twice"},
		{"header.json", `{"connections": [{"name": "x", "origin": "https://a.example", "header": "Bad Header", "secretEnv": "NETGATE_CFG_TOKEN"}]}`, "HTTP header name"},
		{"path.json", `{"connections": [{"name": "x", "origin": "https://a.example/v1", "header": "X-K", "secretEnv": "NETGATE_CFG_TOKEN"}]}`, "use \"urlPrefix\""},
		{"deny.json", "{\n\"deny\": [\"bad host!\"]}", `deny.json:2: deny entry "bad host!"`},
		{"rate.json", "{\"rate\": {\"perMinute\": \"many\"}}", "rate.json:1:"},
		{"negative.json", `{"rate": {"perMinute": -1}}`, "negative.json:1: rate: perMinute and inFlight must be positive"},
		{"array.json", `[]`, "must be a JSON object"},
		{"trailing.json", `{} {}`, "extra data"},
	} {
		_, err := LoadConfig(write(c.name, c.body))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err %v, want it to contain %q", c.name, err, c.want)
		}
		if err != nil && strings.Contains(err.Error(), "cfg-token-abcdef") {
			t.Errorf("%s: the error holds the secret", c.name)
		}
	}
}
