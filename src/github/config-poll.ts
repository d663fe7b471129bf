// The config on the default branch, re-read on the poll as well as on pushes: a push webhook that
// never arrives (GitHub's delivery failed, the replica was down) must not leave a looser rule in
// force until a restart. Each poll asks only for the default branch's head (which the source
// knows cheaply, and often already has from an environment's own poll); the config file is read
// only when the head moved, and the runtime rebuilt only when the file's text changed. A file
// that cannot be parsed keeps the config in force (the last good one) and fails the config check
// on that commit, once per text.
import { ConfigError } from "../config/load.ts";
import type { Logger } from "../reconciler/environment-controller.ts";
import type { RepoInfo } from "./runtime.ts";

export interface ConfigPollDeps {
  /** The default branch's head, as the repository's source knows it. */
  head(info: RepoInfo): Promise<string>;
  /** The config file's text at `sha`; undefined when there is none. */
  readText(info: RepoInfo, sha: string): Promise<string | undefined>;
  /** The text of the config in force, and the default-branch commit it was read at when known. */
  inForce(info: RepoInfo): { text: string; at?: string } | undefined;
  /** Reads the config at `sha` and rebuilds the runtime, as a config push does (queued with pushes). */
  reload(info: RepoInfo, sha: string): Promise<void>;
  /** Fails the `syncward / config` check run on `sha` with the parse error. */
  report(info: RepoInfo, sha: string, err: ConfigError): Promise<void>;
  log: Logger;
}

export type PollResult = "unchanged" | "same text" | "reloaded" | "invalid" | "unreadable";

const keyOf = (info: RepoInfo) => `${info.owner}/${info.repo}`.toLowerCase();

export class ConfigPoll {
  /** The default-branch head each repository's config in force was last confirmed at. */
  private readonly seen = new Map<string, string>();
  /** The text of an invalid config already reported, so each poll does not report it again. */
  private readonly reported = new Map<string, string>();

  constructor(private readonly d: ConfigPollDeps) {}

  /** The config in force was read at `sha` (a load): polls compare with it. */
  confirmed(info: RepoInfo, sha: string | undefined): void {
    if (sha) this.seen.set(keyOf(info), sha);
    else this.seen.delete(keyOf(info));
  }

  forget(info: RepoInfo): void {
    this.seen.delete(keyOf(info));
    this.reported.delete(keyOf(info));
  }

  async poll(info: RepoInfo): Promise<PollResult> {
    const key = keyOf(info);
    const current = this.d.inForce(info);
    if (!current) return "unchanged";
    const where = { repo: `${info.owner}/${info.repo}` };
    let head: string;
    let text: string | undefined;
    try {
      head = await this.d.head(info);
      if (head === this.seen.get(key) || head === current.at) return "unchanged";
      text = await this.d.readText(info, head);
    } catch (err) {
      // GitHub unreachable: the config in force stays, and the next poll asks again.
      this.d.log.warn(
        { err, ...where },
        "could not read the default branch's config on a poll; the config in force stays",
      );
      return "unreadable";
    }
    if (text === current.text) {
      this.seen.set(key, head);
      return "same text";
    }
    if (text !== undefined && this.reported.get(key) === text) {
      this.seen.set(key, head);
      return "invalid";
    }
    try {
      await this.d.reload(info, head);
      this.seen.set(key, head);
      this.reported.delete(key);
      this.d.log.info(
        { ...where, revision: head },
        "the default branch's config changed without a push webhook; read on a poll",
      );
      return "reloaded";
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      this.seen.set(key, head);
      if (text !== undefined) this.reported.set(key, text);
      await this.d.report(info, head, err);
      return "invalid";
    }
  }
}
