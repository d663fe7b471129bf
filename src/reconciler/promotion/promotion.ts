// One downstream environment's promotion: reads its upstreams' states (wherever they run: the
// states are ConfigMaps every replica watches), asks the revision rule (evidence.ts) and the named
// checks, and wakes the downstream exactly when an upstream's healthyFor window closes: a timer
// armed from each state change of an upstream, so nothing polls.
import type { EnvironmentConfig, PromotionRule } from "../../config/types.ts";
import type { KubeClient } from "../../kube/client.ts";
import type { KubeObject } from "../../kube/object.ts";
import { instanceName } from "../../state/identity.ts";
import { INSTANCE_ANNOTATION, STATE_KEY, type StateStore } from "../../state/store.ts";
import type { EnvironmentState, PromotionNote } from "../../state/types.ts";
import type { Emit } from "../events.ts";
import { checkLabel, type RequiredChecks } from "../required-checks.ts";
import { watchStates } from "../state-watch.ts";
import {
  type Contains,
  nextWake,
  onLine,
  type Proof,
  proofOf,
  provenCandidates,
  type Upstream,
} from "./evidence.ts";

const SHORT = (sha: string) => sha.slice(0, 7);

/** How many proven commits, newest first, are asked for their checks before the downstream holds. */
const CHECKED_CANDIDATES = 3;

/** The upstreams of an environment, as the config names them. */
export interface PromotionLinks {
  upstreams: Array<{ name: string; branch: string }>;
}

export interface PromotionOptions {
  app: string;
  env: EnvironmentConfig & { promotion: PromotionRule };
  links: PromotionLinks;
  store: StateStore;
  /** syncward's own cluster, where the states are. */
  stateClient: KubeClient;
  checks?: RequiredChecks;
  /**
   * The source's ancestry (RevisionSource.contains): a commit is taken only when the downstream's
   * branch head contains it and it contains what the downstream runs. Absent: nothing is taken.
   */
  contains?: Contains;
  /** Asks the downstream for a pass (its controller's nudge). */
  wake: () => void;
  emit: Emit;
}

/** What the rule says for one look: the commit to take, or none, with the evidence in words. */
export interface Target {
  /** The newest commit every upstream proved and whose checks passed; undefined: hold. */
  revision?: string;
  /** The evidence for `revision`, as a history entry keeps it. */
  note?: PromotionNote;
  /** Why the branch head (or nothing) is not taken: "staging: Healthy for 40s of 2m at this commit". */
  waiting?: string;
}

export class Promotion {
  private readonly instances: Map<string, string>;
  private timer: NodeJS.Timeout | undefined;
  private stopWatch: (() => void) | undefined;
  /** The open record of each upstream last heard (`revision|since`), so a repeated write does not wake. */
  private readonly heard = new Map<string, string>();
  /** The last wait announced, so a pass does not announce it again. */
  private lastWaiting = "";

  constructor(private readonly o: PromotionOptions) {
    this.instances = new Map(o.links.upstreams.map((u) => [instanceName(o.app, u.name), u.name]));
  }

  get rule(): PromotionRule {
    return this.o.env.promotion;
  }

  /** Listens to the upstreams' states; the first look is the downstream's first pass. */
  start(): void {
    this.stopWatch ??= watchStates(
      this.o.stateClient,
      this.o.store.namespace,
      [...this.instances.keys()],
      (cm) => this.changed(cm),
      { added: true },
    );
  }

