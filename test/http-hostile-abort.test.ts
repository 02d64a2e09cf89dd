// A client that hangs up in the middle of its request body is no server error: neither the paywall (`emi paywall`:
// POST /arena/vote) nor the preview server (`emi serve`: the vote route through it, and its forward to the
// development facilitator's faucet) logs an "unhandled" error or a stack trace for it. A real failure of the preview
// server still answers JSON and logs one line, without a stack.
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { MockInstance } from 'vitest';
import { ErrorResponse } from '../schemas/error.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import type { LocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import { createPreviewApp } from '../generator/serve/preview.ts';

type FetchApp = { fetch(request: Request, env?: unknown): Response | Promise<Response> };

const cleanups: Array<() => unknown> = [];
let logged: MockInstance[] = [];
beforeEach(() => {
  // The servers run in this process: what they would print on stderr goes through these.
  logged = [
    vi.spyOn(console, 'error').mockImplementation(() => {}),
    vi.spyOn(console, 'warn').mockImplementation(() => {}),
  ];
});
afterEach(async () => {
  vi.restoreAllMocks();
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** Everything the servers printed as errors or warnings, one string per call (an error as console prints it). */
/** A new folder, removed after the test. */
async function tempDir(prefix: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), prefix));
  cleanups.unshift(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const printed = (): string[] =>
  logged.flatMap((spy) =>
    spy.mock.calls.map((args) =>
      args.map((arg) => (arg instanceof Error ? (arg.stack ?? String(arg)) : String(arg))).join(' '),
    ),
  );

async function localPaywall(): Promise<LocalPaywall> {
  const root = await tempDir('emi-abort-');
  const paywall = await createLocalPaywall({
    paidDir: join(root, 'paid'),
    baseUrl: 'http://127.0.0.1:8080',
    devFacilitatorPort: 0,
    ledgerFile: join(root, 'publishers.sqlite'),
    voteStorePath: join(root, 'state', 'arena-votes.sqlite'),
  });
  cleanups.push(() => paywall.close());
  return paywall;
}

/** Listens with `app`, keeping each answer's promise, so that a test can wait until the app has finished. */
async function listenObserved(app: FetchApp): Promise<{ port: number; answers: Promise<unknown>[] }> {
  const answers: Promise<unknown>[] = [];
  const server = await listen({
    fetch(request, env) {
      const answer = Promise.resolve(app.fetch(request, env));
      answers.push(answer.catch((error: unknown) => error));
      return answer;
    },
  });
  cleanups.push(() => server.close());
  return { port: server.port, answers };
}

/**
 * Starts a chunked POST of `path`, sends the first five bytes of its body, and destroys the socket once the app has
 * the request; resolves when the app has finished with it.
 */
async function abortMidBody(port: number, answers: Promise<unknown>[], path: string): Promise<void> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => {});
  socket.write(
    `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n` +
      'Transfer-Encoding: chunked\r\n\r\n5\r\n{"a":\r\n',
  );
  await vi.waitFor(() => expect(answers).toHaveLength(1), { timeout: 5000 });
  socket.destroy();
  await answers[0];
}

const noErrorLines = (): void => {
  const lines = printed();
  expect(lines.filter((line) => /unhandled|aborted|ECONNRESET/.test(line))).toEqual([]);
  expect(lines.filter((line) => /\n\s+at /.test(line))).toEqual([]);
};

describe('a client that drops the connection mid-body', () => {
  it('emi paywall: POST /arena/vote logs no error', async () => {
    const paywall = await localPaywall();
    const { port, answers } = await listenObserved(paywall.app);
    await abortMidBody(port, answers, '/arena/vote');
    noErrorLines();
  });

  it('emi serve: POST /arena/vote and the faucet forward log no error and no stack trace', async () => {
    const paywall = await localPaywall();
    const root = await tempDir('emi-abort-site-');
    const preview = createPreviewApp({
      root,
      paywall: paywall.app,
      devFacilitatorUrl: paywall.facilitatorUrl,
    });
    for (const path of ['/arena/vote', '/x402-dev-facilitator/dev/fund']) {
      const { port, answers } = await listenObserved(preview);
      await abortMidBody(port, answers, path);
    }
    noErrorLines();
  });
});

describe('a real failure of the preview server', () => {
  it('answers a JSON 500 and logs one line without a stack trace', async () => {
    // A facilitator that is not there: the forward's fetch fails.
    const gone = await listen({ fetch: () => new Response('') });
    await gone.close();
    const preview = createPreviewApp({ root: await tempDir('emi-abort-site-'), devFacilitatorUrl: gone.url });
    const server = await listen(preview);
    cleanups.push(() => server.close());
    const response = await fetch(`${server.url}/x402-dev-facilitator/v2/transactions/params`);
    expect(response.status).toBe(500);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(ErrorResponse.parse(await response.json())).toMatchObject({ error: 'internal_error' });
    const lines = printed();
    expect(lines).toHaveLength(1);
    expect(lines[0]).not.toContain('\n');
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 'error', event: 'unhandled' });
  });
});
