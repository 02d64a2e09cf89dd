// `emi publisher credit|statement --worker URL`: the admin route of a deployed worker (the Cloudflare Worker), with
// the operator token from EMI_ADMIN_TOKEN. What the worker answers is printed as the local commands print it.
import { adminCreditsPath, adminStatementPath } from './admin-api.ts';
import type { CreditRequest, StatementAnswer } from './admin-api.ts';
import type { CreditBalance } from './credit-ledger.ts';

export interface WorkerAdmin {
  /** The worker's origin, e.g. https://emi.example.org. */
  url: string;
  token: string;
  fetch?: typeof fetch;
}

/** The token of the environment; the commands refuse to run without one rather than ask anonymously. */
export function adminTokenFromEnv(env: NodeJS.ProcessEnv = process.env): string {
  const token = env.EMI_ADMIN_TOKEN;
  if (!token) throw new Error('--worker needs the operator token in EMI_ADMIN_TOKEN (the Worker secret)');
  return token;
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
  const body = (await response.json().catch(() => null)) as { message?: string } | null;
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
): Promise<StatementAnswer> =>
  call(admin, `${adminStatementPath(publisherId)}${since ? `?since=${encodeURIComponent(since)}` : ''}`);
