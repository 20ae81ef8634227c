package js

import (
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/snuggen/snuggen/gen/model"
)

// DirShaken holds the tree-shaken runtimes: one bundle per target and per
// set of capability members an app may use, none with the page's forms
// (dist/forms.js, which snuggen build puts before one when the page may
// have a form; dist/snug.js and dist/snug-mcp.js have every member and the
// forms). snuggen build injects the one that matches what the app
// references (pack: the runtime an app pays for).
const DirShaken = "runtime-js/dist/shaken/"

// ShakeMembers are the runtime's capability members, each a separate export
// of src/snug.js, in the order the variants are named by, with the request
// frame each sends (the name of its schema): a variant takes the acceptor of
// that request's answer only when it has the member. Every other host→app
// frame (host-ready, host-event) is accepted by all. With is a part that
// comes with the member, an export the entry applies to the global
// (with(snug)): openUrl brings links, the route of link clicks and
// window.open to it (snuggen build keeps it for an app that names openUrl or
// may show or follow a link, pack/shake.go); saveFile brings downloads, the
// route of an <a download> click to it. Wraps names the member a member
// without a request wraps: onPartial is the reader of ask's onPartial option
// (src/partial.js), kept for an app that names it.
// Reasons marks a member whose answer refuses with a "CODE: message" reason
// (src/snug.js settled): a Snug variant with one hands the transport's
// registry to knownCodes, for R5 on that code.
var ShakeMembers = []struct {
	Member, Request, With, Wraps string
	Reasons                      bool
}{
	{"ask", "app-message", "", "", false},
	{"db", "db-request", "", "", false},
	{"net", "net-request", "", "", false},
	{"openUrl", "open-url-request", "links", "", true},
	{"saveFile", "save-file-request", "downloads", "", true},
	{"onPartial", "", "", "ask", false},
}

// memberBit is the bit of member in a variant's mask.
func memberBit(member string) int {
	for i, m := range ShakeMembers {
		if m.Member == member {
			return i
		}
	}
	panic("js: ShakeMembers has no " + member)
}

// ShakenTargets are the runtimes a variant is built for: the Snug transport
// (frames checked by the acceptors) and the MCP Apps one (the server checks).
var ShakenTargets = []string{"snug", "mcp"}

// ShakenName is the file name of the variant of target with the members of
// mask (bit i: ShakeMembers[i]), e.g. "snug-ask-db.js"; "snug-base.js" has
// none.
func ShakenName(target string, mask int) string {
	var parts []string
	for i, m := range ShakeMembers {
		if mask&(1<<i) != 0 {
			parts = append(parts, m.Member)
		}
	}
	if len(parts) == 0 {
		parts = []string{"base"}
	}
	return target + "-" + strings.Join(parts, "-") + ".js"
}

// shaken bundles every variant of each target, all without the forms.
func shaken(m *model.Model, d *data, src map[string]string) ([]model.File, error) {
	s, err := newShaker(m, d)
	if err != nil {
		return nil, err
	}
	var jobs []shakeJob
	for _, target := range ShakenTargets {
		for mask := 0; mask <= 1<<len(ShakeMembers)-1; mask++ {
			entry, lacks, err := s.entry(target, mask)
			if err != nil {
				return nil, err
			}
			jobs = append(jobs, shakeJob{DirShaken + ShakenName(target, mask), entry, lacks})
		}
	}
	return bundleShaken(jobs, src)
}

// shaker is what every variant's entry is made from.
type shaker struct {
	d          *data
	acceptor   map[string]string // frame type → its acceptor function
	answerOf   map[string]string // request schema name → its answer's type
	base       []string          // the answers every variant accepts
	registries map[string]bool   // a capability's own registry is named like it
}

func newShaker(m *model.Model, d *data) (*shaker, error) {
	s := &shaker{d: d, acceptor: map[string]string{}, answerOf: map[string]string{}, registries: map[string]bool{}}
	for _, a := range d.Accepts {
		s.acceptor[a.Type] = a.Fn
	}
	for _, f := range m.Frames {
		if f.Direction == model.AppToHost && f.Answer != "" {
			s.answerOf[f.Name] = f.Answer
		}
	}
	answers := map[string]bool{} // the answers only a member's variants accept
	for _, sm := range ShakeMembers {
		if sm.Request != "" {
			answers[s.answerOf[sm.Request]] = true
		}
	}
	for _, a := range d.Accepts {
		if !answers[a.Type] {
			s.base = append(s.base, a.Type)
		}
	}
	for _, sm := range ShakeMembers {
		if sm.Request != "" && s.acceptor[s.answerOf[sm.Request]] == "" {
			return nil, fmt.Errorf("js: shaken runtimes: member %s sends %s, which has no answer with an acceptor", sm.Member, sm.Request)
		}
	}
	for _, e := range m.Rules.Errors {
		s.registries[e.Registry()] = true
	}
	if !s.registries["core"] {
		return nil, fmt.Errorf("js: shaken runtimes: the error registry has no core codes")
	}
	return s, nil
}

// variant is what one mask of members imports, installs and leaves out.
type variant struct {
	mask                                  int
	imports, members, withs, types, lacks []string
}

