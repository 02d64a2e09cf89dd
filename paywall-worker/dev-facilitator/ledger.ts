// An in-memory Algorand ledger for development and tests: just enough of the chain for the x402 exact scheme.
// It checks what the real network would refuse (ed25519 signatures over the "TX"-prefixed bytes, genesis hash,
// validity rounds, group ids, fee pooling, opt-in, balances, minimum balance, already-seen transaction ids) and
// applies a group atomically: `submit` checks and applies with no `await` in between, so two concurrent
// submissions of the same payment can never both land. Like the real chain, rounds follow the clock (one about
// every 2.8 s) and one round holds many transactions, so concurrent buyers' short validity windows stay open.
import { createPublicKey, verify as verifySignature } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import algosdk from 'algosdk';
import { ALGORAND_MAINNET_GENESIS_HASH, USDC_ASA_ID } from '../../schemas/paid/terms.ts';

const MIN_FEE = 1000n;
const MIN_BALANCE = 100_000n; // microALGO per account
const MIN_BALANCE_PER_ASSET = 100_000n;
const MAX_GROUP_SIZE = 16;
const MAX_VALIDITY_WINDOW = 1000n;
/** Algorand mainnet's block time, about 2.8 s. */
const ROUND_MS = 2800;
const ED25519_SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
/** Groups already inspected and public keys already parsed, kept up to this many each. */
const MAX_CACHED = 4096;

/** A signed group that passed every check that does not depend on the ledger's state. */
interface Inspected {
  txns: algosdk.Transaction[];
  txids: string[];
}

interface Account {
  microAlgos: bigint;
  assets: Map<bigint, bigint>; // opted-in assets and their balances
}

export interface LedgerParams {
  genesisHash: string;
  genesisId: string;
  lastRound: bigint;
  minFee: bigint;
}

export class LedgerRejection extends Error {}

export class InMemoryAlgorandLedger {
  readonly genesisHash = ALGORAND_MAINNET_GENESIS_HASH;
  readonly genesisId = 'mainnet-v1.0';
  readonly usdcAssetId = BigInt(USDC_ASA_ID);
  private readonly startedAt: number;
  private skipped = 0n;
  private readonly accounts = new Map<string, Account>();
  private readonly confirmed = new Map<string, bigint>(); // txid -> round
  private readonly publicKeys = new Map<string, KeyObject>(); // base64 public key -> parsed key
  private readonly inspected = new Map<string, Inspected>(); // signed group bytes -> what holds for them

  constructor(
    private readonly now: () => number = Date.now,
    private readonly firstRound = 1000n,
  ) {
    this.startedAt = now();
  }

  /** The last closed round; the next group lands in `round + 1`. */
  get round(): bigint {
    return this.firstRound + this.skipped + BigInt(Math.floor((this.now() - this.startedAt) / ROUND_MS));
  }

  params(): LedgerParams {
    return {
      genesisHash: this.genesisHash,
      genesisId: this.genesisId,
      lastRound: this.round,
      minFee: MIN_FEE,
    };
  }

  /** Moves time forward, e.g. to let a payment's validity window expire. */
  advance(rounds: number): void {
    this.skipped += BigInt(rounds);
  }

  /** Development faucet: creates the account if needed, opts it in to USDC and credits ALGO and USDC. */
  fund(address: string, usdc: bigint, microAlgos = 10_000_000n): void {
    const account = this.account(address, true);
    account.microAlgos += microAlgos;
    account.assets.set(this.usdcAssetId, (account.assets.get(this.usdcAssetId) ?? 0n) + usdc);
  }

  /** Opts an account in to USDC without crediting any (a payee must be opted in to receive the asset). */
  optIn(address: string, microAlgos = 1_000_000n): void {
    const account = this.account(address, true);
    account.microAlgos += microAlgos;
    if (!account.assets.has(this.usdcAssetId)) account.assets.set(this.usdcAssetId, 0n);
  }

  assetBalance(address: string, assetId = this.usdcAssetId): bigint {
    return this.accounts.get(address)?.assets.get(assetId) ?? 0n;
  }

  algoBalance(address: string): bigint {
    return this.accounts.get(address)?.microAlgos ?? 0n;
  }

  confirmedRound(txid: string): bigint | undefined {
    return this.confirmed.get(txid);
  }

  get transactionCount(): number {
    return this.confirmed.size;
  }

