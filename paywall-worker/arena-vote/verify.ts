// Proof that the holder of an Algorand account signed a vote message, in either of two forms:
//  - "data": the message bytes signed as arbitrary data with the "MX" prefix (algosdk.signBytes /
//    verifyBytes; Pera Wallet's signData);
//  - "transaction": a zero-amount payment from the account to itself carrying the message as its note, signed and
//    never submitted, whose validity window lies in the chain's distant past so that it can never be confirmed
//    (and so never costs a fee). The signature is checked over the transaction's "TX"-prefixed bytes.
// Web-standard code only (algosdk + WebCrypto Ed25519), so it runs in Node and in workerd.
import algosdk from 'algosdk';

/** A transaction whose last valid round is at most this is long expired on MainNet and TestNet. */
export const MAX_UNCONFIRMABLE_LAST_VALID = 1000;

export type SignedVote =
  | { kind: 'data'; address: string; message: string; signature: Uint8Array }
  | { kind: 'transaction'; signedTransaction: Uint8Array };

export interface VerifiedVote {
  address: string;
  message: string;
  /** The signature bytes, the replay key. */
  signature: Uint8Array;
}

/** A copy backed by a plain ArrayBuffer, as WebCrypto's types ask. */
const plain = (bytes: Uint8Array): Uint8Array<ArrayBuffer> => new Uint8Array(bytes);

const ed25519Verify = async (
  publicKey: Uint8Array,
  signature: Uint8Array,
  data: Uint8Array,
): Promise<boolean> => {
  const key = await crypto.subtle.importKey('raw', plain(publicKey), { name: 'Ed25519' }, false, ['verify']);
  return crypto.subtle.verify({ name: 'Ed25519' }, key, plain(signature), plain(data));
};

const verifyData = (v: Extract<SignedVote, { kind: 'data' }>): VerifiedVote | string => {
  if (!algosdk.isValidAddress(v.address)) return 'address is not a valid Algorand address';
  if (v.signature.length !== 64) return 'signature must be 64 bytes';
  const ok = algosdk.verifyBytes(new TextEncoder().encode(v.message), v.signature, v.address);
  return ok
    ? { address: v.address, message: v.message, signature: v.signature }
    : 'the signature does not match';
};

const verifyTransaction = async (
  v: Extract<SignedVote, { kind: 'transaction' }>,
): Promise<VerifiedVote | string> => {
  let stxn: algosdk.SignedTransaction;
  try {
    stxn = algosdk.decodeSignedTransaction(v.signedTransaction);
  } catch {
    return 'signed_transaction is not a signed Algorand transaction';
  }
  const { txn, sig } = stxn;
  if (!sig || stxn.msig || stxn.lsig || stxn.sgnr)
    return 'the transaction must carry a plain single signature';
  if (txn.type !== algosdk.TransactionType.pay || !txn.payment) return 'the transaction must be a payment';
  const sender = txn.sender.toString();
  if (txn.payment.receiver.toString() !== sender) return 'the payment must go from the voter to the voter';
  if (txn.payment.amount !== 0n) return 'the payment amount must be 0';
  if (txn.payment.closeRemainderTo || txn.rekeyTo)
    return 'the transaction must not close or rekey the account';
  if (txn.lastValid > BigInt(MAX_UNCONFIRMABLE_LAST_VALID)) {
    return `the validity window must end by round ${MAX_UNCONFIRMABLE_LAST_VALID} so that it can never be confirmed`;
  }
  const ok = await ed25519Verify(txn.sender.publicKey, sig, txn.bytesToSign());
  if (!ok) return 'the signature does not match';
  let message: string;
  try {
    message = new TextDecoder('utf-8', { fatal: true }).decode(txn.note);
  } catch {
    return 'the note must be the UTF-8 vote message';
  }
  return { address: sender, message, signature: sig };
};

export const verifySignedVote = async (v: SignedVote): Promise<VerifiedVote | string> =>
  v.kind === 'data' ? verifyData(v) : verifyTransaction(v);
