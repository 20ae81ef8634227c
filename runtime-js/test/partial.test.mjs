// onPartial's reader (src/partial.js): a streamed answer cut at every
// place it can be cut, read as the object it is writing so far.

import assert from "node:assert/strict";
import { test } from "node:test";
import { partial as read } from "../src/partial.js";

// partial is the reader's object: it returns the object's JSON.
const partial = (t) => {
  const j = read(t);
  return j === undefined ? j : JSON.parse(j);
};

// Answers as agents write them: bare, after prose, in a fence, with
// escapes, non-ASCII (surrogate pairs too), numbers, literals, nesting.
const answers = [
  `{"questions":[{"q":"What is 2+2?","answerIn":4},{"q":"Capital of Peru","answerIn":"Lima"}]}`,
  `Here you go:\n\`\`\`json\n{ "title": "Zürich \\"old town\\"", "tags": ["café", "😀 fun", "a\\\\b"],\n  "n": -12.5e-3, "ok": true, "none": null, "nested": {"deep": [[1, 2], {"x": "\\u00e9\\ud83d\\ude00"}]}, "empty": {}, "list": [] }\n\`\`\`\nAnything else?`,
  `Sure. {"text": "line one\\nline two\\ttab \\/ slash", "count": 3}`,
  `{"a":"}{][\\",:","b":[true,false,null,0,1e2]}`,
];

// consistent reports whether p could be what full is writing: every key
// and item it has is full's, strings are beginnings of full's strings.
const consistent = (p, full) => {
  if (typeof p == "string") return typeof full == "string" && full.startsWith(p);
  if (Array.isArray(p)) return Array.isArray(full) && p.length <= full.length && p.every((x, i) => consistent(x, full[i]));
  if (p && typeof p == "object")
    return full && typeof full == "object" && !Array.isArray(full) && Object.keys(p).every((k) => k in full && consistent(p[k], full[k]));
  return p === full;
};

const object = (text) => JSON.parse(text.slice(text.indexOf("{"), text.lastIndexOf("}") + 1));

test("cut at every UTF-16 code unit: never throws, never says what the answer does not", () => {
  for (const full of answers) {
    const want = object(full);
    let seen = 0;
    for (let k = 0; k <= full.length; k++) {
      const p = partial(full.slice(0, k));
      if (p === undefined) continue;
      seen++;
      assert.ok(consistent(p, want), `cut at ${k}: ${JSON.stringify(p)} is not a beginning of ${JSON.stringify(want)}`);
    }
    assert.ok(seen > 10, "a growing answer yields partial objects");
    assert.deepEqual(partial(full), want);
  }
});

test("cut at every UTF-8 byte (the last character half there): never throws, ends with the answer", () => {
  const enc = new TextEncoder().encode(answers[1]);
  const dec = new TextDecoder();
  for (let k = 0; k <= enc.length; k++) {
    const p = partial(dec.decode(enc.subarray(0, k)));
    assert.ok(p === undefined || (typeof p == "object" && !Array.isArray(p)));
  }
  assert.deepEqual(partial(dec.decode(enc)), object(answers[1]));
});

test("what is cut off is left out, what is being written is there", () => {
  assert.deepEqual(partial(`{"a": 12`), {}, "a number may go on");
  assert.deepEqual(partial(`{"a": 12,`), { a: 12 });
  assert.deepEqual(partial(`{"a": tr`), {});
  assert.deepEqual(partial(`{"a": "hel`), { a: "hel" });
  assert.deepEqual(partial(`{"a": "x\\u00`), { a: "x" }, "half an escape is left out");
  assert.deepEqual(partial(`{"a": "x\\`), { a: "x" });
  assert.deepEqual(partial(`{"ke`), {}, "a key whose value has not begun");
  assert.deepEqual(partial(`{"key":`), {});
  assert.deepEqual(partial(`{"l": [1, 2`), { l: [1] });
  assert.deepEqual(partial(`{"l": [{"x": "y`), { l: [{ x: "y" }] });
  assert.equal(partial(`Thinking about it`), undefined);
  assert.equal(partial("```json\n"), undefined);
  assert.equal(partial(""), undefined);
  assert.equal(partial(`{"a": nope}`), undefined, "no JSON");
  assert.equal(partial('{"a":' + "[".repeat(100000)), undefined, "nesting past the stack gives nothing, no throw");
});
