// The one piece of the Workers runtime API the entry module uses, typed here so that the project needs no
// Cloudflare type package: the Durable Object base class (RPC methods on a subclass are callable on its stub).
declare module 'cloudflare:workers' {
  import type { BookStorage } from './storage-payment-book.ts';
  import type { LedgerStorage } from '../publishers/credit-ledger-storage.ts';

  export abstract class DurableObject<Env = unknown> {
    protected readonly ctx: { storage: BookStorage & LedgerStorage };
    protected readonly env: Env;
    constructor(ctx: unknown, env: Env);
  }
}
