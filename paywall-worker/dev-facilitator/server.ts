// The development facilitator: the official x402 facilitator (`x402Facilitator` + the @x402/avm exact scheme) served
// over HTTP on loopback, settling on an in-memory ledger. It also answers the one algod call a paying client needs
// (`GET /v2/transactions/params`) and, in development only, `POST /dev/fund` so that any local client can pay.
import { getConnInfo } from '@hono/node-server/conninfo';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { bodyLimit } from 'hono/body-limit';
import { cors } from 'hono/cors';
import algosdk from 'algosdk';
import * as z from 'zod';
import { x402Facilitator } from '@x402/core/facilitator';
import type { PaymentPayload, PaymentRequirements } from '@x402/core/types';
import { ExactAvmScheme } from '@x402/avm/exact/facilitator';
import { ALGORAND_MAINNET } from '../../schemas/paid/terms.ts';
import { normalizeNetwork } from '../network.ts';
import { listen } from '../node-listen.ts';
import { InMemoryAlgorandLedger } from './ledger.ts';
import { createLedgerSigner } from './signer.ts';

export { DEFAULT_DEV_FACILITATOR_PORT as DEV_FACILITATOR_PORT } from '../../generator/defaults.ts';

/** At most 1000 USDC per faucet call: plenty for development, bounded against typos. */
const MAX_FUND_ATOMIC = 1_000_000_000n;

const FacilitatorRequest = z.object({
  x402Version: z.number().int(),
  paymentPayload: z.looseObject({ x402Version: z.number().int(), accepted: z.looseObject({}) }),
  paymentRequirements: z.looseObject({ network: z.string() }),
});

const FundRequest = z.strictObject({
  address: z.string().refine((a) => algosdk.isValidAddress(a), 'an Algorand address'),
  amount: z
    .string()
    // `abort`: zod runs the checks after a failed one too, and BigInt throws on `1e400`.
    .regex(/^[0-9]{1,12}$/, { error: 'atomic units as a decimal string', abort: true })
    .refine((a) => BigInt(a) <= MAX_FUND_ATOMIC, `at most ${MAX_FUND_ATOMIC} atomic units`),
});

/** Stands in for the body of a request whose body is not JSON (or not all there). */
const NOT_JSON = Symbol('not JSON');

export interface DevFacilitatorOptions {
  port?: number;
  host?: '127.0.0.1';
  /** Addresses to opt in to USDC at start, e.g. the payee of the local worker. */
  optIn?: readonly string[];
  /** Serve POST /dev/fund (default true). */
  devMode?: boolean;
}

export interface DevFacilitator {
  url: string;
  feePayer: string;
  ledger: InMemoryAlgorandLedger;
  close(): Promise<void>;
}

const isLoopback = (address: string | undefined): boolean =>
  address === '127.0.0.1' || address === '::1' || address === '::ffff:127.0.0.1';

/** A page on another machine's origin must not mint test funds through the developer's browser. */
function isLoopbackOrigin(origin: string): boolean {
  try {
    const { hostname } = new URL(origin);
    return hostname === '127.0.0.1' || hostname === 'localhost' || hostname === '[::1]';
  } catch {
    return false;
  }
}

