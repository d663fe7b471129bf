// Reading the repository a replica marked an app's Lease with: what another replica starts, and
// what it leaves alone (no mark, a mark it cannot read).
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { announcedRepository, REPOSITORY_ANNOTATION } from "../../../src/github/repository-announce.ts";
import type { KubeObject } from "../../../src/kube/object.ts";

const lease = (annotation?: string): KubeObject => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: {
    name: "syncward-acme-shop-app",
    annotations: annotation === undefined ? {} : { [REPOSITORY_ANNOTATION]: annotation },
  },
});

describe("announcedRepository", () => {
  it("reads the repository, its installation and where it lives", () => {
    const info = {
      owner: "acme",
      repo: "shop",
      installationId: 4242,
      htmlUrl: "https://github.com/acme/shop",
      defaultBranch: "trunk",
    };
    assert.deepEqual(announcedRepository(lease(JSON.stringify(info))), info);
  });
  it("fills in the address and the branch a mark leaves out", () => {
    assert.deepEqual(
      announcedRepository(lease(JSON.stringify({ owner: "acme", repo: "shop", installationId: 1 }))),
      {
        owner: "acme",
        repo: "shop",
        installationId: 1,
        htmlUrl: "https://github.com/acme/shop",
        defaultBranch: "main",
      },
    );
  });
  for (const [name, mark] of [
    ["no mark (a Lease no replica announced, or one taken off)", undefined],
    ["a mark that is not JSON", "{"],
    ["a mark without an installation", JSON.stringify({ owner: "acme", repo: "shop" })],
  ] as const) {
    it(`nothing for ${name}`, () => assert.equal(announcedRepository(lease(mark)), undefined));
  }
});
