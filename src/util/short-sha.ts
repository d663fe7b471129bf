/** A commit SHA as its 7-character short form, as git and GitHub print it. */
export const short = (sha: string): string => sha.slice(0, 7);
