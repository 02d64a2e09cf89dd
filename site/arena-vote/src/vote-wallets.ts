// Wallets that sign an arena vote, in the two forms POST /arena/vote accepts (paywall-worker/arena-vote/verify.ts):
//  - Pera signs the vote text as arbitrary data ("MX" prefix, the check Pera's own SDK makes in verifySignature);
//  - Defly cannot sign data, so it signs a zero-amount payment to the voter's own account carrying the text as
//    its note, valid only in rounds long past: it can never be confirmed and never costs a fee;
//  - on the local stack, a throwaway key made in this tab signs like Pera, so the page can be tried end to end.
import algosdk from 'algosdk';
import {
  classifyWalletError,
  connectAccount,
  createSdk,
  LABELS,
  type ConnectSdk,
} from '../../x402-buyer/src/wallets/connect-sdk.ts';
import { WalletError } from '../../x402-buyer/src/wallets/types.ts';

export type VoteBody =
  | { form: 'data'; address: string; message: string; signature: string }
  | { form: 'transaction'; signed_transaction: string };

export type VoteWalletKind = 'pera' | 'defly' | 'local-key';

export interface VoteWallet {
  kind: VoteWalletKind;
  label: string;
  address: string;
  /** Asks the wallet to sign the vote text; resolves to the body POST /arena/vote takes. */
  signVote(message: string): Promise<VoteBody>;
  disconnect(): Promise<void>;
}

/** Round numbers of the self-payment: the vote endpoint refuses a window ending after round 1000. */
export const UNCONFIRMABLE_WINDOW = { firstValid: 1, lastValid: 1000 } as const;
const MAINNET = {
  genesisID: 'mainnet-v1.0',
  genesisHash: algosdk.base64ToBytes('wGHE2Pwdvd7S12BL5FaOP20EGYesN73ktiC1qzkkit8='),
};
/** What the wallet shows beside the data it is asked to sign. */
const SIGN_REASON = 'Sign your emi arena vote (no transaction is sent, nothing is paid)';

const encode = (text: string) => new TextEncoder().encode(text);
const base64 = (bytes: Uint8Array) => algosdk.bytesToBase64(bytes);

/** The zero-amount, never-confirmable payment to oneself that carries the vote text in its note. */
export function voteTransaction(address: string, message: string): algosdk.Transaction {
  return algosdk.makePaymentTxnWithSuggestedParamsFromObject({
    sender: address,
    receiver: address,
    amount: 0,
    note: encode(message),
    suggestedParams: { fee: 0, minFee: 1000, flatFee: true, ...UNCONFIRMABLE_WINDOW, ...MAINNET },
  });
}

/** Asks the wallet to sign; its refusals become the page's plain WalletErrors. */
async function firstSigned(label: string, ask: () => Promise<Uint8Array[]>): Promise<Uint8Array> {
  let signed: Uint8Array[];
  try {
    signed = await ask();
  } catch (error) {
    throw classifyWalletError(error, label);
  }
  if (!signed[0]) throw new WalletError('unavailable', `${label} returned nothing signed.`);
  return signed[0];
}

/** Pera: the vote text signed as arbitrary data. */
export async function peraVoteWallet(sdk: ConnectSdk): Promise<VoteWallet> {
  const label = LABELS.pera;
  const address = await connectAccount('pera', sdk);
  return {
    kind: 'pera',
    label,
    address,
    async signVote(message) {
      const { signData } = sdk;
      if (!signData) throw new WalletError('unavailable', `${label} cannot sign data in this version.`);
      const signature = await firstSigned(label, () =>
        signData.call(sdk, [{ data: encode(message), message: SIGN_REASON }], address),
      );
      return { form: 'data', address, message, signature: base64(signature) };
    },
    disconnect: () => sdk.disconnect(),
  };
}

/** Defly (and any wallet that signs only transactions): the never-confirmable self-payment. */
export async function deflyVoteWallet(sdk: ConnectSdk): Promise<VoteWallet> {
  const label = LABELS.defly;
  const address = await connectAccount('defly', sdk);
  return {
    kind: 'defly',
    label,
    address,
    async signVote(message) {
      const txn = voteTransaction(address, message);
      const stxn = await firstSigned(label, () =>
        sdk.signTransaction([[{ txn, signers: [address] }]], address),
      );
      return { form: 'transaction', signed_transaction: base64(stxn) };
    },
    disconnect: () => sdk.disconnect(),
  };
}

/** A key made in this tab for the local stack: a real Algorand account, forgotten when the tab closes. */
export function localKeyVoteWallet(account = algosdk.generateAccount()): VoteWallet {
  const address = account.addr.toString();
  return {
    kind: 'local-key',
    label: 'Throwaway key of this tab (local stack only)',
    address,
    async signVote(message) {
      const signature = algosdk.signBytes(encode(message), account.sk);
      return { form: 'data', address, message, signature: base64(signature) };
    },
    async disconnect() {
      account.sk.fill(0);
    },
  };
}

export async function connectVoteWallet(kind: VoteWalletKind): Promise<VoteWallet> {
  if (kind === 'local-key') return localKeyVoteWallet();
  const sdk = await createSdk(kind);
  return kind === 'pera' ? peraVoteWallet(sdk) : deflyVoteWallet(sdk);
}