  /** What simulate answers: the reason the group would fail, or null. Never changes state. */
  check(signedGroup: readonly Uint8Array[]): string | null {
    try {
      this.plan(signedGroup);
      return null;
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    }
  }

  /** Checks and applies a signed group in one synchronous step; returns the id of each transaction. */
  submit(signedGroup: readonly Uint8Array[]): string[] {
    const { txids, balances } = this.plan(signedGroup);
    const landedIn = this.round + 1n;
    for (const [address, account] of balances) this.accounts.set(address, account);
    for (const txid of txids) this.confirmed.set(txid, landedIn);
    return txids;
  }

  /** Validates the group against the current state and computes the balances it would leave. */
  private plan(signedGroup: readonly Uint8Array[]): { txids: string[]; balances: Map<string, Account> } {
    const { txns, txids } = this.inspect(signedGroup);
    const nextRound = this.round + 1n;
    for (const [i, txn] of txns.entries()) {
      const txid = txids[i] as string;
      if (this.confirmed.has(txid)) throw new LedgerRejection(`transaction already in ledger: ${txid}`);
      if (txn.firstValid > nextRound || txn.lastValid < nextRound) {
        throw new LedgerRejection(
          `transaction ${i} is outside its validity window ${txn.firstValid}-${txn.lastValid} (round ${nextRound})`,
        );
      }
    }
    return { txids: [...txids], balances: this.applyToCopies(txns) };
  }

  /**
   * What holds for these bytes whatever the ledger's state: they decode, the group id and every signature are
   * right, the network, validity window length and fees are acceptable. Remembered per group, as the official
   * scheme has the same group checked three times per sale (verify, settle's own verify, submit).
   */
  private inspect(signedGroup: readonly Uint8Array[]): Inspected {
    const key = signedGroup.map((bytes) => Buffer.from(bytes).toString('base64')).join('.');
    const known = this.inspected.get(key);
    if (known) return known;
    if (signedGroup.length === 0 || signedGroup.length > MAX_GROUP_SIZE) {
      throw new LedgerRejection(`group size ${signedGroup.length} outside 1..${MAX_GROUP_SIZE}`);
    }
    const stxns = signedGroup.map((bytes, i) => {
      try {
        return algosdk.decodeSignedTransaction(bytes);
      } catch {
        throw new LedgerRejection(`transaction ${i} is not a signed transaction`);
      }
    });
    this.checkGroupId(signedGroup, stxns);
    const txids = stxns.map((stxn) => stxn.txn.txID());
    if (new Set(txids).size !== txids.length) throw new LedgerRejection('duplicate transaction in group');
    let feesPaid = 0n;
    for (const [i, stxn] of stxns.entries()) {
      const txn = stxn.txn;
      this.checkSignature(stxn, i);
      if (Buffer.from(txn.genesisHash ?? []).toString('base64') !== this.genesisHash) {
        throw new LedgerRejection(`transaction ${i} is for another network (genesis hash mismatch)`);
      }
      if (txn.genesisID && txn.genesisID !== this.genesisId) {
        throw new LedgerRejection(`transaction ${i} genesis id ${txn.genesisID} is not ${this.genesisId}`);
      }
      if (txn.lastValid - txn.firstValid > MAX_VALIDITY_WINDOW) {
        throw new LedgerRejection(`transaction ${i} validity window exceeds ${MAX_VALIDITY_WINDOW} rounds`);
      }
      if (txn.rekeyTo) throw new LedgerRejection(`transaction ${i}: rekeying is not supported here`);
      feesPaid += txn.fee;
    }
    if (feesPaid < MIN_FEE * BigInt(stxns.length)) {
      throw new LedgerRejection(`group fee ${feesPaid} below the minimum ${MIN_FEE * BigInt(stxns.length)}`);
    }
    const inspected = { txns: stxns.map((stxn) => stxn.txn), txids };
    if (this.inspected.size >= MAX_CACHED) this.inspected.clear();
    this.inspected.set(key, inspected);
    return inspected;
  }

