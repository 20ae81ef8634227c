// The shared conformance vectors (testdata/frames.json, format in
// testdata/README.md) through checkFrame, compared with the verdict the Go
// validator must reach on the same text: verdict, type, code, requestId, the
// set of rule ids and the answer's type. The runtime's own incoming check,
// the acceptors (HOST_TO_APP), must agree on every host→app vector that gets past the
// frame-level rules.

import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { checkFrame } from "../dist/frames.mjs";
import { HOST_TO_APP } from "../gen/validate.mjs";

const MARKER = "$PAD";
const source = readFileSync(new URL("../../testdata/frames.json", import.meta.url), "utf8");

// rawValueAt returns the JSON text of the value that starts at text[i]
// (after whitespace), exactly as written.
function rawValueAt(text, i) {
  while (" \t\r\n".includes(text[i])) i++;
  const start = i;
  let depth = 0;
  for (; i < text.length; i++) {
    const c = text[i];
    if (c == '"') {
      for (i++; text[i] != '"'; i++) if (text[i] == "\\") i++;
      if (depth == 0) return text.slice(start, i + 1);
    } else if (c == "{" || c == "[") depth++;
    else if (c == "}" || c == "]") {
      if (--depth == 0) return text.slice(start, i + 1);
    } else if (depth == 0 && /[,}\]\s]/.test(text[i + 1] ?? ",")) return text.slice(start, i + 1);
  }
  throw new Error("unterminated value");
}

// compact removes the whitespace outside strings, as Go's json.Compact does,
// keeping every escape as written.
function compact(text) {
  return text.replace(/("(?:[^"\\]|\\.)*")|[ \t\r\n]+/g, (m, str) => str ?? "");
}

// loadVectors reads every vector with its exact text: raw as given, or the
// frame as written in the file, compacted, with its padding directive applied.
function loadVectors() {
  const doc = JSON.parse(source);
  // The raw text of each vector's frame, in file order.
  const frames = [];
  const arrayStart = source.indexOf("[", source.indexOf('"vectors"'));
  for (let i = arrayStart + 1; ; ) {
    while (" \t\r\n,".includes(source[i])) i++;
    if (source[i] == "]") break;
    const vectorText = rawValueAt(source, i);
    const at = vectorText.search(/"frame"\s*:/);
    frames.push(at < 0 ? null : rawValueAt(vectorText, vectorText.indexOf(":", at) + 1));
    i += vectorText.length;
  }
  assert.equal(frames.length, doc.vectors.length, "one raw frame per vector");
  return doc.vectors.map((v, n) => {
    let text;
    if (typeof v.raw == "string") text = v.raw;
    else {
      text = compact(frames[n]);
      if (v.padTo || v.padCount) {
        assert.equal(text.split(MARKER).length, 2, `${v.name}: one ${MARKER}`);
        const bytes = Buffer.byteLength(text) - MARKER.length;
        const pad = v.padTo ? "x".repeat(v.padTo - bytes) : (v.padWith || "x").repeat(v.padCount);
        text = text.replace(MARKER, () => pad);
      }
    }
    return { name: v.name, text, want: v.want };
  });
}

const vectors = loadVectors();

test("the vector file has the cases the issue asks for", () => {
  assert.ok(vectors.length >= 150, `${vectors.length} vectors`);
  for (const verdict of ["accept", "ignore", "reject"])
    assert.ok(vectors.some((v) => v.want.verdict === verdict), verdict);
});

test("checkFrame agrees with every vector", () => {
  const failures = [];
  for (const v of vectors) {
    const got = checkFrame(v.text);
    const w = v.want;
    let norm;
    if (w.verdict == "reject")
      norm = {
        verdict: got.verdict,
        code: got.code,
        requestId: got.requestId,
        rules: [...new Set(got.errors?.map((e) => e.rule))].sort(),
        answerType: got.answer ? got.answer.type : null,
      };
    else norm = { verdict: got.verdict, type: got.type };
    const want =
      w.verdict == "reject"
        ? { verdict: "reject", code: w.code, requestId: w.requestId, rules: [...new Set(w.rules)].sort(), answerType: w.answerType }
        : { verdict: w.verdict, type: w.type };
    try {
      assert.deepEqual(norm, want);
      if (got.answer) assert.equal(got.answer.requestId, got.requestId, "the answer carries the recovered requestId");
    } catch {
      failures.push(`${v.name}: got ${JSON.stringify(norm)}, want ${JSON.stringify(want)}`);
    }
  }
  assert.deepEqual(failures, [], `${failures.length} of ${vectors.length} vectors disagree:\n${failures.join("\n")}`);
});

test("the runtime's acceptors agree on every host→app vector past the frame rules", () => {
  let n = 0;
  for (const v of vectors) {
    if (v.want.verdict == "ignore" || v.want.rules?.some((r) => r.startsWith("frame."))) continue;
    const frame = JSON.parse(v.text);
    const accept = HOST_TO_APP[frame.type];
    if (!accept) continue;
    n++;
    assert.equal(accept(frame), v.want.verdict == "accept", v.name);
  }
  assert.ok(n >= 20, `only ${n} host→app vectors`);
});
