// `emi mcp`: the MCP server over stdio for local agents. stdout carries the protocol only; everything a person
// should read goes to stderr. Paid tools go to a running paywall (--paywall-url, e.g. emi serve) or, without one,
// to a paywall started in this process (the development facilitator when no facilitator URL is configured). The
// client closing stdin ends the server, and the process with it.
import { resolve } from 'node:path';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { createLocalPaywall, paywallEnv } from '../paywall-worker/local.ts';
import { readTextFrom } from './published-fs.ts';
import { MAX_LINE_BYTES, frameLines, inputProblem, invalidLineReply } from './stdio-input.ts';
import { createMcpServer, fetchPaidAt, fetchPaidThrough, paywallUrlProblem } from './server.ts';
import type { FetchPaid } from './paid-tools.ts';

export interface McpStdioOptions {
  /** Built site folder (dist/): free files, history, openapi.json, llms.txt, docs pages. */
  dir: string;
  /** Paid bodies folder, for the in-process paywall. */
  paid: string;
  /** A running paywall (e.g. http://127.0.0.1:8080): paid tools are forwarded there. */
  paywallUrl?: string;
  /** The longest a paid tool waits for that paywall's whole answer (default `PAYWALL_TIMEOUT_MS`, 30 s). */
  paywallTimeoutMs?: number;
  baseUrl: string;
}

export async function runMcpStdio(options: McpStdioOptions): Promise<{ close(): Promise<void> }> {
  let fetchPaid: FetchPaid;
  let closePaywall = async () => {};
  // The command line refuses these first (a usage error); checked again for callers of this function.
  const problem = options.paywallUrl === undefined ? null : paywallUrlProblem(options.paywallUrl);
  if (problem) throw new Error(`--paywall-url ${problem}`);
  if (options.paywallTimeoutMs !== undefined && options.paywallUrl === undefined) {
    throw new Error('--paywall-timeout applies only to a paywall named by --paywall-url');
  }
  if (options.paywallUrl) {
    fetchPaid = fetchPaidAt(options.paywallUrl, { timeoutMs: options.paywallTimeoutMs });
    console.error(`emi mcp: paid tools go to ${options.paywallUrl}`);
  } else {
    // The environment first: the options (--base-url, which defaults to EMI_BASE_URL) win over it, and a variable
    // that is not set leaves the option as it is.
    const paywall = await createLocalPaywall({
      ...paywallEnv(),
      paidDir: resolve(options.paid),
      baseUrl: options.baseUrl,
      devFacilitatorPort: 0,
    });
    fetchPaid = fetchPaidThrough((path, init) => paywall.app.request(path, init));
    let closing: Promise<void> | null = null;
    closePaywall = () => (closing ??= paywall.close());
    for (const line of paywall.describe()) console.error(`emi mcp: ${line}`);
  }
  const server = createMcpServer({
    readText: readTextFrom(resolve(options.dir)),
    fetchPaid,
    baseUrl: options.baseUrl,
  });
  let closingOnPurpose = false;
  // Ending: a line too long, or the transport closing on its own. Either way the exit status says so (non-zero).
  const failed = (why: string) => {
    console.error(`emi mcp: ${why}`);
    process.exitCode = 1;
  };
  // A line the transport would refuse is answered here (it never reaches the transport, which would lose it). The
  // answer goes out through the transport's own send, taken before trackRequests wraps it: that answer is to no
  // request it counts, even when its id is one a request still running has.
  let answerInvalid = (_reply: JSONRPCMessage) => {};
  const input = frameLines(process.stdin, MAX_LINE_BYTES, (text, error) => {
    console.error(`emi mcp: ${inputProblem(error)}`);
    answerInvalid(invalidLineReply(text, error));
  });
  // Never reached (frameLines stops a longer line first); the SDK's own limit would close the transport.
  const transport = new StdioServerTransport(input.lines, process.stdout, {
    maxBufferSize: 2 * MAX_LINE_BYTES,
  });
  const send = transport.send.bind(transport);
  answerInvalid = (reply) => void send(reply);
  // Set before connect, which chains its own handlers after these.
  transport.onclose = () => {
    if (!closingOnPurpose) failed('the stdio transport closed on its own: exiting');
    void closePaywall();
  };
  // A read error of stdin (lines that are not messages no longer get here: frameLines answers them).
  transport.onerror = (error) => console.error(`emi mcp: ${inputProblem(error)}`);
  await server.connect(transport);
  const answered = trackRequests(transport); // after connect, which installs the server's message handler
  console.error(`emi mcp: serving ${resolve(options.dir)} over stdio (educational only, not advice)`);
  const close = async () => {
    closingOnPurpose = true;
    await server.close();
    await closePaywall();
  };
  // The client is gone: the in-process paywall (its development facilitator listens) would keep the process alive.
  // Requests already read are answered first: a client may write its last request and close stdin at once, and a
  // paid call cut off mid-way could settle a payment whose answer is never written.
  process.stdin.once('end', () => void answered().then(close));
  // Nothing more can be answered once stdout fails; EPIPE is the client gone (its end closed): the server ends, quietly
  // (exit 0; the CLI says any other fault, exit 1). Without this the in-process paywall would keep the process alive.
  process.stdout.once('error', () => void close().finally(() => process.exit()));
  void input.tooLong.then(async () => {
    failed(
      `a line is over ${MAX_LINE_BYTES} bytes, the most one message may take: stopped reading, answering ` +
        'the requests already read, then exiting',
    );
    await answered();
    await close();
  });
  return { close };
}

/**
 * The longest a request read before the input stopped (stdin closed, a line too long) may take to be answered (a
 * settle waits on the facilitator).
 */
const ANSWER_GRACE_MS = 60_000;

/** Counts the requests read and not yet answered; the returned function resolves when none is left. */
function trackRequests(transport: StdioServerTransport): () => Promise<void> {
  const open = new Set<string | number>();
  let drained: (() => void) | null = null;
  const settle = (id: string | number) => {
    open.delete(id);
    if (open.size === 0) drained?.();
  };
  const receive = transport.onmessage;
  transport.onmessage = (message) => {
    if ('method' in message && 'id' in message) open.add(message.id);
    // A cancelled request gets no answer.
    if ('method' in message && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: string | number } | undefined)?.requestId;
      if (id !== undefined) settle(id);
    }
    receive?.(message);
  };
  const send = transport.send.bind(transport);
  transport.send = async (message) => {
    await send(message);
    if (('result' in message || 'error' in message) && message.id !== undefined) settle(message.id);
  };
  return () =>
    new Promise<void>((resolve) => {
      if (open.size === 0) return resolve();
      const timer = setTimeout(resolve, ANSWER_GRACE_MS);
      drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
}
