package pack

import (
	"context"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// stringHandlerRegexp is the regexp findStringHandlers replaced, kept as the
// reference TestStringHandlersAreTheRegexp and FuzzStringHandlers hold it to.
var stringHandlerRegexp = regexp.MustCompile(`(?i)(?:^|[\s"'/\\])(on(?:click|dblclick|auxclick|contextmenu|mouse[a-z]*|pointer[a-z]*|touch[a-z]*|key(?:down|up|press)|` +
	`input|change|submit|reset|focus(?:in|out)?|blur|load|error|scroll(?:end)?|drag[a-z]*|drop|wheel|select|toggle|` +
	`animation[a-z]*|transition[a-z]*|play(?:ing)?|pause|ended|canplay[a-z]*|resize|copy|cut|paste|invalid|search|beforeinput|close|cancel))` +
	`\s*=\s*(?:\\?["'\x60]|\$\{)`)

var stringHandlerCases = []string{
	`<b onclick="x">`, `onclick='x'`, "<b onClick=`", `<b ONCLICK = "x">`, `<b onclick=x>`, `<b xonclick="x">`, `<b/onclick="x">`,
	`<b \onclick="x">`, `"onclick="`, `<b onclick=\"x\">`, `<b onclick=\'x\'>`, "<b onclick=${f}>", `<b onclick=$x>`, `<b onclick=\x>`,
	`<b onmouseover="x" onmouseout="y">`, `<b onmouse="x">`, `<b onmousé="x">`, `<b onpointerdownX="x">`, `<b ontouchstart ="x">`,
	`<b onkeydown="x"><b onkeyup="x"><b onkeypress="x"><b onkey="x">`, `<b onfocus="x"><b onfocusin="x"><b onfocusout="x"><b onfocusx="x">`,
	`<b onscroll="x"><b onscrollend="x"><b onplay="x"><b onplaying="x"><b onplays="x">`, `<b oncanplay="x"><b oncanplaythrough="x">`,
	`<b onclicK="x">`, `<b onſubmit="x">`, `<b onclickſ="x">`, `<b onmouſe="x">`, `<b onkeydoẄn="x">`, `<b onload="x">`, `<b onerror = 'x'>`,
	`onclick="onload="`, `onclick=" onload="`, `"onclick=""onload="`, `only=1&x=2`, `<b onclick`, `<b onclick=`, `<b onclick= `, `on`, `o`, ``,
	"<b\tonclick\n=\n\"x\">", "<b\vonclick=\"x\">", `<b onbeforeinput="x"><b oncontextmenu="x"><b ondblclick="x"><b onauxclick="x">`,
	`<b onanimationend="x"><b ontransitionrun="x"><b ondragstart="x"><b ondrop="x"><b onwheel="x"><b ontoggle="x"><b onclose="x">`,
}

func checkStringHandlers(t *testing.T, s string) {
	want := stringHandlerRegexp.FindAllStringSubmatchIndex(s, -1)
	if got := findStringHandlers(s); !slices.EqualFunc(got, want, slices.Equal) {
		t.Errorf("findStringHandlers(%q) = %v, the regexp says %v", s, got, want)
	}
}

// TestStringHandlersAreTheRegexp: findStringHandlers finds what the regexp
// it replaced finds (every match, its place and the attribute's name), the
// regexp's case folding of ſ and the Kelvin sign included, on the example
// apps, the runtime's sources, the pack cases, every 40-byte window of them
// and hand-made edge cases.
func TestStringHandlersAreTheRegexp(t *testing.T) {
	n := 0
	for _, s := range append(slices.Clone(stringHandlerCases), snugScanTexts(t)...) {
		checkStringHandlers(t, s)
		n += len(stringHandlerRegexp.FindAllStringIndex(s, -1))
	}
	if n < 50 {
		t.Errorf("the texts hold only %d matches: the comparison tests little", n)
	}
}

// FuzzStringHandlers holds findStringHandlers to the regexp on any text
// (go test -fuzz FuzzStringHandlers ./pack).
func FuzzStringHandlers(f *testing.F) {
	for _, s := range stringHandlerCases {
		f.Add(s)
	}
	f.Fuzz(checkStringHandlers)
}

// TestStringHandlerInCodeWithoutLowerCaseOn: the handler check's pre-check
// reads case as the check does (it once looked for a lower-case "on", so
// code written in capitals went unchecked).
func TestStringHandlerInCodeWithoutLowerCaseOn(t *testing.T) {
	page := "<!doctype html><title>T</title><div id=d></div><script>d.innerHTML='<B ONCLICK=\"A()\">GO</B>'</script>"
	res, _ := Build(context.Background(), Options{Path: "index.html", HTML: []byte(page), Runtime: []byte(testRuntime)})
	for _, d := range res.Diagnostics {
		if d.Code == "html.inline-handler" && strings.Contains(d.Message, "onclick") {
			return
		}
	}
	t.Errorf("no html.inline-handler warning:\n%s", diagText(res.Diagnostics))
}
