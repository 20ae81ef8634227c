package cli

import (
	"bytes"
	"slices"
	"testing"
)

// Each entry of verbs is named for the command it builds.
func TestVerbNamesAreTheCommands(t *testing.T) {
	var names []string
	for _, v := range verbs {
		c := v.build(&IO{})
		if c.Name() != v.name || len(c.Aliases) > 0 {
			t.Errorf("verbs names %q for the command %q (aliases %q)", v.name, c.Name(), c.Aliases)
		}
		names = append(names, v.name)
	}
	var listed []string
	for _, c := range NewRoot(&IO{}).Commands() {
		listed = append(listed, c.Name())
	}
	if !slices.Equal(names, listed) {
		t.Errorf("NewRoot lists %q, verbs %q", listed, names)
	}
}

// A process builds only the verb it runs (newRoot with verbFor): help,
// completion, usage errors and a run print byte for byte what the whole
// tree prints, with the same exit code.
func TestOneVerbTreeAnswersAsTheWholeTree(t *testing.T) {
	var cases [][]string
	for _, v := range verbs {
		n := v.name
		cases = append(cases, []string{n, "--help"}, []string{"help", n}, []string{n, "-h"}, []string{"-h", n}, []string{"--help", n},
			[]string{"__complete", n, "--"}, []string{"__complete", n, "-"}, []string{"__completeNoDesc", n, "--"}, []string{"__complete", n, ""},
			[]string{n, "--bogus"}, []string{n, "bogus", "args", "here"})
	}
	for _, sub := range [][]string{{"new", "app"}, {"new", "host"}, {"check", "frame"}, {"check", "reply"}, {"check", "envelope"}, {"net", "check"}} {
		cases = append(cases, append(slices.Clone(sub), "--help"), append([]string{"help"}, sub...), append([]string{"__complete"}, append(slices.Clone(sub), "--")...))
	}
	cases = append(cases, nil, []string{"--help"}, []string{"help"}, []string{"bogus"}, []string{"biuld"}, []string{"__complete", ""},
		[]string{"__complete", "b"}, []string{"completion", "bash"}, []string{"version"}, []string{"version", "extra"}, []string{"--", "version"},
		[]string{"new", "ap"}, []string{"check", "fram"}, []string{"net", "bogus"})
	run := func(args []string, only string) (int, string) {
		var out bytes.Buffer
		root := newRoot(&IO{Out: &out, Err: &out}, only)
		root.SetArgs(args)
		err := root.Execute()
		code := exitOK
		if err != nil {
			code = exitFailure
			out.WriteString("error: " + err.Error())
		}
		return code, out.String()
	}
	narrowed := 0
	for _, args := range cases {
		only := verbFor(args)
		if only != "" {
			narrowed++
		}
		wantCode, want := run(args, "")
		code, got := run(args, only)
		if code != wantCode || got != want {
			t.Errorf("%q with only %q: exit %d\n%s\nthe whole tree: exit %d\n%s", args, only, code, got, wantCode, want)
		}
	}
	if narrowed < len(verbs)*8 {
		t.Errorf("verbFor narrowed %d of %d cases", narrowed, len(cases))
	}
}

func TestVerbFor(t *testing.T) {
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"version"}, "version"},
		{[]string{"build", "app.html", "-o", "x"}, "build"},
		{[]string{"help", "serve"}, "serve"},
		{[]string{"__complete", "mcp", "--ui", ""}, "mcp"},
		{[]string{"__completeNoDesc", "net", "check"}, "net"},
		{nil, ""},
		{[]string{"help"}, ""},
		{[]string{"-h", "new"}, ""},
		{[]string{"--", "version"}, ""},
		{[]string{"completion", "bash"}, ""},
		{[]string{"biuld"}, ""},
		{[]string{"help", "help", "build"}, ""},
	} {
		if got := verbFor(c.args); got != c.want {
			t.Errorf("verbFor(%q) = %q, want %q", c.args, got, c.want)
		}
	}
}
