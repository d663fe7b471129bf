// Building blocks of the config schemas (schema.ts, preview-schema.ts): objects that refuse unknown
// fields with a did-you-mean, DNS labels, bounded integers and Go-style durations, each with a
// message a config author can act on.
import { z } from "zod";
import { didYouMeanHint } from "./did-you-mean.ts";
import { DURATION_PATTERN, formatDuration, parseDuration } from "./duration.ts";

/** An object that rejects unknown fields, suggesting the closest known one. */
export function strictObject<S extends z.core.$ZodLooseShape>(shape: S) {
  const known = Object.keys(shape);
  return z.strictObject(shape, {
    error: (issue) =>
      issue.code === "unrecognized_keys"
        ? // One line per key, in the order of `issue.keys`: formatIssues() splits them.
          issue.keys.map((key) => `unknown field${didYouMeanHint(key, known)}`).join("\n")
        : undefined,
  });
}

export const LABEL_RE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function dnsLabel(what: string) {
  return z
    .string()
    .max(63, { error: `${what} must be at most 63 characters` })
    .regex(LABEL_RE, {
      error: (issue) =>
        `${what} ${JSON.stringify(issue.input)} is not valid: use lowercase letters, digits and "-", starting and ending with a letter or digit`,
    });
}

export const nonEmpty = () => z.string().min(1, { error: "must not be empty" });

export function integer(min: number, max: number) {
  const text = `must be an integer from ${min} to ${max}`;
  return z
    .int({ error: (issue) => (issue.input === undefined ? undefined : text) })
    .min(min, text)
    .max(max, text);
}

/** A Go-style duration string ("5s", "3m", "1h30m") parsed to milliseconds, at least `minMs`. */
export function duration(minMs: number) {
  const example = 'a duration like "30s", "5m" or "1h30m"';
  return z
    .string({ error: (issue) => (issue.input === undefined ? undefined : `must be ${example}`) })
    .regex(new RegExp(DURATION_PATTERN), {
      error: (issue) => `must be ${example} (units ms, s, m, h), got ${JSON.stringify(issue.input)}`,
    })
    .transform((text, ctx) => {
      const ms = parseDuration(text) ?? Number.NaN;
      if (!(ms >= minMs)) {
        ctx.issues.push({
          code: "custom",
          input: text,
          message: `must be at least ${formatDuration(minMs)}`,
        });
        return z.NEVER;
      }
      return ms;
    });
}
