import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { type LegacyName, mayTake } from "../../../src/reconciler/identity-upgrade.ts";
import {
  githubAppId,
  instanceName,
  isInstanceOf,
  legacyAppName,
  legacyInstanceName,
  localAppId,
  normalizedRemote,
} from "../../../src/state/identity.ts";
import { leaseNameFor } from "../../../src/state/lease.ts";
import { stateConfigMapName } from "../../../src/state/store.ts";

const LABEL_VALUE = /^(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

describe("identities", () => {
  it("two repositories whose names joined the same way are two apps", () => {
    // acme-payments/api and acme/payments-api: one legacy name, two GitHub ids.
    assert.equal(legacyAppName("acme-payments", "api"), legacyAppName("acme", "payments-api"));
    assert.notEqual(instanceName(githubAppId(1001), "prod"), instanceName(githubAppId(2002), "prod"));
  });

  it("a long environment name is cut with a hash of the whole: two long names stay two instances", () => {
    const app = githubAppId(912345678901);
    const names = ["production-eu-west-1", "production-eu-west-2"].map((env) =>
      instanceName(app, `${env}-platform-payments-settlement-reconciliation`),
    );
    assert.equal(new Set(names).size, 2);
    for (const name of names) {
      assert.ok(name.length <= 63, name);
      assert.match(name, LABEL_VALUE);
      assert.ok(isInstanceOf(app, name), "a cut name still reads as the app's");
      assert.ok(stateConfigMapName(name).length <= 63);
      assert.ok(leaseNameFor(name).length <= 63);
    }
    // Before identities both were one instance.
    const legacy = "acme-platform-payments-settlement-reconciliation-service";
    assert.equal(
      legacyInstanceName(legacy, "production-eu-west-1"),
      legacyInstanceName(legacy, "production-eu-west-2"),
    );
  });

  it("a short name is kept whole; a new name never equals one from before identities", () => {
    const cases: Array<[string, string, string]> = [
      [githubAppId(42), "prod", "gh_42.prod"],
      [githubAppId(42), "eu-staging", "gh_42.eu-staging"],
    ];
    for (const [app, env, want] of cases) assert.equal(instanceName(app, env), want);
    // An owner "gh" with a repository "42" had the app gh-42: "_" never appeared in an old name.
    assert.notEqual(
      legacyInstanceName(legacyAppName("gh", "42"), "prod"),
      instanceName(githubAppId(42), "prod"),
    );
    assert.throws(() => githubAppId(0), /positive integer/);
  });

  it("an app of one id does not take in another id's states that share its prefix", () => {
    assert.ok(isInstanceOf("gh_12", "gh_12.prod"));
    assert.ok(!isInstanceOf("gh_12", "gh_123.prod"));
    assert.ok(!isInstanceOf("gh_12", "gh_12.tools.prod"));
  });

  it("local identities: one per remote (however spelled), else per path, else per --app name, never an installed one's", () => {
    const https = localAppId({ remote: "https://github.com/acme/repo.git", path: "/a/repo" });
    assert.equal(https, localAppId({ remote: "git@github.com:Acme/repo", path: "/b/repo" }));
    assert.equal(https, localAppId({ remote: "ssh://git@github.com/acme/repo/", path: "/c/repo" }));
    assert.notEqual(https, localAppId({ remote: "https://github.com/other/repo.git", path: "/a/repo" }));
    assert.notEqual(localAppId({ path: "/home/a/repo" }), localAppId({ path: "/home/b/repo" }));
    assert.notEqual(localAppId({ name: "repo", path: "/x" }), localAppId({ path: "repo" }));
    assert.match(https, /^local_[0-9a-f]{12}$/);
    assert.equal(normalizedRemote("https://user:token@github.com/acme/repo.git"), "github.com/acme/repo");
    assert.equal(normalizedRemote("not a url"), undefined);
  });
});

describe("who takes a state from before identities", () => {
  it("only the repository that claimed it, or anyone for an unclaimed one; the CLI never an installed repository's", () => {
    const cases: Array<[string | undefined, LegacyName, boolean]> = [
      ["acme/shop-x", { app: "acme-shop-x", repository: "acme/shop-x" }, true],
      ["Acme/Shop-X", { app: "acme-shop-x", repository: "acme/shop-x" }, true],
      ["acme/shop-x", { app: "acme-shop-x", repository: "acme-shop/x" }, false],
      ["acme/shop-x", { app: "acme-shop-x" }, false],
      [undefined, { app: "repo" }, true],
      ["(moved to gh_7.dev)", { app: "acme-shop-x", repository: "acme/shop-x" }, false],
    ];
    for (const [claim, legacy, want] of cases)
      assert.equal(mayTake(claim, legacy), want, `${claim} by ${legacy.repository}`);
  });
});
