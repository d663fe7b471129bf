// HTTPS_PROXY, HTTP_PROXY and NO_PROXY for API servers, read as kubectl reads them (Go's
// httpproxy.FromEnvironment): the upper-case name first, then the lower-case one; a value without
// a scheme is an http:// proxy; localhost and loopback addresses are never proxied; NO_PROXY is a
// comma-separated list of `*`, hosts, domains (`example.com` covers it and its subdomains,
// `.example.com` and `*.example.com` its subdomains only), IP addresses and CIDR ranges, each
// optionally with a port. A kubeconfig's
// `proxy-url` takes precedence over all of it (the caller decides that).
import { BlockList, isIP } from "node:net";
import { parseProxyUrl } from "./proxy-agent.ts";

export type ProxyEnv = Readonly<Record<string, string | undefined>>;

function envAny(env: ProxyEnv, ...names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name]?.trim();
    if (value) return { name, value };
  }
  return undefined;
}

/** The host of a URL without IPv6 brackets, lower case. */
function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, "$1").toLowerCase();
}

function defaultPort(url: URL): string {
  return url.port || (url.protocol === "https:" ? "443" : "80");
}

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet("127.0.0.0", 8, "ipv4");
LOOPBACK.addAddress("::1", "ipv6");
LOOPBACK.addSubnet("::ffff:127.0.0.0", 104, "ipv6");

function isLoopback(host: string): boolean {
  if (host === "localhost") return true;
  const family = isIP(host);
  return family !== 0 && LOOPBACK.check(host, family === 4 ? "ipv4" : "ipv6");
}

/** Two IP addresses are one (`2001:db8::1` is `2001:db8:0:0::1`). */
function sameIp(a: string, b: string): boolean {
  const family = isIP(a);
  if (family === 0 || family !== isIP(b)) return false;
  const list = new BlockList();
  list.addAddress(a, family === 4 ? "ipv4" : "ipv6");
  return list.check(b, family === 4 ? "ipv4" : "ipv6");
}

/** One NO_PROXY entry against the server's host and port. */
function entryMatches(entry: string, host: string, port: string): boolean {
  if (entry === "*") return true;
  if (entry.includes("/")) {
    const [base = "", bits = ""] = entry.split("/");
    const family = isIP(base);
    if (!family || !isIP(host) || isIP(host) !== family) return false;
    const list = new BlockList();
    try {
      list.addSubnet(base, Number(bits), family === 4 ? "ipv4" : "ipv6");
    } catch {
      return false;
    }
    return list.check(host, family === 4 ? "ipv4" : "ipv6");
  }
  let name = entry;
  let wantPort: string | undefined;
  const bracketed = /^\[(.+)\](?::(\d+))?$/.exec(entry);
  if (bracketed) {
    name = bracketed[1] ?? "";
    wantPort = bracketed[2];
  } else if (isIP(entry) !== 6) {
    const at = entry.lastIndexOf(":");
    if (at > 0 && /^\d+$/.test(entry.slice(at + 1))) {
      name = entry.slice(0, at);
      wantPort = entry.slice(at + 1);
    }
  }
  if (wantPort && wantPort !== port) return false;
  if (isIP(name)) return sameIp(name, host);
  // As Go: a leading dot (or `*.`) covers subdomains only; a bare name, itself and its subdomains.
  if (name.startsWith("*.") || name.startsWith(".")) return host.endsWith(name.slice(name.indexOf(".")));
  return host === name || host.endsWith(`.${name}`);
}

/** Whether NO_PROXY (or loopback) keeps `server` off the proxy. */
export function bypassesProxy(server: URL, noProxy: string | undefined): boolean {
  const host = hostOf(server);
  if (isLoopback(host)) return true;
  const port = defaultPort(server);
  return (noProxy ?? "")
    .split(",")
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean)
    .some((e) => entryMatches(e, host, port));
}

/**
 * The proxy the environment names for `server`, or undefined. An unusable value is an error that
 * names the variable, never its value (it may carry a password).
 */
export function proxyFromEnvironment(server: URL, env: ProxyEnv = process.env): URL | undefined {
  const found =
    server.protocol === "https:"
      ? envAny(env, "HTTPS_PROXY", "https_proxy")
      : envAny(env, "HTTP_PROXY", "http_proxy");
  if (!found) return undefined;
  if (bypassesProxy(server, envAny(env, "NO_PROXY", "no_proxy")?.value)) return undefined;
  const value = /^[a-z][a-z0-9+.-]*:\/\//i.test(found.value) ? found.value : `http://${found.value}`;
  try {
    return parseProxyUrl(value, found.name);
  } catch {
    throw new Error(`${found.name} is not an http, https or socks5 proxy URL`);
  }
}
