// kubeconfig `proxy-url`: an agent whose every connection to the API server is a tunnel through
// the proxy (HTTP CONNECT over http:// or https://, or SOCKS5), with TLS to the API server inside
// the tunnel, so the proxy sees host:port and nothing else. The request's TLS options (CA, client
// certificate, server name) reach createConnection, so rotated credentials apply to new tunnels.
import { type AgentOptions, type ClientRequestArgs, Agent as HttpAgent } from "node:http";
import { Agent as HttpsAgent } from "node:https";
import { connect as netConnect, type Socket } from "node:net";
import type { Duplex } from "node:stream";
import { type ConnectionOptions, connect as tlsConnect } from "node:tls";

const PROXY_SCHEMES = ["http:", "https:", "socks5:", "socks5h:"];

/** The proxy URL checked, or an error naming the kubeconfig field. */
export function parseProxyUrl(value: string, at: string): URL {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    // Never the value itself: it may carry a password, and this message can reach a check run.
    throw new Error(`${at}: proxy-url is not a URL`);
  }
  if (!PROXY_SCHEMES.includes(url.protocol)) {
    throw new Error(`${at}: proxy-url scheme "${url.protocol}" is not supported (use http, https or socks5)`);
  }
  return url;
}

/** Reads a socket's bytes until `complete` says how many make the answer; hands back the rest. */
function read(
  socket: Duplex,
  complete: (bytes: Buffer) => number | undefined,
  what: string,
): Promise<Buffer> {
  return new Promise<Buffer>((resolve, reject) => {
    let buffer = Buffer.alloc(0);
    const done = () => {
      socket.off("data", onData);
      socket.off("error", onError);
      socket.off("end", onEnd);
    };
    const onData = (chunk: Buffer) => {
      buffer = Buffer.concat([buffer, chunk]);
      const n = complete(buffer);
      if (n === undefined) return;
      done();
      if (buffer.length > n) socket.unshift(buffer.subarray(n));
      resolve(buffer.subarray(0, n));
    };
    const onError = (err: Error) => {
      done();
      reject(new Error(`${what}: ${err.message}`));
    };
    const onEnd = () => {
      done();
      reject(new Error(`${what}: the proxy closed the connection`));
    };
    socket.on("data", onData);
    socket.on("error", onError);
    socket.on("end", onEnd);
  });
}

function connectToProxy(proxy: URL): Promise<Duplex> {
  const secure = proxy.protocol === "https:";
  const port = Number(proxy.port) || (secure ? 443 : proxy.protocol === "http:" ? 80 : 1080);
  const host = proxy.hostname.replace(/^\[|\]$/g, "");
  return new Promise((resolve, reject) => {
    const socket: Socket = secure
      ? tlsConnect({ host, port, servername: host }, () => resolve(socket))
      : netConnect({ host, port }, () => resolve(socket));
    socket.once("error", (err) => reject(new Error(`cannot reach the proxy ${proxy.host}: ${err.message}`)));
  });
}

async function httpConnect(proxy: URL, socket: Duplex, host: string, port: number): Promise<void> {
  const target = host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
  const auth =
    proxy.username || proxy.password
      ? `Proxy-Authorization: Basic ${Buffer.from(`${decodeURIComponent(proxy.username)}:${decodeURIComponent(proxy.password)}`).toString("base64")}\r\n`
      : "";
  const answer = read(
    socket,
    (b) => {
      const end = b.indexOf("\r\n\r\n");
      return end < 0 ? undefined : end + 4;
    },
    `proxy ${proxy.host}`,
  );
  socket.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n${auth}\r\n`);
  const head = (await answer).toString("latin1");
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1];
  if (status !== "200") {
    throw new Error(`proxy ${proxy.host} refused CONNECT ${target}: ${head.split("\r\n")[0] ?? "no answer"}`);
  }
}

async function socksConnect(proxy: URL, socket: Duplex, host: string, port: number): Promise<void> {
  const what = `SOCKS5 proxy ${proxy.host}`;
  const user = decodeURIComponent(proxy.username);
  const pass = decodeURIComponent(proxy.password);
  const fixed = (n: number) => (b: Buffer) => (b.length >= n ? n : undefined);
  let answer = read(socket, fixed(2), what);
  socket.write(Buffer.from(user ? [5, 2, 0, 2] : [5, 1, 0]));
  const method = (await answer)[1];
  if (method === 2) {
    answer = read(socket, fixed(2), what);
    const u = Buffer.from(user);
    const p = Buffer.from(pass);
    socket.write(Buffer.concat([Buffer.from([1, u.length]), u, Buffer.from([p.length]), p]));
    if ((await answer)[1] !== 0) throw new Error(`${what} refused the username and password`);
  } else if (method !== 0) {
    throw new Error(`${what} accepts none of the offered authentication methods`);
  }
  const name = Buffer.from(host);
  answer = read(
    socket,
    (b) => {
      if (b.length < 5) return undefined;
      const addr = b[3] === 1 ? 4 : b[3] === 4 ? 16 : 1 + (b[4] ?? 0);
      return b.length >= 4 + addr + 2 ? 4 + addr + 2 : undefined;
    },
    what,
  );
  socket.write(
    Buffer.concat([Buffer.from([5, 1, 0, 3, name.length]), name, Buffer.from([port >> 8, port & 0xff])]),
  );
  const reply = (await answer)[1];
  if (reply !== 0) throw new Error(`${what} could not connect to ${host}:${port} (SOCKS reply ${reply})`);
}

/** A connection to host:port through the proxy, ready for the bytes of HTTP or TLS. */
export async function openTunnel(proxy: URL, host: string, port: number): Promise<Duplex> {
  const socket = await connectToProxy(proxy);
  try {
    if (proxy.protocol.startsWith("socks")) await socksConnect(proxy, socket, host, port);
    else await httpConnect(proxy, socket, host, port);
    return socket;
  } catch (err) {
    socket.destroy();
    throw err;
  }
}

type Created = (err: Error | null, stream: Duplex) => void;

function tunnelTo(proxy: URL, options: ClientRequestArgs, secure: boolean, created: Created): void {
  const host = (options.host ?? options.hostname ?? "localhost").replace(/^\[|\]$/g, "");
  const port = Number(options.port) || (secure ? 443 : 80);
  openTunnel(proxy, host, port).then(
    (socket) => {
      if (!secure) return created(null, socket);
      const tls = tlsConnect({ ...(options as ConnectionOptions), socket, host, port });
      created(null, tls);
    },
    (err: Error) => created(err, undefined as unknown as Duplex),
  );
}

/** A keep-alive agent that reaches `server` through `proxy`. */
export function proxyAgent(proxy: URL, server: URL, options: AgentOptions = {}): HttpAgent {
  const secure = server.protocol === "https:";
  const pooled = { keepAlive: true, ...options };
  const agent = secure ? new HttpsAgent(pooled) : new HttpAgent(pooled);
  // Node's agents accept a socket from createConnection's callback, made asynchronously.
  agent.createConnection = (connectOptions: ClientRequestArgs, created?: Created) => {
    if (created) tunnelTo(proxy, connectOptions, secure, created);
    return undefined;
  };
  return agent;
}
