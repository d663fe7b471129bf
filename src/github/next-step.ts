// The last line of every reply syncward writes on a pull request: one thing the reader can do
// next, always in the same place and form, so someone skimming at 3 a.m. finds it without reading
// the rest.

export const NEXT_PREFIX = "**Next:** ";

/** `next` as the reply's closing line: one line, whatever it was given. */
export function nextLine(next: string): string {
  return `${NEXT_PREFIX}${next.replace(/\s*[\r\n]+\s*/g, " ").trim()}`;
}

/** `body` ending with its Next line. */
export function withNext(body: string, next: string): string {
  return `${body.replace(/\s+$/, "")}\n\n${nextLine(next)}`;
}
