// The Leases a replica holds while it moves a renamed repository's state and objects: the new
// name's first, so that no replica runs the new name before everything is there, then the old
// name's, which is free once the replica that ran it has stopped (told through the state) or died.
// The mover holds them under an identity of its own, so that its own runtime under the new name
// waits as well, and renews them for as long as the move takes.
import type { KubeClient } from "../kube/client.ts";
import type { Logger } from "../reconciler/environment-controller.ts";
import { appLeaseName } from "../reconciler/reconciler.ts";
import type { Shard } from "../reconciler/shard.ts";
import { LeaseLock } from "../state/lease.ts";
import { sleep } from "../util/sleep.ts";

export class RenameLocks {
  private readonly held: LeaseLock[] = [];

  constructor(
    private readonly deps: {
      client: KubeClient;
      stateNamespace: string;
      identity: string;
      shard?: Shard;
      log: Logger;
    },
    private readonly from: string,
    private readonly to: string,
  ) {}

  holdNew(): Promise<void> {
    return this.hold(this.to);
  }

  holdOld(): Promise<void> {
    return this.hold(this.from);
  }

  /** Releases both, so the shard gives the new name to a replica at once. */
  async release(): Promise<void> {
    await Promise.all(this.held.map((l) => l.stop().catch(() => undefined)));
    this.held.length = 0;
  }

  /**
   * Takes an app's Lease once it is free: a holder told to stop releases it, a dead one's expires
   * within a lease duration. After three, the move goes ahead regardless (and says so).
   */
  private async hold(app: string): Promise<void> {
    const duration = this.deps.shard?.leaseDurationSeconds ?? 15;
    const lock = new LeaseLock(
      this.deps.client,
      this.deps.stateNamespace,
      appLeaseName(app),
      `${this.deps.identity}/renaming`,
      { leaseDurationSeconds: duration, sightings: this.deps.shard?.sightings },
    );
    const deadline = Date.now() + 3 * duration * 1000;
    while (!(await lock.tryAcquire().catch(() => false))) {
      if (Date.now() > deadline) {
        this.deps.log.warn(
          { app, from: this.from, to: this.to },
          "rename: another replica still holds the app's Lease after three lease durations; moving regardless",
        );
        return;
      }
      await sleep(250);
    }
    lock.start(() =>
      this.deps.log.warn({ app }, "rename: lost the app's Lease while moving it; another replica took it"),
    );
    this.held.push(lock);
  }
}
