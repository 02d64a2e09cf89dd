// A vote is at most MAX_VOTE_BODY_BYTES, and a body that declares no length (chunked) is refused as soon as it has
// said more: the app reads no further, buffers nothing past the limit, and answers 413 while the client is still
// sending. Counted on the request stream (bytes the app pulled) and seen on a real Node server on 127.0.0.1.
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { MAX_VOTE_BODY_BYTES, createArenaVoteApp } from '../paywall-worker/arena-vote/app.ts';
import { openSqliteVoteStore } from '../paywall-worker/arena-vote/store-sqlite.ts';
import { createLocalPaywall } from '../paywall-worker/local.ts';
import { listen } from '../paywall-worker/node-listen.ts';

const SITE = 'https://arena.example';
const CHUNK = 16 * 1024;

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** A JSON-looking body of `total` bytes in CHUNK pieces that counts what its reader pulled. */
const countedBody = (total: number) => {
  const pulled = { bytes: 0 };
  const chunk = new TextEncoder().encode(' '.repeat(CHUNK));
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled.bytes >= total) return controller.close();
      pulled.bytes += chunk.length;
      controller.enqueue(chunk);
    },
  });
  return { stream, pulled };
};

describe('POST /arena/vote: a body without Content-Length', () => {
  it('is read no further than the limit before the 413', async () => {
    const app = createArenaVoteApp({
      store: openSqliteVoteStore(':memory:'),
      site: SITE,
      clientIp: () => '192.0.2.1',
    });
    const { stream, pulled } = countedBody(64 * 1024 * 1024);
    const res = await app.fetch(
      new Request(`${SITE}/arena/vote`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: stream,
        duplex: 'half',
      } as RequestInit),
    );
    expect(res.status).toBe(413);
    expect(await res.json()).toMatchObject({ error: 'payload_too_large' });
    // The limit, rounded up to the chunk that crossed it (and at most one more the stream queued ahead).
    expect(pulled.bytes).toBeLessThanOrEqual(MAX_VOTE_BODY_BYTES + 2 * CHUNK);
  });

  it('is answered 413 by the Node server while the client is still sending it', async () => {
    const root = await mkdtemp(join(tmpdir(), 'emi-vote-body-'));
    const paywall = await createLocalPaywall({
      paidDir: join(root, 'paid'),
      baseUrl: SITE,
      devFacilitatorPort: 0,
      ledgerFile: join(root, 'publishers.sqlite'),
      voteStorePath: join(root, 'state', 'arena-votes.sqlite'),
    });
    const server = await listen(paywall.app, 0, '127.0.0.1');
    cleanups.push(
      () => rm(root, { recursive: true, force: true }),
      () => paywall.close(),
      () => server.close(),
    );
    // Sends chunks (as fast as the server takes them) until an answer comes, or 64 MB have gone and the body ends.
    const limit = 64 * 1024 * 1024;
    const outcome = await new Promise<{ status: number; body: string; sent: number; ended: boolean }>(
      (resolve, reject) => {
        let sent = 0;
        let ended = false;
        let answered = false;
        const req = httpRequest(`${server.url}/arena/vote`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
        });
        req.on('response', (res) => {
          answered = true;
          const endedBeforeAnswer = ended;
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (text: string) => (body += text));
          res.on('end', () => {
            resolve({ status: res.statusCode ?? 0, body, sent, ended: endedBeforeAnswer });
            req.destroy();
          });
        });
        // Once answered, the server may close the connection on what is still being sent.
        req.on('error', (error) => (answered ? undefined : reject(error)));
        const chunk = Buffer.alloc(CHUNK, 0x20);
        const pump = () => {
          while (!answered && sent < limit) {
            sent += chunk.length;
            if (!req.write(chunk)) return void req.once('drain', pump);
          }
          if (!answered && !ended) {
            ended = true;
            req.end();
          }
        };
        pump();
      },
    );
    expect(outcome.status).toBe(413);
    expect(JSON.parse(outcome.body)).toMatchObject({ error: 'payload_too_large' });
    // The answer came before the body ended: the server did not wait to read it all.
    expect(outcome.ended).toBe(false);
    expect(outcome.sent).toBeLessThan(limit);
  });
});
