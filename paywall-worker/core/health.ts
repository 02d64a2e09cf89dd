// The worker's health check for operators and monitors: is every paid file for sale right now (present, valid,
// fresh, of a mode this worker sells), can the payee receive USDC (when it is checked), and does the facilitator
// answer? A publisher's path also says whether its seller sells (closed, out of credit), without turning the
// operator's health red. Never touches a payment.
import type { FacilitatorClient } from '@x402/core/server';
import type { SalePoint } from '../offers.ts';
import { classifyFacilitatorError, describeError } from '../facilitator-errors.ts';
import type { PaywallLogEntry, SaleHooks } from './decide.ts';
import type { PayeeGate } from './payee-gate.ts';
import { freshnessRefusal } from './paid-file.ts';
import type { FreshnessPolicy, PaidFileReader } from './paid-file.ts';

export interface FileHealth {
  path: string;
  /**
   * for_sale, or why not: missing, unreadable, invalid, data_not_live, data_stale; on a publisher's path also its
   * seller's refusal (seller_closed, not_available_from_seller) or seller_state_unknown when it could not be asked.
   */
  state: string;
  /** The publisher selling at this path; absent on the operator's own paths. */
  seller?: string;
  mode: string | null;
  generated_at: string | null;
  age_seconds: number | null;
}

export interface Health {
  /** The operator's own sales: a publisher's path that does not sell (closed, out of credit) leaves it true. */
  ok: boolean;
  checked_at: string;
  /** `detail`: why it does not answer, in a few fixed words (`facilitatorReason`); its own words go to the log. */
  facilitator: { answers: boolean; detail: string | null };
  /** The operator's payee: `checked` false when no algod is configured to ask (EMI_ALGOD_URL). */
  payee: { checked: boolean; problem: string | null };
  /**
   * Where a running worker re-reads its publishers' config file (emi serve / emi up): whether the file as it is now
   * is applied (a closure written to a file it refuses is not). Leaves `ok` as it is: the operator's sales go on.
   */
  publishers_config?: { applied: boolean; problem: string | null };
  files: FileHealth[];
}

export interface HealthDeps {
  points: readonly SalePoint[];
  /** The sellers' hooks: why a seller's point sells nothing new now, as the paywall answers before any payment. */
  hooks?: Pick<SaleHooks, 'unavailable'>;
  reader: PaidFileReader;
  freshness: FreshnessPolicy;
  /** The facilitator's state, as `facilitatorProbe` gives it (cached, logged on a change). */
  facilitator: () => Promise<Health['facilitator']>;
  payee?: PayeeGate;
  publishersConfigRefusal?: () => Promise<string | null>;
  now: () => number;
}

/**
 * Why the facilitator does not answer, in words that repeat nothing of it: its URL may carry credentials and its
 * error body anything (a key it was sent, its internals).
 */
export function facilitatorReason(error: unknown): string {
  const status = /\bfailed \((\d{3})\)/.exec(error instanceof Error ? error.message : '')?.[1];
  if (status) return `HTTP ${status}`;
  switch (classifyFacilitatorError(error).error) {
    case 'facilitator_timeout':
      return 'timed out';
    case 'facilitator_unreachable':
      return 'unreachable';
    case 'facilitator_bad_response':
      return 'not a valid x402 answer';
  }
}

/**
 * How long one answer of the facilitator's `/supported` stands for the health check (ms). Health is public and a
 * monitor or a crowd may poll it many times a second: without a cache each poll is a call to the facilitator (and,
 * while it is down, an error line). Ten seconds bounds that to six calls a minute per process whatever the polling
 * rate, and is well under the 30 s a 503 asks a client to wait, so an outage or a recovery shows within one retry.
 */
export const FACILITATOR_HEALTH_TTL_MS = 10_000;

type FacilitatorState = Health['facilitator'];

/**
 * The facilitator's state for the health check: one `/supported` call per FACILITATOR_HEALTH_TTL_MS (concurrent
 * checks share it), logged only when the state changes: `facilitator_unhealthy` (error, with its own words, which
 * the public answer never repeats) when it stops answering or answers otherwise, `facilitator_recovered` (info)
 * when it answers again. Per process (per isolate on a Worker).
 */
export function facilitatorProbe(
  facilitator: Pick<FacilitatorClient, 'getSupported'>,
  log: (entry: PaywallLogEntry) => void,
  now: () => number,
  ttlMs = FACILITATOR_HEALTH_TTL_MS,
): () => Promise<FacilitatorState> {
  let cached: { at: number; state: FacilitatorState } | null = null;
  let asking: Promise<FacilitatorState> | null = null;
  let last: FacilitatorState | null = null;

  const changed = (state: FacilitatorState, why: () => string): void => {
    const before = last;
    last = state;
    if (before && before.answers === state.answers && before.detail === state.detail) return;
    if (!state.answers) log({ level: 'error', event: 'facilitator_unhealthy', detail: why() });
    else if (before) log({ level: 'info', event: 'facilitator_recovered' });
  };

  async function ask(): Promise<FacilitatorState> {
    let state: FacilitatorState;
    try {
      const supported = await facilitator.getSupported();
      state = { answers: supported.kinds.length > 0, detail: null };
      changed(state, () => 'the facilitator supports no payment kind');
    } catch (error) {
      state = { answers: false, detail: facilitatorReason(error) };
      changed(state, () => describeError(error));
    }
    cached = { at: now(), state };
    return state;
  }

  return () => {
    if (cached && now() - cached.at < ttlMs) return Promise.resolve(cached.state);
    asking ??= ask().finally(() => {
      asking = null;
    });
    return asking;
  };
}

/** The seller's state of a path whose file is for sale: what a buyer would be told there before paying. */
async function sellerState(point: SalePoint, hooks: HealthDeps['hooks']): Promise<string> {
  try {
    return (await hooks?.unavailable(point))?.error ?? 'for_sale';
  } catch {
    return 'seller_state_unknown';
  }
}

async function fileHealth(point: SalePoint, deps: HealthDeps): Promise<FileHealth> {
  const seller = point.seller ? { seller: point.seller.id } : {};
  const loaded = await deps.reader.load(point.resource);
  if (!loaded.ok) {
    return {
      path: point.path,
      state: loaded.cause,
      ...seller,
      mode: null,
      generated_at: null,
      age_seconds: null,
    };
  }
  const { file } = loaded;
  // In the paywall's order: the file's own problem first, then the seller's.
  const refusal = freshnessRefusal(file, deps.freshness, deps.now())?.error;
  return {
    path: point.path,
    state: refusal ?? (point.seller ? await sellerState(point, deps.hooks) : 'for_sale'),
    ...seller,
    mode: file.mode,
    generated_at: file.generatedAt,
    age_seconds: Math.round((deps.now() - Date.parse(file.generatedAt)) / 1000),
  };
}

export async function checkHealth(deps: HealthDeps): Promise<Health> {
  const [files, facilitator, problem, refusal] = await Promise.all([
    Promise.all(deps.points.map((point) => fileHealth(point, deps))),
    deps.facilitator(),
    deps.payee?.problem() ?? null,
    deps.publishersConfigRefusal?.(),
  ]);
  return {
    // A publisher's paths sell the operator's files: a problem of a file shows on the operator's path as well.
    ok:
      facilitator.answers &&
      problem === null &&
      files.every((f) => f.seller !== undefined || f.state === 'for_sale'),
    checked_at: new Date(deps.now()).toISOString(),
    facilitator,
    payee: { checked: deps.payee !== undefined, problem },
    ...(refusal === undefined ? {} : { publishers_config: { applied: refusal === null, problem: refusal } }),
    files,
  };
}
