// What the payment flow needs from a wallet: an address, and a signature on the buyer's transaction only.
import type algosdk from 'algosdk';

export type WalletKind = 'pera' | 'defly' | 'development';

export interface BuyerWallet {
  kind: WalletKind;
  label: string;
  address: string;
  /** Signs `txns[paymentIndex]` and nothing else (the fee payer's transaction stays unsigned); returns its bytes. */
  signPayment(txns: algosdk.Transaction[], paymentIndex: number): Promise<Uint8Array>;
  disconnect(): Promise<void>;
}

/**
 * Why a wallet did not sign, in the categories the page explains to people. `closed`: the person closed the
 * wallet's connection dialog (or window) before any account was shared; connecting again is the way on.
 */
export type WalletFailure = 'rejected' | 'closed' | 'wrong-network' | 'unavailable';

export class WalletError extends Error {
  constructor(
    readonly failure: WalletFailure,
    message: string,
  ) {
    super(message);
    this.name = 'WalletError';
  }
}
