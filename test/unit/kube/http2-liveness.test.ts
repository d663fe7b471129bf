// A half-open connection: a TCP relay between the watch and an HTTP/2 server stops passing bytes
// either way without closing anything (a peer gone without a FIN, a firewall dropping the flow).
// The session's PING after a read-idle spell goes unanswered, the session is destroyed, and the
// watch stream errors, so its hub opens it again instead of waiting silently for the next resync.
import assert from "node:assert/strict";
import { createSecureServer } from "node:http2";
import { type AddressInfo, connect, createServer, type Socket } from "node:net";
import { describe, it } from "node:test";
import { Http2Streams } from "../../../src/kube/http2-streams.ts";
import { selfSigned } from "../../support/self-signed.ts";

const { cert, key } = selfSigned("api", "127.0.0.1");

/** A relay whose `blackHole()` keeps both sockets open and drops every byte from then on. */
async function relay(port: number) {
  let dropping = false;
  const sockets: Socket[] = [];
  const server = createServer((down) => {
    const up = connect(port, "127.0.0.1");
    sockets.push(down, up);
    down.on("data", (b) => dropping || up.write(b));
    up.on("data", (b) => dropping || down.write(b));
    for (const s of [down, up]) s.on("error", () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: (server.address() as AddressInfo).port,
    blackHole: () => {
      dropping = true;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      server.close();
    },
  };
}

describe("HTTP/2 liveness", () => {
  it("a watch over a black-holed connection errors once its PING goes unanswered", async () => {
    const h2 = createSecureServer({ cert, key }, (_req, res) => {
      res.writeHead(200, { "content-type": "application/json" });
      res.write("\n"); // a watch held open, as the API server holds one
    });
    await new Promise<void>((r) => h2.listen(0, "127.0.0.1", r));
    const r = await relay((h2.address() as AddressInfo).port);
    const streams = new Http2Streams(`https://127.0.0.1:${r.port}`, { readIdleMs: 100, pingTimeoutMs: 100 });
    try {
      const ended = new Promise<string>((resolve) => {
        streams.get("/api/v1/configmaps?watch=1", {}, { ca: cert, servername: "127.0.0.1" }, (res) => {
          assert.equal(res.statusCode, 200);
          r.blackHole();
          res.on("error", (err) => resolve(`error: ${err.message}`));
          res.on("end", () => resolve("end"));
          res.resume();
        });
      });
      const how = await ended;
      assert.ok(how === "end" || how.startsWith("error"), how);
      // The session's own close follows its streams': the next watch then opens a new one.
      while (streams.connections > 0) await new Promise((t) => setImmediate(t));
    } finally {
      streams.close();
      r.close();
      h2.close();
    }
  });
});
