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
 * @param {string} text
 * @returns {string|undefined}
 */
export const partial = (text) => {
  let start = text.indexOf("{");
  // A fence before the object: the object starts after the fence's line.
  const fence = text.indexOf("```");
  if (fence >= 0 && fence < start) {
    const lineEnd = text.indexOf("\n", fence);
    start = lineEnd < 0 ? -1 : text.indexOf("{", lineEnd + 1);
  }
  if (start < 0) return undefined;

  const closers = []; // the closers owed, innermost last
  let inString = false;
  let escapeStart; // where the string's last escape began
  let end = start;
  for (; end < text.length; end++) {
    const char = text[end];
    if (inString) {
      if (char == "\\") {
        escapeStart = end;
        end += text[end + 1] == "u" ? 5 : 1;
      } else if (char == '"') {
        inString = false;
      }
    } else if (char == '"') {
      inString = true;
    } else if (char == "{") {
      closers.push("}");
    } else if (char == "[") {
      closers.push("]");
    } else if (char == "}" || char == "]") {
      closers.pop();
      if (closers.length == 0) break;
    }
  }

  // Cut off: half an escape (the scan stepped past the end); a number or
  // true/false/null the text may go on with; a key whose value has not
  // begun; a comma.
  let json = text.slice(start, end > text.length ? escapeStart : end + 1);
  if (inString) json += '"';
  else json = json.replace(/[\w.+-]+$/, "");
  if (closers.at(-1) == "}") json = json.replace(/([{,]\s*)"(?:[^"\\]|\\.)*"\s*:?\s*$/, "$1");
  json = json.replace(/,\s*$/, "") + closers.reverse().join("");
  try {
    return JSON.stringify(JSON.parse(json));
  } catch {
    return undefined;
  }
};

/**
 * ask with its onPartial option: with options.onPartial, each text so far
 * is also read as the object it is writing, and onPartial hears each new
 * reading once; options.onText hears the text as before. The entry of a
 * runtime that keeps onPartial gives the global this ask.
 */
export const onPartial = (ask) => (action, payload, options = {}) => {
  if (!options.onPartial) return ask(action, payload, options);
  let last; // the reading onPartial heard last
  const onText = (text) => {
    options.onText?.(text);
    const reading = partial(text);
    if (reading && reading != last) {
      last = reading;
      options.onPartial(JSON.parse(reading), reading);
    }
  };
  return ask(action, payload, { ...options, onText });
};
