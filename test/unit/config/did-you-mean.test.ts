import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { didYouMean, didYouMeanHint } from "../../../src/config/did-you-mean.ts";

describe("didYouMean", () => {
  const fields = ["prune", "selfHeal", "allowEmpty"];
  const cases: Array<[string, readonly string[], string | undefined]> = [
    ["prun", fields, "prune"], // deletion
    ["purne", fields, "prune"], // swap of neighbours
    ["selfheal", fields, "selfHeal"], // case only
    ["SELFHEAL", fields, "selfHeal"],
    ["allowEmtpy", fields, "allowEmpty"],
    ["selfHealing", fields, "selfHeal"], // 3 edits are close enough for 11 characters
    ["heal", fields, undefined], // 4 edits for 4 characters are not
    ["replicas", fields, undefined],
    ["", fields, undefined],
    ["prd", ["dev", "staging", "prod"], "prod"],
    ["stg", ["dev", "staging", "prod"], undefined],
    ["stag", ["dev", "staging", "prod"], "staging"], // unique prefix
    ["pr", ["prod", "preview"], undefined], // ambiguous prefix
    ["dev", ["dev", "prod"], undefined], // exact match is not a suggestion
    ["x", [], undefined],
  ];
  for (const [input, candidates, expected] of cases) {
    it(`${JSON.stringify(input)} in [${candidates.join(", ")}] -> ${expected ?? "nothing"}`, () => {
      assert.equal(didYouMean(input, candidates), expected);
    });
  }

  it("formats a hint to append to a message", () => {
    assert.equal(didYouMeanHint("prun", fields), ' (did you mean "prune"?)');
    assert.equal(didYouMeanHint("replicas", fields), "");
  });

  it("accepts any iterable of candidates", () => {
    assert.equal(didYouMean("prdo", new Set(["prod", "dev"])), "prod");
  });
});