  private checkGroupId(signedGroup: readonly Uint8Array[], stxns: algosdk.SignedTransaction[]): void {
    if (stxns.length === 1 && !stxns[0]?.txn.group) return;
    // The group id is the hash of the transactions with their group field cleared: recompute it from fresh copies.
    const copies = signedGroup.map((bytes) => {
      const txn = algosdk.decodeSignedTransaction(bytes).txn;
      txn.group = undefined;
      return txn;
    });
    const expected = Buffer.from(algosdk.computeGroupID(copies)).toString('base64');
    for (const [i, stxn] of stxns.entries()) {
      if (!stxn.txn.group || Buffer.from(stxn.txn.group).toString('base64') !== expected) {
        throw new LedgerRejection(`transaction ${i} has a wrong group id`);
      }
    }
  }

  private checkSignature(stxn: algosdk.SignedTransaction, i: number): void {
    if (stxn.msig || stxn.lsig || stxn.sgnr) {
      throw new LedgerRejection(
        `transaction ${i}: only single-key signatures by the sender are supported here`,
      );
    }
    if (!stxn.sig) throw new LedgerRejection(`transaction ${i} is not signed`);
    const publicKey = this.publicKey(stxn.txn.sender.publicKey);
    if (!verifySignature(null, stxn.txn.bytesToSign(), publicKey, stxn.sig)) {
      throw new LedgerRejection(`transaction ${i} has an invalid signature`);
    }
  }

  private publicKey(raw: Uint8Array): KeyObject {
    const id = Buffer.from(raw).toString('base64');
    let key = this.publicKeys.get(id);
    if (!key) {
      if (this.publicKeys.size >= MAX_CACHED) this.publicKeys.clear();
      key = createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: 'der', type: 'spki' });
      this.publicKeys.set(id, key);
    }
    return key;
  }

  private applyToCopies(txns: algosdk.Transaction[]): Map<string, Account> {
    const touched = new Map<string, Account>();
    const get = (address: string, create: boolean): Account => {
      let account = touched.get(address);
      if (!account) {
        const current = this.accounts.get(address);
        if (!current && !create) throw new LedgerRejection(`account ${address} does not exist`);
        account = current
          ? { microAlgos: current.microAlgos, assets: new Map(current.assets) }
          : { microAlgos: 0n, assets: new Map() };
        touched.set(address, account);
      }
      return account;
    };
    for (const txn of txns) {
      const sender = get(txn.sender.toString(), false);
      sender.microAlgos -= txn.fee;
      if (txn.type === algosdk.TransactionType.pay && txn.payment) {
        if (txn.payment.closeRemainderTo) throw new LedgerRejection('close-to is not supported here');
        sender.microAlgos -= txn.payment.amount;
        get(txn.payment.receiver.toString(), true).microAlgos += txn.payment.amount;
      } else if (txn.type === algosdk.TransactionType.axfer && txn.assetTransfer) {
        const { assetIndex, amount, receiver, assetSender, closeRemainderTo } = txn.assetTransfer;
        if (assetSender || closeRemainderTo)
          throw new LedgerRejection('clawback and close-to are not supported');
        if (assetIndex !== this.usdcAssetId) throw new LedgerRejection(`asset ${assetIndex} does not exist`);
        const from = sender.assets.get(assetIndex);
        if (from === undefined) throw new LedgerRejection(`sender is not opted in to asset ${assetIndex}`);
        if (from < amount)
          throw new LedgerRejection(`sender holds ${from} of asset ${assetIndex}, needs ${amount}`);
        sender.assets.set(assetIndex, from - amount);
        const to = get(receiver.toString(), true);
        const toBalance = to.assets.get(assetIndex);
        if (toBalance === undefined)
          throw new LedgerRejection(`receiver is not opted in to asset ${assetIndex}`);
        to.assets.set(assetIndex, toBalance + amount); // same object as sender on a self-transfer
      } else {
        throw new LedgerRejection(`transaction type ${txn.type} is not supported here`);
      }
    }
    for (const [address, account] of touched) {
      const minimum = MIN_BALANCE + MIN_BALANCE_PER_ASSET * BigInt(account.assets.size);
      if (account.microAlgos < minimum) {
        throw new LedgerRejection(`account ${address} would fall below its minimum balance`);
      }
    }
    return touched;
  }

  private account(address: string, create: boolean): Account {
    let account = this.accounts.get(address);
    if (!account && create) {
      account = { microAlgos: 0n, assets: new Map() };
      this.accounts.set(address, account);
    }
    if (!account) throw new LedgerRejection(`account ${address} does not exist`);
    return account;
  }
}
