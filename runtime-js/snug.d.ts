// Types of the Snug app runtime: the global `snug` that `snuggen build`
// injects into every app. The frame types come from schemas/ through
// `snuggen gen` (gen/frames.d.ts); this file types the API over them.
//
// An app is one HTML file that names itself with meta tags and awaits ready:
//
//   <meta name="snug:app-id" content="com.example.todo">
//   <meta name="snug:display-name" content="Todo">
//   <script type="module">
//     const { capabilities, theme } = await snug.ready;
//     const rows = await snug.db.query("select * from todo");
//   </script>

import type { Capabilities, ErrorCode, ErrorObject, Theme } from "./gen/frames";

export type { Capabilities, ErrorCode, Theme } from "./gen/frames";

/** Any JSON value. */
export type JSONValue = string | number | boolean | null | JSONValue[] | { [key: string]: JSONValue };

/** What snug.ready resolves with: the latest host-ready, kept current in place. */
export interface HostInfo {
  /** The host's id for this app instance; every request echoes it. */
  instanceId: string;
  /** Protocol versions the host speaks. */
  protocolVersions: number[];
  /** What the host offers. A missing or false flag means: render a fallback. */
  capabilities: Capabilities;
  /**
   * The current theme, { mode: "light" | "dark", tokens?: { "--snug-accent": "#2f6feb", … } }.
   * The runtime applies it: data-theme on <html>, each token as a CSS custom
   * property (var(--snug-background), --snug-surface, --snug-text,
   * --snug-muted, --snug-accent, --snug-border, --snug-danger,
   * --snug-radius, --snug-font). Compare theme.mode, not theme.
   */
  theme: Theme;
  /** The user's locale (BCP 47, e.g. "de-CH"), when the host knows it: for toLocaleString(locale). */
  locale?: string;
}

/** The app's identity, sent as snug:app-announce. */
export interface Identity {
  /** Stable app id (1-128); defaults to <meta name="snug:app-id">. */
  appId?: string;
  /** Name shown by the host (1-80); defaults to <meta name="snug:display-name">, then document.title. */
  displayName?: string;
  /** One line about the app (≤400); defaults to <meta name="snug:description">. */
  description?: string;
  /** An emoji icon (≤8); defaults to <meta name="snug:icon-emoji">. */
  iconEmoji?: string;
  /** The icon's background colour (≤32); defaults to <meta name="snug:icon-color">. */
  iconColor?: string;
}

/**
 * The one error type every snug call rejects with. Its fields: `code` (one
 * of the codes below), `message` (for people), `retryable` (trying again may
 * work), `retryAfterMs` (when given, wait this long first), and for
 * PARSE_FAILED `attemptsRemaining` (tries left before the user must reset).
 * A call whose frame would be past its size class (R6) is refused before
 * anything is sent: MALFORMED.
 *
 * @example
 * async function summarize(text, tries = 3) {
 *   try {
 *     return (await snug.ask("summarize", { text })).message;
 *   } catch (err) {
 *     if (err.code === "CAPABILITY_ABSENT") return null; // no agent here: hide the feature
 *     if (err.retryable && tries > 1 && err.attemptsRemaining !== 0) {
 *       await new Promise((r) => setTimeout(r, err.retryAfterMs ?? 1000));
 *       return summarize(text, tries - 1);
 *     }
 *     note.textContent = err.code === "NET_CONFIRM_DENIED" ? "Not allowed" : err.message;
 *     return null;
 *   }
 * }
 */
export interface SnugError extends Error {
  name: "SnugError";
  /** A known code; a code the runtime does not know is shown as "HOST_ERROR" (R5). */
  code: ErrorCode;
  /** The code exactly as the host sent it. */
  hostCode: string;
  /** Whether trying again may work. */
  retryable: boolean;
  /** PARSE_FAILED: the start of the agent's unparseable reply (≤200). */
  rawExcerpt?: string;
  /** PARSE_FAILED: attempts left before the user must reset. */
  attemptsRemaining?: number;
  /** Wait this long before retrying (e.g. NET_FETCH_FAILED on the rate ceiling). */
  retryAfterMs?: number;
  /** openUrl, saveFile: the host's refusal reason exactly as sent. */
  reason?: string;
}

export interface SnugErrorConstructor {
  new (error: ErrorObject): SnugError;
  readonly prototype: SnugError;
}

/** Options of snug.ask. */
export interface AskOptions {
  /** Any JSON the agent needs to see (the app's current state); sent as-is. */
  state?: JSONValue;
  /** A JSON Schema the final data must satisfy; the host enforces it. */
  schema?: Record<string, unknown>;
  /** Called with the raw text so far (cumulative, not a delta) while the agent streams: with a schema that is unfinished JSON, not for display. */
  onText?: (text: string) => void;
  /** Called while the agent streams with the object its answer is writing so far (best effort, never throws): strings and arrays grow, a field appears once its value has begun. The final object is what ask resolves with. */
  onPartial?: (partial: Record<string, any>) => void;
  /** Aborting it cancels the request: the host is told, the call rejects with CANCELLED. */
  signal?: AbortSignal;
}

