// `emi buy` before any payment, against a site or a development facilitator that takes the connection and never
// answers: it gives up after its own timeout (30 s; shortened here through `unpaidTimeoutMs`) with exit 4 and a line
// saying no answer came in time, instead of waiting out undici's 300 s headers timeout. Nothing is funded, signed or
// paid. An injected fetch that settles only when its signal aborts (vitest's fake timers do not drive
// AbortSignal.timeout), and real servers on loopback (ports 19200-19202) for what undici itself does.
import { createServer as createHttpServer } from 'node:http';
import { createServer as createTcpServer } from 'node:net';
import type { Server as HttpServer } from 'node:http';
import type { Server as TcpServer, Socket } from 'node:net';
import { encodePaymentRequiredHeader } from '@x402/core/http';
import type { PaymentRequired } from '@x402/core/types';
import algosdk from 'algosdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BUY_EXIT_CODES, runBuy } from '../paywall-worker/buy-command.ts';
import type { BuyIo } from '../paywall-worker/buy-command.ts';
import { fundDevWallet } from '../paywall-worker/buy.ts';
import { ALGORAND_MAINNET, USDC_ASA_ID } from '../schemas/paid/terms.ts';

const SILENT_PORT = 19200; // accepts the connection, never answers
const STALLED_BODY_PORT = 19201; // sends the headers of a 402, then never the rest of the body
const SITE = 'http://127.0.0.1:19202'; // only ever reached through the injected fetch
const FACILITATOR = 'http://127.0.0.1:19203'; // likewise
const FUNDS_THEN_STALLS_PORT = 19204; // answers /dev/fund, never the ledger's parameters the client signs with
const SHORT_TIMEOUT_MS = 50;
// Without a timeout of its own the old code waits for undici's 300 s: each case fails at this limit instead.
const CASE_LIMIT_MS = 10_000;

/** A fetch that never answers: it rejects with the signal's reason once the signal aborts (and never without one). */
const neverAnswers = (init: RequestInit | undefined): Promise<Response> =>
  new Promise((_resolve, reject) => {
    init?.signal?.addEventListener('abort', () => reject(init.signal!.reason), { once: true });
  });

/** A 402 as the paywall sends it: one exact offer on Algorand, in the PAYMENT-REQUIRED header. */
function challenge(url: string): Response {
  const paymentRequired: PaymentRequired = {
    x402Version: 2,
    resource: { url, description: 'a paid file', mimeType: 'application/json' },
    accepts: [
      {
        scheme: 'exact',
        network: ALGORAND_MAINNET,
        amount: '10000',
        asset: USDC_ASA_ID,
        payTo: algosdk.generateAccount().addr.toString(),
        maxTimeoutSeconds: 60,
        extra: {},
      },
    ],
  };
  return new Response('{}', {
    status: 402,
    headers: {
      'Content-Type': 'application/json',
      'PAYMENT-REQUIRED': encodePaymentRequiredHeader(paymentRequired),
    },
  });
}

interface Sent {
  url: string;
  init: RequestInit | undefined;
}

/** Runs `emi buy` with `fetch` injected; what it said, its exit code and every request it made. */
async function buy(
  fetch: (url: string, init: RequestInit | undefined) => Response | Promise<Response>,
  extra: Partial<BuyIo> = {},
  baseUrl = SITE,
  facilitatorUrl = FACILITATOR,
) {
  const sent: Sent[] = [];
  const stderr: string[] = [];
  const stdout: string[] = [];
  const io: BuyIo = {
    stdout: (text) => stdout.push(text),
    stderr: (line) => stderr.push(line),
    fetch: (async (input: string | URL | Request, init?: RequestInit) => {
      const url = String(input);
      sent.push({ url, init });
      return fetch(url, init);
    }) as typeof globalThis.fetch,
    unpaidTimeoutMs: SHORT_TIMEOUT_MS,
    ...extra,
  };
  const code = await runBuy({ path: '/api/x402-market-regime.php', baseUrl, facilitatorUrl }, io);
  return { code, stderr, stdout, sent };
}

const paidRequests = (sent: Sent[]): Sent[] =>
  sent.filter(({ init }) => new Headers(init?.headers).has('PAYMENT-SIGNATURE'));

