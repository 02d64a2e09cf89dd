// Pera and Defly through their connect SDKs (WalletConnect v1 bridges to the mobile apps). Both share one API, so
// one adapter serves both. The SDKs are created only when the person picks one: constructing them contacts the
// wallet vendors' servers, which the page should not do unasked.
import type algosdk from 'algosdk';
import { watchConnectDialog } from './connect-dialog.ts';
import type { BuyerWallet, WalletKind } from './types.ts';
import { WalletError } from './types.ts';

export interface SignerTransaction {
  txn: algosdk.Transaction;
  signers?: string[];
}

/** The part of PeraWalletConnect / DeflyWalletConnect this page uses. */
export interface ConnectSdk {
  connect(): Promise<string[]>;
  reconnectSession(): Promise<string[]>;
  disconnect(): Promise<void>;
  signTransaction(groups: SignerTransaction[][], signerAddress?: string): Promise<Uint8Array[]>;
  /** Pera only: arbitrary data signed with the "MX" prefix (Defly's SDK has no such call). */
  signData?(data: { data: Uint8Array; message: string }[], signer: string): Promise<Uint8Array[]>;
}

/** Algorand mainnet's chain id in the connect SDKs (416002 is testnet, 4160 "any"). */
const MAINNET_CHAIN_ID = 416001;

export const LABELS: Record<Exclude<WalletKind, 'development'>, string> = {
  pera: 'Pera Wallet',
  defly: 'Defly Wallet',
};

export async function createSdk(kind: 'pera' | 'defly'): Promise<ConnectSdk> {
  if (kind === 'pera') {
    const { PeraWalletConnect } = await import('@perawallet/connect');
    return new PeraWalletConnect({ chainId: MAINNET_CHAIN_ID }) as unknown as ConnectSdk;
  }
  const { DeflyWalletConnect } = await import('@blockshake/defly-connect');
  return new DeflyWalletConnect({ chainId: MAINNET_CHAIN_ID }) as unknown as ConnectSdk;
}

/** The connect dialog was closed before an account was shared (by the SDK, or by connect-dialog.ts for it). */
const dialogClosed = (walletLabel: string): WalletError =>
  new WalletError(
    'closed',
    `${walletLabel}: the connection dialog was closed before an account was shared. Nothing was signed; ` +
      'you can connect again.',
  );

/** Maps the SDKs' error types (`error.data.type`) and messages onto the page's plain categories. */
export function classifyWalletError(error: unknown, walletLabel: string): WalletError {
  const type = (error as { data?: { type?: string } } | null)?.data?.type ?? '';
  const message = error instanceof Error ? error.message : String(error);
  if (/NETWORK_MISMATCH/.test(type) || /network mismatch|wrong network|different network/i.test(message)) {
    return new WalletError(
      'wrong-network',
      `${walletLabel} is set to another network. Switch it to Algorand mainnet.`,
    );
  }
  // The connect dialog closed with its close button (CONNECT_MODAL_CLOSED), or the web wallet's window closed
  // (CONNECT_CANCELLED): nobody declined anything in a wallet, the connection simply did not happen.
  if (/MODAL_CLOSED|CONNECT_CANCELLED/.test(type) || /modal is closed/i.test(message)) {
    return dialogClosed(walletLabel);
  }
  if (/CANCEL/.test(type) || /reject|cancel|declin|denied/i.test(message)) {
    return new WalletError(
      'rejected',
      `${walletLabel}: the request was declined in the wallet. Nothing was signed.`,
    );
  }
  return new WalletError(
    'unavailable',
    `${walletLabel} could not be reached (${message}). Nothing was signed.`,
  );
}

export const connectSdkWallet = async (kind: 'pera' | 'defly'): Promise<BuyerWallet> =>
  walletFromSdk(kind, await createSdk(kind));

/** The account a connect SDK shares: the session's if one is open, else a new connection's. */
export async function connectAccount(kind: 'pera' | 'defly', sdk: ConnectSdk): Promise<string> {
  const label = LABELS[kind];
  let accounts: string[];
  // A dialog the SDK left open after its close button was pressed (offline) is closed by connect-dialog.ts; the
  // SDK's connect() then never settles, so the attempt ends here, as closed.
  let dismissed: (error: WalletError) => void = () => {};
  const dismissal = new Promise<never>((_, reject) => (dismissed = reject));
  // The SDK's dialog, usable from the keyboard while it is open (connect-dialog.ts); no DOM in the unit tests.
  const stopWatching =
    typeof document === 'undefined'
      ? () => {}
      : watchConnectDialog(kind, label, { onDismissed: () => dismissed(dialogClosed(label)) });
  const sessionOrConnect = async (): Promise<string[]> => {
    const session = await sdk.reconnectSession().catch(() => []);
    return session.length > 0 ? session : sdk.connect();
  };
  try {
    accounts = await Promise.race([sessionOrConnect(), dismissal]);
  } catch (error) {
    throw error instanceof WalletError ? error : classifyWalletError(error, label);
  } finally {
    stopWatching();
  }
  const address = accounts[0];
  if (!address) throw new WalletError('rejected', `${label} shared no account.`);
  return address;
}

/** Connects through an SDK instance (a fake one in tests) and wraps it as a BuyerWallet. */
export async function walletFromSdk(kind: 'pera' | 'defly', sdk: ConnectSdk): Promise<BuyerWallet> {
  const label = LABELS[kind];
  const address = await connectAccount(kind, sdk);
  return {
    kind,
    label,
    address,
    async signPayment(txns, paymentIndex) {
      // ARC-1 signers: [address] asks for the buyer's signature, [] leaves the fee payer's transaction unsigned.
      // Both SDKs also skip any transaction whose signers do not name `address` when it is passed.
      const group = txns.map((txn, i) => ({ txn, signers: i === paymentIndex ? [address] : [] }));
      let signed: Uint8Array[];
      try {
        signed = await sdk.signTransaction([group], address);
      } catch (error) {
        throw classifyWalletError(error, label);
      }
      // The SDKs return only the transactions they signed; accept a full-length answer too.
      const payment = signed.length === txns.length ? signed[paymentIndex] : signed[0];
      if (!payment) throw new WalletError('unavailable', `${label} returned no signed transaction.`);
      return payment;
    },
    disconnect: () => sdk.disconnect(),
  };
}
