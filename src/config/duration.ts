// Go-style durations ("250ms", "5s", "3m", "1h30m", "1.5h"), as Argo CD writes them, converted to
// whole milliseconds. Nanoseconds and microseconds are refused: nothing in syncward is that precise.

const UNIT_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 } as const;
type Unit = keyof typeof UNIT_MS;

/** Matches a Go-style duration made of one or more `<number><unit>` parts, unit ms, s, m or h. */
export const DURATION_PATTERN = "^(?:(?:\\d+(?:\\.\\d+)?|\\.\\d+)(?:ms|s|m|h))+$";
const DURATION_RE = new RegExp(DURATION_PATTERN);
const PART_RE = /(\d+(?:\.\d+)?|\.\d+)(ms|s|m|h)/g;

/** Milliseconds, or undefined if `text` is not a duration. Fractions of a millisecond are rounded. */
export function parseDuration(text: string): number | undefined {
  if (!DURATION_RE.test(text)) return undefined;
  let total = 0;
  for (const [, amount, unit] of text.matchAll(PART_RE)) {
    total += Number(amount) * UNIT_MS[unit as Unit];
  }
  return Number.isFinite(total) ? Math.round(total) : undefined;
}

/** The shortest Go-style spelling of a number of milliseconds: 180000 -> "3m", 5400000 -> "1h30m". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) throw new RangeError(`not a duration: ${ms}`);
  if (ms === 0) return "0s";
  let rest = Math.round(ms);
  let out = "";
  for (const unit of ["h", "m", "s", "ms"] as const) {
    const size = UNIT_MS[unit];
    const count = Math.floor(rest / size);
    if (count > 0) {
      out += `${count}${unit}`;
      rest -= count * size;
    }
  }
  return out;
}