func (s *shaker) variant(mask int) variant {
	v := variant{mask: mask, types: slices.Clone(s.base)}
	wraps := map[string]string{} // member → its wrapped form
	for i, sm := range ShakeMembers {
		if mask&(1<<i) != 0 && sm.Wraps != "" && mask&(1<<memberBit(sm.Wraps)) != 0 {
			wraps[sm.Wraps] = sm.Member + "(" + sm.Wraps + ")"
		}
	}
	for i, sm := range ShakeMembers {
		if mask&(1<<i) == 0 || sm.Wraps != "" && wraps[sm.Wraps] == "" {
			v.lacks = append(v.lacks, sm.Member)
			continue
		}
		v.imports = append(v.imports, sm.Member)
		if sm.Wraps == "" {
			if w := wraps[sm.Member]; w != "" {
				v.members = append(v.members, sm.Member+": "+w)
			} else {
				v.members = append(v.members, sm.Member)
			}
		}
		if sm.With != "" {
			v.imports = append(v.imports, sm.With)
			v.withs = append(v.withs, sm.With+"(globalThis.snug);\n")
		}
		if sm.Request != "" {
			v.types = append(v.types, s.answerOf[sm.Request])
		}
	}
	return v
}

// entry is the entry module of target's variant mask, and the members it lacks.
func (s *shaker) entry(target string, mask int) (string, []string, error) {
	v := s.variant(mask)
	var e strings.Builder
	if target == "snug" {
		// The transport first: its modules (constants, the acceptors)
		// then come first in the bundle, which gzip takes 9–18 B
		// better. None of them runs anything when loaded.
		e.WriteString(`import { connect, registry } from "./transport-snug.js";` + "\n")
	}
	e.WriteString("import { install, knownCodes")
	for _, mb := range v.imports {
		e.WriteString(", " + mb)
	}
	e.WriteString(` } from "./snug.js";` + "\n")
	if target == "snug" {
		if err := s.snugInstall(&e, v); err != nil {
			return "", nil, err
		}
	} else {
		// The transport's parts only some members use (ui/download-file,
		// ui/open-link) go with SNUG_<MEMBER> (bundleOptions.lacks).
		e.WriteString(`import { connect } from "./transport-mcp.js";` + "\n")
		e.WriteString("globalThis.snug = install(connect, { " + strings.Join(v.members, ", ") + " });\n")
	}
	e.WriteString(strings.Join(v.withs, ""))
	return e.String(), v.lacks, nil
}

// snugInstall writes the snug target's install: its acceptors and the
// codes it knows.
func (s *shaker) snugInstall(e *strings.Builder, v variant) error {
	var fns []string
	for _, t := range v.types {
		fns = append(fns, s.acceptor[t])
	}
	e.WriteString("import { " + strings.Join(fns, ", ") + ` } from "../gen/validate.mjs";` + "\n")
	codes, regs, err := s.knownCodes(v.mask)
	if err != nil {
		return err
	}
	// The table's keys are the type constants the bundle has anyway.
	var consts []string
	if len(regs) == 1 {
		consts = append(consts, codes)
	}
	for _, t := range v.types {
		consts = append(consts, typeConst(t))
	}
	e.WriteString("import { " + strings.Join(consts, ", ") + ` } from "../gen/constants.mjs";` + "\n")
	e.WriteString("globalThis.snug = install(connect({ __proto__: null")
	for _, t := range v.types {
		e.WriteString(", [" + typeConst(t) + "]: " + s.acceptor[t])
	}
	e.WriteString(" }, " + codes + "), { " + strings.Join(v.members, ", ") + " });\n")
	for i, sm := range ShakeMembers {
		if v.mask&(1<<i) != 0 && sm.Reasons {
			e.WriteString("knownCodes(registry(" + codes + "));\n")
			break
		}
	}
	return nil
}

// knownCodes is the expression of the codes a variant knows (R5): the core
// registry and its members' own. With the core alone it is CODES_CORE
// (with the constants, first in the bundle); with a member's registry one
// literal of their values joined, not a concatenation at load (8 B less).
func (s *shaker) knownCodes(mask int) (string, []string, error) {
	regs := []string{"CODES_CORE"}
	for i, sm := range ShakeMembers {
		if mask&(1<<i) != 0 && s.registries[sm.Member] {
			regs = append(regs, "CODES_"+screaming(sm.Member))
		}
	}
	if len(regs) == 1 {
		return regs[0], regs, nil
	}
	var known []string
	for _, r := range regs {
		for _, nv := range s.d.Registries {
			if nv.Name == r {
				var v string
				if err := json.Unmarshal([]byte(nv.Value), &v); err != nil {
					return "", nil, fmt.Errorf("js: shaken runtimes: %s: %w", r, err)
				}
				known = append(known, v)
			}
		}
	}
	return jsonText(strings.Join(known, " ")), regs, nil
}

// shakeJob is one variant to bundle: its file name, entry and lacks.
type shakeJob struct {
	name, entry string
	lacks       []string
}

// bundleShaken builds the variants side by side (they are independent),
// kept in order.
func bundleShaken(jobs []shakeJob, src map[string]string) ([]model.File, error) {
	files := make([]model.File, len(jobs))
	errs := make([]error, len(jobs))
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for i, j := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			const entry = "src/shaken-entry.js"
			all := map[string]string{entry: j.entry}
			for k, v := range src {
				all[k] = v
			}
			script, err := bundle(all, bundleOptions{entry: entry, format: api.FormatIIFE, minify: true, banner: Header, lacks: j.lacks})
			files[i], errs[i] = model.File{Name: j.name, Contents: script}, err
		}()
	}
	wg.Wait()
	return files, errors.Join(errs...)
}
