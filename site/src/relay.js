// The page's end of the relay: one WebSocket to the Go host at /ws. Each
// message is one JSON object with a "t" field (docs/architecture.md, "The
// relay"). The socket reconnects after a drop; the caller decides what a new
// connection means for the frames it owns.

const RETRY_MS = [250, 500, 1000, 2000];

export class Relay {
  /**
   * @param {string} url ws:// URL of the host's relay endpoint
   * @param {{message: (msg: any) => void, open: () => void, state: (s: string) => void}} on
   */
  constructor(url, on) {
    this.url = url;
    this.on = on;
    this.ws = null;
    this.attempt = 0;
    this.connect();
  }

  connect() {
    this.on.state('connecting');
    const ws = new WebSocket(this.url);
    this.ws = ws;
    ws.addEventListener('open', () => {
      this.attempt = 0;
      this.on.state('open');
      this.on.open();
    });
    ws.addEventListener('message', (ev) => {
      if (typeof ev.data !== 'string') return;
      let msg;
      try {
        msg = JSON.parse(ev.data);
      } catch {
        return;
      }
      if (msg && typeof msg === 'object' && typeof msg.t === 'string') this.on.message(msg);
    });
    ws.addEventListener('close', () => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.on.state('closed');
      const wait = RETRY_MS[Math.min(this.attempt++, RETRY_MS.length - 1)];
      setTimeout(() => this.connect(), wait);
    });
  }

  /** Sends one message already encoded as JSON text; reports whether it went out. */
  sendText(text) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    ws.send(text);
    return true;
  }

  /** Sends msg when the socket is open; reports whether it went out. */
  send(msg) {
    const ws = this.ws;
    if (!ws || ws.readyState !== WebSocket.OPEN) return false;
    let text;
    try {
      text = JSON.stringify(msg);
    } catch {
      // A value postMessage can clone but JSON cannot carry (a cycle, a
      // BigInt) is not a frame; the host would reject it anyway.
      return false;
    }
    ws.send(text);
    return true;
  }
}
