package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestNetCheckVectors runs the SSRF vector table of hostkit/netgate through
// the command line, as an operator would.
func TestNetCheckVectors(t *testing.T) {
	b, err := os.ReadFile("../../hostkit/netgate/testdata/ssrf-vectors.json")
	if err != nil {
		t.Fatal(err)
	}
	var vs []struct {
		URL, Code, Note, Address string
		Resolve                  []string
	}
	if err := json.Unmarshal(b, &vs); err != nil {
		t.Fatal(err)
	}
	if len(vs) < 80 {
		t.Fatalf("%d vectors", len(vs))
	}
	for _, v := range vs {
		url := strings.ReplaceAll(v.URL, "{port}", "8443")
		args := []string{"net", "check", url}
		for _, r := range v.Resolve {
			args = append(args, "--resolve", r)
		}
		if len(v.Resolve) == 0 {
			// Names resolve only through pairs: an unrelated pair keeps the
			// system resolver out of the test.
			args = append(args, "--resolve", "unrelated.example=8.8.8.8")
		}
		var out, errOut bytes.Buffer
		code := Main(args, nil, &out, &errOut)
		var got struct {
			Allow   bool   `json:"allow"`
			Address string `json:"address"`
			Code    string `json:"code"`
			Reason  string `json:"reason"`
		}
		if err := json.Unmarshal(out.Bytes(), &got); err != nil {
			t.Errorf("%s: output %q (%v), stderr %q", url, out.String(), err, errOut.String())
			continue
		}
		wantExit := 1
		if v.Code == "" {
			wantExit = 0
		}
		if code != wantExit || got.Code != v.Code || got.Allow != (v.Code == "") {
			t.Errorf("%s (%s): exit %d, %+v; want exit %d code %q", url, v.Note, code, got, wantExit, v.Code)
		}
		if v.Address != "" && got.Address != v.Address {
			t.Errorf("%s: address %q, want %q", url, got.Address, v.Address)
		}
	}
}

func TestNetCheckUsage(t *testing.T) {
	dir := t.TempDir()
	cfg := filepath.Join(dir, "net.json")
	os.WriteFile(cfg, []byte("{\n  \"deny\": [\"blocked.example\"],\n  \"conections\": []\n}"), 0o600)
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(`{"deny": ["blocked.example"]}`), 0o600)
	secret := filepath.Join(dir, "secret")
	os.WriteFile(secret, []byte("scoped-secret-123456\n"), 0o600)
	scoped := filepath.Join(dir, "scoped.json")
	os.WriteFile(scoped, []byte(`{"connections": [{"name": "v1", "urlPrefix": "https://api.example/v1/",
	  "header": "Authorization", "valueFormat": "Bearer {secret}", "secretFile": `+strconv.Quote(secret)+`}]}`), 0o600)
	for _, c := range []struct {
		args     []string
		exit     int
		out, err string
	}{
		{[]string{"net", "check"}, 2, "", "takes 1 argument"},
		{[]string{"net", "check", "https://a.example/", "--resolve", "nopair"}, 2, "", "want NAME=IP"},
		{[]string{"net", "check", "https://a.example/", "--resolve", "a.example=not-an-ip"}, 2, "", "not an IP address"},
		{[]string{"net", "check", "https://a.example/", "--config", cfg}, 2, "", "net.json:3:3: unknown key \"conections\""},
		{[]string{"net", "check", "https://blocked.example/", "--config", good}, 1, `"code":"NET_HOST_BLOCKED"`, ""},
		{[]string{"net", "check", "https://a.example/", "--method", "TRACE", "--resolve", "a.example=8.8.8.8"}, 1, `"code":"NET_INVALID_REQUEST"`, ""},
		{[]string{"net", "check", "https://a.example/", "--method", "POST", "--resolve", "a.example=8.8.8.8"}, 0, `{"allow":true,"address":"8.8.8.8:443","url":"https://a.example/"}`, ""},
		{[]string{"net", "check", "https://b.example/", "--resolve", "a.example=8.8.8.8"}, 1, `"code":"NET_FETCH_FAILED"`, ""},
		{[]string{"net", "check", "--help"}, 0, "Example", ""},
		// A path-scoped credential: an ambiguous path is refused, naming why.
		{[]string{"net", "check", "https://api.example/v1/..%2Fadmin", "--config", scoped, "--resolve", "api.example=8.8.8.8"}, 1, `"code":"NET_INVALID_REQUEST","reason":"the path \"/v1/..%2Fadmin\" holds an encoded slash (%2F)`, ""},
		{[]string{"net", "check", "https://api.example/v1/..;/admin", "--config", scoped, "--resolve", "api.example=8.8.8.8"}, 1, `; path parameter`, ""},
		{[]string{"net", "check", "https://api.example/v1/items", "--config", scoped, "--resolve", "api.example=8.8.8.8"}, 0, `"connection":"v1"`, ""},
	} {
		var out, errOut bytes.Buffer
		code := Main(c.args, nil, &out, &errOut)
		if code != c.exit || !strings.Contains(out.String(), c.out) || !strings.Contains(errOut.String(), c.err) {
			t.Errorf("%v: exit %d, out %q, err %q", c.args, code, out.String(), errOut.String())
		}
	}
}
