// Sync-window schedules: standard five-field cron (minute hour day-of-month month day-of-week),
// the dialect Argo CD accepts (robfig/cron with Minute|Hour|Dom|Month|Dow), evaluated in an IANA
// time zone with croner. croner's extensions (seconds, years, L, W, #, @nicknames) are refused so
// that a schedule means the same thing here and in Argo CD.
import { Cron } from "croner";
import { didYouMeanHint } from "./did-you-mean.ts";

// One comma-separated item of a field: *, ?, a number or a three-letter name, an optional range,
// an optional step.
const ITEM_RE = /^(?:[*?]|(?:\d+|[A-Za-z]{3})(?:-(?:\d+|[A-Za-z]{3}))?)(?:\/\d+)?$/;
const FIELD_NAMES = ["minute", "hour", "day of month", "month", "day of week"] as const;

/** A problem with `schedule` as a five-field cron expression, or undefined when it is valid. */
export function scheduleProblem(schedule: string): string | undefined {
  const fields = schedule.trim().split(/\s+/);
  if (schedule.trim() === "" || fields.length !== 5) {
    return `must be a cron expression with 5 fields (minute hour day-of-month month day-of-week), got ${fields.length === 1 && fields[0] === "" ? 0 : fields.length}`;
  }
  for (const [i, field] of fields.entries()) {
    for (const item of field.split(",")) {
      if (!ITEM_RE.test(item)) {
        return `invalid ${FIELD_NAMES[i]} field ${JSON.stringify(field)} (use numbers, names like MON or JAN, *, ranges a-b, lists a,b and steps /n)`;
      }
    }
  }
  let cron: Cron;
  try {
    cron = cronFor(schedule, "UTC");
  } catch (err) {
    return `invalid cron expression: ${(err as Error).message.replace(/^CronPattern: /, "")}`;
  }
  if (cron.nextRun(new Date(0)) === null) return "never fires (no date matches it)";
  return undefined;
}

/**
 * A croner schedule for a valid five-field expression in `timeZone`. `?` means `*` (as in
 * robfig/cron; croner would replace it with the current time). Day of month and day of week
 * combine with OR when both are restricted, as in Vixie cron and Argo CD.
 */
export function cronFor(schedule: string, timeZone: string): Cron {
  const pattern = schedule.trim().split(/\s+/).join(" ").replaceAll("?", "*");
  return new Cron(pattern, { timezone: timeZone, mode: "5-part", domAndDow: false });
}

let zoneNames: string[] | undefined;

/** A problem with `timeZone` as an IANA time zone name, or undefined when it is valid. */
export function timeZoneProblem(timeZone: string): string | undefined {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone });
    return undefined;
  } catch {
    zoneNames ??= ["UTC", ...Intl.supportedValuesOf("timeZone")];
    return `unknown time zone ${JSON.stringify(timeZone)}${didYouMeanHint(timeZone, zoneNames)} (use an IANA name like "Europe/Berlin" or "UTC")`;
  }
}
