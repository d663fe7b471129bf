// A failure in a comment command's path, told as what it means for the person who asked and what
// they can do: GitHub's and the API server's status codes are the cause, never the whole message.
// Pure: the reply is built from the error alone (its status, GitHub's request, the API server's
// method and path).
import { describeForbidden, KubeApiError, KubeConnectionError } from "../kube/errors.ts";
import { causes, gitHubWaitMs, isRateLimited, statusOf } from "./github-errors.ts";
import { codeSpan } from "./markdown.ts";

export interface Explained {
  /** What happened, for the reader: a sentence or two, the cause quoted. */
  what: string;
  /** What they can do now (the reply's Next line). */
  next: string;
}

interface GitHubRequestError {
  status: number;
  message?: string;
  request?: { method?: string; url?: string };
}

/** The thing a GitHub request was about, in words: `the comparison of 1a2b3c4 with 5d6e7f8`. */
export function whatWasAsked(url: string | undefined): string {
  const path = (url ?? "").replace(/^https?:\/\/[^/]+/, "").replace(/\?.*$/, "");
  const short = (sha: string) => (/^[0-9a-f]{40}$/.test(sha) ? sha.slice(0, 7) : sha);
  const compare = /\/compare\/([^/.]+)\.{2,3}([^/]+)$/.exec(path);
  if (compare) return `the commits from ${short(compare[1] ?? "")} to ${short(compare[2] ?? "")}`;
  const commit = /\/commits\/([0-9a-f]{7,40})(?:\/.*)?$/.exec(path);
  if (commit) return `commit ${short(commit[1] ?? "")}`;
  const pull = /\/pulls\/(\d+)/.exec(path);
  if (pull) return `pull request #${pull[1]}`;
  const contents = /\/contents\/(.+)$/.exec(path);
  if (contents) return `the file ${decodeURIComponent(contents[1] ?? "")}`;
  const team = /\/orgs\/([^/]+)\/teams\/([^/]+)/.exec(path);
  if (team) return `team ${team[1]}/${team[2]}`;
  return path === "" ? "what it asked for" : codeSpan(path, 120);
}

function fromGitHub(err: GitHubRequestError): Explained {
  const asked = whatWasAsked(err.request?.url);
  const said = err.message
    ? ` (GitHub said ${codeSpan(`${err.message}`, 160)}, ${err.status})`
    : ` (${err.status})`;
  if (isRateLimited(err)) {
    const minutes = Math.max(1, Math.ceil((gitHubWaitMs(err) ?? 60_000) / 60_000));
    return {
      what: `GitHub's rate limit for syncward is spent for now, so it could not read ${asked}. Nothing was changed.`,
      next: `comment the command again in ${minutes} minute${minutes === 1 ? "" : "s"}.`,
    };
  }
  if (err.status >= 500 || err.status === 408)
    return {
      what: `GitHub did not answer when syncward asked for ${asked}${said}: an outage on GitHub's side. Nothing was changed.`,
      next: "comment the command again in a few minutes (https://www.githubstatus.com shows GitHub's state).",
    };
  if (err.status === 401)
    return {
      what: `GitHub refused syncward's credentials when it asked for ${asked}${said}. Nothing was changed.`,
      next: "an administrator of syncward checks its GitHub App's private key and that the app is still installed.",
    };
  if (err.status === 403)
    return {
      what: `GitHub does not let syncward's GitHub App read ${asked}${said}: the installation lacks a permission. Nothing was changed.`,
      next: "an owner accepts the permissions syncward's GitHub App asks for (the installation's settings), then comment the command again.",
    };
  if (err.status === 404)
    return {
      what: `GitHub does not know ${asked}, or does not show it to syncward${said}: it was deleted, renamed or rewritten, or the app cannot see it. Nothing was changed.`,
      next: `check that ${asked} still exists; if it does, an owner checks that syncward's GitHub App is installed on this repository.`,
    };
  return {
    what: `GitHub refused syncward's request for ${asked}${said}. Nothing was changed.`,
    next: "comment the command again; if the same answer comes back, an administrator looks at syncward's log.",
  };
}

function fromCluster(err: KubeApiError): Explained {
  const asked = codeSpan(`${err.method} ${err.path}`, 160);
  const forbidden = describeForbidden(err);
  if (forbidden)
    return {
      what: `The cluster refused syncward: ${codeSpan(forbidden, 300)}. Nothing more was done.`,
      next: "an operator grants syncward's service account that permission, then comment the command again.",
    };
  if (err.transient)
    return {
      what: `The cluster's API server did not handle ${asked} (${err.status} ${err.reason}): it is overloaded or restarting. Nothing more was done.`,
      next: "comment the command again in a few minutes.",
    };
  if (err.status === 409)
    return {
      what: `Someone else changed ${asked} at the same moment (409 Conflict). Nothing more was done.`,
      next: "comment the command again.",
    };
  return {
    what: `The cluster's API server refused ${asked}: ${codeSpan(err.message, 300)} (${err.status}). Nothing more was done.`,
    next: "fix what the API server names (in the manifests or the cluster), then comment the command again.",
  };
}

/** `err`, from the command `/name`, as what it means and what to do. */
export function explainFailure(err: unknown, command: string): Explained {
  const chain = causes(err);
  const kube = chain.find((e) => e instanceof KubeApiError);
  if (kube) return prefixed(command, fromCluster(kube));
  const unreachable = chain.find((e) => e instanceof KubeConnectionError);
  if (unreachable)
    return prefixed(command, {
      what: `syncward could not reach the cluster's API server (${codeSpan(unreachable.message, 200)}). Nothing was changed.`,
      next: "comment the command again in a few minutes; if it keeps failing, an operator checks syncward's connection to the cluster.",
    });
  const github = chain.find((e) => statusOf(e) !== undefined) as GitHubRequestError | undefined;
  if (github) return prefixed(command, fromGitHub(github));
  const message = err instanceof Error ? err.message : String(err);
  return prefixed(command, {
    what: `syncward failed inside (${codeSpan(message, 200)}). Nothing more was done.`,
    next: 'comment the command again; if it fails the same way, an administrator looks at syncward\'s log ("a comment command failed").',
  });
}

function prefixed(command: string, e: Explained): Explained {
  return { what: `${codeSpan(command, 60)} did not run to the end: ${e.what}`, next: e.next };
}
