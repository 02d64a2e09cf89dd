// `emi publisher credit|statement --worker URL`: the admin route of a deployed worker (the Cloudflare Worker), with
// the operator token from EMI_ADMIN_TOKEN. What the worker answers is printed as the local commands print it.
import { usageError } from '../../generator/cli-options.ts';
import { adminCreditsPath, adminStatementPath } from './admin-api.ts';
import type { CreditRequest, WorkerStatementAnswer } from './admin-api.ts';
import type { CreditBalance } from './credit-ledger.ts';

export interface WorkerAdmin {
  /** The worker's origin, e.g. https://emi.example.org. */
  url: string;
  token: string;
  fetch?: typeof fetch;
}

/**
 * `--worker URL`: the Worker's origin, http(s) (a path is dropped: the admin route is at the origin's `/p/`). A usage
 * error names the option.
 */
export function parseWorkerUrl(value: string): string {
  const url = URL.canParse(value) ? new URL(value) : null;
  if (!url || !['https:', 'http:'].includes(url.protocol) || url.username || url.password) {
    throw usageError(`--worker wants a deployed Worker's origin, such as https://emi.example.org: ${value}`);
  }
  return url.origin;
}

/** The token of the environment; the commands refuse (usage, exit 2) to run without one rather than ask anonymously. */
export function adminTokenFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const token = env.EMI_ADMIN_TOKEN;
  if (!token) {
    throw usageError(
      "--worker needs the operator token: set EMI_ADMIN_TOKEN to the value of the Worker's EMI_ADMIN_TOKEN secret",
    );
  }
  return token;
}

/** What a 404 from the admin route means: an id the Worker does not configure, or no admin route at this URL. */
function notFound(url: URL, body: { error?: string; message?: string } | null): Error {
  if (body?.error === 'unknown_publisher') {
    return usageError(`${url.origin}: ${body.message ?? 'no such publisher'}; nothing was changed`);
  }
  return new Error(
    `${url.origin} answered 404 to ${url.pathname}: the admin route exists only on a Cloudflare Worker with ` +
      'publishers (EMI_PUBLISHERS) and the EMI_ADMIN_TOKEN secret set (wrangler secret put EMI_ADMIN_TOKEN); ' +
      'emi serve and emi up have none: run the command without --worker where their state folder is',
  );
}

async function call<T>(admin: WorkerAdmin, path: string, init: RequestInit = {}): Promise<T> {
  const url = new URL(path, admin.url.replace(/\/*$/, '/'));
  const response = await (admin.fetch ?? fetch)(url, {
    ...init,
    headers: { ...init.headers, Authorization: `Bearer ${admin.token}` },
    signal: AbortSignal.timeout(30_000),
  }).catch((error: unknown) => {
    const cause = (error as { cause?: { message?: string } }).cause?.message ?? (error as Error).message;
    throw new Error(`cannot reach ${url.origin}: ${cause}`);
  });
  const body = (await response.json().catch(() => null)) as { error?: string; message?: string } | null;
  if (response.status === 404) throw notFound(url, body);
  // A grant to a publisher the Worker no longer lists is the operator's mistake, as the local command says it.
  if (response.status === 409 && body?.error === 'publisher_removed') {
    throw usageError(`${url.origin}: ${body.message ?? 'publisher removed'}; nothing was changed`);
  }
  if (!response.ok) {
    throw new Error(`${url.origin} answered ${response.status}: ${body?.message ?? response.statusText}`);
  }
  return body as T;
}

export const creditThroughWorker = (
  admin: WorkerAdmin,
  publisherId: string,
  request: CreditRequest,
): Promise<CreditBalance> =>
  call(admin, adminCreditsPath(publisherId), {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(request),
  });

export const statementThroughWorker = (
  admin: WorkerAdmin,
  publisherId: string,
  since?: string,
): Promise<WorkerStatementAnswer> =>
  call(admin, `${adminStatementPath(publisherId)}${since ? `?since=${encodeURIComponent(since)}` : ''}`);

/** Says (one line) that a Worker answered a statement without grants: it runs a release from before they were listed. */
export const noGrantsLine = (url: string): string =>
  `${new URL(url).origin} lists no grants: it runs an older release (deploy this release to see them)`;
