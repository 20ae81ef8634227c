package hostkit_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/chromedp"

	"github.com/snuggen/snuggen/frame"
	"github.com/snuggen/snuggen/hostkit"
	"github.com/snuggen/snuggen/internal/browsertest"
	"github.com/snuggen/snuggen/pack"
)

// Issue 14 items 7 and 8: apps written the way a model writes them, run
// through the real runner: alert() shows a notice, a form and a <dialog>
// confirm work and log nothing, the console of a load is clean, and a copy
// button writes the clipboard.

// contactsApp is a model's contact list: a form with a required field
// (submitted by Enter), alert() after adding, and the confirm-before-delete
// a model writes once it is told confirm() cannot work: a <dialog> whose
// form has method="dialog".
const contactsApp = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<meta name="snug:app-id" content="test.contacts">
<meta name="snug:display-name" content="Contacts">
<title>Contacts</title>
<style>
  body { font-family: system-ui, sans-serif; margin: 16px; }
  form { display: flex; gap: 8px; }
  li { margin: 4px 0; }
</style>
</head>
<body>
<h1>Contacts</h1>
<form id="add-form">
  <input id="name" name="name" placeholder="Name" required>
  <input id="email" name="email" type="email" placeholder="Email">
  <button type="submit">Add</button>
</form>
<ul id="contact-list"></ul>

<dialog id="confirm-dialog">
  <form method="dialog">
    <p>Delete this contact?</p>
    <button value="cancel" id="confirm-cancel">Cancel</button>
    <button value="confirm" id="confirm-ok">Delete</button>
  </form>
</dialog>

<script>
  const contacts = [];
  const list = document.getElementById('contact-list');
  const dialog = document.getElementById('confirm-dialog');
  let pendingDelete = null;

  function render() {
    list.innerHTML = '';
    contacts.forEach((c, i) => {
      const li = document.createElement('li');
      li.textContent = c.name + (c.email ? ' (' + c.email + ') ' : ' ');
      const btn = document.createElement('button');
      btn.textContent = 'Delete';
      btn.className = 'delete';
      btn.addEventListener('click', () => {
        pendingDelete = i;
        dialog.showModal();
      });
      li.appendChild(btn);
      list.appendChild(li);
    });
  }

  document.getElementById('add-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const name = document.getElementById('name').value.trim();
    const email = document.getElementById('email').value.trim();
    contacts.push({ name, email });
    e.target.reset();
    render();
    alert('Added ' + name + '!');
  });

  dialog.addEventListener('close', () => {
    if (dialog.returnValue === 'confirm' && pendingDelete !== null) {
      contacts.splice(pendingDelete, 1);
      render();
    }
    pendingDelete = null;
  });