export function createDevFacilitatorApp(
  ledger: InMemoryAlgorandLedger,
  options: { devMode?: boolean } = {},
): { app: Hono; feePayer: string } {
  const { signer, feePayer } = createLedgerSigner(ledger);
  const facilitator = new x402Facilitator().register(ALGORAND_MAINNET, new ExactAvmScheme(signer));
  const app = new Hono();
  app.use(
    '*',
    bodyLimit({ maxSize: 64 * 1024, onError: (c) => c.json({ error: 'request body too large' }, 413) }),
  );

  const readRequest = async (c: Context) => {
    const parsed = FacilitatorRequest.safeParse(await c.req.json().catch(() => undefined));
    if (!parsed.success) return null;
    const { paymentPayload, paymentRequirements } = parsed.data;
    // Both spellings of the network id are accepted; the facilitator is registered under the short one.
    const requirements = { ...paymentRequirements, network: normalizeNetwork(paymentRequirements.network) };
    return {
      payload: paymentPayload as unknown as PaymentPayload,
      requirements: requirements as unknown as PaymentRequirements,
    };
  };

  // Public, read-only answers may be read by a browser client on another origin; /dev/fund may not.
  app.use('/supported', cors());
  app.use('/v2/transactions/params', cors());
  app.use('/v2/transactions/:txid', cors());
  app.get('/supported', (c) => c.json(facilitator.getSupported()));
  app.post('/verify', async (c) => {
    const request = await readRequest(c);
    if (!request)
      return c.json({ error: 'expected { x402Version, paymentPayload, paymentRequirements }' }, 400);
    return c.json(await facilitator.verify(request.payload, request.requirements));
  });
  app.post('/settle', async (c) => {
    const request = await readRequest(c);
    if (!request)
      return c.json({ error: 'expected { x402Version, paymentPayload, paymentRequirements }' }, 400);
    return c.json(await facilitator.settle(request.payload, request.requirements));
  });

  // The algod endpoint the x402 AVM client reads its suggested params from (algodUrl = this facilitator).
  app.get('/v2/transactions/params', (c) => {
    const p = ledger.params();
    return c.json({
      'consensus-version': 'dev-ledger',
      fee: 0,
      'genesis-hash': p.genesisHash,
      'genesis-id': p.genesisId,
      'last-round': Number(p.lastRound),
      'min-fee': Number(p.minFee),
    });
  });

  // Indexer /health: the round the indexer has reached, to tell whether a payment's validity window has passed.
  app.get('/health', (c) =>
    c.json({ round: Number(ledger.round), 'db-available': true, message: 'dev ledger' }),
  );

  // The indexer lookup a paywall uses to reconcile a settlement whose answer was lost (indexer API shape).
  app.get('/v2/transactions/:txid', (c) => {
    const txid = c.req.param('txid');
    if (txid === 'params') return c.notFound();
    const round = ledger.confirmedRound(txid);
    const currentRound = Number(ledger.round);
    if (round === undefined) {
      return c.json({ message: `no transaction found for transaction id: ${txid}` }, 404);
    }
    return c.json({
      'current-round': currentRound,
      transaction: { id: txid, 'confirmed-round': Number(round) },
    });
  });

  if (options.devMode !== false) {
    app.post('/dev/fund', async (c) => {
      if (!isLoopback(getConnInfo(c).remote.address)) return c.json({ error: 'loopback only' }, 403);
      const origin = c.req.header('Origin');
      if (origin !== undefined && !isLoopbackOrigin(origin)) {
        return c.json({ error: 'the development faucet answers pages on loopback only' }, 403);
      }
      // A web page can send a cross-origin form or text/plain POST to loopback without asking; JSON it cannot.
      if (!/^application\/json\b/i.test(c.req.header('Content-Type') ?? '')) {
        return c.json({ error: 'Content-Type must be application/json' }, 415);
      }
      const body: unknown = await c.req.json().catch(() => NOT_JSON);
      if (body === NOT_JSON) {
        return c.json(
          {
            error: 'the body is not JSON: send {"address": "<Algorand address>", "amount": "<atomic units>"}',
          },
          400,
        );
      }
      const parsed = FundRequest.safeParse(body);
      if (!parsed.success) return c.json({ error: z.prettifyError(parsed.error) }, 400);
      ledger.fund(parsed.data.address, BigInt(parsed.data.amount));
      return c.json({
        address: parsed.data.address,
        usdc_atomic: ledger.assetBalance(parsed.data.address).toString(),
        micro_algos: ledger.algoBalance(parsed.data.address).toString(),
      });
    });
  }

  app.onError((error, c) =>
    c.json({ error: error instanceof Error ? error.message : 'internal error' }, 500),
  );
  return { app, feePayer };
}

/** Starts the development facilitator on loopback. Keys and ledger live only as long as the process. */
export async function startDevFacilitator(options: DevFacilitatorOptions = {}): Promise<DevFacilitator> {
  const host = options.host ?? '127.0.0.1';
  if (host !== '127.0.0.1') throw new Error('the development facilitator only listens on 127.0.0.1');
  const ledger = new InMemoryAlgorandLedger();
  for (const address of options.optIn ?? []) ledger.optIn(address);
  const { app, feePayer } = createDevFacilitatorApp(ledger, { devMode: options.devMode });
  const listening = await listen(app, options.port ?? 0, host);
  return { url: `http://${host}:${listening.port}`, feePayer, ledger, close: listening.close };
}
