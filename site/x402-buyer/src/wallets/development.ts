// The development wallet: a key made in this page for the local stack's in-memory ledger, funded through the
// development facilitator's /dev/fund. It holds test money only, lives as long as the tab, and is offered only when
// config.json says facilitatorMode "development" and both the page and the faucet are on this machine (loopback).
import type { BuyerWallet } from './types.ts';
import { WalletError } from './types.ts';

/** 1 test USDC at creation: ten reports at the base price (a dearer storefront is topped up as it signs). */
const FUND_ATOMIC = 1_000_000n;
const LOOPBACK = new Set(['127.0.0.1', 'localhost', '[::1]']);

export const isLoopbackUrl = (url: string): boolean => {
  try {
    return LOOPBACK.has(new URL(url).hostname);
  } catch {
    return false;
  }
};

export function developmentWalletAllowed(
  config: { facilitatorMode: string; devFundUrl?: string },
  pageUrl: string,
): boolean {
  return (
    config.facilitatorMode === 'development' &&
    config.devFundUrl !== undefined &&
    isLoopbackUrl(pageUrl) &&
    isLoopbackUrl(config.devFundUrl)
  );
}

/** Asks the development faucet for `amount` test USDC (atomic units) for `address`. */
async function fundFromFaucet(devFundUrl: string, address: string, amount: bigint): Promise<void> {
  let response: Response;
  try {
    response = await fetch(devFundUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ address, amount: amount.toString() }),
    });
  } catch {
    throw new WalletError(
      'unavailable',
      'The development faucet could not be reached; is the local stack running?',
    );
  }
  if (!response.ok) {
    throw new WalletError(
      'unavailable',
      `The development faucet refused to fund the wallet (HTTP ${response.status}).`,
    );
  }
}

export async function createDevelopmentWallet(devFundUrl: string): Promise<BuyerWallet> {
  // algosdk on demand: the page's first load stays without it (it comes with the first wallet chosen).
  const { generateAccount } = await import('algosdk');
  const account = generateAccount(); // never stored: gone when the tab closes
  const address = account.addr.toString();
  await fundFromFaucet(devFundUrl, address, FUND_ATOMIC);
  // Test USDC not yet promised to a signed transfer: a lower bound of the balance (a transfer signed but never
  // settled still counts as spent), so the wallet is never short when it signs.
  let unspent = FUND_ATOMIC;
  return {
    kind: 'development',
    label: 'Development wallet (test money, local ledger only)',
    address,
    async signPayment(txns, paymentIndex) {
      const txn = txns[paymentIndex];
      if (!txn) throw new WalletError('unavailable', 'There is no transaction to sign.');
      // A storefront may sell above what the wallet was given: it asks the faucet for the difference first,
      // exactly the checked price this transfer pays (test money only; the faucet allows up to 1000 USDC).
      const amount = txn.assetTransfer?.amount ?? 0n;
      if (amount > unspent) {
        await fundFromFaucet(devFundUrl, address, amount - unspent);
        unspent = amount;
      }
      unspent -= amount;
      return txn.signTxn(account.sk);
    },
    async disconnect() {
      account.sk.fill(0);
    },
  };
}
