// The development facilitator's `FacilitatorAvmSigner`: a fee-payer key made at run time, and the in-memory ledger
// standing in for algod (simulate, submit, wait). The official @x402/avm facilitator scheme runs on top unchanged.
// The fee payer signs with Node's native ed25519: ed25519 signatures are deterministic, so the bytes are those
// algosdk's JavaScript signer (tweetnacl) would make, at a small fraction of the CPU; the official scheme asks for
// the same signature three times per paid request (verify, and settle's own verify and submit), so the last few
// signatures are kept.
import { createPrivateKey, sign } from 'node:crypto';
import algosdk from 'algosdk';
import type { FacilitatorAvmSigner } from '@x402/avm';
import type { InMemoryAlgorandLedger } from './ledger.ts';

type SimulateResponse = Awaited<ReturnType<FacilitatorAvmSigner['simulateTransactions']>>;
type PendingTransactionResponse = Awaited<ReturnType<FacilitatorAvmSigner['waitForConfirmation']>>;

/** Signed fee-payer transactions kept (a sale asks for its one three times within a few milliseconds). */
const MAX_KEPT_SIGNATURES = 256;

/** `account` is for tests; by default a fee payer made here, never persisted: a new one every start. */
export function createLedgerSigner(
  ledger: InMemoryAlgorandLedger,
  account: algosdk.Account = algosdk.generateAccount(),
): {
  signer: FacilitatorAvmSigner;
  feePayer: string;
} {
  const feePayer = account.addr.toString();
  // algosdk's 64-byte secret key is the 32-byte seed followed by the 32-byte public key.
  const privateKey = createPrivateKey({
    key: {
      kty: 'OKP',
      crv: 'Ed25519',
      d: Buffer.from(account.sk.subarray(0, 32)).toString('base64url'),
      x: Buffer.from(account.addr.publicKey).toString('base64url'),
    },
    format: 'jwk',
  });
  const signed = new Map<string, Uint8Array>(); // base64 unsigned bytes -> signed bytes
  ledger.fund(feePayer, 0n, 1_000_000_000n);

  const signer: FacilitatorAvmSigner = {
    getAddresses: () => [feePayer],

    async signTransaction(txnBytes, senderAddress) {
      if (senderAddress !== feePayer) {
        throw new Error('the development facilitator only signs for its own fee payer');
      }
      const id = Buffer.from(txnBytes).toString('base64');
      const known = signed.get(id);
      if (known) return known.slice();
      const txn = algosdk.decodeUnsignedTransaction(txnBytes);
      if (txn.sender.toString() !== feePayer) {
        throw new Error('the development facilitator only signs for its own fee payer');
      }
      const stxn = txn.attachSignature(account.addr, sign(null, txn.bytesToSign(), privateKey));
      if (signed.size >= MAX_KEPT_SIGNATURES) signed.clear();
      signed.set(id, stxn.slice());
      return stxn;
    },

    getAlgodClient() {
      throw new Error('the development facilitator has no algod client: it runs on an in-memory ledger');
    },

    async simulateTransactions(txns) {
      const failureMessage = ledger.check(txns);
      // Only `txnGroups[0].failureMessage` is read by the scheme; the rest of algod's answer is not needed.
      return { txnGroups: [failureMessage ? { failureMessage } : {}] } as unknown as SimulateResponse;
    },

    async sendTransactions(signedTxns) {
      const txids = ledger.submit(signedTxns); // throws LedgerRejection: the scheme reports a settlement failure
      return txids[0] as string;
    },

    async waitForConfirmation(txId) {
      const confirmedRound = ledger.confirmedRound(txId);
      if (confirmedRound === undefined) throw new Error(`transaction ${txId} is not confirmed`);
      return { confirmedRound, poolError: '' } as unknown as PendingTransactionResponse;
    },
  };
  return { signer, feePayer };
}