/** The result of snug.db.exec. */
export interface ExecResult {
  columns: string[];
  rows: (string | number | boolean | null)[][];
  /** Rows changed by an INSERT, UPDATE or DELETE. */
  changes: number;
  lastInsertRowid: number;
}

/** Options of snug.net.fetch, a subset of fetch's. */
export interface NetRequestInit {
  /** GET (default), HEAD, POST, PUT, PATCH or DELETE. */
  method?: string;
  /** Request headers. Credential headers (authorization, cookie, x-api-key, …) are refused: the host injects credentials. */
  headers?: HeadersInit;
  /** The body as text (≤256 KiB); none on GET or HEAD. */
  body?: string;
  /** Aborting it cancels the request with CANCELLED. */
  signal?: AbortSignal;
}

/** The answer of snug.net.fetch: the parts of a fetch Response an app needs. */
export interface NetResponse {
  /** status is 200-299. */
  ok: boolean;
  status: number;
  /** Only whitelisted response headers cross (content-type, etag, x-ratelimit-*, …). */
  headers: Headers;
  /** The body was cut at the host's 1 MiB limit. */
  truncated: boolean;
  text(): Promise<string>;
  json(): Promise<any>;
  /** The raw bytes, for binary bodies (images, archives). */
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** Events the host pushes, with their data; others arrive as unknown. */
export interface HostEvents {
  /** The theme changed ({ theme: { mode, tokens } }); the runtime has already applied it: redraw what CSS does not (a canvas). */
  "theme-change": { theme: Theme };
  /** The app became visible or hidden. */
  visibility: { visible: boolean };
  /** A user connection changed state. */
  "connection-event": { connection: string; state: "connected" | "revoked" };
  /** A doorbell: something under topic changed; re-read it with your own calls (R7). */
  hint: { topic: string; ref: string };
  /** Every host-ready, the first included: the load greeting, the announce ack, and later updates (re-announce, capabilities, theme). */
  "snug:host-ready": HostInfo;
}

export interface Snug {
  /**
   * Resolves once the host has answered the app's announce, with the host's
   * instanceId, capabilities, theme and locale. Every call waits for it on
   * its own; await it to choose fallbacks before drawing.
   *
   * @example
   * const { capabilities } = await snug.ready;
   * if (!capabilities.net) showOfflineNotice();
   */
  readonly ready: Promise<HostInfo>;

  /**
   * The latest capabilities, undefined before the first host-ready.
   *
   * @example
   * exportButton.hidden = !snug.capabilities?.saveFile;
   */
  readonly capabilities: Capabilities | undefined;

  /**
   * Announces the app. Not needed when the page has <meta name="snug:…">
   * tags: the runtime announces on its own once the document is parsed.
   * Calling it again re-announces, and the host cancels in-flight work.
   *
   * @example
   * snug.announce({ appId: "com.example.notes", displayName: "Notes", iconEmoji: "📝" });
   */
  announce(identity?: Identity): void;

  /**
   * Asks the host's agent to do `action` with `payload`, and resolves with the
   * agent's final JSON object (checked against `schema` when given). To show
   * the answer while it streams, use onPartial: onText is the raw JSON text.
   *
   * @example
   * const ac = new AbortController();
   * const card = await snug.ask("make-card", { topic: "photosynthesis" }, {
   *   schema: { type: "object", required: ["front", "back"],
   *             properties: { front: { type: "string" }, back: { type: "string" } } },
   *   onPartial: (soFar) => (preview.textContent = soFar.front ?? ""),
   *   signal: ac.signal,
   * });
   */
  ask<T = Record<string, any>>(action: string, payload?: Record<string, JSONValue>, options?: AskOptions): Promise<T>;

