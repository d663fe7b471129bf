import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, it } from "node:test";
import { releaseMemory, V8_POOLS_PAGES } from "../../src/util/release-memory.ts";

const ROOT = join(import.meta.dirname, "..", "..");

describe("releaseMemory: one memory-reducing GC after a burst", () => {
  it("does nothing where gc is not exposed (a process started without --expose-gc)", () => {
    assert.equal(typeof (globalThis as { gc?: unknown }).gc, "undefined");
    assert.equal(releaseMemory(), undefined);
  });

  it("with gc exposed, collects what a burst left behind and says what it did (Node 22+; Node 20 has nothing pooled and does nothing)", () => {
    const script = `
      import { releaseMemory } from "./src/util/release-memory.ts";
      let burst = Array.from({ length: 300_000 }, (_, i) => ({ i, s: "x".repeat(50) + i }));
      const during = process.memoryUsage().heapUsed;
      burst = undefined;
      const r = releaseMemory();
      console.log(JSON.stringify({ during, after: process.memoryUsage().heapUsed, r }));`;
    const out = execFileSync(
      process.execPath,
      ["--expose-gc", "--import", "tsx", "--input-type=module", "-e", script],
      {
        cwd: ROOT,
        encoding: "utf8",
      },
    );
    const { during, after, r } = JSON.parse(out.trim().split("\n").at(-1) as string);
    if (!V8_POOLS_PAGES) {
      assert.equal(r, undefined);
      return;
    }
    assert.ok(r, "a release was made");
    assert.ok(r.rssBefore > 0 && r.rssAfter > 0 && r.ms >= 0);
    assert.ok(after < during / 2, `the burst's objects are gone (heap used ${during} -> ${after})`);
  });
});
