// Step 2 of a release: the render it applies. Fresh for a revision's first attempt; its retries
// apply the render the gate let through (Release.allowedRender), never a fresh one nobody approved.
// A recorded render from history (a rollback) would be chosen here too.
import { errorMessage } from "../../engine/resource-results.ts";
import { outcomeWithoutWork, type SyncOutcome } from "../../engine/sync.ts";
import { SourceError } from "../../source/errors.ts";
import type { RenderedSource } from "../../source/render.ts";
import type { Release } from "./release.ts";

const SHORT = (sha: string) => sha.slice(0, 7);

/** The render an earlier attempt was allowed to apply, if it was of this revision. */
export function allowedRenderOf(
  allowed: Release["allowedRender"],
  revision: string,
): RenderedSource | undefined {
  return allowed?.revision === revision ? allowed.rendered : undefined;
}

/**
 * Why a render could not be made, as the attempt's outcome. Only a SourceError is the revision's
 * fault; anything else (GitHub down or limiting us) means the source could not be fetched: worth
 * a retry, and no reason to mark it stuck (`unfetched`).
 */
export function renderFailure(
  err: unknown,
  revision: string,
  dryRun: boolean | undefined,
): { outcome: SyncOutcome; unfetched: boolean } {
  if (!(err instanceof SourceError)) {
    return {
      unfetched: true,
      outcome: {
        ...outcomeWithoutWork(
          revision,
          "Failed",
          `fetching ${SHORT(revision)} failed: ${errorMessage(err)}`,
          dryRun,
        ),
        retryable: true,
      },
    };
  }
  return {
    unfetched: false,
    outcome: outcomeWithoutWork(revision, "Error", `render failed: ${err.message}`, dryRun),
  };
}

/** Sets `r.unfetched` when the source could not be fetched. */
export async function renderStep(
  r: Release,
  revision: string,
): Promise<{ rendered: RenderedSource } | { outcome: SyncOutcome }> {
  try {
    return { rendered: allowedRenderOf(r.allowedRender, revision) ?? (await r.fx.desiredAt(revision)) };
  } catch (err) {
    const failure = renderFailure(err, revision, r.opts.dryRun);
    if (failure.unfetched) r.unfetched = true;
    return { outcome: failure.outcome };
  }
}