  /** The app's own SQLite database and key-value store, kept by the host. */
  db: {
    /**
     * Runs one SQL statement with bound parameters.
     *
     * @example
     * await snug.db.exec("create table if not exists todo (id integer primary key, title text, done int default 0)");
     * const { lastInsertRowid } = await snug.db.exec("insert into todo (title) values (?)", [title]);
     */
    exec(sql: string, params?: (string | number | boolean | null)[]): Promise<ExecResult>;
    /**
     * Runs a statement and returns its rows as objects keyed by column name:
     * a SELECT, or a change with RETURNING (exec gives the same rows as arrays).
     *
     * @example
     * const todos = await snug.db.query("select id, title from todo where done = ?", [0]);
     * todos.forEach((t) => addRow(t.id, t.title));
     * const [added] = await snug.db.query("insert into todo (title) values (?) returning id, title", [title]);
     */
    query<T = Record<string, string | number | boolean | null>>(sql: string, params?: (string | number | boolean | null)[]): Promise<T[]>;
    /**
     * Runs several SQL statements, separated by semicolons, in one
     * transaction: all take effect or none (a migration step with its
     * version's update). No parameters; no rows come back.
     *
     * @example
     * await snug.db.script("create table if not exists meta (version int); insert into meta select 0 where not exists (select 1 from meta)");
     * await snug.db.script("alter table todo add column due text; update meta set version = 1");
     */
    script(sql: string): Promise<ExecResult>;
    /**
     * Reads a JSON value by key; null when the key is not set.
     *
     * @example
     * const prefs = (await snug.db.get("prefs")) ?? { sort: "date" };
     */
    get<T = JSONValue>(key: string): Promise<T | null>;
    /**
     * Stores a JSON value under key; null (or undefined) deletes the key.
     *
     * @example
     * await snug.db.set("prefs", { sort: "name" });
     * await snug.db.set("draft", null); // delete
     */
    set(key: string, value: JSONValue | undefined): Promise<void>;
    /**
     * Exports the whole database as SQLite file bytes (≤5 MiB).
     *
     * @example
     * const bytes = await snug.db.export();
     * await snug.saveFile("notes.sqlite", bytes, "application/vnd.sqlite3");
     */
    export(): Promise<Uint8Array>;
    /**
     * Replaces the database with a SQLite file (≤5 MiB). On any problem the
     * old data stays and the call rejects with DB_IMPORT_INVALID; a file
     * whose base64 does not fit the db frame's size class is refused before
     * it is sent (MALFORMED).
     *
     * @example
     * await snug.db.import(new Uint8Array(await file.arrayBuffer()));
     */
    import(bytes: Uint8Array | ArrayBuffer): Promise<{ bytes: number }>;
  };

  net: {
    /**
     * Fetches a URL through the host, which asks the user, applies its limits
     * and injects credentials for connections the user approved. Rejects with
     * a SnugError (NET_*) when the host refuses; resolves for any HTTP status.
     * The URL is read as fetch reads it (Unicode and spaces are encoded); it
     * must be absolute: a relative one is refused (MALFORMED).
     *
     * @example
     * const res = await snug.net.fetch("https://api.github.com/repos/golang/go", {
     *   headers: { accept: "application/vnd.github+json" },
     * });
     * if (res.ok) render(await res.json());
     */
    fetch(url: string | URL, init?: NetRequestInit): Promise<NetResponse>;
  };

  /**
   * Asks the host to open an absolute https URL in the user's browser,
   * after its own confirm dialog; resolves "declined" when the user says no.
   * Rejects with a SnugError when the host refuses (err.message says why:
   * a relative or non-https URL, the rate limit).
   *
   * @example
   * try {
   *   const status = await snug.openUrl("https://de.wikipedia.org/wiki/Zürich");
   *   if (status === "declined") note.textContent = "Link not opened";
   * } catch (err) {
   *   note.textContent = err.message;
   * }
   */
  openUrl(url: string | URL): Promise<"opened" | "declined">;

  /**
   * Offers a file to the user (≤5 MiB): the host shows its own dialog with
   * the name and size and saves it on the user's click; resolves "declined"
   * when the user says no. Rejects with a SnugError when the host refuses
   * (a name with / or an invisible character, a type such as .exe).
   *
   * @example
   * const csv = rows.map((r) => r.join(",")).join("\n");
   * const status = await snug.saveFile("report.csv", csv, "text/csv");
   * if (status === "saved") note.textContent = "Saved";
   */
  saveFile(name: string, data: Blob | ArrayBuffer | ArrayBufferView | string, mimeType?: string): Promise<"saved" | "declined">;

  /**
   * Listens to a host event ("theme-change", "visibility",
   * "connection-event", "hint", "snug:host-ready"); returns a function that
   * stops listening.
   *
   * @example
   * snug.on("theme-change", ({ theme }) => drawChart(theme.mode)); // CSS follows by itself; a canvas does not
   * const stop = snug.on("visibility", ({ visible }) => (paused = !visible));
   */
  on<E extends keyof HostEvents>(event: E, fn: (data: HostEvents[E]) => void): () => void;
  on(event: string, fn: (data: Record<string, unknown> | undefined) => void): () => void;

  /**
   * Stops a listener added with on.
   *
   * @example
   * snug.off("hint", onHint);
   */
  off(event: string, fn: (data: any) => void): void;

  /**
   * Sends an app event to the host. The runtime already reports the page
   * height as "resize"; other events are for hosts that know them.
   *
   * @example
   * snug.emit("selection", { id: note.id });
   */
  emit(event: string, data?: Record<string, JSONValue>): void;

  /** The class of every error a snug call rejects with. */
  SnugError: SnugErrorConstructor;
}

declare global {
  /** The Snug runtime, injected by `snuggen build`. */
  const snug: Snug;
}
