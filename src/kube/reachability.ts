// Whether a cluster's API server answers: the first failure to get any answer (refused, reset,
// timed out, a name that does not resolve) starts an outage, and the next answer of any status
// ends it. Kept on the root client, so every environment and view on one cluster share one record.

export interface Outage {
  /** ms since the epoch of the first failure of this outage. */
  since: number;
  /** The first failure's message (it names the server, never a credential). */
  error: string;
}

export class Reachability {
  private outage?: Outage;
  private readonly listeners = new Set<(outage: Outage | undefined) => void>();

  /** The API server answered (any HTTP status). */
  answered(): void {
    if (!this.outage) return;
    this.outage = undefined;
    for (const l of this.listeners) l(undefined);
  }

  /** No answer came. */
  failed(error: string, now = Date.now()): void {
    if (this.outage) return;
    this.outage = { since: now, error };
    for (const l of this.listeners) l(this.outage);
  }

  get current(): Outage | undefined {
    return this.outage;
  }

  /** Called when an outage starts (with it) and ends (with undefined). */
  onChange(listener: (outage: Outage | undefined) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}
