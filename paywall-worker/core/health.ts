// The worker's health check for operators and monitors: is every paid file for sale right now (present, valid,
// fresh, of a mode this worker sells), can the payee receive USDC (when it is checked), and does the facilitator
// answer? Never touches a payment.
import type { FacilitatorClient } from '@x402/core/server';
import type { SalePoint } from '../offers.ts';
import type { PayeeGate } from './payee-gate.ts';
import { freshnessRefusal } from './paid-file.ts';
import type { FreshnessPolicy, PaidFileReader } from './paid-file.ts';

export interface FileHealth {
  path: string;
  /** for_sale, or why not: missing, unreadable, invalid, data_not_live, data_stale. */
  state: string;
  mode: string | null;
  generated_at: string | null;
  age_seconds: number | null;
}

export interface Health {
  ok: boolean;
  checked_at: string;
  facilitator: { answers: boolean; detail: string | null };
  /** The operator's payee: `checked` false when no algod is configured to ask (EMI_ALGOD_URL). */
  payee: { checked: boolean; problem: string | null };
  files: FileHealth[];
}

export interface HealthDeps {
  points: readonly SalePoint[];
  reader: PaidFileReader;
  freshness: FreshnessPolicy;
  facilitator: FacilitatorClient;
  payee?: PayeeGate;
  now: () => number;
}

async function fileHealth(point: SalePoint, deps: HealthDeps): Promise<FileHealth> {
  const loaded = await deps.reader.load(point.resource);
  if (!loaded.ok)
    return { path: point.path, state: loaded.cause, mode: null, generated_at: null, age_seconds: null };
  const { file } = loaded;
  return {
    path: point.path,
    state: freshnessRefusal(file, deps.freshness, deps.now())?.error ?? 'for_sale',
    mode: file.mode,
    generated_at: file.generatedAt,
    age_seconds: Math.round((deps.now() - Date.parse(file.generatedAt)) / 1000),
  };
}

export async function checkHealth(deps: HealthDeps): Promise<Health> {
  const [files, facilitator, problem] = await Promise.all([
    Promise.all(deps.points.map((point) => fileHealth(point, deps))),
    deps.facilitator.getSupported().then(
      (supported) => ({ answers: supported.kinds.length > 0, detail: null }),
      (error: unknown) => ({
        answers: false,
        detail: error instanceof Error ? error.message : String(error),
      }),
    ),
    deps.payee?.problem() ?? null,
  ]);
  return {
    ok: facilitator.answers && problem === null && files.every((f) => f.state === 'for_sale'),
    checked_at: new Date(deps.now()).toISOString(),
    facilitator,
    payee: { checked: deps.payee !== undefined, problem },
    files,
  };
}
