// Requests that never reach the app, as the Node listen helper answers them: a request @hono/node-server cannot turn
// into a URL (a backslash in the path, a Host header that is no host, none at all) or that Node's parser refuses,
// gets the paywall's JSON error with CORS and the API security headers, as the 431 already did; and a client that
// sends its request slower than the server's request timeout is cut off, while an answer that takes longer than
// that timeout to stream (an MCP answer, a paid request waiting for its settlement) is not.
import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { Hono } from 'hono';
import { PaywallErrorBody } from '../schemas/paid/payment-required.ts';
import { listen } from '../paywall-worker/node-listen.ts';
import type { Listening } from '../paywall-worker/node-listen.ts';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The server closed the connection (the answer was read up to the close). */
  closed: boolean;
}

/** Sends `raw` as it is and reads the answer until the server closes the connection or `waitMs` pass. */
function sendRaw(port: number, raw: string, waitMs = 5000): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    const finish = (closed: boolean) => {
      clearTimeout(timer);
      socket.destroy();
      const text = Buffer.concat(chunks).toString('latin1');
      const split = text.indexOf('\r\n\r\n');
      const [statusLine = '', ...lines] = (split < 0 ? text : text.slice(0, split)).split('\r\n');
      const headers = Object.fromEntries(
        lines.map((line) => [
          line.slice(0, line.indexOf(':')).toLowerCase(),
          line.slice(line.indexOf(':') + 1).trim(),
        ]),
      );
      resolve({
        status: Number(/^HTTP\/1\.[01] (\d{3})/.exec(statusLine)?.[1] ?? 0),
        headers,
        body: split < 0 ? '' : text.slice(split + 4),
        closed,
      });
    };
    const timer = setTimeout(() => finish(false), waitMs);
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('close', () => finish(true));
    socket.on('error', reject);
    socket.write(raw, 'latin1');
  });
}

const servers: Listening[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

async function serveHello(options?: Parameters<typeof listen>[3]): Promise<Listening> {
  const app = new Hono().get('*', (c) => c.text(`hello ${new URL(c.req.url).host}`));
  const server = await listen(app, 0, '127.0.0.1', options);
  servers.push(server);
  return server;
}

/** The paywall's JSON error, readable from another origin, with the API security headers. */
function expectJsonError(answer: RawAnswer, status: number, error: string, detail: RegExp): void {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.headers['access-control-allow-origin']).toBe('*');
  expect(answer.headers['x-content-type-options']).toBe('nosniff');
  expect(answer.headers['content-security-policy']).toBe("default-src 'none'; frame-ancestors 'none'");
  expect(answer.headers['cache-control']).toBe('no-store');
  const body = PaywallErrorBody.parse(JSON.parse(answer.body));
  expect(body).toMatchObject({ status, error });
  expect(body.message).toMatch(detail);
}

const expectJsonBadRequest = (answer: RawAnswer, detail: RegExp) =>
  expectJsonError(answer, 400, 'bad_request', detail);