</script>
</body>
</html>`

func TestModelFormsDialogsAndAlert(t *testing.T) {
	h, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("contacts", []byte(contactsApp))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	r := browsertest.OpenRunner(t, h.URL(), "contacts")
	page := browsertest.WatchConsole(t, r.Tab)
	f := r.Frame(0)
	app := browsertest.WatchConsole(t, f)
	count := func() int { return browsertest.Eval[int](t, f, `document.querySelectorAll('#contact-list li').length`) }
	// settle waits until the runner has fitted the frame to its content (a
	// notice makes it taller), so that a click lands where it was aimed.
	settle := func() {
		t.Helper()
		browsertest.WaitFor(t, f, "the frame to fit its content", `document.documentElement.scrollHeight <= innerHeight`)
	}

	// An empty required field: the browser's own check stops the submit.
	browsertest.Do(t, f, "click Add with no name", chromedp.Click(chromedp.CSS(`button[type=submit]`)))
	if n := count(); n != 0 {
		t.Fatalf("an invalid form was submitted: %d contacts", n)
	}
	// Enter in a field submits; the app's alert() shows a notice.
	browsertest.Do(t, f, "type a contact", chromedp.SendKeys(chromedp.CSS("#name"), "Ada Lovelace\r"))
	browsertest.WaitFor(t, f, "the contact", `document.querySelectorAll('#contact-list li').length === 1`)
	browsertest.WaitFor(t, f, "the alert's notice", `[...document.querySelectorAll('snug-notice')].some(n => n.textContent === 'Added Ada Lovelace!OK')`)
	// The notice is at the top, above the app's content, covering none of it.
	notice := browsertest.Eval[map[string]any](t, f, `(() => { const n = document.querySelector('snug-notice'), r = n.getBoundingClientRect(),
		h = document.querySelector('h1').getBoundingClientRect();
		return {role: n.getAttribute('role'), visible: r.width > 100 && r.height > 10 && r.top >= 0 && r.top < 40, above: r.bottom <= h.top}; })()`)
	if notice["role"] != "alert" || notice["visible"] != true || notice["above"] != true {
		t.Fatalf("notice %v: want a visible role=alert box at the top, above the app's heading", notice)
	}
	// A second alert stacks; the page stays usable while they show.
	browsertest.Eval[bool](t, f, `(alert("Line one\nLine two"), true)`)
	if n := browsertest.Eval[int](t, f, `document.querySelectorAll('snug-notice').length`); n != 2 {
		t.Fatalf("%d notices, want 2", n)
	}
	settle()
	browsertest.Do(t, f, "add a second contact", chromedp.SendKeys(chromedp.CSS("#name"), "Grace Hopper"), chromedp.Click(chromedp.CSS(`button[type=submit]`)))
	browsertest.WaitFor(t, f, "two contacts", `document.querySelectorAll('#contact-list li').length === 2`)
	// OK closes a notice.
	settle()
	browsertest.Do(t, f, "close the first notice", chromedp.Click(chromedp.CSS("snug-notice button")))
	if texts := browsertest.Eval[[]string](t, f, `[...document.querySelectorAll('snug-notice')].map(n => n.firstChild.textContent)`); !slices.Equal(texts, []string{"Line one\nLine two", "Added Grace Hopper!"}) {
		t.Fatalf("notices after OK: %q", texts)
	}

	// The <dialog> confirm: Cancel keeps the contact, Delete removes it.
	settle()
	browsertest.Do(t, f, "delete, then cancel", chromedp.Click(chromedp.CSS("#contact-list li:first-child .delete")), chromedp.Click(chromedp.CSS("#confirm-cancel")))
	browsertest.WaitFor(t, f, "the dialog to close", `!document.getElementById('confirm-dialog').open`)
	if n := count(); n != 2 {
		t.Fatalf("Cancel deleted: %d contacts", n)
	}
	browsertest.Do(t, f, "delete, then confirm", chromedp.Click(chromedp.CSS("#contact-list li:first-child .delete")), chromedp.Click(chromedp.CSS("#confirm-ok")))
	browsertest.WaitFor(t, f, "one contact left", `document.querySelectorAll('#contact-list li').length === 1 && !document.getElementById('confirm-dialog').open`)
	if name := browsertest.Eval[string](t, f, `document.querySelector('#contact-list li').firstChild.textContent`); name != "Grace Hopper " {
		t.Fatalf("left: %q", name)
	}
	// The last notices close; nothing of them is left. (Last: the frame
	// shrinks after, which moves a centred modal dialog.)
	for range 2 {
		settle()
		browsertest.Do(t, f, "close a notice", chromedp.Click(chromedp.CSS("snug-notice button")))
	}
	if n := browsertest.Eval[int](t, f, `document.querySelectorAll('snug-notices, snug-notice').length`); n != 0 {
		t.Fatalf("%d notice elements left after closing them all", n)
	}
	if state := browsertest.Eval[string](t, r.Tab, `document.querySelector('article.instance').dataset.state`); state != "live" {
		t.Fatalf("the instance is %s", state)
	}
	// Nothing in either console: no "Blocked form submission", no
	// Permissions-Policy error, no CSP report.
	app.Clean(t, "the app")
	page.Clean(t, "the runner page")
}

// copyApp is a model's "copy to clipboard" button.
const copyApp = `<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<meta name="snug:app-id" content="test.copy">
<meta name="snug:display-name" content="Copy">
</head>
<body>
<pre id="code">npm install snug</pre>
<button id="copy-btn">Copy</button>
<span id="status"></span>
<script>
  document.getElementById('copy-btn').addEventListener('click', async () => {
    const text = document.getElementById('code').textContent;
    try {
      await navigator.clipboard.writeText(text);
      document.getElementById('status').textContent = 'Copied!';
    } catch (err) {
      document.getElementById('status').textContent = 'Copy failed: ' + err.message;
    }
  });
