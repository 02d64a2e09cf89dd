// The arena page's wallet adapters produce what POST /arena/vote accepts. Pera's signature form is checked with
// Pera's own SDK (PeraWalletConnect.verifySignature, the check signData makes on what the app returns), Defly's
// self-payment with algosdk; the wallets themselves are SDK-shaped objects signing with a generated key, as the
// apps do (a phone app cannot run here). A declined request posts nothing.
import { PeraWalletConnect } from '@perawallet/connect';
import algosdk from 'algosdk';
import { describe, expect, it } from 'vitest';
import { roundAt } from '../generator/engines/arena/rounds.ts';
import { createArenaVoteApp } from '../paywall-worker/arena-vote/app.ts';
import { openSqliteVoteStore } from '../paywall-worker/arena-vote/store-sqlite.ts';
import {
  deflyVoteWallet,
  localKeyVoteWallet,
  peraVoteWallet,
  UNCONFIRMABLE_WINDOW,
} from '../site/arena-vote/src/vote-wallets.ts';
import type { ConnectSdk, SignerTransaction } from '../site/x402-buyer/src/wallets/connect-sdk.ts';
import { WalletError } from '../site/x402-buyer/src/wallets/types.ts';
import { MINUTE, T0 } from './arena-fixtures.ts';
import { voteMessage } from './helpers/signed-vote.ts';

const SITE = 'https://arena.example';
const ROUND = roundAt(T0);
const message = (prediction: 'BULLISH' | 'BEARISH' = 'BULLISH') =>
  voteMessage({ site: SITE, round: ROUND, prediction });

/** A connect SDK whose "app" holds `account` and signs what it is asked, or declines. */
function walletApp(account: algosdk.Account, options: { decline?: boolean; dataSigning?: boolean } = {}) {
  const asked: { data: Uint8Array[]; groups: SignerTransaction[][][] } = { data: [], groups: [] };
  const declined = () => Object.assign(new Error('User rejected'), { data: { type: 'SIGN_TRANSACTIONS' } });
  const sdk: ConnectSdk = {
    connect: async () => [account.addr.toString()],
    reconnectSession: async () => [],
    disconnect: async () => {},
    signTransaction: async (groups) => {
      asked.groups.push(groups);
      if (options.decline) throw declined();
      return groups.flat().map(({ txn }) => txn.signTxn(account.sk));
    },
    ...(options.dataSigning === false
      ? {}
      : {
          signData: async (items: { data: Uint8Array }[]) => {
            asked.data.push(...items.map((i) => i.data));
            if (options.decline) throw declined();
            return items.map((i) => algosdk.signBytes(i.data, account.sk));
          },
        }),
  };
  return { sdk, asked };
}

function voteEndpoint() {
  const store = openSqliteVoteStore(':memory:');
  const app = createArenaVoteApp({
    store,
    site: SITE,
    now: () => T0 - 10 * MINUTE,
    clientIp: () => '192.0.2.1',
  });
  return async (body: unknown) => {
    const res = await app.request('/arena/vote', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: (await res.json()) as Record<string, unknown> };
  };
}

describe('arena vote wallets', () => {
  it('Pera: the text signed as data, in the form Pera itself verifies, is accepted once', async () => {
    const account = algosdk.generateAccount();
    const { sdk, asked } = walletApp(account);
    const wallet = await peraVoteWallet(sdk);
    const text = message();
    const body = await wallet.signVote(text);
    expect(body).toMatchObject({ form: 'data', address: account.addr.toString(), message: text });
    expect(new TextDecoder().decode(asked.data[0])).toBe(text); // the wallet is shown the vote text itself
    if (body.form !== 'data') throw new Error('expected the data form');
    const signature = algosdk.base64ToBytes(body.signature);
    const pera = PeraWalletConnect.prototype.verifySignature;
    expect(pera(new TextEncoder().encode(text), signature, account.addr.toString())).toBe(true);
    expect(pera(new TextEncoder().encode(`${text} `), signature, account.addr.toString())).toBe(false);

    const post = voteEndpoint();
    expect(await post(body)).toMatchObject({ status: 201, json: { round_id: ROUND.id } });
    expect(await post(body)).toMatchObject({ status: 409, json: { error: 'replayed_signature' } });
  });

  it('Defly: a zero-amount payment to oneself that can never be confirmed, accepted by the endpoint', async () => {
    const account = algosdk.generateAccount();
    const { sdk, asked } = walletApp(account, { dataSigning: false });
    const wallet = await deflyVoteWallet(sdk);
    const body = await wallet.signVote(message('BEARISH'));
    expect(body.form).toBe('transaction');
    if (body.form !== 'transaction') throw new Error('expected the transaction form');
    const { txn } = algosdk.decodeSignedTransaction(algosdk.base64ToBytes(body.signed_transaction));
    expect(txn.payment?.amount).toBe(0n);
    expect(txn.payment?.receiver.toString()).toBe(account.addr.toString());
    expect(txn.lastValid).toBe(BigInt(UNCONFIRMABLE_WINDOW.lastValid));
    expect(asked.groups[0]?.[0]?.[0]?.signers).toEqual([account.addr.toString()]);
    expect(await voteEndpoint()(body)).toMatchObject({ status: 201, json: { prediction: 'BEARISH' } });
  });

  it('a declined request is a WalletError and nothing is signed', async () => {
    const account = algosdk.generateAccount();
    const pera = await peraVoteWallet(walletApp(account, { decline: true }).sdk);
    await expect(pera.signVote(message())).rejects.toMatchObject({ failure: 'rejected' });
    const noData = await peraVoteWallet(walletApp(account, { dataSigning: false }).sdk);
    await expect(noData.signVote(message())).rejects.toBeInstanceOf(WalletError);
  });

  it('the local stack key signs like Pera and forgets its key on disconnect', async () => {
    const wallet = localKeyVoteWallet();
    const body = await wallet.signVote(message());
    expect(await voteEndpoint()(body)).toMatchObject({ status: 201 });
    await wallet.disconnect();
    const after = await wallet.signVote(message());
    expect(await voteEndpoint()(after)).toMatchObject({ status: 401, json: { error: 'bad_signature' } });
  });
});
