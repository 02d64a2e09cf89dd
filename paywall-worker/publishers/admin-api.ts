// The operator's admin API of a worker, as its route (`admin-route.ts`) answers it and `emi publisher ... --worker`
// (`admin-client.ts`) calls it. Both want `Authorization: Bearer <EMI_ADMIN_TOKEN>`.
import type { CreditBalance, GrantRecord, SaleRecord } from './credit-ledger.ts';

/** POST: adds (or, negative, withdraws) credits; answers the new CreditBalance. */
export const adminCreditsPath = (publisherId: string): string => `/p/${publisherId}/admin/credits`;
/** GET, `?since=ISO` optional: answers a StatementAnswer. */
export const adminStatementPath = (publisherId: string): string => `/p/${publisherId}/admin/statement`;

/** The most credits one grant (or withdrawal) may move: the admin route's limit and `emi publisher credit`'s. */
export const MAX_CREDITS = 999_999_999;
/** The rule for a grant's N, as both say it. */
export const CREDITS_RULE = `a non-zero whole number of at most ${MAX_CREDITS}`;

/** The body of `POST .../admin/credits`. */
export interface CreditRequest {
  credits: number;
  note?: string;
}

export interface StatementAnswer {
  publisher: string;
  since: string | null;
  balance: CreditBalance;
  sales: SaleRecord[];
  /** Grants and withdrawals of credits, oldest first, `since` as the sales'. */
  grants: GrantRecord[];
}

/** What `emi publisher statement --worker` may get: a Worker deployed before grants were listed answers without. */
export type WorkerStatementAnswer = Omit<StatementAnswer, 'grants'> & { grants?: GrantRecord[] };
