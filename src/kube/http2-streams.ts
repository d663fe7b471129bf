// Watches over HTTP/2, as client-go sends them: every environment holds a watch per kind it
// manages or scans (eight each), and over HTTP/1.1 each watch is a TLS connection of its own
// (~60 KB of native memory apiece: a hundred environments held ~50 MB in TLS state alone). Over
// HTTP/2 they share a few connections, up to STREAMS_PER_SESSION streams on each.
import {
  type ClientHttp2Session,
  type ClientHttp2Stream,
  connect,
  type IncomingHttpHeaders,
  type SecureClientSessionOptions,
} from "node:http2";

/** Well under the API server's SETTINGS_MAX_CONCURRENT_STREAMS (Go's default is 250). */
export const STREAMS_PER_SESSION = 100;

/**
 * Liveness, as client-go's HTTP/2 transport has it (ReadIdleTimeout 30 s, PingTimeout 15 s): a
 * session that received nothing for READ_IDLE_MS is sent a PING; no answer within PING_TIMEOUT_MS
 * and the session is destroyed, which ends its watches with an error so they are opened again. A
 * half-open connection (a peer gone without a FIN, traffic black-holed) is so found within 45 s,
 * instead of silencing drift detection until the next resync.
 */
export const READ_IDLE_MS = 30_000;
export const PING_TIMEOUT_MS = 15_000;

export interface Http2Liveness {
  readIdleMs: number;
  pingTimeoutMs: number;
}

/** A response stream with its status, read like an http.IncomingMessage. */
export type Http2Response = ClientHttp2Stream & { statusCode: number };

interface Session {
  session: ClientHttp2Session;
  /** The TLS context it was opened with: rotated credentials open new sessions. */
  context: unknown;
  streams: number;
  connected: boolean;
}

export class Http2Streams {
  private readonly sessions: Session[] = [];
  /** The server did not speak HTTP/2 (no h2 in ALPN, or the connection failed before it did). */
  unavailable = false;
  /** The TLS context of the newest request: sessions of older ones close once their streams end. */
  private latest: unknown;

  constructor(
    private readonly origin: string,
    private readonly liveness: Http2Liveness = { readIdleMs: READ_IDLE_MS, pingTimeoutMs: PING_TIMEOUT_MS },
    /** Told when a session went silent (a PING unanswered): the server is not answering. */
    private readonly onSilent: (message: string) => void = () => undefined,
  ) {}

  /**
   * A GET whose body streams. `respond` receives the stream once the response headers are in;
   * errors and the end arrive on the stream itself, as with http.request.
   */
  get(
    path: string,
    headers: Record<string, string | string[] | number | undefined>,
    tls: SecureClientSessionOptions,
    respond: (res: Http2Response) => void,
  ): ClientHttp2Stream {
    this.latest = tls.secureContext;
    const entry = this.sessionFor(tls);
    if (entry.streams++ === 0) entry.session.ref();
    const h2headers: Record<string, string | string[]> = { ":method": "GET", ":path": path };
    for (const [name, value] of Object.entries(headers)) {
      if (value !== undefined)
        h2headers[name.toLowerCase()] = typeof value === "number" ? String(value) : value;
    }
    const stream = entry.session.request(h2headers);
    let responded = false;
    stream.once("response", (h: IncomingHttpHeaders) => {
      responded = true;
      respond(Object.assign(stream, { statusCode: Number(h[":status"] ?? 0) }));
    });
    stream.once("close", () => {
      // A session closed under the stream ends it without 'end' or 'error': say which, as a
      // socket would, so the caller resumes (after a response) or retries (before one).
      if (!responded) stream.emit("error", new Error("the HTTP/2 connection closed before a response"));
      else if (!stream.readableEnded) stream.emit("end");
      if (--entry.streams > 0) return;
      // Open watches hold the process; an idle session does not.
      entry.session.unref();
      if (entry.context !== this.latest) entry.session.close();
    });
    return stream;
  }

  /** Open connections (sessions), for tests and diagnostics. */
  get connections(): number {
    return this.sessions.length;
  }

  close(): void {
    for (const s of this.sessions.splice(0)) s.session.destroy();
  }

  private sessionFor(tls: SecureClientSessionOptions): Session {
    const open = this.sessions.find(
      (s) =>
        s.context === tls.secureContext &&
        // closed: also after a GOAWAY, which Node answers by closing the session gracefully.
        !s.session.closed &&
        !s.session.destroyed &&
        s.streams < STREAMS_PER_SESSION,
    );
    if (open) return open;
    const session = connect(this.origin, { ...tls, settings: { enablePush: false } });
    const entry: Session = { session, context: tls.secureContext, streams: 0, connected: false };
    session.once("connect", () => {
      entry.connected = true;
    });
    session.on("error", (err: NodeJS.ErrnoException) => {
      // The streams see the error too. A session refused before it connected, for a reason other
      // than the network (ECONNREFUSED, ECONNRESET...: worth trying again), means no HTTP/2 here:
      // e.g. ERR_SSL_TLSV1_ALERT_NO_APPLICATION_PROTOCOL from a server without h2 in ALPN.
      if (!entry.connected && !/^E[A-Z]+$/.test(err.code ?? "")) this.unavailable = true;
    });
    session.once("close", () => {
      const at = this.sessions.indexOf(entry);
      if (at >= 0) this.sessions.splice(at, 1);
    });
    this.watchLiveness(session);
    this.sessions.push(entry);
    return entry;
  }

  /** PING after a read-idle spell; a session that does not answer in time is destroyed (see READ_IDLE_MS). */
  private watchLiveness(session: ClientHttp2Session): void {
    const { readIdleMs, pingTimeoutMs } = this.liveness;
    session.setTimeout(readIdleMs, () => {
      if (session.destroyed || session.closed) return;
      const dead = setTimeout(() => {
        const message = `the API server at ${this.origin} did not answer a PING within ${pingTimeoutMs} ms`;
        this.onSilent(message);
        session.destroy(new Error(message));
      }, pingTimeoutMs);
      dead.unref();
      const sent = session.ping((err) => {
        clearTimeout(dead);
        if (err && !session.destroyed) session.destroy(err);
      });
      if (!sent) clearTimeout(dead);
    });
  }
}