</script>
</body>
</html>`

func TestClipboardWriteOnClick(t *testing.T) {
	h, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("copy", []byte(copyApp))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	r := browsertest.OpenRunner(t, h.URL(), "copy")
	f := r.Frame(0)

	// A page of the test's own, allowed to read the clipboard, reads what
	// the app wrote.
	base := browsertest.ServePages(t, map[string]string{"/read": "<!doctype html><title>read</title>"})
	reader := browsertest.NewTab(t)
	if _, err := chromedp.Call(reader, browser.SetPermission, browser.SetPermissionParams{
		Permission: &browser.PermissionDescriptor{Name: "clipboard-read"}, Setting: browser.PermissionSettingGranted, Origin: base}); err != nil {
		t.Fatal(err)
	}
	browsertest.Do(t, reader, "open the reader", chromedp.Navigate(base+"/read"))
	write := func(s string) {
		t.Helper()
		if got := browsertest.Eval[string](t, reader, `navigator.clipboard.writeText(`+jsString(s)+`).then(() => "ok", (e) => String(e))`); got != "ok" {
			t.Fatalf("the reader could not write the clipboard: %s", got)
		}
	}
	read := func() string {
		t.Helper()
		return browsertest.Eval[string](t, reader, `navigator.clipboard.readText()`)
	}

	// Without a user gesture the browser refuses: the app cannot write the
	// clipboard behind the user's back.
	write("before")
	if got := browsertest.Eval[string](t, f, `navigator.clipboard.writeText("sneaky").then(() => "written", (e) => e.name)`); got != "NotAllowedError" {
		t.Fatalf("writeText without a gesture: %s", got)
	}
	if got := read(); got != "before" {
		t.Fatalf("the clipboard holds %q after a write without a gesture", got)
	}
	// Reading stays denied.
	if got := browsertest.Eval[string](t, f, `navigator.clipboard.readText().then(() => "read", (e) => e.name)`); got != "NotAllowedError" {
		t.Fatalf("readText: %s", got)
	}
	// A click on Copy writes it.
	browsertest.Do(t, f, "click Copy", chromedp.Click(chromedp.CSS("#copy-btn")))
	browsertest.WaitFor(t, f, "the status", `document.getElementById('status').textContent !== ''`)
	if status := browsertest.Eval[string](t, f, `document.getElementById('status').textContent`); status != "Copied!" {
		t.Fatalf("status %q", status)
	}
	if got := read(); got != "npm install snug" {
		t.Fatalf("the clipboard holds %q", got)
	}
	// The frame asked for exactly the delegated features.
	if allow := browsertest.Eval[string](t, r.Tab, `document.querySelector('article.instance iframe').getAttribute('allow')`); allow != strings.Join(frame.PermissionsPolicyDelegated, "; ") {
		t.Fatalf("iframe allow=%q", allow)
	}
}

// harmlessFeatures are the policy-controlled features an app frame may keep
// (TestPermissionsPolicy): client hints (the sandbox makes no request they
// could go on) and features with no reach beyond the page.
var harmlessFeatures = []string{"aria-notify", "media-playback-while-not-visible", "unload"}

// otherReleases are denied features that some Chromium releases know and
// others do not (checked in Debian's 147 and 148 and in a 156): the header
// names them for the releases that have them, and a release without them
// logs one console line per name. Any other name the browser does not know
// is a typo or a retired feature, and TestPermissionsPolicy fails on it.
var otherReleases = map[string]string{
	// Known to 147 and 148, allowed in a frame unless denied; Chrome is
	// retiring these Privacy Sandbox APIs.
	"attribution-reporting":     "147, 148",
	"join-ad-interest-group":    "147, 148",
	"private-aggregation":       "147, 148",
	"run-ad-auction":            "147, 148",
	"shared-storage":            "147, 148",
	"shared-storage-select-url": "147, 148",
	// Newer than both, or behind an origin trial.
	"digital-credentials-create": "an origin trial in 147 and 148",
	"language-model":             "148 (an origin trial in 147)",
	"speaker-selection":          "not 147 or 148",
}

// TestPermissionsPolicy: the headers name only features the browser knows
// or another supported release does (otherReleases), and the deny-all
// intent holds in the app's frame: every feature it keeps is delegated on
// purpose or harmless.
func TestPermissionsPolicy(t *testing.T) {
	h := startHost(t)
	tab := browsertest.NewTab(t)
	page := browsertest.WatchConsole(t, tab)
	browsertest.Do(t, tab, "open the runner", chromedp.Navigate(h.URL()+"?app=probe"))
	r := browsertest.Attach(t, tab)
	r.WaitFor("the probe", `document.querySelectorAll('article.instance[data-instance-id]').length === 1`)
	f := r.Frame(0)
	app := browsertest.WatchConsole(t, f)

	known := browsertest.Eval[[]string](t, tab, `document.featurePolicy.features()`)
	var unknown []string
	for _, name := range append(slices.Clone(frame.PermissionsPolicyDenied), frame.PermissionsPolicyDelegated...) {
		if slices.Contains(known, name) {
			continue
		}
		if _, ok := otherReleases[name]; !ok {
			t.Errorf("the rules' Permissions-Policy names %q, which this Chromium does not know: drop it from schemas/rules.json, or add it to otherReleases with the release that knows it", name)
		}
		unknown = append(unknown, name)
	}
	t.Logf("names this Chromium does not know, for other releases: %q", unknown)
	allowed := browsertest.Eval[[]string](t, f, `document.featurePolicy.allowedFeatures()`)
	for _, name := range allowed {
		if strings.HasPrefix(name, "ch-") || slices.Contains(harmlessFeatures, name) || slices.Contains(frame.PermissionsPolicyDelegated, name) {
			continue
		}
		t.Errorf("the app frame is allowed %q: deny it in schemas/rules.json (PERMISSIONS_POLICY_DENIED) or, if it is harmless, say why in harmlessFeatures", name)
	}
	if !slices.Contains(allowed, "clipboard-write") {
		t.Errorf("the app frame lacks clipboard-write: %v", allowed)
	}
	// Enabling the Log domain replayed what the loads logged.
	for _, c := range []struct {
		c     *browsertest.Console
		where string
	}{{page, "the runner page"}, {app, "the app"}} {
		for _, m := range c.c.Messages() {
			if !strings.Contains(m, "Permissions-Policy") && !strings.Contains(m, "Permissions policy") {
				continue
			}
			// The one line a release gives each name it does not know.
			if slices.ContainsFunc(unknown, func(name string) bool { return strings.HasSuffix(m, ": '"+name+"'.") }) {
				continue
			}
			t.Errorf("%s: %s", c.where, m)
		}
	}
}

// todoApp renders its list from a template literal with an inline onclick,
// as models often write it, and a second list the way the build's warning
// says: one listener on the container.
const todoApp = `<!DOCTYPE html>
<html>
<head>
<meta charset="utf-8">
<meta name="snug:app-id" content="test.todo">
<meta name="snug:display-name" content="Todo">
</head>
<body>
<ul id="todos"></ul>
<ul id="fixed"></ul>
<script>
  let todos = ['milk', 'eggs'];
  function removeTodo(i) {
    todos.splice(i, 1);
    render();
  }
  function render() {
    document.getElementById('todos').innerHTML = todos.map((t, i) =>
      ` + "`" + `<li>${t} <button class="remove" onclick="removeTodo(${i})">Remove</button></li>` + "`" + `).join('');
    document.getElementById('fixed').innerHTML = todos.map((t, i) =>
      ` + "`" + `<li>${t} <button class="remove" data-index="${i}">Remove</button></li>` + "`" + `).join('');
  }
  document.getElementById('fixed').addEventListener('click', (e) => {
    const b = e.target.closest('button[data-index]');
    if (b) removeTodo(Number(b.dataset.index));
  });
  render();
