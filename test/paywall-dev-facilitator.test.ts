// The development facilitator on its own: its HTTP surface, the loopback-only faucet and the ledger's rules.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import algosdk from 'algosdk';
import { ALGORAND_MAINNET, ALGORAND_MAINNET_GENESIS_HASH } from '../schemas/paid/terms.ts';
import { createDevFacilitatorApp, startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { InMemoryAlgorandLedger } from '../paywall-worker/dev-facilitator/ledger.ts';
import { createLedgerSigner } from '../paywall-worker/dev-facilitator/signer.ts';

let facilitator: DevFacilitator;
beforeAll(async () => {
  facilitator = await startDevFacilitator();
});
afterAll(async () => {
  await facilitator?.close();
});

const post = (path: string, body: unknown) =>
  fetch(`${facilitator.url}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });

/** Mainnet parameters valid for the next ten rounds of `ledger`, with a flat `fee`. */
const suggestedParams = (ledger: InMemoryAlgorandLedger, fee: bigint) => ({
  fee,
  minFee: 1000n,
  firstValid: ledger.round,
  lastValid: ledger.round + 10n,
  genesisHash: algosdk.base64ToBytes(ALGORAND_MAINNET_GENESIS_HASH),
  genesisID: 'mainnet-v1.0',
  flatFee: true,
});

describe('HTTP surface', () => {
  it('lists the exact scheme on Algorand mainnet with its run-time fee payer', async () => {
    const supported = await (await fetch(`${facilitator.url}/supported`)).json();
    expect(supported.kinds).toEqual([
      {
        x402Version: 2,
        scheme: 'exact',
        network: ALGORAND_MAINNET,
        extra: { feePayer: facilitator.feePayer },
      },
    ]);
    expect(supported.signers['algorand:*']).toEqual([facilitator.feePayer]);
    expect(algosdk.isValidAddress(facilitator.feePayer)).toBe(true);
  });

  it('makes a new fee payer key at every start', async () => {
    const other = await startDevFacilitator();
    expect(other.feePayer).not.toBe(facilitator.feePayer);
    await other.close();
  });

  it('answers the algod suggested-params call from the ledger', async () => {
    const response = await fetch(`${facilitator.url}/v2/transactions/params`, {
      headers: { Origin: 'http://127.0.0.1:8080' },
    });
    expect(response.headers.get('access-control-allow-origin')).toBe('*'); // a browser buyer reads it too
    const params = await response.json();
    expect(params['genesis-hash']).toBe(ALGORAND_MAINNET_GENESIS_HASH);
    expect(params['last-round']).toBe(Number(facilitator.ledger.round));
  });

  it('refuses malformed verify and settle requests with 400', async () => {
    expect((await post('/verify', { nope: true })).status).toBe(400);
    expect((await fetch(`${facilitator.url}/settle`, { method: 'POST', body: 'not json' })).status).toBe(400);
  });

  it('funds an address: opt-in, test USDC and ALGO for fees', async () => {
    const address = algosdk.generateAccount().addr.toString();
    const response = await post('/dev/fund', { address, amount: '250000' });
    expect(response.status).toBe(200);
    expect(facilitator.ledger.assetBalance(address)).toBe(250_000n);
    expect(facilitator.ledger.algoBalance(address)).toBeGreaterThan(200_000n);
  });

  it('refuses bad faucet requests', async () => {
    const address = algosdk.generateAccount().addr.toString();
    expect((await post('/dev/fund', { address: 'nope', amount: '1' })).status).toBe(400);
    expect((await post('/dev/fund', { address, amount: '-1' })).status).toBe(400);
    expect((await post('/dev/fund', { address, amount: '1000000001' })).status).toBe(400);
  });

  it('funds only on a JSON request, which a web page cannot send to loopback without asking', async () => {
    const address = algosdk.generateAccount().addr.toString();
    const response = await fetch(`${facilitator.url}/dev/fund`, {
      method: 'POST',
      headers: { 'Content-Type': 'text/plain' },
      body: JSON.stringify({ address, amount: '1' }),
    });
    expect(response.status).toBe(415);
    expect(facilitator.ledger.assetBalance(address)).toBe(0n);
  });

  it('refuses the faucet to a non-loopback caller', async () => {
    const { app } = createDevFacilitatorApp(new InMemoryAlgorandLedger());
    const request = new Request('http://127.0.0.1/dev/fund', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ address: algosdk.generateAccount().addr.toString(), amount: '1' }),
    });
    const remote = {
      incoming: { socket: { remoteAddress: '203.0.113.7', remotePort: 5555, remoteFamily: 'IPv4' } },
    };
    expect((await app.fetch(request, remote)).status).toBe(403);
  });

  it('refuses the faucet to a page on a foreign origin, and sends it no CORS grant', async () => {
    const address = algosdk.generateAccount().addr.toString();
    const fund = (origin?: string) =>
      fetch(`${facilitator.url}/dev/fund`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(origin ? { Origin: origin } : {}) },
        body: JSON.stringify({ address, amount: '1' }),
      });
    const foreign = await fund('https://evil.example');
    expect(foreign.status).toBe(403);
    expect(foreign.headers.get('access-control-allow-origin')).toBeNull();
    expect(facilitator.ledger.assetBalance(address)).toBe(0n);
    const preflight = await fetch(`${facilitator.url}/dev/fund`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    // A page on loopback (the buyer page of `emi up`) and a plain program may fund.
    expect((await fund('http://127.0.0.1:8080')).status).toBe(200);
    expect((await fund()).status).toBe(200);
    expect(facilitator.ledger.assetBalance(address)).toBe(2n);
  });

  it('answers indexer look-ups: a confirmed transaction, an unknown one, and the current round', async () => {
    const unknown = await fetch(`${facilitator.url}/v2/transactions/${'A'.repeat(52)}`);
    expect(unknown.status).toBe(404);
    const health = await (await fetch(`${facilitator.url}/health`)).json();
    expect(health.round).toBe(Number(facilitator.ledger.round));
  });

  it('has no faucet outside development mode', async () => {
    const { app } = createDevFacilitatorApp(new InMemoryAlgorandLedger(), { devMode: false });
    const response = await app.fetch(
      new Request('http://127.0.0.1/dev/fund', { method: 'POST', body: '{}' }),
    );
    expect(response.status).toBe(404);
  });

  it('only listens on 127.0.0.1', async () => {
    await expect(startDevFacilitator({ host: '0.0.0.0' as '127.0.0.1' })).rejects.toThrow(/127\.0\.0\.1/);
  });
});

describe('ledger rules', () => {
  const ledger = new InMemoryAlgorandLedger();
  const alice = algosdk.generateAccount();
  const bob = algosdk.generateAccount();
  ledger.fund(alice.addr.toString(), 1_000_000n);
  ledger.optIn(bob.addr.toString());

  const params = () => suggestedParams(ledger, 1000n);
  const transfer = (amount: bigint, receiver = bob.addr) =>
    algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
      sender: alice.addr,
      receiver,
      assetIndex: 31566704,
      amount,
      suggestedParams: params(),
    });

  it('applies a valid signed transfer once and refuses it the second time', () => {
    const signed = transfer(1000n).signTxn(alice.sk);
    expect(ledger.check([signed])).toBeNull();
    ledger.submit([signed]);
    expect(ledger.assetBalance(bob.addr.toString())).toBe(1000n);
    expect(ledger.check([signed])).toMatch(/already in ledger/);
    expect(() => ledger.submit([signed])).toThrow(/already in ledger/);
  });

  it('refuses a transaction signed by another key', () => {
    const txn = transfer(1n);
    const forged = new algosdk.SignedTransaction({ txn, sig: txn.rawSignTxn(bob.sk) }); // bob signs alice's transfer
    expect(ledger.check([algosdk.encodeMsgpack(forged)])).toMatch(/invalid signature/);
    expect(ledger.check([txn.signTxn(bob.sk)])).toMatch(/single-key/); // signing as an auth address: not here
  });

  it('refuses a receiver that is not opted in, and an overdraft', () => {
    const stranger = algosdk.generateAccount().addr;
    expect(ledger.check([transfer(1n, stranger).signTxn(alice.sk)])).toMatch(/not opted in|does not exist/);
    expect(ledger.check([transfer(10_000_000n).signTxn(alice.sk)])).toMatch(/holds/);
  });

  it('refuses a tampered signature, and tampered bytes under a good signature, after accepting the original', () => {
    const txn = transfer(3n);
    const signed = txn.signTxn(alice.sk);
    expect(ledger.check([signed])).toBeNull(); // inspected once: the next checks must not reuse it for other bytes
    const sig = txn.rawSignTxn(alice.sk);
    sig[7] = (sig[7] as number) ^ 1;
    const badSig = algosdk.encodeMsgpack(new algosdk.SignedTransaction({ txn, sig }));
    expect(ledger.check([badSig])).toMatch(/invalid signature/);
    const more = transfer(300n); // same transaction with a higher amount, carrying the original signature
    const tampered = new algosdk.SignedTransaction({ txn: more, sig: txn.rawSignTxn(alice.sk) });
    expect(ledger.check([algosdk.encodeMsgpack(tampered)])).toMatch(/invalid signature/);
    expect(ledger.check([signed])).toBeNull();
  });

  it("checks the ledger's state again for a group it has already accepted once", () => {
    const carol = algosdk.generateAccount();
    ledger.fund(carol.addr.toString(), 1000n);
    const pay = (amount: bigint) =>
      algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
        sender: carol.addr,
        receiver: bob.addr,
        assetIndex: 31566704,
        amount,
        suggestedParams: params(),
      });
    const first = pay(600n).signTxn(carol.sk);
    expect(ledger.check([first])).toBeNull();
    ledger.submit([pay(500n).signTxn(carol.sk)]); // carol now holds 500
    expect(ledger.check([first])).toMatch(/holds 500/);
    const later = new InMemoryAlgorandLedger();
    later.fund(carol.addr.toString(), 1000n);
    later.optIn(bob.addr.toString());
    const soon = algosdk.makeAssetTransferTxnWithSuggestedParamsFromObject({
      sender: carol.addr,
      receiver: bob.addr,
      assetIndex: 31566704,
      amount: 1n,
      suggestedParams: { ...params(), firstValid: later.round, lastValid: later.round + 2n },
    });
    const signed = soon.signTxn(carol.sk);
    expect(later.check([signed])).toBeNull();
    later.advance(5);
    expect(later.check([signed])).toMatch(/validity window/);
    expect(() => later.submit([signed])).toThrow(/validity window/);
  });

  it('refuses an unsigned transaction and a wrong group id', () => {
    const unsigned = algosdk.encodeMsgpack(new algosdk.SignedTransaction({ txn: transfer(1n) }));
    expect(ledger.check([unsigned])).toMatch(/not signed/);
    const a = transfer(1n);
    const b = transfer(2n);
    a.group = new Uint8Array(32).fill(1);
    b.group = new Uint8Array(32).fill(1);
    expect(ledger.check([a.signTxn(alice.sk), b.signTxn(alice.sk)])).toMatch(/group id/);
  });
});

describe('fee payer signer', () => {
  const ledger = new InMemoryAlgorandLedger();
  const account = algosdk.generateAccount();
  const { signer, feePayer } = createLedgerSigner(ledger, account);
  const feeTxn = (sender = account.addr) =>
    algosdk.makePaymentTxnWithSuggestedParamsFromObject({
      sender,
      receiver: sender,
      amount: 0n,
      suggestedParams: suggestedParams(ledger, 2000n),
    });

  it("signs natively to the very bytes algosdk's own signer makes, every time it is asked", async () => {
    const txn = feeTxn();
    const unsigned = algosdk.encodeUnsignedTransaction(txn);
    const first = await signer.signTransaction(unsigned, feePayer);
    expect(Buffer.from(first).equals(Buffer.from(txn.signTxn(account.sk)))).toBe(true);
    first.fill(0); // a caller scribbling on its copy changes nothing for the next one
    const again = await signer.signTransaction(unsigned, feePayer);
    expect(Buffer.from(again).equals(Buffer.from(txn.signTxn(account.sk)))).toBe(true);
    expect(ledger.check([again])).toBeNull();
  });

  it('signs only for its own fee payer', async () => {
    const other = algosdk.generateAccount();
    const unsigned = algosdk.encodeUnsignedTransaction(feeTxn(other.addr));
    await expect(signer.signTransaction(unsigned, feePayer)).rejects.toThrow(/only signs for its own/);
    const own = algosdk.encodeUnsignedTransaction(feeTxn());
    await expect(signer.signTransaction(own, other.addr.toString())).rejects.toThrow(
      /only signs for its own/,
    );
  });
});
