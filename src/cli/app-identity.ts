// The identity of an app the CLI runs from a checkout (state/identity.ts): from `--app` when
// given, else the checkout's origin remote, else its absolute path. The name shown to people stays
// the `--app` name or the directory's name.
import { realpathSync } from "node:fs";
import { basename } from "node:path";
import { originUrl } from "../projects/checkout-name.ts";
import { localAppId } from "../state/identity.ts";

export interface CheckoutApp {
  /** What names the app's state, tracking and Leases in the cluster. */
  id: string;
  /** What people read: the `--app` name or the directory's name. */
  name: string;
  /** The name the app had before identities (its state is moved from it: identity-upgrade.ts). */
  legacy?: string;
}

/** `--app gh_<id>` addresses an installed repository's app by its GitHub id, as the app names it. */
const INSTALLED = /^gh_[0-9]+$/;

export function checkoutApp(repo: string, name?: string): CheckoutApp {
  if (name && INSTALLED.test(name)) return { id: name, name };
  let path = repo;
  try {
    path = realpathSync(repo);
  } catch {
    // the path as given
  }
  const remote = originUrl(repo) || undefined;
  return {
    id: localAppId({ name, remote, path }),
    name: name ?? basename(repo),
    legacy: name ?? basename(repo),
  };
}
