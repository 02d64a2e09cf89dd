// The CreditLedger contract over a Durable Object namespace: one object per publisher (`credits-<id>`), which keeps
// that publisher's credits, holds and sales in its storage (StorageCreditLedger) and answers over RPC. A sale only
// ever touches its own publisher's object, so publishers never wait on each other. Importable in Node: the object
// class itself lives in the Workers entry module.
import { CreditError } from './credit-ledger.ts';
import type { CreditBalance, CreditLedger, GrantRecord, SaleRecord } from './credit-ledger.ts';
import type { StorageCreditLedger } from './credit-ledger-storage.ts';

/** `credit` as a result: an error thrown in a Durable Object reaches the caller as a plain Error. */
export type CreditOutcome = { ok: true; balance: CreditBalance } | { ok: false; error: string };

/** What the publisher's Durable Object answers over RPC. */
export interface CreditLedgerObject {
  balance(publisherId: string): Promise<CreditBalance>;
  reserve(publisherId: string, txid: string): Promise<boolean>;
  consume(sale: SaleRecord): Promise<void>;
  release(publisherId: string, txid: string): Promise<void>;
  credit(publisherId: string, amount: number, note?: string): Promise<CreditOutcome>;
  statement(publisherId: string, since?: string): Promise<SaleRecord[]>;
  grants(publisherId: string, since?: string): Promise<GrantRecord[]>;
}

export interface CreditLedgerNamespace {
  idFromName(name: string): unknown;
  get(id: unknown): CreditLedgerObject;
}

/** The object's side: the storage ledger's methods, with a refused credit returned rather than thrown. */
export const creditLedgerObject = (ledger: StorageCreditLedger): CreditLedgerObject => ({
  balance: (publisherId) => ledger.balance(publisherId),
  reserve: (publisherId, txid) => ledger.reserve(publisherId, txid),
  consume: (sale) => ledger.consume(sale),
  release: (publisherId, txid) => ledger.release(publisherId, txid),
  statement: (publisherId, since) => ledger.statement(publisherId, since),
  grants: (publisherId, since) => ledger.grants(publisherId, since),
  async credit(publisherId, amount, note) {
    try {
      return { ok: true, balance: await ledger.credit(publisherId, amount, note) };
    } catch (error) {
      if (error instanceof CreditError) return { ok: false, error: error.message };
      throw error;
    }
  },
});

/** The Worker's side. `publisherIds` are the configured publishers: a namespace cannot list its objects. */
export function durableCreditLedger(
  namespace: CreditLedgerNamespace,
  publisherIds: readonly string[],
): CreditLedger {
  const shard = (publisherId: string) => namespace.get(namespace.idFromName(`credits-${publisherId}`));
  return {
    balance: (publisherId) => shard(publisherId).balance(publisherId),
    reserve: (publisherId, txid) => shard(publisherId).reserve(publisherId, txid),
    consume: (sale) => shard(sale.publisherId).consume(sale),
    release: (publisherId, txid) => shard(publisherId).release(publisherId, txid),
    statement: (publisherId, since) => shard(publisherId).statement(publisherId, since),
    grants: (publisherId, since) => shard(publisherId).grants(publisherId, since),
    async credit(publisherId, amount, note) {
      const outcome = await shard(publisherId).credit(publisherId, amount, note);
      if (!outcome.ok) throw new CreditError(outcome.error);
      return outcome.balance;
    },
    list: () => Promise.all(publisherIds.map((id) => shard(id).balance(id))),
  };
}
