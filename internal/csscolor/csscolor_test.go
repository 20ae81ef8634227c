package csscolor

import "testing"

// TestIconColors: colours pass, and everything an app used to style the
// runner with does not (issue 31 item 3).
func TestIconColors(t *testing.T) {
	for _, s := range []string{"#123", "#1234", "#2e7d32", "#2E7D32AA", "rgb(1, 2, 3)", "rgba(10%,20%,30%,0.5)",
		"rgb(1 2 3 / 50%)", "hsl(120deg 50% 40%)", "hsla(120, 50%, 40%, .5)", "RebeccaPurple", "teal", "transparent"} {
		if !Valid(s) {
			t.Errorf("Valid(%q) = false, want a colour", s)
		}
	}
	for _, s := range []string{"", "var(--x)", "var(--x, red)", "var(--x,url(https://e.example/a))",
		"linear-gradient(red,blue)", "url(data:image/png;base64,AA)", "url(https://e.example/)", "image-set(\"a.png\" 1x)",
		"red;background:url(x)", "red url(x)", "#12345", "#ggg", "rgb(1,2)", "rgb(1,2,3,4,5)", "rgb(var(--a),2,3)",
		"notacolor", "currentcolor", "inherit", "expression(alert(1))", "#123456 !important", "rgb(1,2,3) url(x)",
		"teal\u0000", "#1234567890abcdef0123456789abcdef0"} {
		if Valid(s) {
			t.Errorf("Valid(%q) = true, want no colour", s)
		}
	}
}
