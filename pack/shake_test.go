package pack

import (
	"slices"
	"strings"
	"testing"
)

// TestFindSnugUse: the members an app names are found in the forms a model
// writes them, and every use the build cannot follow asks for the whole
// runtime.
func TestFindSnugUse(t *testing.T) {
	for _, c := range []struct {
		code    string
		members []string // the capability members found
		dynamic bool
	}{
		{`snug.ask("x",{a:1}).then(r=>o.textContent=r.text)`, []string{"ask"}, false},
		{`await snug.db.exec("create table t(x)");snug.db.get("k")`, []string{"db"}, false},
		{`snug?.net.fetch(u);globalThis.snug.openUrl(u)`, []string{"net"}, false},
		{`await snug.saveFile("notes.md",text)`, []string{"saveFile"}, false},
		// An <a download> (markup or property) goes to saveFile; ask's
		// onPartial option needs its reader.
		{`<a download="x.csv" href="#">`, []string{"saveFile"}, false},
		{`a.href=URL.createObjectURL(b);a.download="x.csv";a.click()`, []string{"saveFile"}, false},
		{`snug.ask("q",{},{schema:s,onPartial:p=>show(p)})`, []string{"ask", "onPartial"}, false},
		{`window.snug.ask(1);self.snug.db.set("a",1)`, []string{"ask", "db"}, false},
		{`const{ask:e,db:t}=snug;e(1)`, []string{"ask", "db"}, false},
		{`const { ask, db: { exec } } = snug;`, []string{"ask", "db"}, false},
		{`let{"saveFile":o}=globalThis.snug;`, []string{"saveFile"}, false},
		{`n=()=>globalThis.snug?snug.db.set("h",t):0`, []string{"db"}, false},
		{`if(typeof snug<"u")snug.ask(1);if(!snug)throw 0;snug&&snug.net.fetch(1)`, []string{"ask", "net"}, false},
		{`snug.on("theme-change",f);await snug.ready;snug.emit("x",{})`, nil, false},
		{`<meta name="snug:app-id" content="a"><p>Made with snug.</p><p>snug apps</p>`, nil, false},
		{`x={snug:1,b:2};snug.ask("explain",{word:"snug"})`, []string{"ask"}, false},
		{`c.fillStyle=css.getPropertyValue("--snug-accent");o.strokeStyle=d("--snug-border","--line")`, nil, false},
		// Dynamic: any member may be reached.
		{`snug[k]()`, nil, true},
		{`f(snug)`, nil, true},
		{`const s=snug;s.ask()`, nil, true},
		{`const{...rest}=snug`, nil, true},
		{`const{[k]:v}=snug`, nil, true},
		{`globalThis["snug"].ask()`, nil, true},
		{`x=[snug]`, nil, true},
		{`o={s:snug}`, nil, true},
		{`a?snug:b`, nil, true},
		{`g.snug.db.get(1)`, nil, true},
		{`x=snug||y`, nil, true},
	} {
		u := findSnugUse([]string{c.code})
		var got []string
		for _, m := range []string{"ask", "db", "net", "saveFile", "onPartial"} {
			if u.members[m] {
				got = append(got, m)
			}
		}
		if (u.dynamic != "") != c.dynamic {
			t.Errorf("%s: dynamic = %q, want dynamic %v", c.code, u.dynamic, c.dynamic)
		}
		if !c.dynamic && !slices.Equal(got, c.members) {
			t.Errorf("%s: members %v, want %v", c.code, got, c.members)
		}
		if u.dynamic != "" && !strings.Contains(u.dynamic, "snug") {
			t.Errorf("%s: the reason %q does not quote the use", c.code, u.dynamic)
		}
	}
}
