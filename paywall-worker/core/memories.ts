// The two things the core remembers between requests besides the payment book, both per process and both bounded
// by what anyone can send: the facilitator's recent verdicts (so that a refused payment sent again in a loop is not
// one settle call per try) and why each path last could not sell (so that a path that stops or starts selling is
// logged once at each change, not once per request).
import type { SettleResponse } from '@x402/core/types';
import type { SalePoint } from '../offers.ts';
import type { PaywallLogEntry } from './decision.ts';
import { REFUSAL_MEMORY_MS } from './verdict.ts';

/** Bound on the refusals remembered (oldest forgotten first): a forgotten one is only asked about again. */
export const MAX_REFUSALS = 10_000;

export interface RefusalMemory {
  remember(presentation: string, settlement: SettleResponse): void;
  /** The verdict given on this presentation within REFUSAL_MEMORY_MS, else null. */
  known(presentation: string): SettleResponse | null;
}

/** The facilitator's recent verdicts, by presentation (the signed bytes and the id): answered again from here. */
export function createRefusalMemory(clock: { now(): number }): RefusalMemory {
  const refusals = new Map<string, { at: number; settlement: SettleResponse }>();
  return {
    remember(presentation, settlement) {
      refusals.delete(presentation);
      refusals.set(presentation, { at: clock.now(), settlement });
      if (refusals.size > MAX_REFUSALS) refusals.delete(refusals.keys().next().value as string);
    },
    known(presentation) {
      const known = refusals.get(presentation);
      if (!known) return null;
      if (clock.now() - known.at < REFUSAL_MEMORY_MS) return known.settlement;
      refusals.delete(presentation);
      return null;
    },
  };
}

/** The level and event that say a path stopped selling, by the refusal's code. */
const STOPPED_SELLING: Readonly<Record<string, readonly ['warn' | 'error', string]>> = {
  data_stale: ['warn', 'sales_stopped_stale'],
  data_not_live: ['warn', 'sales_stopped_not_live'],
  paid_resource_unavailable: ['error', 'paid_file_unavailable'],
  payee_not_opted_in: ['error', 'payee_not_opted_in'],
};

export interface SaleStates {
  /**
   * A path that stops selling (its file missing, its data stale or not live, the payee not opted in) or sells again
   * is logged once at each change, not once per request: anyone can send the requests.
   */
  note(point: SalePoint, refusal: { error: string; message: string } | null): void;
  /** The path was last seen unable to sell. */
  stopped(path: string): boolean;
}

export function createSaleStates(log: (entry: PaywallLogEntry) => void): SaleStates {
  // Why each path last could not sell (its refusal's code), or null when it last could.
  const saleStates = new Map<string, string | null>();
  return {
    note(point, refusal) {
      const state = refusal?.error ?? null;
      const before = saleStates.get(point.path);
      if (before === state) return;
      saleStates.set(point.path, state);
      if (refusal) {
        const [level, event] = STOPPED_SELLING[refusal.error] ?? ['warn', 'sales_stopped'];
        log({ level, event, path: point.path, detail: refusal.message });
      } else if (before) {
        log({ level: 'info', event: 'sales_resumed', path: point.path });
      }
    },
    stopped: (path) => Boolean(saleStates.get(path)),
  };
}
