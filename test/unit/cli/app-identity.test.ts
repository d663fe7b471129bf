// The CLI's app identity: a checkout is local_<hash> (never an installed repository's id), and
// `--app gh_<id>` addresses an installed repository's app as the GitHub App names it.
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { checkoutApp } from "../../../src/cli/app-identity.ts";

describe("checkoutApp", () => {
  it("names a checkout local_<hash>, whatever --app says", () => {
    const app = checkoutApp("/nonexistent/repo", "acme-shop");
    assert.match(app.id, /^local_[0-9a-f]+$/);
    assert.equal(app.name, "acme-shop");
    assert.notEqual(
      checkoutApp("/nonexistent/other", "shop").id,
      checkoutApp("/nonexistent/repo", "shop2").id,
    );
  });
  it("takes --app gh_<id> as the installed repository's app, with nothing to move from", () => {
    assert.deepEqual(checkoutApp("/nonexistent/repo", "gh_4711"), { id: "gh_4711", name: "gh_4711" });
  });
  it("does not take a name that only looks like one", () => {
    assert.match(checkoutApp("/nonexistent/repo", "gh_47x").id, /^local_/);
  });
});
