// HTTPS_PROXY / HTTP_PROXY / NO_PROXY as kubectl (Go's httpproxy) reads them.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bypassesProxy, proxyFromEnvironment } from "../../../src/kube/env-proxy.ts";
import { parseProxyUrl } from "../../../src/kube/proxy-agent.ts";

const PROXY = "http://proxy.corp:3128";

describe("proxyFromEnvironment", () => {
  const cases: Array<{ name: string; server: string; env: Record<string, string>; want?: string }> = [
    {
      name: "HTTPS_PROXY for an https server",
      server: "https://k8s.corp:6443",
      env: { HTTPS_PROXY: PROXY },
      want: PROXY,
    },
    {
      name: "https_proxy (lower case) as well",
      server: "https://k8s.corp:6443",
      env: { https_proxy: PROXY },
      want: PROXY,
    },
    {
      name: "upper case wins over lower case, as in Go",
      server: "https://k8s.corp",
      env: { HTTPS_PROXY: PROXY, https_proxy: "http://other:1" },
      want: PROXY,
    },
    { name: "HTTP_PROXY is not used for https", server: "https://k8s.corp", env: { HTTP_PROXY: PROXY } },
    {
      name: "HTTP_PROXY for an http server",
      server: "http://k8s.corp:8080",
      env: { HTTP_PROXY: PROXY },
      want: PROXY,
    },
    {
      name: "a value without a scheme is an http proxy",
      server: "https://k8s.corp",
      env: { HTTPS_PROXY: "proxy.corp:3128" },
      want: PROXY,
    },
    {
      name: "socks5 is accepted",
      server: "https://k8s.corp",
      env: { HTTPS_PROXY: "socks5://127.0.0.1:1080" },
      want: "socks5://127.0.0.1:1080",
    },
    { name: "nothing set", server: "https://k8s.corp", env: {} },
    { name: "loopback is never proxied", server: "https://127.0.0.1:6443", env: { HTTPS_PROXY: PROXY } },
    { name: "localhost is never proxied", server: "https://localhost:6443", env: { HTTPS_PROXY: PROXY } },
    {
      name: "an IPv4-mapped loopback address is loopback too",
      server: "https://[::ffff:127.0.0.1]:6443",
      env: { HTTPS_PROXY: PROXY },
    },
    {
      name: "a name under .localhost is a name like any other (as in Go)",
      server: "https://api.localhost:6443",
      env: { HTTPS_PROXY: PROXY },
      want: PROXY,
    },
    {
      name: "NO_PROXY=* turns it off",
      server: "https://k8s.corp",
      env: { HTTPS_PROXY: PROXY, NO_PROXY: "*" },
    },
    {
      name: "no_proxy (lower case) as well",
      server: "https://k8s.corp",
      env: { HTTPS_PROXY: PROXY, no_proxy: "k8s.corp" },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = proxyFromEnvironment(new URL(c.server), c.env);
      assert.equal(got?.href.replace(/\/$/, ""), c.want);
    });
  }

  it("an unusable value names the variable, never its value (it may hold a password)", () => {
    assert.throws(
      () => proxyFromEnvironment(new URL("https://k8s.corp"), { HTTPS_PROXY: "ftp://user:s3cret@proxy" }),
      (err: Error) => /HTTPS_PROXY/.test(err.message) && !err.message.includes("s3cret"),
    );
  });
});

describe("bypassesProxy (NO_PROXY)", () => {
  const cases: Array<[server: string, noProxy: string, bypass: boolean]> = [
    ["https://api.prod.corp:6443", "corp", true],
    ["https://api.prod.corp:6443", ".corp", true],
    ["https://api.prod.corp:6443", "*.corp", true],
    ["https://corp:6443", ".corp", false],
    ["https://corp:6443", "*.corp", false],
    ["https://corp:6443", "corp", true],
    ["https://notcorp:6443", "corp", false],
    ["https://api.prod.corp:6443", "prod.corp:6443", true],
    ["https://api.prod.corp:6443", "prod.corp:443", false],
    ["https://api.prod.corp", "prod.corp:443", true],
    ["https://10.96.0.1:443", "10.96.0.0/12", true],
    ["https://10.112.0.1:443", "10.96.0.0/12", false],
    ["https://10.96.0.1:443", "10.96.0.1", true],
    ["https://[fd00::1]:6443", "fd00::/8", true],
    ["https://[fd00::1]:6443", "[fd00::1]:6443", true],
    ["https://[fd00::1]:6443", "fd00::2", false],
    ["https://[2001:db8::1]:6443", "2001:db8:0:0::1", true],
    ["https://k8s.corp", " other.example , K8S.corp ", true],
    ["https://k8s.corp", "", false],
    ["https://k8s.corp", "10.0.0.0/8", false],
  ];
  for (const [server, noProxy, bypass] of cases) {
    it(`${server} with NO_PROXY=${JSON.stringify(noProxy)}: ${bypass ? "direct" : "proxied"}`, () => {
      assert.equal(bypassesProxy(new URL(server), noProxy), bypass);
    });
  }
});

describe("parseProxyUrl (a kubeconfig's proxy-url)", () => {
  it("names the field, never the value, which may carry a password", () => {
    assert.throws(
      () => parseProxyUrl("http://user:s3cret@proxy:999999", 'kubeconfig: cluster "prod"'),
      (err: Error) =>
        /cluster "prod": proxy-url is not a URL/.test(err.message) && !err.message.includes("s3cret"),
    );
  });
});
