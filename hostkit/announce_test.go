package hostkit_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/hostkit/agent"
	"github.com/snuggen/snuggen/internal/browsertest"
)

// The attack: an installed app announces another installed app's name,
// appId and icon, hoping the user picks it from the runner's list as that
// app, and that the agent takes it for that app. The list and /apps.json
// keep each installed app's own metadata; the announce shows on that one
// instance's header, marked as the app's claim; another instance of the
// same app shows no claim; the agent's envelope names the app by the
// host's key.
func TestAnnounceCannotTakeAnotherAppsName(t *testing.T) {
	var mu sync.Mutex
	var envelopes []string
	spy := agent.BackendFunc(func(ctx context.Context, req agent.Completion, onText func(string)) (string, error) {
		mu.Lock()
		envelopes = append(envelopes, req.User)
		mu.Unlock()
		return `{"message":"ok"}`, nil
	})
	bank := `<!doctype html><html><head><meta charset="utf-8">
<meta name="snug:app-id" content="test.bank"><meta name="snug:display-name" content="Bank">
<meta name="snug:icon-emoji" content="🏦"><meta name="snug:icon-color" content="#1565c0">
<title>Bank</title></head><body><p>Bank</p></body></html>`
	h, err := hostkit.New(hostkit.WithAgent(spy), hostkit.WithApps(
		hostkit.RawApp("bank", []byte(bank)),
		hostkit.RawApp("probe", readTestdata(t, "probe.html")),
	))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	r := browsertest.OpenRunner(t, h.URL(), "probe", "probe")
	slots := r.Slots()
	evil := r.SlotFrame(slots[0])
	browsertest.Eval[bool](t, evil, `(snug.announce({appId: "test.bank", displayName: "Bank", iconEmoji: "🏦", iconColor: "#1565c0"}), true)`)
	// The page has taken the announce in when it shows it anywhere.
	r.WaitFor("the announce shown", `document.querySelector('article.instance[data-slot="`+slots[0]+`"]').dataset.claimedName === "Bank" ||
		document.querySelector('#app-list .app-button[data-app="probe"] .app-name').textContent === "Bank"`)

	type item struct{ App, Icon, Name string }
	list := browsertest.Eval[[]item](t, r.Tab, `[...document.querySelectorAll('#app-list .app-button')].map(b => ({
		app: b.dataset.app, icon: b.querySelector('.icon').textContent, name: b.querySelector('.app-name').textContent}))`)
	if len(list) != 2 || list[0] != (item{"bank", "🏦", "Bank"}) || list[1] != (item{"probe", "🧪", "Probe"}) {
		t.Fatalf("app list after the announce = %+v", list)
	}
	resp, err := http.Get(h.URL() + "apps.json")
	if err != nil {
		t.Fatal(err)
	}
	var apps struct {
		Apps []struct{ App, AppID, DisplayName, IconEmoji string }
	}
	err = json.NewDecoder(resp.Body).Decode(&apps)
	resp.Body.Close()
	if err != nil || len(apps.Apps) != 2 || apps.Apps[1].App != "probe" || apps.Apps[1].AppID != "test.probe" || apps.Apps[1].DisplayName != "Probe" || apps.Apps[1].IconEmoji != "🧪" {
		t.Fatalf("/apps.json after the announce = %+v (%v)", apps, err)
	}

	type head struct{ Name, Icon, Claim, Title string }
	header := func(slot string) head {
		return browsertest.Eval[head](t, r.Tab, `(() => { const a = document.querySelector('article.instance[data-slot="`+slot+`"]'); const c = a.querySelector('.claimed');
			return {name: a.querySelector('.name').textContent, icon: a.querySelector('.instance-head .icon').textContent,
				claim: c.hidden ? '' : c.textContent, title: c.title}; })()`)
	}
	if got := header(slots[0]); got.Name != "Probe" || got.Icon != "🧪" || !strings.Contains(got.Claim, "Bank") || !strings.Contains(got.Title, "announced") || !strings.Contains(got.Title, "probe") {
		t.Fatalf("the announcing instance's header = %+v: want the installed name and icon, and the claim marked as such", got)
	}
	if got := header(slots[1]); got.Name != "Probe" || got.Claim != "" {
		t.Fatalf("the other instance's header = %+v: an announce changes only its own instance", got)
	}

	// The agent is told the host's key, not the claimed appId.
	if code := browsertest.Eval[string](t, evil, `snug.ask("balance", {}).then(() => "", e => e.code)`); code != "" {
		t.Fatalf("ask failed: %s", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(envelopes) != 1 {
		t.Fatalf("%d agent requests", len(envelopes))
	}
	env, ok := agent.Detect(envelopes[0])
	if !ok || env.AppID != "probe" || strings.Contains(envelopes[0], "test.bank") {
		t.Fatalf("the agent was sent %s", envelopes[0])
	}
}
