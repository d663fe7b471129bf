// "Did you mean ...?" suggestions for misspelt names: config fields, environment names,
// sync options, PR commands. Pure and dependency-free so that every layer can reuse it.

/**
 * The candidate closest to `input`, or undefined when none is close enough to be a useful hint.
 * Matching is case-insensitive; a candidate that differs only in case always wins. Otherwise the
 * candidate with the smallest edit distance (insertions, deletions, substitutions and swaps of two
 * neighbouring characters) wins if that distance is small for the length of the input (at most a
 * third of it, and at least 1), or if the input is a prefix of exactly one candidate.
 */
export function didYouMean(input: string, candidates: Iterable<string>): string | undefined {
  const needle = input.toLowerCase();
  if (needle.length === 0) return undefined;
  const list = [...new Set(candidates)].filter((c) => c !== input);
  const sameButCase = list.find((c) => c.toLowerCase() === needle);
  if (sameButCase !== undefined) return sameButCase;

  const limit = Math.max(1, Math.floor(needle.length / 3));
  let best: string | undefined;
  let bestDistance = Number.POSITIVE_INFINITY;
  for (const candidate of list) {
    const distance = editDistance(needle, candidate.toLowerCase(), limit);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  if (best !== undefined && bestDistance <= limit) return best;

  const prefixed = list.filter((c) => needle.length >= 2 && c.toLowerCase().startsWith(needle));
  return prefixed.length === 1 ? prefixed[0] : undefined;
}

/** ` (did you mean "x"?)` or "", ready to append to a message. */
export function didYouMeanHint(input: string, candidates: Iterable<string>): string {
  const suggestion = didYouMean(input, candidates);
  return suggestion === undefined ? "" : ` (did you mean ${JSON.stringify(suggestion)}?)`;
}

/**
 * Optimal string alignment distance (Levenshtein plus adjacent transpositions). Returns
 * `limit + 1` as soon as the distance is known to exceed `limit`.
 */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let beforePrevious: number[] = [];
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        value = Math.min(value, beforePrevious[j - 2]! + 1);
      }
      current.push(value);
      rowMin = Math.min(rowMin, value);
    }
    if (rowMin > limit) return limit + 1;
    beforePrevious = previous;
    previous = current;
  }
  return previous[b.length]!;
}
