// The source layer's public face: fetch a tree at an exact revision, render its manifests.

export { formatProblem, SourceError, type SourceProblem } from "./errors.ts";
export { changedFiles, checkoutTree, headOf, resolveRevision } from "./git.ts";
export { fetchGitHubTree, type GitHubRevision, type TarballClient } from "./github-tarball.ts";
export { type RenderedSource, type RenderOptions, render } from "./render.ts";
