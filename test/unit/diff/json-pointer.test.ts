import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { escapeToken, parsePointer } from "../../../src/engine/diff/json-pointer.ts";

describe("JSON pointer tokens (RFC 6901)", () => {
  const cases: Array<[string | number, string]> = [
    ["replicas", "replicas"],
    [0, "0"],
    ["app.kubernetes.io/name", "app.kubernetes.io~1name"],
    ["a~b", "a~0b"],
    ["~/", "~0~1"],
    ["~1", "~01"],
    ["", ""],
  ];
  for (const [token, escaped] of cases) {
    it(`escapes ${JSON.stringify(token)} as ${JSON.stringify(escaped)} and reads it back`, () => {
      assert.equal(escapeToken(token), escaped);
      assert.deepEqual(parsePointer(`/${escaped}`), [String(token)]);
    });
  }
});
