// A large input streamed into a program (a repository's archive into tar) waits on the pipe many
// times; each wait must leave nothing behind on it, or Node warns of a listener leak in the logs of
// every sync of a large repository.
import assert from "node:assert/strict";
import { test } from "node:test";
import { runWithStream } from "../../../src/source/run.ts";

async function* chunks(count: number, size: number): AsyncIterable<Uint8Array> {
  for (let i = 0; i < count; i++) yield new Uint8Array(size).fill(i % 251);
}

test("streaming 32 MiB into a program that reads it slowly: every byte counted, no listener-leak warning", async () => {
  const warnings: string[] = [];
  const onWarning = (w: Error) => warnings.push(`${w.name}: ${w.message}`);
  process.on("warning", onWarning);
  try {
    // wc reads everything and says how much: what it counted is what went through the pipe.
    const result = await runWithStream(
      { file: "wc", args: ["-c"] },
      chunks(512, 64 * 1024),
      64 * 1024 * 1024,
    );
    assert.equal(result.ok, true, result.stderr);
    assert.equal(result.bytes, 32 * 1024 * 1024);
    assert.equal(Number(result.stdout.trim()), 32 * 1024 * 1024);
    // Warnings are emitted on the next tick.
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(
      warnings.filter((w) => w.startsWith("MaxListenersExceededWarning")),
      [],
    );
  } finally {
    process.off("warning", onWarning);
  }
});
