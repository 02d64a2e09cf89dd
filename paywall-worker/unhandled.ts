// What every Hono app of the worker answers to an exception none of its routes caught: the paywall, the vote app, the
// MCP route and the publishers' storefront and admin routes, on Node and in workerd. Hono's own answer is a text/plain
// 500 without CORS (a browser on another origin reads a network error) and a stack trace instead of a log line; this
// is one JSON line on stderr and the paywall's JSON error. A client that hung up mid-body is no error at all.
import type { ErrorHandler } from 'hono';
import { API_JSON_HEADERS } from '../schemas/delivery.ts';
import { isClientAbort } from './client-abort.ts';
import { errorBody } from './core/answers.ts';
import { logToStderr } from './core/log.ts';
import { describeError } from './facilitator-errors.ts';

type Log = typeof logToStderr;

/** How an app words its error answers: the paywall's JSON error body by default (`/mcp` answers JSON-RPC). */
export type ErrorAnswer = (status: 400 | 500, error: string, message: string) => Response;

const jsonError: ErrorAnswer = (status, error, message) =>
  new Response(JSON.stringify(errorBody(status, error, message, null)), {
    status,
    headers: API_JSON_HEADERS,
  });

/**
 * The answer to an exception (or any other value thrown) that nothing caught while answering `method path`: one
 * `unhandled` log line and a 500 saying `message`; a client that hung up mid-body gets a 400 and no line.
 */
export function unhandledAnswer(
  error: unknown,
  request: { method: string; path: string },
  message: string,
  log: Log = logToStderr,
  answer: ErrorAnswer = jsonError,
): Response {
  if (isClientAbort(error)) return answer(400, 'bad_request', 'The request ended before its body did.');
  log({ level: 'error', event: 'unhandled', ...request, detail: describeError(error) });
  return answer(500, 'internal_error', message);
}

/** An `onError` handler answering `message` (what could not handle the request) in a 500, logged with `log`. */
export const answerUnhandled =
  (message: string, log: Log = logToStderr, answer: ErrorAnswer = jsonError): ErrorHandler =>
  (error, c) =>
    unhandledAnswer(error, { method: c.req.method, path: c.req.path }, message, log, answer);
