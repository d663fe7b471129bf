// The demo's command runner: a build step has no time limit and shows its progress as it goes.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { run } from "../../../examples/demo/run.ts";

describe("demo run()", () => {
  it("with timeoutMs 0 sets no limit and passes on each stderr line as it comes", async () => {
    const lines: string[] = [];
    const res = await run(
      "bash",
      [
        "-c",
        'echo "[cluster build] helm: resolving" >&2; echo "[cluster build] helm: built" >&2; printf tail >&2',
      ],
      { timeoutMs: 0, progress: (l) => lines.push(l) },
    );
    assert.equal(res.code, 0);
    assert.deepEqual(lines, ["[cluster build] helm: resolving", "[cluster build] helm: built", "tail"]);
  });

  it("still kills a command at a limit it was given, as exit code 124, saying so", async () => {
    const res = await run("bash", ["-c", "sleep 30"], { timeoutMs: 200 });
    assert.equal(res.code, 124);
    assert.match(res.stderr, /bash timed out after 0\.2s/);
  });
});
