// The development wallet: a key made in this page for the local stack's in-memory ledger, funded through the
// development facilitator's /dev/fund. It holds test money only, lives as long as the tab, and is offered only when
// config.json says facilitatorMode "development" and both the page and the faucet are on this machine (loopback).
import type { BuyerWallet } from './types.ts';
import { WalletError } from './types.ts';

/** 1 test USDC: enough for ten reports. */
const FUND_ATOMIC = '1000000';
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

export async function createDevelopmentWallet(devFundUrl: string): Promise<BuyerWallet> {
  // algosdk on demand: the page's first load stays without it (it comes with the first wallet chosen).
  const { generateAccount } = await import('algosdk');
  const account = generateAccount(); // never stored: gone when the tab closes
  const address = account.addr.toString();
  let response: Response;
  try {
    response = await fetch(devFundUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ address, amount: FUND_ATOMIC }),
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
  return {
    kind: 'development',
    label: 'Development wallet (test money, local ledger only)',
    address,
    async signPayment(txns, paymentIndex) {
      const txn = txns[paymentIndex];
      if (!txn) throw new WalletError('unavailable', 'There is no transaction to sign.');
      return txn.signTxn(account.sk);
    },
    async disconnect() {
      account.sk.fill(0);
    },
  };
}