describe('a request the Node server cannot read', () => {
  it('a backslash in the path gets a JSON 400 with CORS', async () => {
    const { port } = await serveHello();
    const answer = await sendRaw(port, 'GET /a\\b HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n');
    expectJsonBadRequest(answer, /backslash/i);
  });

  it('a Host header that is no host gets a JSON 400 with CORS', async () => {
    const { port } = await serveHello();
    for (const host of ['a/b', 'x@evil.example', '<script>', '127.0.0.1:abc']) {
      const answer = await sendRaw(port, `GET /docs/ HTTP/1.1\r\nHost: ${host}\r\n\r\n`);
      expectJsonBadRequest(answer, /host/i);
      expect(answer.body).not.toContain('<script>');
    }
  });

  it('an HTTP/1.1 request without Host gets a JSON 400 (RFC 9112); an HTTP/1.0 one is still served', async () => {
    const { port } = await serveHello();
    expectJsonBadRequest(await sendRaw(port, 'GET /docs/ HTTP/1.1\r\n\r\n'), /host/i);
    const old = await sendRaw(port, 'GET /docs/ HTTP/1.0\r\n\r\n');
    expect(old.status).toBe(200);
    expect(old.body).toBe('hello 127.0.0.1');
  });

  it("what Node's own parser refuses gets a JSON 400 with CORS, and the connection is closed", async () => {
    const { port } = await serveHello();
    const both = await sendRaw(
      port,
      'POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n',
    );
    expectJsonBadRequest(both, /not valid HTTP/);
    expect(both.closed).toBe(true);
    expectJsonBadRequest(
      await sendRaw(port, 'GET /\x01 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n'),
      /not valid HTTP/,
    );
  });

  it("an Expect other than 100-continue gets a JSON 417 with CORS (Node's own is bare); 100-continue still works", async () => {
    const { port } = await serveHello();
    const junk = await sendRaw(port, 'GET /docs/ HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: junk\r\n\r\n', 2000);
    expectJsonError(junk, 417, 'expectation_failed', /Expect: junk.*100-continue|100-continue.*Expect: junk/);
    const proceed = await sendRaw(
      port,
      'GET /docs/ HTTP/1.1\r\nHost: 127.0.0.1\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n',
    );
    expect(proceed.status).toBe(100); // the interim answer, then the app's own
    expect(proceed.body).toMatch(/^HTTP\/1\.1 200 OK[\s\S]*hello 127\.0\.0\.1$/);
  });

  it('TRACE gets a JSON 501 with CORS on any path, before the app (at a path to normalise it was a 500)', async () => {
    const { port } = await serveHello();
    for (const path of ['//mcp', '/api/x402-market-regime.php', '/p//x']) {
      const answer = await sendRaw(port, `TRACE ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`);
      expectJsonError(answer, 501, 'method_not_implemented', /^TRACE is not supported/);
      expect(answer.body).not.toContain('hello');
    }
  });

  it('a well-formed request is answered as before', async () => {
    const { port } = await serveHello();
    const answer = await sendRaw(port, 'GET /docs/ HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
    expect(answer.status).toBe(200);
    expect(answer.body).toBe('hello 127.0.0.1');
  });
});

describe('the request timeout', () => {
  it("is 30 s by default, not Node's 300 s", async () => {
    const server = await serveHello();
    expect(server.requestTimeoutMs).toBe(30_000);
  });

  it('closes a connection whose body is trickled in slower than the limit, with a JSON 408', async () => {
    const app = new Hono()
      .post('/vote', async (c) => c.json({ length: (await c.req.text()).length }))
      // The body's read fails once the connection is cut (the real apps' onError know it as a client abort).
      .onError(() => new Response(null, { status: 400 }));
    const server = await listen(app, 0, '127.0.0.1', { requestTimeoutMs: 1000 });
    servers.push(server);
    const socket = connect(server.port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', () => {});
    socket.write('POST /vote HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n');
    socket.write('Transfer-Encoding: chunked\r\n\r\n');
    // One byte every 200 ms, for as long as the connection stays open (at most 20 s: the test's bound).
    const trickle = setInterval(() => socket.writable && socket.write('1\r\n \r\n'), 200);
    const closed = await new Promise<boolean>((resolve) => {
      const bound = setTimeout(() => resolve(false), 20_000);
      socket.on('close', () => {
        clearTimeout(bound);
        resolve(true);
      });
    });
    clearInterval(trickle);
    socket.destroy();
    expect(closed).toBe(true);
    const answer = Buffer.concat(chunks).toString('latin1');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toMatch(/access-control-allow-origin: \*/i);
    const body = PaywallErrorBody.parse(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)));
    expect(body).toMatchObject({ status: 408, error: 'request_timeout' });
  }, 30_000);

  it.skipIf(!existsSync('/proc/self/fd'))(
    'lets go of the sockets of clients that never close their side once the 408 is written',
    async () => {
      const server = await listen(new Hono(), 0, '127.0.0.1', { requestTimeoutMs: 500 });
      servers.push(server);
      const openFiles = () => readdirSync('/proc/self/fd').length;
      const before = openFiles();
      // Clients that send nothing and never end their side (allowHalfOpen: a FIN from the server is not answered).
      const clients = Array.from({ length: 20 }, () => {
        const socket = connect({ port: server.port, host: '127.0.0.1', allowHalfOpen: true });
        socket.on('error', () => {});
        return socket;
      });
      try {
        // Both ends of each connection open once the server has accepted it.
        await expect.poll(openFiles, { timeout: 5_000, interval: 20 }).toBeGreaterThanOrEqual(before + 40);
        // The server's ends go once their 408 is written; the clients' stay open until destroyed below.
        await expect.poll(openFiles, { timeout: 10_000, interval: 100 }).toBeLessThanOrEqual(before + 22);
      } finally {
        for (const socket of clients) socket.destroy();
      }
    },
    30_000,
  );

  it('does not cut an answer that streams for longer than the limit once the request is in', async () => {
    const app = new Hono().get('/stream', () => {
      let sent = 0;
      const stream = new ReadableStream<Uint8Array>({
        async pull(controller) {
          await new Promise((resolve) => setTimeout(resolve, 400));
          if (sent++ === 8) return controller.close();
          controller.enqueue(new TextEncoder().encode(`data: ${sent}\n\n`));
        },
      });
      return new Response(stream, { headers: { 'content-type': 'text/event-stream' } });
    });
    const server = await listen(app, 0, '127.0.0.1', { requestTimeoutMs: 1000 });
    servers.push(server);
    // About 3.6 s of answer against a 1 s limit on receiving the request.
    const response = await fetch(`${server.url}/stream`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text.match(/^data: /gm)).toHaveLength(8);
    expect(text).toContain('data: 8\n\n');
  }, 30_000);
});
