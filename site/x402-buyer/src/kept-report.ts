// The report a reader paid for stays with the tab: kept in sessionStorage, so a reload (or a mis-tap on back)
// shows it again instead of losing what was paid for. It ends with the tab; nothing is kept across sessions.
import type { ProofDetails } from './report.ts';

export const KEPT_REPORT_KEY = 'emi.x402-buyer.paid-report';

export interface KeptReport {
  reportUrl: string;
  proof: ProofDetails;
  report: unknown;
  rawText: string;
}

type SessionStore = Pick<Storage, 'getItem' | 'setItem'>;

export function keepReport(store: SessionStore, kept: KeptReport): void {
  try {
    store.setItem(KEPT_REPORT_KEY, JSON.stringify(kept));
  } catch {
    // Storage full or disabled: the report stays on screen, only a reload would lose it.
  }
}

/** The report kept for this URL in this tab, or null (none, another URL, or unreadable). */
export function keptReport(store: SessionStore, reportUrl: string): KeptReport | null {
  try {
    const raw = store.getItem(KEPT_REPORT_KEY);
    if (!raw) return null;
    const kept = JSON.parse(raw) as Partial<KeptReport>;
    const proof = kept.proof as Partial<ProofDetails> | undefined;
    if (kept.reportUrl !== reportUrl || typeof kept.rawText !== 'string' || typeof proof?.txId !== 'string')
      return null;
    return kept as KeptReport;
  } catch {
    return null;
  }
}
