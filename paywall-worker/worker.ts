// Cloudflare Workers entry: the same Hono app, configured from the Worker's environment, reading the paid files
// from an R2 bucket (binding PAID_FILES) or a KV namespace (binding PAID_KV). Built once per isolate.
import type { Hono } from 'hono';
import { createPaywallApp, errorResponse } from './app.ts';
import { createKvStorage, createR2Storage } from './storage-cloudflare.ts';
import type { KvNamespaceLike, R2BucketLike } from './storage-cloudflare.ts';

export interface WorkerEnv {
  EMI_PAYTO: string;
  EMI_FACILITATOR_URL: string;
  EMI_BASE_URL: string;
  EMI_NETWORK?: string;
  EMI_FACILITATOR_TIMEOUT_MS?: string;
  PAID_FILES?: R2BucketLike;
  PAID_KV?: KvNamespaceLike;
}

let app: Hono | null = null;

function build(env: WorkerEnv): Hono {
  const storage = env.PAID_FILES
    ? createR2Storage(env.PAID_FILES)
    : env.PAID_KV
      ? createKvStorage(env.PAID_KV)
      : null;
  if (!storage) throw new Error('no paid-file binding: configure PAID_FILES (R2) or PAID_KV (KV)');
  return createPaywallApp({
    payTo: env.EMI_PAYTO,
    facilitatorUrl: env.EMI_FACILITATOR_URL,
    baseUrl: env.EMI_BASE_URL,
    network: env.EMI_NETWORK,
    facilitatorTimeoutMs: env.EMI_FACILITATOR_TIMEOUT_MS ? Number(env.EMI_FACILITATOR_TIMEOUT_MS) : undefined,
    storage,
  });
}

export default {
  fetch(request: Request, env: WorkerEnv): Response | Promise<Response> {
    try {
      app ??= build(env);
    } catch (error) {
      // A misconfigured worker (e.g. an invalid payee) refuses every request rather than take payments.
      const message = error instanceof Error ? error.message : 'invalid configuration';
      return errorResponse(500, 'paywall_misconfigured', message);
    }
    return app.fetch(request);
  },
};