  stop(): void {
    this.stopWatch?.();
    this.stopWatch = undefined;
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Every upstream as its state says now. */
  async upstreams(): Promise<Upstream[]> {
    return Promise.all(
      this.o.links.upstreams.map(async (u) =>
        upstreamOf(u, await this.o.store.load(instanceName(this.o.app, u.name))),
      ),
    );
  }

  /**
   * The revision rule for the branch head `head`: the newest commit every upstream has proven that
   * is on the branch and not back from `current` (evidence.ts lineOf), and whose named checks
   * passed. Arms the wake-up for the next proof to come.
   */
  async target(head: string, current?: string, now = new Date()): Promise<Target> {
    const upstreams = await this.upstreams();
    this.arm(upstreams, now);
    const { healthyFor } = this.rule;
    const branch = this.o.env.source.branch;
    const proven = provenCandidates(upstreams, healthyFor, now);
    const headProofs = upstreams.map((u) => proofOf(u, head, healthyFor, now));
    let waitingChecks: string | undefined;
    let offLine: string | undefined;
    let checked = 0;
    for await (const c of onLine(proven, { head, current, branch }, this.o.contains)) {
      if ("off" in c) {
        offLine ??= c.off;
        continue;
      }
      if (checked++ >= CHECKED_CANDIDATES) break;
      const missing = await this.missingChecks(c.revision);
      if (missing.length === 0) {
        const waiting = this.headWaits(c.revision, head, headProofs, offLine);
        return { revision: c.revision, note: this.noteOf(c.proofs), ...(waiting ? { waiting } : {}) };
      }
      waitingChecks ??= `${SHORT(c.revision)} is proven, but checks have not passed on it: ${missing.join(", ")}`;
    }
    const waiting = [waitingChecks, offLine, ...headProofs.filter((p) => !p.proven).map((p) => p.text)]
      .filter(Boolean)
      .join("; ");
    return { waiting: waiting || `no commit of ${this.o.env.source.branch} is proven by ${this.names()}` };
  }

  /**
   * Why the head is not what the downstream takes, when it is not, and the newer proven commit
   * passed over for the one taken (`offLine`: off the branch, or back from what it runs).
   */
  private headWaits(revision: string, head: string, proofs: Proof[], offLine?: string): string | undefined {
    if (revision === head) return undefined;
    const open = proofs.filter((p) => !p.proven).map((p) => p.text);
    const why = open.length > 0 ? open.join("; ") : `${SHORT(head)}'s checks have not passed`;
    return offLine ? `${offLine}; ${why}` : why;
  }

  /**
   * The evidence of `sha` as people read it (each upstream, then the checks), for the approval's
   * check run and a release of an approved commit, with the note its history entry keeps.
   */
  async evidenceOf(
    sha: string,
    reason = "continuous promotion",
    now = new Date(),
  ): Promise<{ proven: boolean; text: string; note: PromotionNote }> {
    const proofs = (await this.upstreams()).map((u) => proofOf(u, sha, this.rule.healthyFor, now));
    const missing = await this.missingChecks(sha);
    const checks = this.checksText(missing);
    return {
      proven: proofs.every((p) => p.proven) && missing.length === 0,
      text: [...proofs.map((p) => p.text), ...(checks ? [checks] : [])].join(", "),
      note: this.noteOf(proofs, reason),
    };
  }

  /**
   * The loop holds `head` for its upstreams: said once per commit and what it waits for (the
   * seconds counted in the text change on every pass, so they are left out of the comparison).
   */
  announce(head: string, waiting: string | undefined): void {
    if (!waiting) return;
    const key = `${head}|${waiting.replace(/\d+/g, "#")}`;
    if (key === this.lastWaiting) return;
    this.lastWaiting = key;
    this.o.emit({
      type: "waiting",
      instance: instanceName(this.o.app, this.o.env.name),
      env: this.o.env.name,
      revision: head,
      reason: `promotion: ${waiting}`,
    });
  }

  private noteOf(proofs: Proof[], reason = "continuous promotion"): PromotionNote {
    return {
      from: this.o.links.upstreams.map((u) => u.name),
      reason,
      evidence: [...proofs.map((p) => p.text), ...(this.rule.checks.length > 0 ? [this.checksText([])] : [])],
    };
  }

  /**
   * What a person's promotion (`/promote`, `app promote`) deploys: the commit the upstream runs
   * now, once every upstream has proven it and its checks passed; otherwise why not.
   */
  async promotable(
    reason: string,
    now = new Date(),
  ): Promise<{ revision: string; note: PromotionNote } | { refusal: string }> {
    const upstreams = await this.upstreams();
    const current = upstreams[0]?.current;
    if (!current) return { refusal: `${upstreams[0]?.name ?? "its upstream"} has not synced any commit yet` };
    const proofs = upstreams.map((u) => proofOf(u, current, this.rule.healthyFor, now));
    const open = proofs.filter((p) => !p.proven);
    if (open.length > 0)
      return {
        refusal: `${upstreams[0]?.name} runs ${SHORT(current)}, which is not proven yet (${open.map((p) => p.text).join("; ")})`,
      };
    const missing = await this.missingChecks(current);
    if (missing.length > 0)
      return { refusal: `checks have not passed on ${SHORT(current)}: ${missing.join(", ")}` };
    return { revision: current, note: this.noteOf(proofs, reason) };
  }

  private checksText(missing: string[]): string {
    const names = this.rule.checks.map(checkLabel);
    if (names.length === 0) return "";
    return missing.length === 0 ? `${names.join(", ")} passed` : `checks not passed: ${missing.join(", ")}`;
  }

  private async missingChecks(sha: string): Promise<string[]> {
    const wanted = this.rule.checks;
    if (wanted.length === 0) return [];
    if (!this.o.checks) return [`${wanted.map(checkLabel).join(", ")} (this syncward cannot read checks)`];
    return this.o.checks.missing(sha, wanted, this.o.env.source.branch);
  }

  private names(): string {
    return this.o.links.upstreams.map((u) => u.name).join(" and ");
  }

  /** Wakes the downstream when the next upstream window closes (a few ms after, so it has). */
  private arm(upstreams: readonly Upstream[], now: Date): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    const at = nextWake(upstreams, this.rule.healthyFor, now);
    if (!at) return;
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        this.o.wake();
      },
      at.getTime() - now.getTime() + 5,
    );
    this.timer.unref();
  }

  /** An upstream's state changed (any replica wrote it): a new stretch of health arms the wake-up. */
  private changed(cm: KubeObject): void {
    const state = stateOf(cm);
    const name = this.instances.get(cm.metadata.annotations?.[INSTANCE_ANNOTATION] ?? "");
    const link = this.o.links.upstreams.find((u) => u.name === name);
    if (!state || !link) return;
    const open = state.healthRecords?.at(-1);
    const mark = open && open.until === undefined ? `${open.revision}|${open.since}` : "";
    if (this.heard.get(link.name) === mark) return;
    this.heard.set(link.name, mark);
    if (!mark) return;
    // Proven already (healthyFor 0, or heard late): look now; otherwise when the window closes.
    if (Date.parse(open?.since ?? "") + this.rule.healthyFor <= Date.now()) this.o.wake();
    else
      void this.upstreams().then(
        (all) => this.arm(all, new Date()),
        () => undefined,
      );
  }
}