describe('emi buy gives up on a host that never answers before the payment', () => {
  it(
    'a site that never answers the unpaid request: exit 4, "no answer ... within", nothing funded or paid',
    async () => {
      const run = await buy((_url, init) => neverAnswers(init));
      expect(run.code, run.stderr.join('\n')).toBe(BUY_EXIT_CODES.unreachable);
      expect(run.stderr).toEqual([
        `emi buy: no answer from ${SITE} within 0.05 s (it took the connection but did not answer); nothing was paid`,
      ]);
      expect(run.sent.map(({ url }) => url)).toEqual([`${SITE}/api/x402-market-regime.php`]);
      expect(run.stdout).toEqual([]);
    },
    CASE_LIMIT_MS,
  );

  it('the unpaid request carries a deadline by default too', async () => {
    const run = await buy(async () => new Response('free\n', { status: 200 }), {
      unpaidTimeoutMs: undefined,
    });
    expect(run.code).toBe(BUY_EXIT_CODES.free);
    const signal = run.sent[0]?.init?.signal;
    expect(signal).toBeInstanceOf(AbortSignal);
    expect(signal?.aborted).toBe(false);
  });

  it(
    'a facilitator that never answers the funding: exit 4, said, nothing signed or paid',
    async () => {
      const run = await buy((url, init) =>
        url.startsWith(FACILITATOR) ? neverAnswers(init) : challenge(url),
      );
      expect(run.code, run.stderr.join('\n')).toBe(BUY_EXIT_CODES.unreachable);
      expect(run.stderr.at(-1)).toBe(
        `emi buy: no answer from the development facilitator at ${FACILITATOR} within 0.05 s (it took the ` +
          'connection but did not answer); nothing was signed or paid',
      );
      expect(run.sent.map(({ url }) => url)).toEqual([
        `${SITE}/api/x402-market-regime.php`,
        `${FACILITATOR}/dev/fund`,
      ]);
      expect(paidRequests(run.sent)).toEqual([]);
    },
    CASE_LIMIT_MS,
  );
});

describe('over real loopback connections (undici)', () => {
  let silent: TcpServer;
  let stalledBody: HttpServer;
  let fundsThenStalls: HttpServer;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    // A development facilitator that funds the wallet, then never gives the ledger's parameters (the official
    // client asks its algod URL for them before it signs).
    fundsThenStalls = createHttpServer((req, res) => {
      if (req.method === 'POST' && req.url === '/dev/fund') res.end('{"funded":true}');
    });
    fundsThenStalls.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) =>
      fundsThenStalls.listen(FUNDS_THEN_STALLS_PORT, '127.0.0.1', resolve),
    );
    silent = createTcpServer((socket) => sockets.add(socket)); // reads nothing, writes nothing
    stalledBody = createHttpServer((_req, res) => {
      res.writeHead(402, { 'Content-Type': 'application/json' });
      res.write('{"x402Version":'); // and never the rest
    });
    stalledBody.on('connection', (socket) => sockets.add(socket));
    await new Promise<void>((resolve) => silent.listen(SILENT_PORT, '127.0.0.1', resolve));
    await new Promise<void>((resolve) => stalledBody.listen(STALLED_BODY_PORT, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent?.close(resolve));
    await new Promise((resolve) => stalledBody?.close(resolve));
    await new Promise((resolve) => fundsThenStalls?.close(resolve));
  });

  it(
    'a facilitator that funds the wallet and never gives the ledger parameters: exit 4, nothing signed or paid',
    async () => {
      const facilitator = `http://127.0.0.1:${FUNDS_THEN_STALLS_PORT}`;
      const run = await buy(
        (url, init) => (url.startsWith(facilitator) ? globalThis.fetch(url, init) : challenge(url)),
        {},
        SITE,
        facilitator,
      );
      expect(run.code, run.stderr.join('\n')).toBe(BUY_EXIT_CODES.unreachable);
      expect(run.stderr.at(-1)).toBe(
        `emi buy: no answer from the development facilitator at ${facilitator} within 0.05 s (it took the ` +
          'connection but did not answer); nothing was signed or paid',
      );
      expect(run.sent.map(({ url }) => url)).toEqual([
        `${SITE}/api/x402-market-regime.php`,
        `${facilitator}/dev/fund`,
      ]);
      expect(paidRequests(run.sent)).toEqual([]);
    },
    CASE_LIMIT_MS,
  );

  it.each([
    ['accepts and never answers', SILENT_PORT],
    ['sends the headers and stalls the body', STALLED_BODY_PORT],
  ])(
    'emi buy against a site that %s: exit 4 with the no-answer line',
    async (_, port) => {
      const run = await buy(globalThis.fetch, {}, `http://127.0.0.1:${port}`);
      expect(run.code, run.stderr.join('\n')).toBe(BUY_EXIT_CODES.unreachable);
      expect(run.stderr.join('\n')).toMatch(
        new RegExp(`^emi buy: no answer from http://127\\.0\\.0\\.1:${port} within 0\\.05 s`),
      );
    },
    CASE_LIMIT_MS,
  );

  it(
    'fundDevWallet against a facilitator that accepts and never answers: rejects with a TimeoutError',
    async () => {
      const address = algosdk.generateAccount().addr.toString();
      const funding = fundDevWallet(`http://127.0.0.1:${SILENT_PORT}`, address, '1000000', {
        timeoutMs: SHORT_TIMEOUT_MS,
      });
      await expect(funding).rejects.toMatchObject({ name: 'TimeoutError' });
    },
    CASE_LIMIT_MS,
  );
});
