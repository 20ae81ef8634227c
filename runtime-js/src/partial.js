// Partial JSON: what an agent's streamed answer is writing so far, as an
// object, for a preview that grows with the text (snug.ask's onPartial).
// The reply is read with the host's tolerance (hostkit/agent.ParseReply):
// prose before the object and a Markdown fence around it are skipped; the
// object starts at the first "{" (after the fence's first line). What is
// cut off is left out rather than guessed: a key whose value has not begun,
// a number or true/false/null not yet ended, half an escape at the end of a
// string. A string still being written is there with the text so far, an
// object or array still open with the members so far. Never throws.

/**
 * The object the text is writing so far, as JSON (written back by
 * JSON.stringify, so one reading is one string); undefined before its "{",
 * or when the text is no JSON or too deep to write back. The text from the
 * "{" is scanned to the object's end or the text's, and what is cut off is
 * trimmed from the end; the closers still owed (quote, brackets) are added
 * and the result parsed.
 *
 * @param {string} t
 * @returns {string|undefined}
 */
export const partial = (t) => {
  const n = t.length,
    fence = t.indexOf("```"),
    open = []; // the closers owed, innermost last
  let i = t.indexOf("{"),
    j,
    q, // in a string
    e; // where the string's last escape began
  // A fence before the object: the object starts after the fence's line.
  if (fence >= 0 && fence < i) i = t.indexOf("{", t.indexOf("\n", fence) + 1 || n);
  if (i < 0) return;
  for (j = i; j < t.length; j++) {
    if (q) t[j] == "\\" ? (j += t[(e = j) + 1] == "u" ? 5 : 1) : (q = t[j] != '"');
    else if (t[j] == '"') q = 1;
    else if (t[j] == "{" || t[j] == "[") open.push(t[j] == "{" ? "}" : "]");
    else if ((t[j] == "}" || t[j] == "]") && (open.pop(), !open[0])) break;
  }
  // Cut off: half an escape; a number or true/false/null the text may go
  // on with; a key whose value has not begun; a comma.
  let x = t.slice(i, j > t.length ? e : j + 1) + (q ? '"' : "");
  if (!q) x = x.replace(/[\w.+-]+$/, "");
  if (open.at(-1) == "}") x = x.replace(/([{,]\s*)"(?:[^"\\]|\\.)*"\s*:?\s*$/, "$1");
  try {
    return JSON.stringify(JSON.parse(x.replace(/,\s*$/, "") + open.reverse().join("")));
  } catch {}
};

/**
 * ask with its onPartial option: with o.onPartial, each text so far is also
 * read as the object it is writing, and onPartial hears each new reading
 * once; o.onText hears the text as before. The entry of a runtime that keeps
 * onPartial gives the global this ask.
 */
export const onPartial =
  (ask) =>
  (action, payload, o = {}, last) =>
    ask(
      action,
      payload,
      o.onPartial
        ? {
            ...o,
            onText: (t, j = partial(t)) => {
              o.onText?.(t);
              if (j && j != last) o.onPartial(JSON.parse((last = j)), j);
            },
          }
        : o,
    );
