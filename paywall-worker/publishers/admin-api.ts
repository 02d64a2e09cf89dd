// The operator's admin API of a worker, as its route (`admin-route.ts`) answers it and `emi publisher ... --worker`
// (`admin-client.ts`) calls it. Both want `Authorization: Bearer <EMI_ADMIN_TOKEN>`.
import type { CreditBalance, SaleRecord } from './credit-ledger.ts';

/** POST: adds (or, negative, withdraws) credits; answers the new CreditBalance. */
export const adminCreditsPath = (publisherId: string): string => `/p/${publisherId}/admin/credits`;
/** GET, `?since=ISO` optional: answers a StatementAnswer. */
export const adminStatementPath = (publisherId: string): string => `/p/${publisherId}/admin/statement`;

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
}