</script>
</body>
</html>`

// TestStringHandlersAreBlocked holds the build's warning to what the
// browser does: the inline handler in the template literal is warned about
// on its line, and in the runner it never runs; the delegated listener the
// warning suggests works.
func TestStringHandlersAreBlocked(t *testing.T) {
	res, err := pack.Build(context.Background(), pack.Options{Path: "todo.html", HTML: []byte(todoApp)})
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	for _, d := range res.Diagnostics {
		warned = append(warned, fmt.Sprintf("%s %d %s", d.Code, d.Line, d.Message))
	}
	if want := []string{"html.inline-handler 19 inline event handler onclick in markup built from a string"}; !slices.Equal(warned, want) {
		t.Fatalf("diagnostics %q, want %q", warned, want)
	}

	h, err := hostkit.New(hostkit.WithApps(hostkit.RawApp("todo", []byte(todoApp))))
	if err != nil {
		t.Fatal(err)
	}
	browsertest.ServeHost(t, h)
	r := browsertest.OpenRunner(t, h.URL(), "todo")
	f := r.Frame(0)
	app := browsertest.WatchConsole(t, f)
	browsertest.Do(t, f, "click the inline handler's Remove", chromedp.Click(chromedp.CSS("#todos li:first-child .remove")))
	// The delegated Remove runs (and re-renders both lists): by then the
	// first click had its chance.
	browsertest.Do(t, f, "click the delegated Remove", chromedp.Click(chromedp.CSS("#fixed li:last-child .remove")))
	browsertest.WaitFor(t, f, "the delegated remove", `document.querySelectorAll('#fixed li').length === 1`)
	if left := browsertest.Eval[string](t, f, `document.querySelector('#fixed li').firstChild.textContent`); left != "milk " {
		t.Fatalf("after one delegated remove the list holds %q: the inline handler ran too", left)
	}
	// The browser said why.
	blocked := false
	for _, m := range app.Messages() {
		blocked = blocked || strings.Contains(m, "Content Security Policy") || strings.Contains(m, "Trusted Type")
	}
	t.Logf("console: %q", app.Messages())
	if !blocked {
		t.Errorf("no CSP or Trusted Types report in the console: %q", app.Messages())
	}
}
