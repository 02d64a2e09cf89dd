// Shared set-up for the paywall tests: paid fixture files in a temporary folder, the development facilitator and
// the worker on loopback (port 0), and buyers whose payments are built by the official x402 client.
import { randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import algosdk from 'algosdk';
import type { FacilitatorClient } from '@x402/core/server';
import { decodePaymentRequiredHeader, encodePaymentSignatureHeader } from '@x402/core/http';
import type { PaymentPayload, PaymentRequired, PaymentRequirements } from '@x402/core/types';
import { toClientAvmSigner } from '@x402/avm';
import { ExactAvmScheme } from '@x402/avm/exact/client';
import { appendPaymentIdentifierToExtensions } from '@x402/extensions/payment-identifier';
import { wrapFetchWithPayment, x402Client } from '@x402/fetch';
import { PAID_RESOURCES } from '../schemas/resources.ts';
import type { PaidResource } from '../schemas/resources.ts';
import { PAID_EXAMPLES } from '../schemas/paid/examples.ts';
import { startDevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import type { DevFacilitator } from '../paywall-worker/dev-facilitator/server.ts';
import { startPaywallServer } from '../paywall-worker/server.ts';
import type { PaywallAppOptions } from '../paywall-worker/app.ts';
import type { PaywallConfig } from '../paywall-worker/config.ts';
import type { PaywallServer } from '../paywall-worker/server.ts';
import { createFsStorage } from '../paywall-worker/storage-fs.ts';
import { createDevBuyer } from '../paywall-worker/buy.ts';

export const resourceById = (id: string): PaidResource => {
  const resource = PAID_RESOURCES.find((r) => r.id === id);
  if (!resource) throw new Error(`no paid resource ${id}`);
  return resource;
};

/** The example bodies (simulated) as paid files generated `ageSeconds` ago. */
export async function writePaidFixtures(dir: string, ageSeconds = 0): Promise<void> {
  const updated = new Date(Date.now() - ageSeconds * 1000).toISOString();
  for (const resource of PAID_RESOURCES) {
    const body = { ...(PAID_EXAMPLES[resource.id] as Record<string, unknown>), updated };
    await writeFile(join(dir, resource.file), JSON.stringify(body, null, 2));
  }
}

export interface Stack {
  paidDir: string;
  facilitator: DevFacilitator;
  worker: PaywallServer;
  payTo: string;
  url(resource: PaidResource): string;
  close(): Promise<void>;
}

export async function startStack(
  options: {
    facilitatorUrl?: string;
    facilitatorTimeoutMs?: number;
    /** Default true: the fixtures are the simulated examples. */
    allowSimulated?: boolean;
    indexerUrl?: string;
    appOptions?: PaywallAppOptions;
  } = {},
): Promise<Stack> {
  const paidDir = await mkdtemp(join(tmpdir(), 'emi-paywall-'));
  await writePaidFixtures(paidDir);
  const facilitator = await startDevFacilitator();
  const payTo = algosdk.generateAccount().addr.toString();
  facilitator.ledger.optIn(payTo);
  const worker = await startPaywallServer(
    {
      port: 0,
      payTo,
      facilitatorUrl: options.facilitatorUrl ?? facilitator.url,
      facilitatorTimeoutMs: options.facilitatorTimeoutMs,
      baseUrl: 'http://127.0.0.1:8080',
      storage: createFsStorage(paidDir),
      allowSimulated: options.allowSimulated ?? true,
      indexerUrl: options.indexerUrl ?? facilitator.url,
    },
    options.appOptions,
  );
  return {
    paidDir,
    facilitator,
    worker,
    payTo,
    url: (resource) => `${worker.url}${resource.path}`,
    close: async () => {
      await worker.close();
      await facilitator.close();
      await rm(paidDir, { recursive: true, force: true });
    },
  };
}

export async function fetchChallenge(
  url: string,
): Promise<{ response: Response; paymentRequired: PaymentRequired; body: unknown }> {
  const response = await fetch(url);
  const header = response.headers.get('PAYMENT-REQUIRED');
  if (response.status !== 402 || !header) throw new Error(`expected a 402 challenge, got ${response.status}`);
  return { response, paymentRequired: decodePaymentRequiredHeader(header), body: await response.json() };
}

export interface Buyer {
  address: string;
  client: x402Client;
  /** Signs a payment for the challenge; `build` may change the requirements the transaction is built from. */
  pay(
    paymentRequired: PaymentRequired,
    build?: (r: PaymentRequirements) => PaymentRequirements,
  ): Promise<PaymentPayload>;
}

export async function newBuyer(facilitator: DevFacilitator, fundAtomic = '1000000'): Promise<Buyer> {
  const { address, client } = await createDevBuyer(facilitator.url, fundAtomic);
  client.setSpendControls(false); // test buyers must be able to sign for any asset, even wrong ones
  return {
    address,
    client,
    async pay(paymentRequired, build) {
      const offered = paymentRequired.accepts[0] as PaymentRequirements;
      const changed = build ? build(structuredClone(offered)) : offered;
      return client.createPaymentPayload({ ...paymentRequired, accepts: [changed] });
    },
  };
}

/**
 * A buyer as the official docs write one: @x402/fetch's wrapper over the official client with the AVM exact scheme,
 * appending one payment id (`appendPaymentIdentifierToExtensions`) to every payment it signs, funded with
 * `fundAtomic` on the development ledger. `sent` keeps each PAYMENT-SIGNATURE the wrapper sent, so that a test can
 * send one again by hand.
 */
export function officialBuyerWithOneId(facilitator: DevFacilitator, fundAtomic: bigint) {
  const account = algosdk.generateAccount();
  const signer = toClientAvmSigner(Buffer.from(account.sk).toString('base64'));
  facilitator.ledger.fund(signer.address, fundAtomic);
  const id = `pay_${randomUUID().replaceAll('-', '')}`;
  const client = new x402Client()
    .register('algorand:*', new ExactAvmScheme(signer, { algodUrl: facilitator.url }))
    .onBeforePaymentCreation(async ({ paymentRequired }) => {
      appendPaymentIdentifierToExtensions(paymentRequired.extensions ?? {}, id);
    });
  const sent: string[] = [];
  const recording: typeof fetch = (input, init) => {
    const signature = new Request(input, init).headers.get('PAYMENT-SIGNATURE');
    if (signature) sent.push(signature);
    return fetch(input, init);
  };
  return {
    id,
    address: signer.address,
    client,
    sent,
    balance: () => facilitator.ledger.assetBalance(signer.address),
    fetchWithPayment: wrapFetchWithPayment(recording, client),
  };
}

/** Suggested params for a hand-built group on the development ledger (or on the network `genesis` names). */
export function ledgerParams(
  facilitator: DevFacilitator,
  genesis: { hash: string; id: string } = {
    hash: facilitator.ledger.genesisHash,
    id: facilitator.ledger.genesisId,
  },
): algosdk.SuggestedParams {
  const round = facilitator.ledger.round;
  return {
    fee: 0n,
    minFee: 1000n,
    firstValid: round,
    lastValid: round + 10n,
    genesisHash: algosdk.base64ToBytes(genesis.hash),
    genesisID: genesis.id,
    flatFee: true,
  };
}

export const paymentHeader = (payload: PaymentPayload): Record<string, string> => ({
  'PAYMENT-SIGNATURE': encodePaymentSignatureHeader(payload),
});

export const base64 = (text: string): string => Buffer.from(text, 'utf8').toString('base64');

/** An indexer in front of the development facilitator's indexer API that a test can take down (`state.down`). */
export async function startIndexer(target: string) {
  const state = { down: false };
  const server = createServer(async (req, res) => {
    if (state.down) {
      res.writeHead(503, { 'Content-Type': 'application/json' });
      return res.end('{"message":"down"}');
    }
    const response = await fetch(`${target}${req.url}`);
    res.writeHead(response.status, { 'Content-Type': 'application/json' });
    res.end(await response.text());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    state,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** A development facilitator, a folder of fresh paid files, an opted-in payee and a buyer with 5 USDC. */
export interface DevSale {
  facilitator: DevFacilitator;
  paidDir: string;
  payTo: string;
  buyer: Buyer;
  /** A paywall configuration selling these files to that payee (the facilitator as indexer too), files up to 1 h. */
  config(): PaywallConfig;
  close(): Promise<void>;
}

/** A `DevSale` with its facilitator on `port` and its paid files in a new temporary folder named from `prefix`. */
export async function startDevSale(port: number, prefix: string): Promise<DevSale> {
  const facilitator = await startDevFacilitator({ port });
  const paidDir = await mkdtemp(join(tmpdir(), prefix));
  await writePaidFixtures(paidDir);
  const payTo = algosdk.generateAccount().addr.toString();
  facilitator.ledger.optIn(payTo);
  const buyer = await newBuyer(facilitator, '5000000');
  return {
    facilitator,
    paidDir,
    payTo,
    buyer,
    config: () => ({
      payTo,
      facilitatorUrl: facilitator.url,
      baseUrl: 'http://127.0.0.1:8080',
      storage: createFsStorage(paidDir),
      allowSimulated: true,
      indexerUrl: facilitator.url,
      maxDataAgeSeconds: 3600,
    }),
    close: async () => {
      await facilitator.close();
      await rm(paidDir, { recursive: true, force: true });
    },
  };
}

/**
 * A facilitator that answers `/supported` for `network` (with a fee payer) and nothing else: enough for a paywall to
 * offer its 402s where no facilitator of that network is reachable.
 */
export const supportedOnlyFacilitator = (network: string): FacilitatorClient => ({
  getSupported: () =>
    Promise.resolve({
      kinds: [
        {
          x402Version: 2,
          scheme: 'exact',
          network,
          extra: { feePayer: algosdk.generateAccount().addr.toString() },
        },
      ],
      extensions: [],
      signers: {},
    }) as ReturnType<FacilitatorClient['getSupported']>,
  verify: () => Promise.reject(new Error('not used')),
  settle: () => Promise.reject(new Error('not used')),
});
