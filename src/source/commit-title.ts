// A commit's title as history keeps it: the first line of its message, trimmed and bounded, so a
// commit with a page-long subject cannot grow every state object that records it.

/** The most characters (code points) of a title kept. */
export const MAX_TITLE_CHARS = 100;

/** Control and format characters (bidi overrides, zero-width joiners) but the tab. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
const INVISIBLE = /[\u0000-\u0008\u000a-\u001f\u007f-\u009f\p{Cf}\p{Zl}\p{Zp}]/gu;

/**
 * The first line of `message`, at most MAX_TITLE_CHARS, or undefined when it has none. Characters
 * a reader cannot see, or a terminal would obey, are written out (`\u{202e}`): a title is shown in
 * check runs, replies and the CLI as the committer wrote it, never as they meant it to look.
 */
export function commitTitle(message: string | undefined | null): string | undefined {
  if (typeof message !== "string") return undefined;
  const first = message
    .split(/\r\n|\r|\n/, 1)[0]!
    .replace(INVISIBLE, (c) => `\\u{${c.codePointAt(0)!.toString(16).padStart(4, "0")}}`)
    .trim();
  if (first === "") return undefined;
  const points = Array.from(first);
  return points.length <= MAX_TITLE_CHARS ? first : `${points.slice(0, MAX_TITLE_CHARS - 1).join("")}…`;
}
