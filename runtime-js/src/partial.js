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
 * The object the text is writing so far; undefined before its "{", or when
 * the text is no JSON.
 *
 * @param {string} t
 * @returns {object|undefined}
 */
export const partial = (t) => {
  const n = t.length,
    fence = t.indexOf("```");
  let i = t.indexOf("{");
  const ws = () => {
    while (/\s/.test(t[i] || "x")) i++;
  };
  // A string at t[i], to its end or to the last whole character so far.
  const str = (s = /"((?:[^"\\]|\\[^u]|\\u[\da-f]{4})*)"?/iy) => {
    s.lastIndex = i;
    const m = s.exec(t);
    i = s.lastIndex;
    return JSON.parse(`"${m[1]}"`);
  };
  const val = () => {
    ws();
    const c = t[i];
    if (c == '"') return str();
    if (c == "{" || c == "[") {
      const arr = c == "[",
        v = arr ? [] : {};
      for (i++; ; ) {
        ws();
        if (t[i] == (arr ? "]" : "}")) return i++, v;
        let k = arr || t[i] != '"' ? 0 : str();
        if (!arr) {
          ws();
          if (t[i++] != ":") return v;
        }
        const x = val();
        if (x === undefined) return v;
        arr ? v.push(x) : (v[k] = x);
        ws();
        if (t[i++] != ",") return v;
      }
    }
    // A number or literal, when something follows it (else it may be cut).
    const m = /[\w.+-]+/y;
    m.lastIndex = i;
    if (m.exec(t) && m.lastIndex < n) return JSON.parse(t.slice(i, (i = m.lastIndex)));
  };
  // A fence before the object: the object starts after the fence's line.
  if (fence >= 0 && fence < i) i = t.indexOf("{", t.indexOf("\n", fence) + 1 || n);
  try {
    if (i >= 0) return val();
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
            onText: (t, p = partial(t), j = JSON.stringify(p)) => {
              o.onText?.(t);
              if (p && j != last) o.onPartial(p, (last = j));
            },
          }
        : o,
    );
