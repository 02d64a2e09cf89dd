// The development facilitator's `FacilitatorAvmSigner`: a fee-payer key made at run time, and the in-memory ledger
// standing in for algod (simulate, submit, wait). The official @x402/avm facilitator scheme runs on top unchanged.
import algosdk from 'algosdk';
import type { FacilitatorAvmSigner } from '@x402/avm';
import type { InMemoryAlgorandLedger } from './ledger.ts';

type SimulateResponse = Awaited<ReturnType<FacilitatorAvmSigner['simulateTransactions']>>;
type PendingTransactionResponse = Awaited<ReturnType<FacilitatorAvmSigner['waitForConfirmation']>>;

export function createLedgerSigner(ledger: InMemoryAlgorandLedger): {
  signer: FacilitatorAvmSigner;
  feePayer: string;
} {
  const account = algosdk.generateAccount(); // never persisted: a new fee payer every start
  const feePayer = account.addr.toString();
  ledger.fund(feePayer, 0n, 1_000_000_000n);

  const signer: FacilitatorAvmSigner = {
    getAddresses: () => [feePayer],

    async signTransaction(txnBytes, senderAddress) {
      const txn = algosdk.decodeUnsignedTransaction(txnBytes);
      if (senderAddress !== feePayer || txn.sender.toString() !== feePayer) {
        throw new Error('the development facilitator only signs for its own fee payer');
      }
      return txn.signTxn(account.sk);
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