/** An upstream as its state records it. */
export function upstreamOf(link: { name: string; branch: string }, state: EnvironmentState): Upstream {
  return {
    name: link.name,
    branch: link.branch,
    records: state.healthRecords ?? [],
    ...(state.lastSyncedRevision ? { current: state.lastSyncedRevision } : {}),
  };
}

function stateOf(cm: KubeObject): EnvironmentState | undefined {
  const text = (cm as { data?: Record<string, string> }).data?.[STATE_KEY];
  if (!text) return undefined;
  try {
    return JSON.parse(text) as EnvironmentState;
  } catch {
    return undefined;
  }
}

/** The upstreams of `name` in a config, with their branches; undefined when it has no promotion. */
export function promotionLinks(
  environments: readonly EnvironmentConfig[],
  name: string,
): PromotionLinks | undefined {
  const env = environments.find((e) => e.name === name);
  if (!env?.promotion) return undefined;
  return {
    upstreams: env.promotion.after.flatMap((u) => {
      const up = environments.find((e) => e.name === u);
      return up ? [{ name: u, branch: up.source.branch }] : [];
    }),
  };
}

/** Whether another environment of the config is promoted after `name` (its health is evidence then). */
export function isUpstream(environments: readonly EnvironmentConfig[], name: string): boolean {
  return environments.some((e) => e.promotion?.after.includes(name));
}

/** What a controller of `name` needs of the config's promotions: its upstreams, and whether it is one. */
export function promotionOptions(
  environments: readonly EnvironmentConfig[],
  name: string,
): { promotion?: PromotionLinks; tracksHealth?: boolean } {
  const links = promotionLinks(environments, name);
  return {
    ...(links ? { promotion: links } : {}),
    // An upstream's health is a downstream's evidence; an automatic rollback's clock is its own health.
    ...(isUpstream(environments, name) || environments.find((e) => e.name === name)?.rollback
      ? { tracksHealth: true }
      : {}),
  };
}
